#include "core/domain/routing_cursor.hpp"

#include <algorithm>

namespace outbox {

std::vector<int64_t> to_ranges(const std::set<int64_t>& ids) {
  std::vector<int64_t> out;
  for (auto id : ids) {
    if (!out.empty() && out.back() == id - 1)
      out.back() = id;
    else
      out.insert(out.end(), {id, id});
  }
  return out;
}

std::optional<std::set<int64_t>> from_ranges(const std::vector<int64_t>& ranges) {
  if (ranges.size() % 2 != 0)
    return std::nullopt;
  std::set<int64_t> out;
  for (size_t i = 0; i < ranges.size(); i += 2) {
    auto first = ranges[i], last = ranges[i + 1];
    if (first > last || last - first >= static_cast<int64_t>(routing_cursor::max_open))
      return std::nullopt;
    for (auto id = first; id <= last; ++id) {
      out.insert(id);
      if (out.size() > routing_cursor::max_open)
        return std::nullopt;
    }
  }
  return out;
}

void routing_cursor::resume(const cursor_state& stored) {
  restarted_ = false;
  done_ = stored.done;
  scanned_ = std::max(stored.scanned, stored.done);
  open_.clear();
  for (auto id : stored.open)
    if (id > done_ && id <= scanned_)
      open_.insert(id);
}

void routing_cursor::restart(int64_t position) {
  restarted_ = true;
  done_ = scanned_ = position;
  open_.clear();
}

std::optional<cursor_state>
routing_cursor::to_store(const routing_step& step) const {
  if (!restarted_ && step.done == done_ && step.scanned == scanned_
      && step.open == open_)
    return std::nullopt;
  return cursor_state{step.done, step.scanned, step.open};
}

routing_step routing_cursor::decide(std::vector<seen_event> seen,
                                    int64_t safe) const {
  routing_step step;
  std::sort(seen.begin(), seen.end(),
            [](const seen_event& a, const seen_event& b) { return a.id < b.id; });
  // Every transaction that took an id up to C has ended.
  safe = std::max(safe, done_);
  auto keep_open = [&](int64_t id) {
    if (id > safe)
      step.open.insert(id);
  };
  auto take = [&](const seen_event& e) {
    if (e.quarantined)
      return;
    if (!e.routable) {
      if (!e.set_aside)
        step.set_aside.push_back(e.id);
      return;
    }
    if (e.ordered && e.id > safe) {
      // A set-aside one stays where it is and is read again next time.
      if (!e.set_aside)
        step.open.insert(e.id);
      ++step.held;
      return;
    }
    step.route.push_back(e.id);
  };
  std::set<int64_t> visible_open;
  int64_t frontier = scanned_;
  bool cut = false;
  for (auto& e : seen) {
    if (e.set_aside) {
      take(e);
    } else if (e.id <= scanned_) {
      visible_open.insert(e.id);
      take(e);
    } else if (!cut) {
      // The ids between the last one seen and this one are gaps.
      // Those up to the safe id are settled: the walk starts above them.
      for (int64_t id = std::max(frontier, safe) + 1; id < e.id && !cut; ++id) {
        keep_open(id);
        if (step.open.size() + open_.size() >= max_open) {
          frontier = id;
          cut = true;
        }
      }
      if (cut)
        break;
      frontier = e.id;
      take(e);
    }
  }
  for (auto id : open_)
    if (visible_open.count(id) == 0)
      keep_open(id); // still invisible: open until the horizon passes it
  std::sort(step.route.begin(), step.route.end());
  step.scanned = frontier;
  step.done = step.open.empty() ? frontier : *step.open.begin() - 1;
  return step;
}

void routing_cursor::commit(routing_step step) {
  restarted_ = false;
  done_ = step.done;
  scanned_ = step.scanned;
  open_ = std::move(step.open);
}

} // namespace outbox
