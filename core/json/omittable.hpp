// An optional field that the JSON writer leaves out when it is empty,
// where a std::optional writes null: for documents whose readers test
// whether a key is there. The reader takes a missing key as empty.
#pragma once

#include <optional>

namespace outbox {

template <class T>
struct omittable : std::optional<T> {
  using std::optional<T>::optional;
};

} // namespace outbox
