#include "cluster_port/handshake_table.hpp"

namespace outbox::cluster_port {

namespace {

// CAF 0.17's BASP header: 32 bytes, big-endian; the operation in the
// first byte (server_handshake 0 up to heartbeat 6), the payload's length
// in bytes 4 to 7.
constexpr size_t basp_header_size = 32;
constexpr uint8_t basp_last_operation = 6;

uint32_t payload_length(const std::string& header) {
  auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(header[i])); };
  return byte(4) << 24 | byte(5) << 16 | byte(6) << 8 | byte(7);
}

} // namespace

const char* refusal_name(refusal r) {
  switch (r) {
    case refusal::no_certificate:
      return "no_certificate";
    case refusal::unknown_ca:
      return "unknown_ca";
    case refusal::bad_certificate:
      return "bad_certificate";
    case refusal::protocol_garbage:
      return "protocol_garbage";
    case refusal::closed_early:
      return "closed_early";
    case refusal::handshake_timeout:
      return "handshake_timeout";
    case refusal::too_many_half_open:
      return "too_many_half_open";
    case refusal::oversized_header:
      return "oversized_header";
  }
  return "unknown";
}

std::optional<refusal> handshake_table::refuse(entry& e, refusal why) {
  if (e.refused)
    return std::nullopt;
  e.refused = true;
  return why;
}

std::optional<refusal> handshake_table::accepted(int fd, const std::string& address,
                                                 clock::time_point now) {
  size_t same = 0;
  for (auto& [other, e] : open_)
    same += other != fd && !e.refused && e.address == address;
  auto& e = open_[fd] = entry{address, now, false, {}};
  if (same >= limits_.half_open_per_address)
    return refuse(e, refusal::too_many_half_open);
  return std::nullopt;
}

void handshake_table::completed(int fd) {
  open_.erase(fd);
}

std::optional<refusal> handshake_table::failed(int fd, refusal why) {
  auto at = open_.find(fd);
  if (at == open_.end())
    return std::nullopt;
  auto out = refuse(at->second, why);
  open_.erase(at);
  return out;
}

handshake_table::plain_verdict handshake_table::plain_bytes(int fd, const char* data,
                                                            size_t size) {
  auto at = open_.find(fd);
  if (at == open_.end())
    return {};
  auto& e = at->second;
  if (e.refused)
    return {false, std::nullopt};
  if (e.header.size() < basp_header_size) {
    auto taken = std::min(size, basp_header_size - e.header.size());
    e.header.append(data, taken);
    size -= taken;
    if (e.header.size() < basp_header_size)
      return {};
    if (static_cast<uint8_t>(e.header[0]) > basp_last_operation)
      return {false, refuse(e, refusal::protocol_garbage)};
    if (payload_length(e.header) > limits_.max_first_payload)
      return {false, refuse(e, refusal::oversized_header)};
    e.payload_left = payload_length(e.header);
  }
  e.payload_left -= static_cast<uint32_t>(std::min<size_t>(size, e.payload_left));
  if (e.payload_left == 0)
    open_.erase(at);
  return {};
}

std::vector<int> handshake_table::overdue(clock::time_point now) {
  std::vector<int> out;
  for (auto& [fd, e] : open_)
    if (!e.refused && now - e.since >= limits_.handshake_deadline) {
      e.refused = true;
      out.push_back(fd);
    }
  return out;
}

void handshake_table::closed(int fd) {
  open_.erase(fd);
}

std::string handshake_table::address(int fd) const {
  auto at = open_.find(fd);
  return at == open_.end() ? std::string{} : at->second.address;
}

refusal_log_limit::verdict refusal_log_limit::admit(refusal r,
                                                    clock::time_point now) {
  auto i = static_cast<size_t>(r);
  if (last_[i] && now - *last_[i] < every_) {
    ++unlogged_[i];
    return {};
  }
  last_[i] = now;
  verdict out{true, unlogged_[i]};
  unlogged_[i] = 0;
  return out;
}

} // namespace outbox::cluster_port
