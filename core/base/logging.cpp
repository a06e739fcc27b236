#include "core/base/logging.hpp"

#include <mutex>

#include <spdlog/sinks/stdout_sinks.h>

namespace outbox {

std::shared_ptr<spdlog::logger> logger(const std::string& name) {
  if (auto existing = spdlog::get(name))
    return existing;
  // Actors and workers on several threads may ask for a new name at once:
  // spdlog throws when a second thread registers the same name.
  static std::mutex creating;
  std::lock_guard<std::mutex> guard{creating};
  if (auto existing = spdlog::get(name))
    return existing;
  auto log = spdlog::stderr_logger_mt(name);
  log->set_pattern("ts=%Y-%m-%dT%H:%M:%S.%fZ level=%l logger=%n %v",
                   spdlog::pattern_time_type::utc);
  log->flush_on(spdlog::level::warn);
  return log;
}

bool set_log_level(const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    return false;
  spdlog::set_level(lvl);
  return true;
}

std::string kv(const std::string& value) {
  if (!value.empty() && value.find_first_of(" \"=\t\n") == std::string::npos)
    return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += (c == '\n' || c == '\t') ? ' ' : c;
  }
  return out + "\"";
}

std::string format_fields(const delivery_fields& f) {
  auto out = "outboxEventId=" + std::to_string(f.event_id)
             + " outboxDeliveryId=" + std::to_string(f.delivery_id)
             + (f.event_type.empty() ? "" : " eventType=" + kv(f.event_type))
             + " job=" + kv(f.job) + " queue=" + kv(f.queue)
             + " status=" + kv(f.status)
             + " attempts=" + std::to_string(f.attempts);
  if (!f.reason.empty())
    out += " reason=" + kv(f.reason);
  return out;
}

} // namespace outbox
