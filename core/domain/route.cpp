#include "core/domain/route.hpp"

#include "core/base/text.hpp"

namespace outbox {

const char* to_string(merge_mode x) {
  switch (x) {
    case merge_mode::replace: return "replace";
    case merge_mode::json_merge: return "json-merge";
    case merge_mode::none: return "none";
  }
  return "replace";
}

std::optional<merge_mode> parse_merge_mode(const std::string& text) {
  if (text == "replace") return merge_mode::replace;
  if (text == "json-merge") return merge_mode::json_merge;
  if (text == "none") return merge_mode::none;
  return std::nullopt;
}

const char* to_string(key_ordering x) {
  return x == key_ordering::key ? "key" : "none";
}

std::optional<key_ordering> parse_key_ordering(const std::string& text) {
  if (text == "none") return key_ordering::none;
  if (text == "key") return key_ordering::key;
  return std::nullopt;
}

const char* to_string(failure_policy x) {
  return x == failure_policy::block_key ? "block" : "continue";
}

std::optional<failure_policy> parse_failure_policy(const std::string& text) {
  if (text == "continue") return failure_policy::continue_key;
  if (text == "block") return failure_policy::block_key;
  return std::nullopt;
}

std::string check_queue_name(const std::string& name) {
  // The results queue appends ".results" to the 255 bytes AMQP allows.
  if (auto rule = check_amqp_name(name, 247); !rule.empty())
    return rule;
  if (name.rfind("amq.", 0) == 0)
    return "must not start with \"amq.\" (reserved by RabbitMQ)";
  return {};
}

} // namespace outbox
