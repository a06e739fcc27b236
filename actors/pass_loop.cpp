#include "actors/pass_loop.hpp"

#include <algorithm>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/base/timestamp.hpp"

namespace outbox {

const char* pass_state::name = "outbox pass actor";

std::chrono::milliseconds next_delay(const pass_outcome& out,
                                     const pass_settings& s,
                                     const failure_streak& failures) {
  using std::chrono::milliseconds;
  if (out.error)
    return failures.backoff(s.max_backoff);
  if (out.more || out.again)
    return milliseconds{0};
  if (out.poll)
    return std::min(*out.poll, s.idle);
  if (out.due)
    // A floor keeps a dispatcher whose ready rows are locked by another one
    // (SKIP LOCKED) from spinning.
    return std::clamp(*out.due, std::min(milliseconds{100}, s.idle), s.idle);
  return s.idle;
}

bool lingers(const pass_outcome& out, const pass_settings& s) {
  return s.linger.count() > 0 && !out.error && !out.more && !out.again
         && out.rows > 0 && out.rows >= s.linger_min_rows;
}

void log_failed_pass(const actor_metrics& m, failure_streak& streak) {
  if (!streak.failed())
    return;
  if (streak.count() == 1)
    logger(m.role)->warn("event=pass_failed actor={} error={}", kv(m.name),
                         kv(m.last_error));
  else
    logger(m.role)->warn("event=pass_still_failing actor={} failures={} since={} "
                         "error={}",
                         kv(m.name), streak.count(),
                         format_timestamp(streak.since()), kv(m.last_error));
}

void log_recovered(const actor_metrics& m, failure_streak& streak) {
  if (auto n = streak.succeeded(); n > 0)
    logger(m.role)->info("event=pass_recovered actor={} failures={}", kv(m.name), n);
}

void record(actor_metrics& m, const pass_outcome& out, int64_t now) {
  ++m.passes;
  m.rows += out.rows;
  m.last_pass_ms = now;
  m.connected = !out.error;
  if (out.error) {
    ++m.errors;
    m.last_error = render(out.error);
  }
  for (auto& [k, v] : out.counters)
    m.counters[k] += v;
  for (auto& [k, v] : out.gauges)
    m.gauges[k] = v;
  for (auto& [name, seconds] : out.latencies)
    for (auto s : seconds)
      m.histograms[name].observe(s);
}

actor_metrics identity(std::string role, std::string queue) {
  actor_metrics m;
  m.name = queue.empty() ? role : role + " " + queue;
  m.role = std::move(role);
  m.queue = std::move(queue);
  return m;
}

} // namespace outbox
