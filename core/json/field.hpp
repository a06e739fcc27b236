// How an event type describes its fields to a serializer. C++ has no
// reflection, so each type lists its fields once in an `inspect` overload,
// in the style of CAF's inspectors:
//
//   struct stock_changed {
//     static constexpr const char* event_type = "stock.changed";
//     std::string sku;
//     int64_t available = 0;
//     std::optional<std::string> note;
//   };
//   template <class Inspector>
//   bool inspect(Inspector& f, stock_changed& x) {
//     return f(outbox::field("sku", x.sku),
//              outbox::field("available", x.available),
//              outbox::field("note", x.note));
//   }
//
// The same overload serves writing and reading.
#pragma once

namespace outbox {

/// A named reference to one member; only lives during one inspect call.
template <class T>
struct field_ref {
  const char* name;
  T& value;
};

/// Names a member for an inspector.
template <class T>
field_ref<T> field(const char* name, T& value) {
  return {name, value};
}

} // namespace outbox
