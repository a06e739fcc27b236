#define CAF_SUITE actors.listen_demand
#include <caf/test/unit_test.hpp>

#include "actors/listen_demand.hpp"

using outbox::listen_demand;

CAF_TEST(the demand drops after the given self paced passes in a row) {
  listen_demand d{3};
  CAF_CHECK(!d.after_pass(true));
  CAF_CHECK(!d.after_pass(true));
  CAF_CHECK_EQUAL(d.after_pass(true), std::optional<bool>{false});
  CAF_CHECK(!d.wanted());
  CAF_CHECK(!d.after_pass(true)); // no change, nothing to say
  CAF_CHECK_EQUAL(d.after_pass(false), std::optional<bool>{true});
  CAF_CHECK(d.wanted());
  CAF_CHECK(!d.after_pass(false));
}

CAF_TEST(a pass that waits for work starts the count again) {
  listen_demand d{2};
  CAF_CHECK(!d.after_pass(true));
  CAF_CHECK(!d.after_pass(false));
  CAF_CHECK(!d.after_pass(true));
  CAF_CHECK_EQUAL(d.after_pass(true), std::optional<bool>{false});
}

CAF_TEST(a limit of zero never stops the listening) {
  listen_demand d{0};
  for (int i = 0; i < 100; ++i)
    CAF_CHECK(!d.after_pass(true));
  CAF_CHECK(d.wanted());
}
