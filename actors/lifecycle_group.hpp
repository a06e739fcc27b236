// Where a node's lifecycle events go: one local CAF group per actor system
// (a node has its own), to which every pass actor sends a `lifecycle_event`
// per step. An embedder subscribes with `self->join(lifecycle_group(sys))`
// (a typed actor with subscribe_lifecycle) and handles
// `[](const outbox::lifecycle_event& ev) {...}`; the node agent counts them
// for the status view.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/group.hpp>

#include "core/domain/lifecycle_event.hpp"

namespace outbox {

/// The name of the local group ("outbox.lifecycle").
extern const char* const lifecycle_group_name;

/// The lifecycle group of this actor system.
caf::group lifecycle_group(caf::actor_system& sys);

/// Subscribes a typed actor (which must accept `lifecycle_event`) to the
/// group until it terminates; dynamically typed actors use join instead.
template <class Self>
void subscribe_lifecycle(Self* self) {
  auto g = lifecycle_group(self->system());
  if (g->subscribe(self->ctrl()))
    self->attach_functor([g, who = self->ctrl()] { g->unsubscribe(who); });
}

/// An observer for the producer API (db_event_store::observe) that sends
/// its `stored` events to the group, so they reach the same subscribers.
lifecycle_observer lifecycle_forwarder(caf::actor_system& sys);

} // namespace outbox
