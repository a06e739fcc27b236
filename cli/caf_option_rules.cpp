#include "cli/caf_option_rules.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>

#include <caf/config_value.hpp>
#include <caf/timespan.hpp>

namespace outbox {

namespace {

using namespace std::chrono_literals;

// A count, or a duration when is_duration: both within [low, high].
struct option_range {
  bool is_duration;
  int64_t low;
  int64_t high;
};

constexpr int64_t ns(caf::timespan t) {
  return t.count();
}

const std::map<std::string, option_range>& passed_options() {
  static const std::map<std::string, option_range> options{
    {"scheduler.max-threads", {false, 1, 256}},
    {"scheduler.max-throughput", {false, 1, 1000000}},
    {"work-stealing.aggressive-poll-attempts", {false, 0, 1000000}},
    {"work-stealing.aggressive-steal-interval", {false, 1, 1000000}},
    {"work-stealing.moderate-poll-attempts", {false, 0, 1000000}},
    {"work-stealing.moderate-steal-interval", {false, 1, 1000000}},
    {"work-stealing.moderate-sleep-duration", {true, 0, ns(1s)}},
    {"work-stealing.relaxed-steal-interval", {false, 1, 1000000}},
    {"work-stealing.relaxed-sleep-duration", {true, 0, ns(10s)}},
    // Heartbeats are how a frozen node is seen as down.
    {"middleman.heartbeat-interval", {true, ns(10ms), ns(60s)}},
    {"middleman.connection-timeout", {true, ns(100ms), ns(600s)}},
    {"middleman.max-consecutive-reads", {false, 1, 1000000}},
    {"middleman.workers", {false, 0, 64}},
  };
  return options;
}

std::string range_text(const option_range& r) {
  if (!r.is_duration)
    return "an integer from " + std::to_string(r.low) + " to "
           + std::to_string(r.high);
  auto show = [](int64_t v) {
    return caf::to_string(caf::config_value{caf::timespan{v}});
  };
  return "a duration from " + show(r.low) + " to " + show(r.high);
}

std::string check_value(const std::string& name, const caf::config_value& v,
                        const option_range& r) {
  std::optional<int64_t> x;
  if (r.is_duration) {
    if (auto t = caf::get_if<caf::timespan>(&v))
      x = t->count();
  } else if (auto i = caf::get_if<int64_t>(&v)) {
    x = *i;
  }
  if (x && *x >= r.low && *x <= r.high)
    return {};
  return "--" + name + ": must be " + range_text(r);
}

} // namespace

bool is_passed_caf_option(const std::string& name) {
  return passed_options().count(name) > 0;
}

std::string check_caf_options(const caf::settings& content) {
  for (auto& [category, value] : content) {
    auto group = caf::get_if<caf::settings>(&value);
    if (group == nullptr)
      continue; // the program's own options live at the top level
    for (auto& [key, v] : *group) {
      auto name = std::string{category} + "." + std::string{key};
      auto it = passed_options().find(name);
      if (it == passed_options().end())
        return "--" + name + ": not supported by this program";
      if (auto problem = check_value(name, v, it->second); !problem.empty())
        return problem;
    }
  }
  return {};
}

} // namespace outbox
