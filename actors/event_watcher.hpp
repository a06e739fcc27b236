// Wakes the router when events commit. The producer's transaction sends no
// NOTIFY (it would serialise every publishing commit on PostgreSQL's
// cluster-wide notify lock), so the watcher probes the newest events over a
// connection of its own (core/pg/event_probe.hpp) and wakes the router
// when their signature changes. It probes soon after a change and backs
// off while nothing happens: an idle relay asks about 40 times a second.
// While the router passes by itself under load it says so (listen_atom
// false) and the watcher stops probing; told to watch again, it wakes the
// router once for what committed meanwhile. Losing the connection only
// delays routing until the router's timer: it reconnects with backoff.
#pragma once

#include <chrono>
#include <string>

#include <caf/blocking_actor.hpp>

#include "actors/pass_actor.hpp"
#include "core/domain/schema_names.hpp"

namespace outbox {

/// The probe's schedule: `first` after a change, doubling while nothing
/// changes, up to `idle` (which bounds the wake-up of an idle relay).
struct probe_schedule {
  std::chrono::milliseconds first{1};
  std::chrono::milliseconds idle{25};

  /// The wait after a probe that saw a change (`changed`) or not, given the
  /// wait before it.
  std::chrono::milliseconds next(std::chrono::milliseconds last,
                                 bool changed) const;
};

/// A blocking actor (always detached); stops on an exit message.
void event_watcher(caf::blocking_actor* self, std::string database_url,
                   schema_names names, router_actor router);

} // namespace outbox
