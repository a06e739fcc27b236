#include "core/domain/relay_stalls.hpp"

#include <algorithm>

namespace outbox {

namespace {

double seconds_between(relay_stalls::clock::time_point from,
                       relay_stalls::clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

} // namespace

relay_stalls::relay_stalls(std::vector<std::string> queues, stall_settings s)
  : s_(s) {
  for (auto& q : queues)
    queues_[q];
}

void relay_stalls::end_stall(queue_state& q, clock::time_point at) {
  q.stalled = false;
  q.ended.push_back({q.stalled_since, at});
  if (q.ended.size() > s_.max_outages)
    q.ended.erase(q.ended.begin());
}

void relay_stalls::observe(const results_liveness& view, clock::time_point at) {
  any_view_ = true;
  view_at_ = at;
  for (auto& [name, q] : queues_) {
    auto it = view.find(name);
    bool alive = it != view.end()
                 && std::chrono::milliseconds{it->second} <= s_.stale_after;
    if (it != view.end()) {
      q.ever_seen = true;
      q.last_alive = std::max(q.last_alive,
                              at - std::chrono::milliseconds{it->second});
    }
    if (alive && q.stalled)
      end_stall(q, at);
    else if (!alive && !q.stalled && q.ever_seen) {
      // From when it was last heard: what it missed since then counts.
      q.stalled = true;
      q.stalled_since = q.last_alive;
    }
  }
}

sweep_holds relay_stalls::holds(clock::time_point now) {
  // No fresh view: nobody can tell, so every queue is swept. A stall still
  // open ends where the view ended, and moves deadlines for that long.
  bool fresh = any_view_ && now - view_at_ <= s_.view_expires_after;
  sweep_holds out;
  for (auto& [name, q] : queues_) {
    if (q.stalled && !fresh)
      end_stall(q, view_at_);
    if (q.stalled)
      out.stalled.push_back(name);
    auto old = [&](const outage& o) { return now - o.to > s_.keep_outages; };
    q.ended.erase(std::remove_if(q.ended.begin(), q.ended.end(), old),
                  q.ended.end());
    for (auto& o : q.ended)
      out.outages.push_back({name, seconds_between(o.to, now),
                             seconds_between(o.from, o.to)});
  }
  return out;
}

std::vector<std::string> relay_stalls::stalled() const {
  std::vector<std::string> out;
  for (auto& [name, q] : queues_)
    if (q.stalled)
      out.push_back(name);
  return out;
}

} // namespace outbox
