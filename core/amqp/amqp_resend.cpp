#include "core/amqp/amqp_resend.hpp"

namespace outbox {

namespace {

bool renew(std::unique_ptr<amqp_client>& client, const amqp_connect_fn& connect) {
  client.reset();
  auto c = connect();
  if (!c)
    return false;
  client = std::move(*c);
  return true;
}

} // namespace

std::vector<publish_status>
publish_resending(std::unique_ptr<amqp_client>& client,
                  const amqp_connect_fn& connect,
                  const std::vector<outgoing_message>& ms,
                  std::chrono::milliseconds timeout) {
  std::vector<publish_status> out(ms.size(), publish_status::unsent);
  if ((!client || !client->is_open()) && !renew(client, connect))
    return out;
  out = client->publish_batch(ms, timeout);
  std::vector<size_t> again;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == publish_status::unsent)
      again.push_back(i);
  if (!again.empty() && renew(client, connect)) {
    std::vector<outgoing_message> resend;
    resend.reserve(again.size());
    for (auto i : again)
      resend.push_back(ms[i]);
    auto second = client->publish_batch(resend, timeout);
    for (size_t k = 0; k < again.size() && k < second.size(); ++k)
      out[again[k]] = second[k];
  }
  if (client && !client->is_open())
    client.reset();
  return out;
}

} // namespace outbox
