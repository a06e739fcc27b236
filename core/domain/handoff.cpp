#include "core/domain/handoff.hpp"

namespace outbox {

handoff_box::handoff_box(std::string queue) : queue_(std::move(queue)) {
}

handoff_queue handoff_box::offer() const {
  return {queue_, accepting() ? credit() : 0};
}

void handoff_box::close() {
  closed_.store(true);
  accepting_.store(false);
}

bool handoff_box::put(std::vector<handed_delivery> ds) {
  if (closed_.load())
    return false;
  // A claim may have set a fresh credit meanwhile, which counted these
  // already (they committed before it): then this takes a little too
  // much off it, and the next claim sets it right.
  auto used = static_cast<int64_t>(ds.size());
  auto left = credit_.load();
  while (!credit_.compare_exchange_weak(left, left > used ? left - used : 0)) {
  }
  std::lock_guard<std::mutex> guard{mutex_};
  waiting_.insert(waiting_.end(), std::make_move_iterator(ds.begin()),
                  std::make_move_iterator(ds.end()));
  return true;
}

std::vector<handed_delivery> handoff_box::take(size_t max) {
  std::lock_guard<std::mutex> guard{mutex_};
  std::vector<handed_delivery> out;
  if (waiting_.size() <= max) {
    out.swap(waiting_);
    return out;
  }
  auto end = waiting_.begin() + static_cast<std::ptrdiff_t>(max);
  out.assign(std::make_move_iterator(waiting_.begin()), std::make_move_iterator(end));
  waiting_.erase(waiting_.begin(), end);
  return out;
}

size_t handoff_box::waiting() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return waiting_.size();
}

} // namespace outbox
