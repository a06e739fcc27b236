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

void relay_stalls::add_outage(queue_state& q, clock::time_point from,
                              clock::time_point to) {
  // Never twice for the same time: an outage starts after the last one.
  if (!q.ended.empty())
    from = std::max(from, q.ended.back().to);
  if (to <= from)
    return;
  q.ended.push_back({from, to});
  if (q.ended.size() > s_.max_outages)
    q.ended.erase(q.ended.begin());
}

void relay_stalls::end_stall(queue_state& q, clock::time_point at) {
  q.stalled = false;
  add_outage(q, q.stalled_since, at);
}

void relay_stalls::observe(const results_liveness& view, clock::time_point at) {
  // A late view (this node paused, or the answers slow): nobody could tell
  // in between, so the gap is an outage of every queue that had handlers.
  auto gap = at - view_at_;
  if (any_view_ && gap > s_.view_late_after && gap <= s_.view_expires_after)
    for (auto& [_, q] : queues_)
      if (q.ever_seen && !q.stalled)
        add_outage(q, view_at_, at);
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
      // From when it was last heard: what it missed since then counts
      // (but not again what an earlier outage counted).
      q.stalled = true;
      q.stalled_since = q.ended.empty()
                          ? q.last_alive
                          : std::max(q.last_alive, q.ended.back().to);
    }
  }
}

sweep_holds relay_stalls::holds(clock::time_point now) {
  // A late view holds every queue that had handlers until a fresh one
  // comes (its gap then counts as an outage). No view for a minute:
  // nobody can tell, so every queue is swept; a stall still open ends
  // where the view ended, and moves deadlines for that long.
  bool late = any_view_ && now - view_at_ > s_.view_late_after;
  bool gone = any_view_ && now - view_at_ > s_.view_expires_after;
  sweep_holds out;
  for (auto& [name, q] : queues_) {
    if (q.stalled && gone)
      end_stall(q, view_at_);
    if (q.stalled || (late && !gone && q.ever_seen))
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
