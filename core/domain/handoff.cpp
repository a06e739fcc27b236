#include "core/domain/handoff.hpp"

namespace outbox {

handoff_box::handoff_box(std::string queue, int32_t max_in_flight)
  : queue_(std::move(queue)), max_in_flight_(max_in_flight) {
}

void handoff_box::put(std::vector<handed_delivery> ds) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (waiting_.empty()) {
    waiting_ = std::move(ds);
    return;
  }
  waiting_.insert(waiting_.end(), std::make_move_iterator(ds.begin()),
                  std::make_move_iterator(ds.end()));
}

std::vector<handed_delivery> handoff_box::take() {
  std::lock_guard<std::mutex> guard{mutex_};
  std::vector<handed_delivery> out;
  out.swap(waiting_);
  return out;
}

size_t handoff_box::waiting() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return waiting_.size();
}

} // namespace outbox
