// Event types the tests publish and read back through the serializer, as an
// application would declare its own.
#pragma once

#include <cstdint>
#include <string>

#include "core/json/field.hpp"

namespace outbox::testing {

struct stock_changed {
  static constexpr const char* event_type = "stock.changed";
  std::string sku;
  int64_t available = 0;
};

template <class Inspector>
auto inspect(Inspector& f, stock_changed& x) {
  return f(field("sku", x.sku), field("available", x.available));
}

struct order_placed {
  static constexpr const char* event_type = "order.placed";
  std::string order;
  int64_t items = 0;
};

template <class Inspector>
auto inspect(Inspector& f, order_placed& x) {
  return f(field("order", x.order), field("items", x.items));
}

} // namespace outbox::testing
