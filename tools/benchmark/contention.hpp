// Phase C of the benchmark, business commits: what the publish call costs
// the application's own commits. N connections commit a plain INSERT of
// the payload into a lean table of the bench's own, then the same N commit
// the SQL publish call with the same payload, then the C++ API's insert
// (prepared, as db_event_store runs it with insert_statement::prepared),
// each statement its own transaction; the rates and each ÷ plain, at each
// client count.
// Whatever the publish path holds through commit for the whole cluster
// (the NOTIFY of the events trigger takes a lock that lets one notifying
// transaction commit at a time) shows here as a ratio that falls as
// clients are added, where the plain insert keeps scaling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/schema_names.hpp"
#include "core/json/field.hpp"

namespace outbox {
class pg_connection;
} // namespace outbox

namespace outbox::bench {

/// The most connections of one kind: a connection is a backend process,
/// and the test servers allow 200 in all.
constexpr int64_t max_contention_clients = 64;

/// One client count's figures: committed transactions per second.
struct contention_figures {
  int64_t clients = 0;
  double plain_per_s = 0, publish_per_s = 0;
  double ratio = 0; ///< publish ÷ plain
  /// The C++ API's insert, prepared (insert_statement::prepared).
  double api_per_s = 0;
  double api_ratio = 0; ///< api ÷ plain
};

template <class Inspector>
bool inspect(Inspector& f, contention_figures& x) {
  return f(field("clients", x.clients), field("plainPerS", x.plain_per_s),
           field("publishPerS", x.publish_per_s), field("ratio", x.ratio),
           field("apiPerS", x.api_per_s), field("apiRatio", x.api_ratio));
}

/// "4,16" as client counts; none when the text is not a comma-separated
/// list of whole numbers from 1 to max_contention_clients.
std::optional<std::vector<int64_t>> contention_clients(const std::string& text);

struct contention_run {
  std::string url;
  schema_names names;      ///< the publish function's
  std::string plain_table; ///< made and dropped by measure_contention
  std::string event_type;  ///< a type without routes: nobody routes them
  std::string payload;
  std::vector<int64_t> clients;
  int64_t seconds = 0; ///< of each kind, at each client count
};

struct contention_results {
  std::vector<contention_figures> figures; ///< in the order of `clients`
  /// Every event the publish calls committed (warm-ups included): still
  /// unrouted, for the caller to delete.
  int64_t published = 0;
};

/// Runs the phase; `admin` makes the lean table and drops it again, also
/// when a step fails. An error names the step and the kind.
caf::expected<contention_results> measure_contention(pg_connection& admin,
                                                     const contention_run& run);

} // namespace outbox::bench
