// The atoms of the actors' messages (CAF 0.17: at most 10 characters), one
// list so that no two interfaces give one name two meanings.
#pragma once

#include <caf/atom.hpp>

namespace outbox {

/// Work may be waiting: run a pass now (router or NOTIFY → dispatcher,
/// NOTIFY → router).
using wake_atom = caf::atom_constant<caf::atom("wake")>;
/// A scheduled pass; carries the token of the schedule that armed it.
using pass_atom = caf::atom_constant<caf::atom("pass")>;
/// Run passes until no work is left, reply with the rows handled (--once).
using once_atom = caf::atom_constant<caf::atom("once")>;
/// An actor's latest figures.
using metrics_atom = caf::atom_constant<caf::atom("metrics")>;
/// A node announces itself and its actors to the status actor.
using join_atom = caf::atom_constant<caf::atom("join")>;
/// Ask the status actor for the cluster view and the database counts.
using status_atom = caf::atom_constant<caf::atom("status")>;
/// A node's lifecycle event counts since it started, per kind.
using lifecycle_atom = caf::atom_constant<caf::atom("lifecycle")>;
/// The node agent's timer: forward metrics, or try to reach the status node.
using tick_atom = caf::atom_constant<caf::atom("tick")>;
/// The node hands the router its NOTIFY listener.
using listener_atom = caf::atom_constant<caf::atom("listener")>;
/// Whether the router wants NOTIFY wake-ups (router → listener).
using listen_atom = caf::atom_constant<caf::atom("listen")>;
/// Why a node's dispatchers miss wake-ups ("" = they do not): ready
/// listener → node agent → status actor.
using wakeup_atom = caf::atom_constant<caf::atom("wakeups")>;
/// Which queues have a live result handler, and since when it was last
/// heard (node agent → status actor, for the sweeper's relay_stalls).
using liveness_atom = caf::atom_constant<caf::atom("liveness")>;
/// Which node leads each database's routing and sweeping (node agent →
/// status actor; core/domain/leader_assignment.hpp).
using leaders_atom = caf::atom_constant<caf::atom("leaders")>;
/// An operator's drain of a node (outboxctl drain NAME): outboxctl →
/// status actor → that node's agent, which stops the node as SIGTERM does.
using drain_atom = caf::atom_constant<caf::atom("drain")>;

} // namespace outbox
