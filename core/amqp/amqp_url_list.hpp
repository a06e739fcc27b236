// The broker list every process takes where it took one AMQP URL: the
// nodes of one RabbitMQ cluster, as "URL[,URL...]". Each entry is a whole
// amqp:// or amqps:// URL (its own credentials, vhost and TLS query, read by
// parse_amqp_url); blanks around an entry are ignored; a comma inside a URL
// (a password, a file path) is written %2C. A single URL is a list of one.
// Connections try the entries in order (amqp_session: the next one first
// after a lost connection).
#pragma once

#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace outbox {

/// Brokers a list may name: a cluster has a handful of nodes, and every
/// failed attempt of a reconnect costs up to the connect timeout.
constexpr size_t max_amqp_urls = 16;

/// Splits and checks a broker list: every entry must parse. errc::invalid_url
/// naming the entry by its position ("broker 2 of 3"), never echoing it (it
/// may hold a password).
caf::expected<std::vector<std::string>> split_amqp_urls(const std::string& list);

} // namespace outbox
