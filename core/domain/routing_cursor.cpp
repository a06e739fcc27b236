#include "core/domain/routing_cursor.hpp"

#include <algorithm>

namespace outbox {

void routing_cursor::resume(int64_t stored) {
  if (known_ && stored == stored_)
    return;
  // Another router moved it (or this one starts): what this one remembers
  // above the stored position may be stale, so it looks again from there.
  known_ = true;
  done_ = scanned_ = stored_ = stored;
  open_.clear();
}

void routing_cursor::restart(int64_t position) {
  known_ = true;
  done_ = scanned_ = position;
  stored_ = -1;
  open_.clear();
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
  done_ = step.done;
  scanned_ = step.scanned;
  open_ = std::move(step.open);
}

} // namespace outbox
