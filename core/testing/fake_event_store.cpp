#include "core/testing/fake_event_store.hpp"

namespace outbox::testing {

caf::expected<int64_t> fake_event_store::add(pg_conn*, const event& ev) {
  if (auto err = validate_event(ev))
    return err;
  events_.push_back(ev);
  return static_cast<int64_t>(events_.size());
}

} // namespace outbox::testing
