// What faults.ordering judges, as plain functions over what it collected:
// the workers' journal (each run), the relay's dispatch log (each dispatch,
// from the database) and the completed deliveries. Kept apart from the
// cluster so that each rule reads on its own.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace outbox::testing {

/// One run of a job, as an ordering_worker journaled it.
struct journal_run {
  std::string key;
  int64_t seq = 0;
  int64_t delivery_id = 0;
  std::string dispatch_id;
  int64_t start_us = 0, end_us = 0; ///< wall clock
  std::string outcome;              ///< completed, late, retry
};

/// Reads every line of the journal files `paths`.
std::vector<journal_run> read_journals(const std::vector<std::string>& paths);

/// One dispatch, from the relay's side: claimed at start_us (the claim's
/// row update), ended at end_us by whatever took it out of `dispatched`
/// (a result, the timeout sweep, a failed publish).
struct relay_dispatch {
  std::string dispatch_id;
  int64_t delivery_id = 0;
  std::string key;
  std::string node; ///< the claiming node's application_name
  int64_t start_us = 0;
  std::optional<int64_t> end_us;
  std::string end_status, end_error;
};

/// A time window [start, end] of something of one key; of delivery
/// `delivery_id` when known (0: not).
struct window {
  int64_t start = 0, end = 0;
  int64_t delivery_id = 0;
};

/// How many windows were compared and how many began before an earlier
/// one of the same key had ended (one in flight twice at once).
struct overlap_report {
  int64_t keys = 0, windows = 0, overlapping = 0;
  std::string first; ///< the first overlap found, for the message
};

/// Per key: sorted by start, each window must start at or after the end
/// of every earlier one of another delivery (two sends of one delivery may
/// run at once: that is the same event, which at-least-once allows).
overlap_report find_overlaps(std::map<std::string, std::vector<window>> by_key);

/// The relay's windows per key: [claimed, ended].
std::map<std::string, std::vector<window>>
relay_windows(const std::vector<relay_dispatch>& ds);

/// The workers' windows per key: a run counts from its start until it
/// ended or `hold_us` after its dispatch ended on the relay's side,
/// whichever came first (a timed-out send holds its key until its late
/// result or one more delivery timeout: docs/ordering.md "A late send").
/// Runs that began after their dispatch had ended count in `after_end`
/// and have no window.
std::map<std::string, std::vector<window>>
worker_windows(const std::vector<journal_run>& runs,
               const std::map<std::string, relay_dispatch>& by_dispatch,
               int64_t hold_us, int64_t& after_end);

/// One completion the relay applied: the delivery's key and seq (from the
/// event) and when the relay applied it.
struct completion {
  std::string key;
  int64_t seq = 0;
  int64_t applied_us = 0;
};

/// Per key, in the order the relay applied them: how many completions
/// came after one of a higher seq (out of order), and how many keys'
/// completions were not exactly 1, 2, … `expected[key]` (gaps or repeats).
struct order_report {
  int64_t keys = 0, completions = 0, out_of_order = 0, keys_not_dense = 0;
  int64_t fewest_per_key = 0;
  std::string first; ///< the first problem found, for the message
};

order_report check_order(std::vector<completion> cs,
                         const std::map<std::string, int64_t>& expected);

} // namespace outbox::testing
