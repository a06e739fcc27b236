#include "core/domain/delivery_status.hpp"

#include <algorithm>
#include <iterator>

namespace outbox {

namespace {

using ds = delivery_status;

struct status_row {
  delivery_status status;
  const char* name;
  bool final;
};

// docs/design.md "Delivery states", in lifecycle order.
constexpr status_row states[] = {
  {ds::pending, "pending", false},     {ds::dispatched, "dispatched", false},
  {ds::completed, "completed", true},  {ds::failed, "failed", true},
  {ds::expired, "expired", true},      {ds::superseded, "superseded", true},
};

// row_of indexes the table by the enum's value.
constexpr bool in_enum_order() {
  for (size_t i = 0; i < std::size(states); ++i)
    if (static_cast<size_t>(states[i].status) != i)
      return false;
  return true;
}
static_assert(in_enum_order(), "states must list delivery_status in order");

struct transition {
  delivery_status from, to;
};

// docs/design.md "Transitions": router (coalescing), claim, results,
// sweeper, and the operator's retry of a delivery that gave up.
constexpr transition transitions[] = {
  {ds::pending, ds::superseded}, {ds::pending, ds::expired},
  {ds::pending, ds::dispatched}, {ds::pending, ds::failed},
  {ds::dispatched, ds::completed}, {ds::dispatched, ds::failed},
  {ds::dispatched, ds::pending}, {ds::dispatched, ds::expired},
  {ds::failed, ds::pending},     {ds::expired, ds::pending},
};

const status_row& row_of(delivery_status x) {
  return states[static_cast<size_t>(x)];
}

} // namespace

const std::array<delivery_status, 6>& all_delivery_statuses() {
  static const std::array<delivery_status, 6> all{
    ds::pending, ds::dispatched, ds::completed,
    ds::failed,  ds::expired,    ds::superseded};
  return all;
}

const char* to_string(delivery_status x) {
  return row_of(x).name;
}

std::optional<delivery_status> parse_delivery_status(std::string_view text) {
  for (auto& s : states)
    if (text == s.name)
      return s.status;
  return std::nullopt;
}

bool is_final(delivery_status x) {
  return row_of(x).final;
}

bool may_transition(delivery_status from, delivery_status to) {
  return std::any_of(std::begin(transitions), std::end(transitions),
                     [&](const transition& t) {
                       return t.from == from && t.to == to;
                     });
}

bool is_retryable_by_operator(delivery_status x) {
  return is_final(x) && may_transition(x, ds::pending);
}

const std::vector<std::string>& delivery_statuses() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> names;
    for (auto s : all_delivery_statuses())
      names.emplace_back(to_string(s));
    return names;
  }();
  return all;
}

} // namespace outbox
