// How `outboxctl status` prints the cluster view: a table for people, JSON
// for scripts. Counts and states only: the view holds no payloads.
#pragma once

#include <string>

#include "actors/cluster_view.hpp"

namespace outbox {

/// The table: the three headline figures (unrouted events, deliveries per
/// status, the oldest open delivery), one row per queue, then each node
/// with its actors. `with_nodes` is false for `--db`.
std::string status_table(const cluster_status& s, bool with_nodes);

/// The same as one JSON object (status_view/status_json.cpp); an object with
/// only "error" if a value cannot be written (NaN, invalid UTF-8).
std::string status_json(const cluster_status& s, bool with_nodes);

} // namespace outbox
