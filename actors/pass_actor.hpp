// The interface of every actor that runs passes (router, dispatcher, result
// handler, sweeper), and the router's extension of it.
#pragma once

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/atoms.hpp"

namespace outbox {

/// Router, dispatcher, result handler and sweeper all run passes.
using pass_actor = caf::typed_actor<caf::reacts_to<wake_atom>,
                                    caf::reacts_to<pass_atom, uint64_t>,
                                    caf::replies_to<once_atom>::with<int64_t>>;

/// A dispatcher and the queue it serves.
struct dispatcher_entry {
  std::string queue;
  pass_actor dispatcher;
};

/// The router also learns its NOTIFY listener, to tell it when wake-ups
/// are needed (listen_demand.hpp).
using router_actor = pass_actor::extend<caf::reacts_to<listener_atom, caf::actor>>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, dispatcher_entry& x) {
  return f(caf::meta::type_name("dispatcher_entry"), x.queue, x.dispatcher);
}

} // namespace outbox
