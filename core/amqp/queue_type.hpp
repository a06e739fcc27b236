// The RabbitMQ queue type a job queue and its results queue are declared
// with (`x-queue-type`). Classic queues live on one node; quorum queues are
// replicated (Raft) over the cluster's nodes and survive the loss of a
// minority of them, which is what a replicated production broker wants.
#pragma once

#include <optional>
#include <string>

namespace outbox {

enum class queue_type {
  classic,
  quorum,
};

/// Returns "classic" or "quorum" (the config's and RabbitMQ's spelling).
const char* to_string(queue_type x);

/// Parses "classic" or "quorum"; nullopt for anything else.
std::optional<queue_type> parse_queue_type(const std::string& text);

} // namespace outbox
