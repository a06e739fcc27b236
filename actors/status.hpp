// The status actor: the cluster's entry point and directory. Nodes join it
// with their actors; it monitors them (a node or actor that dies stays in
// the view, marked down), keeps their latest metrics and the state of their
// wake-up paths, and answers status requests with the live view and
// the database counts (docs/design.md "Status").
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/status_actor.hpp"
#include "actors/status_counts.hpp"
#include "core/domain/stores.hpp"

namespace outbox {

/// A database's status store and its name in the config.
struct named_status_store {
  std::string database;
  std::shared_ptr<status_store> store;
};

struct status_state {
  struct node_record {
    node_info info;
    node_view view;
    int64_t heard_ms = 0; ///< when its agent last sent anything
  };
  /// One database of the view: its reader and what it last read.
  struct database_record {
    std::string name;
    counts_reader_actor reader;
    counts_cache cache;
    /// Answers wait for a read that began after them: one more is due
    /// once the running read ends.
    bool read_again = false;
  };
  /// A status answer waiting for reads that began after it asked.
  struct waiting_answer {
    caf::typed_response_promise<cluster_status> promise;
    int64_t asked_ms = 0;
    uint64_t id = 0; ///< its deadline's tick says which
  };
  uint64_t last_answer_id = 0;
  /// Each database of the config, by its name; none: no counts.
  std::vector<database_record> databases;
  std::vector<waiting_answer> waiting;
  /// The config names its databases (`databases`): each has one leader
  /// per led role (leaders_of).
  bool named = false;
  std::map<std::string, node_record> nodes;
  static const char* name;
};

/// Each store is read by a counts reader of its own, detached with
/// `detached_reads` (a database's reads block; tests run them on the test
/// scheduler). A database that cannot be read shows its error, one that
/// does not answer within counts_cache::answer_wait_ms says so; the others
/// show their counts.
status_actor::behavior_type status(status_actor::stateful_pointer<status_state> self,
                                   std::vector<named_status_store> stores,
                                   bool named, bool detached_reads);

/// Per queue, milliseconds since a result handler of it that is up, on a
/// node that is up, was last heard from (the freshest such); queues with
/// none are absent (core/domain/relay_stalls.hpp), and so are queues whose
/// dispatchers report the broker blocking publishers: the workers cannot
/// send results then either.
std::map<std::string, int64_t> results_liveness_of(const status_state& st,
                                                   int64_t at_ms);

/// Who leads each database's routing and sweeping, by the view: the live
/// nodes that run the role and serve the database share them evenly.
/// Empty for a cluster of one unnamed database (every node takes its turn
/// under the database's locks, as such a cluster always did).
leader_map leaders_of(const status_state& st);

} // namespace outbox
