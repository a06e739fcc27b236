// The loop every pass actor (router, dispatcher, result handler, sweeper)
// runs: a pass when woken, again at once after a full batch, otherwise at
// the earliest known work or after the idle sleep, and after a failure with
// a capped exponential backoff that wake-ups do not cut short (while the
// broker is down, a wake-up per event would otherwise start a pass per
// event). Each schedule carries a token so that only the newest armed timer
// starts a pass: wake-ups never pile up passes.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/leadership_view.hpp"
#include "actors/lifecycle_group.hpp"
#include "actors/node_agent_actor.hpp"
#include "core/base/timestamp.hpp"
#include "core/domain/backoff.hpp"
#include "core/domain/failure_streak.hpp"
#include "core/domain/lifecycle_event.hpp"
#include "core/domain/lifecycle_log.hpp"

namespace outbox {

/// What one pass did.
struct pass_outcome {
  int64_t rows = 0;
  bool more = false; ///< a full batch: more work is probably waiting
  std::optional<std::chrono::milliseconds> due; ///< earliest known work
  /// Pass again after this, below due's floor: the router, while ordered
  /// events wait for older transactions to end (milliseconds, usually).
  std::optional<std::chrono::milliseconds> poll;
  /// Pass again at once, though the batch was not full: the pass already
  /// waited inside (the result handler's fetch), so no timer is needed.
  bool again = false;
  /// Wake-ups do not bring the next pass forward: it comes at `due`. A
  /// dispatcher at its in-flight limit sets it, as new work cannot go out
  /// before results free room.
  bool hold = false;
  caf::error error;
  std::map<std::string, int64_t> counters; ///< added to the metrics
  std::map<std::string, int64_t> gauges;   ///< replace the metrics' values
  /// Logged and sent to the node's lifecycle group after the pass.
  std::vector<lifecycle_event> events;
  /// Latencies seen in the pass, in seconds, by histogram name (added to
  /// actor_metrics::histograms).
  std::map<std::string, std::vector<double>> latencies;
};

/// A role's pass, free of CAF so that it reads like the design's passes.
class pass_role {
public:
  virtual ~pass_role() = default;
  virtual pass_outcome pass() = 0;
  /// Called in place of a pass while this node does not lead the role for
  /// its database: a role that holds what the leader needs lets go of it.
  virtual void stand_aside() {}
};

/// Who may run an actor's passes where one node leads them per database
/// (core/domain/leader_assignment.hpp).
struct pass_leader {
  std::shared_ptr<leadership_view> view;
  std::string role; ///< the led role: "router" or "sweeper"
  std::string node; ///< this node's name, as the status node knows it
};

struct pass_settings {
  std::chrono::milliseconds idle{1000};        ///< --sleep
  std::chrono::milliseconds max_backoff{5000}; ///< cap after failures
  bool self_driven = true; ///< false with --once: passes only on request
  /// After a pass that handled at least `linger_min_rows` rows (but not a
  /// full batch), the next pass waits `linger`, wake-ups notwithstanding:
  /// work arrives faster than passes of a few rows can take it, and a
  /// bigger batch costs every stage behind it much less per row. 0: never.
  std::chrono::milliseconds linger{0};
  int64_t linger_min_rows = 1;
  /// The database the actor serves, when the config names several: its
  /// name in the status view, logs and metrics says which ("router@orders").
  std::string database;
  /// Set where one node leads the actor's role for its database: on the
  /// others its passes wait (the gauge `leader` says which it is).
  std::optional<pass_leader> leader;
};

/// The delay before the next pass (0 = at once).
std::chrono::milliseconds next_delay(const pass_outcome& out,
                                     const pass_settings& s,
                                     const failure_streak& failures);

/// True when the next pass lingers (pass_settings::linger).
bool lingers(const pass_outcome& out, const pass_settings& s);

/// Logs a failed pass when `streak` says so: the first of a run, then a
/// summary now and then (our own error rendering only, never a server text).
void log_failed_pass(const actor_metrics& m, failure_streak& streak);

/// Logs the end of a run of failed passes (if there was one).
void log_recovered(const actor_metrics& m, failure_streak& streak);

/// Adds a pass's figures to an actor's metrics.
void record(actor_metrics& m, const pass_outcome& out, int64_t now);

struct pass_state {
  std::shared_ptr<pass_role> role;
  actor_metrics metrics;
  pass_settings settings;
  node_agent_actor agent; ///< may be null (tests, a node on its own)
  caf::group lifecycle;   ///< the node's lifecycle group
  uint64_t token = 0;
  bool pass_queued = false; ///< an immediate pass waits in the mailbox
  bool lingering = false;   ///< the next pass is armed: wake-ups wait for it
  bool backing_off = false; ///< a failed pass armed the next: wake-ups wait
  /// The run of failed passes in a row: its log lines and its backoff.
  failure_streak failures;
  /// Called after each self-driven pass with whether the next pass comes
  /// without a wake-up (a full batch or a linger); the router's listener
  /// demand hangs here.
  std::function<void(bool self_paced)> after_pass;
  static const char* name;
};

/// Runs one pass, reports it and arms the next one.
template <class Self>
pass_outcome run_pass(Self* self) {
  auto& st = self->state;
  st.pass_queued = false;
  st.lingering = false;
  st.backing_off = false;
  auto started = std::chrono::steady_clock::now();
  pass_outcome out;
  auto& leader = st.settings.leader;
  bool leads = !leader
               || leader->view->leads(leader->role, st.settings.database,
                                      leader->node, started);
  if (leader)
    st.metrics.gauges["leader"] = leads ? 1 : 0;
  // A node that does not lead looks again after its idle sleep; what its
  // figures say (passes, connected, the last pass) stays its last real
  // pass's, which the leader assignment reads.
  if (!leads)
    st.role->stand_aside();
  if (leads) {
    out = st.role->pass();
    out.latencies["pass"].push_back(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
        .count());
    record(st.metrics, out, now_ms());
  }
  if (out.error)
    log_failed_pass(st.metrics, st.failures);
  else
    log_recovered(st.metrics, st.failures);
  for (auto& ev : out.events) {
    if (ev.database.empty()) // ids repeat across databases: say whose
      ev.database = st.metrics.database;
    log_lifecycle(st.metrics.role.c_str(), ev);
    caf::anon_send(st.lifecycle, ev); // typed actors cannot send() to a group
  }
  if (st.agent)
    self->send(st.agent, metrics_atom::value, st.metrics);
  if (st.settings.self_driven) {
    auto token = ++st.token;
    auto delay = next_delay(out, st.settings, st.failures);
    st.lingering = lingers(out, st.settings);
    st.backing_off = static_cast<bool>(out.error);
    // A linger gathers a bigger batch; a poll (ordered events waiting for
    // older transactions) waits at least as long when it lingers anyway.
    if (st.lingering)
      delay = out.poll ? std::max(delay, st.settings.linger)
                       : std::min(delay, st.settings.linger);
    st.lingering = st.lingering || (out.hold && !out.error);
    if (st.after_pass)
      // A node that does not lead needs no wake-ups either: its router's
      // event watcher pauses after a few such passes (listen_demand.hpp),
      // and the first pass that leads and waits for work starts it again.
      st.after_pass(!leads
                    || (!out.error && (out.more || out.again || st.lingering)));
    if (delay.count() == 0) {
      st.pass_queued = true;
      self->send(self, pass_atom::value, token);
    }
    else
      self->delayed_send(self, delay, pass_atom::value, token);
  }
  return out;
}

/// The pass handlers of a pass actor, followed by `extra` handlers.
template <class Handle, class Self, class... Extra>
typename Handle::behavior_type
pass_behavior(Self* self, std::shared_ptr<pass_role> role, actor_metrics who,
              pass_settings settings, node_agent_actor agent, Extra... extra) {
  self->state.role = std::move(role);
  self->state.metrics = std::move(who);
  if (!settings.database.empty()) {
    self->state.metrics.name += "@" + settings.database;
    self->state.metrics.database = settings.database;
  }
  self->state.settings = settings;
  self->state.agent = std::move(agent);
  self->state.lifecycle = lifecycle_group(self->system());
  // The first pass starts with the spawner's wake-up: a message sent to
  // itself here would be handled before a test could observe it.
  return {
    // A wake-up queues one pass behind the messages already waiting: the
    // wake-ups that pile up meanwhile (one per commit under load) are
    // covered by that pass and cost nothing.
    // During a linger or a backoff the armed pass covers the wake-up.
    [=](wake_atom) {
      auto& st = self->state;
      if (st.pass_queued || st.lingering || st.backing_off)
        return;
      st.pass_queued = true;
      self->send(self, pass_atom::value, ++st.token);
    },
    [=](pass_atom, uint64_t token) {
      if (token == self->state.token) // an older schedule was replaced
        run_pass(self);
    },
    [=](once_atom) -> caf::result<int64_t> {
      // Drains the backlog, bounded so that a steady stream still ends.
      int64_t rows = 0;
      for (int i = 0; i < 1000; ++i) {
        auto out = run_pass(self);
        if (out.error)
          return out.error;
        rows += out.rows;
        if (!out.more)
          break;
      }
      return rows;
    },
    extra...,
  };
}

/// The metrics identity of an actor.
actor_metrics identity(std::string role, std::string queue = "");

} // namespace outbox
