// The deterministic setting of the actor tests: CAF's test coordinator
// (messages and timers run only when the test says so) with the outbox's
// message types, plus small stand-in actors that record what they receive.
#pragma once

#include <caf/test/dsl.hpp>

#include "actors/lifecycle_group.hpp"
#include "actors/message_types.hpp"
#include "actors/node_agent_actor.hpp"
#include "actors/pass_loop.hpp"
#include "tests/fakes/fake_stores.hpp"

namespace outbox::testing {

struct actor_test_config : caf::actor_system_config {
  actor_test_config() { outbox::register_message_types(*this); }
};

// The stand-ins take a label: CAF 0.17.6 dereferences a null argument
// tuple when a function-based actor is spawned without arguments (UBSan
// reports it), so every spawned actor here gets one.

/// A pass actor that only counts its wake-ups (a dispatcher stand-in).
struct wake_counter_state {
  std::string label;
  int wakes = 0;
  static inline const char* name = "wake counter";
};

inline pass_actor::behavior_type
wake_counter(pass_actor::stateful_pointer<wake_counter_state> self,
             std::string label) {
  self->state.label = std::move(label);
  return {
    [self](wake_atom) { ++self->state.wakes; },
    [](pass_atom, uint64_t) {},
    [](once_atom) { return int64_t{0}; },
  };
}

/// A node agent stand-in that keeps what the status actor sends it.
struct agent_probe_state {
  std::string label;
  std::vector<std::string> wakeups; ///< the states of the wake-up path
  std::vector<actor_metrics> metrics;
  std::vector<lifecycle_event> lifecycle;
  static inline const char* name = "agent probe";
};

inline node_agent_actor::behavior_type
agent_probe(node_agent_actor::stateful_pointer<agent_probe_state> self,
            std::string label) {
  self->state.label = std::move(label);
  return {
    [](status_atom) { return node_report{}; },
    [self](metrics_atom, actor_metrics& m) {
      self->state.metrics.push_back(std::move(m));
    },
    [self](wakeup_atom, std::string& degraded) {
      self->state.wakeups.push_back(std::move(degraded));
    },
    [](join_atom, node_info&) {},
    [](tick_atom) {},
    [self](const lifecycle_event& ev) { self->state.lifecycle.push_back(ev); },
    [](drain_atom) { return false; },
  };
}

/// An embedder's subscriber: joins the lifecycle group, keeps every event.
struct lifecycle_recorder_state {
  std::string label;
  std::vector<lifecycle_event> events;
  static inline const char* name = "lifecycle recorder";
};

inline caf::behavior
lifecycle_recorder(caf::stateful_actor<lifecycle_recorder_state>* self,
                   std::string label) {
  self->state.label = std::move(label);
  self->join(lifecycle_group(self->system()));
  return {
    [self](const lifecycle_event& ev) { self->state.events.push_back(ev); },
  };
}

/// The kinds of `evs`, in order, for compact checks.
inline std::vector<std::string> kinds(const std::vector<lifecycle_event>& evs) {
  std::vector<std::string> out;
  for (auto& ev : evs)
    out.push_back(to_string(ev.kind));
  return out;
}

/// Passes only when a test sends wake or once: no timers to drive.
inline pass_settings manual_passes() {
  pass_settings s;
  s.self_driven = false;
  return s;
}

struct actor_fixture : test_coordinator_fixture<actor_test_config> {
  template <class Handle>
  pass_state& pass_state_of(const Handle& h) {
    return deref<typename Handle::template stateful_base<pass_state>>(h).state;
  }

  /// Stops actors that re-arm timers, so the fixture's destructor (which
  /// runs until no timer is left) terminates.
  template <class... Handles>
  void stop(const Handles&... hs) {
    (caf::anon_send_exit(hs, caf::exit_reason::user_shutdown), ...);
    sched.run();
  }
};

} // namespace outbox::testing
