// Which database a send came from, read off its dispatch id: a cluster of
// several databases starts each database's dispatch ids with the database's
// tag, so that a worker's result (which echoes the dispatch id, and nothing
// else of ours) finds its way back to the right database through a results
// queue that several databases share.
#pragma once

#include <string>
#include <vector>

namespace outbox {

/// The length of a tag: the UUID's first group of hex digits.
constexpr size_t dispatch_tag_length = 8;

/// The tag of a database name: 8 lower-case hex digits (FNV-1a, 32 bits).
std::string dispatch_tag_of(const std::string& database);

/// The tag a dispatch id starts with, "" when it is not a UUID's text.
std::string tag_in(const std::string& dispatch_id);

/// The SQL of a new dispatch id: random (gen_random_uuid()), its first
/// group replaced by `tag` unless `tag` is empty. The version and variant
/// digits stay those of a random UUID.
std::string new_dispatch_id_sql(const std::string& tag);

/// Splits dispatch ids among databases: for each of `tags` (one per
/// database, in order), the indexes of the ids it gets. An id whose tag is
/// none of them (a send from before the config named several databases)
/// goes to every database: it matches a delivery in one at most.
std::vector<std::vector<size_t>>
split_by_tag(const std::vector<std::string>& dispatch_ids,
             const std::vector<std::string>& tags);

} // namespace outbox
