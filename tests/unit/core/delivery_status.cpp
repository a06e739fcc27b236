#define CAF_SUITE core.delivery_status
#include <caf/test/unit_test.hpp>

#include <set>
#include <string>

#include "core/domain/delivery_status.hpp"

using namespace outbox;
using ds = delivery_status;

namespace {

// docs/design.md "Delivery states", as the test states it on its own.
struct state_case {
  delivery_status status;
  const char* spelling;
  bool final;
  bool retryable_by_operator;
};

const state_case states[] = {
  {ds::pending, "pending", false, false},
  {ds::dispatched, "dispatched", false, false},
  {ds::completed, "completed", true, false},
  {ds::failed, "failed", true, true},
  {ds::expired, "expired", true, true},
  {ds::superseded, "superseded", true, false},
};

} // namespace

CAF_TEST(every status has its spelling and reads back from it) {
  for (auto& c : states) {
    CAF_MESSAGE(c.spelling);
    CAF_CHECK_EQUAL(std::string{to_string(c.status)}, c.spelling);
    auto back = parse_delivery_status(c.spelling);
    CAF_REQUIRE(back);
    CAF_CHECK(*back == c.status);
  }
}

CAF_TEST(the list of statuses is complete and in lifecycle order) {
  auto& all = all_delivery_statuses();
  CAF_REQUIRE_EQUAL(all.size(), std::size(states));
  for (size_t i = 0; i < all.size(); ++i)
    CAF_CHECK(all[i] == states[i].status);
}

CAF_TEST(an unknown spelling is refused) {
  for (const char* text : {"", "Pending", "PENDING", "pending ", " failed",
                           "decided", "retry", "done", "complete"}) {
    CAF_MESSAGE("'" << text << "'");
    CAF_CHECK(!parse_delivery_status(text));
  }
}

CAF_TEST(final statuses are those no pass touches again) {
  for (auto& c : states) {
    CAF_MESSAGE(c.spelling);
    CAF_CHECK_EQUAL(is_final(c.status), c.final);
    CAF_CHECK_EQUAL(is_retryable_by_operator(c.status), c.retryable_by_operator);
  }
}

CAF_TEST(only the transitions of the design are allowed) {
  const std::set<std::pair<ds, ds>> allowed{
    {ds::pending, ds::superseded},   {ds::pending, ds::expired},
    {ds::pending, ds::dispatched},   {ds::pending, ds::failed},
    {ds::dispatched, ds::completed}, {ds::dispatched, ds::failed},
    {ds::dispatched, ds::pending},   {ds::dispatched, ds::expired},
    {ds::failed, ds::pending},       {ds::expired, ds::pending},
  };
  for (auto& from : states)
    for (auto& to : states) {
      CAF_MESSAGE(from.spelling << " -> " << to.spelling);
      CAF_CHECK_EQUAL(may_transition(from.status, to.status),
                      allowed.count({from.status, to.status}) == 1);
    }
}

CAF_TEST(no pass leaves a final status except by the operator retry) {
  for (auto& from : states)
    for (auto& to : states)
      if (from.final && may_transition(from.status, to.status))
        CAF_CHECK(to.status == ds::pending && from.retryable_by_operator);
}
