#include "tools/outboxctl/admin_output.hpp"

#include <ctime>
#include <iostream>

#include "core/base/errors.hpp"

namespace outbox {

int admin_usage(const std::string& why) {
  std::cerr << "outboxctl: " << why << "\n";
  return admin_exit_usage;
}

int admin_db_failed(const std::string& verb, const caf::error& err) {
  std::cerr << "outboxctl " << verb << ": " << render(err) << "\n";
  return admin_exit_failure;
}

// Times in the operator's own time zone (TZ), as they read them elsewhere.
std::string local_time(int64_t unix_seconds) {
  if (unix_seconds == 0)
    return "-";
  std::time_t t = unix_seconds;
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %Z", &tm);
  return buf;
}

std::optional<std::vector<int64_t>> parse_ids(const std::vector<std::string>& xs) {
  std::vector<int64_t> out;
  for (auto& x : xs) {
    if (x.empty() || x.size() > 18 || x.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    out.push_back(std::stoll(x));
    if (out.back() == 0) // ids start at 1: 0 names nothing
      return std::nullopt;
  }
  return out;
}


} // namespace outbox
