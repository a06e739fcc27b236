// A recording event store for an application's unit tests: code written
// against outbox::event_store can be checked for what it published without
// a database (like an `assertPublished`). It applies the same validation as
// the real store, so a bad event fails here as it would in production.
#pragma once

#include <functional>
#include <vector>

#include "core/domain/json_serializer.hpp"
#include "core/producer/event_store.hpp"

namespace outbox::testing {

class fake_event_store : public event_store {
public:
  /// Records `ev` (the connection is ignored and may be null); returns its
  /// id (1, 2, ...) or the validation error the real store would return.
  caf::expected<int64_t> add(pg_conn* conn, const event& ev) override;

  /// Every event recorded so far, in order.
  const std::vector<event>& published() const { return events_; }

  /// The events of `T::event_type`, decoded as `T`.
  template <class T>
  std::vector<T> published_as() const {
    std::vector<T> out;
    for (auto& ev : events_)
      if (ev.event_type == T::event_type)
        if (auto x = read_event<T>(ev.event_type, ev.payload))
          out.push_back(std::move(*x));
    return out;
  }

  /// How many events of `T::event_type` match `pred`.
  template <class T>
  size_t count_published(std::function<bool(const T&)> pred = nullptr) const {
    size_t n = 0;
    for (auto& x : published_as<T>())
      n += !pred || pred(x);
    return n;
  }

  void clear() { events_.clear(); }

private:
  std::vector<event> events_;
};

} // namespace outbox::testing
