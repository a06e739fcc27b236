#define CAF_SUITE integration.status
#include <caf/test/unit_test.hpp>

#include "core/status_repository.hpp"
#include "tests/integration/delivery_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

CAF_TEST_FIXTURE_SCOPE(status_tests, delivery_fixture)

CAF_TEST(empty tables give zeros for every status) {
  status_repository st{names};
  auto s = st.read(db);
  if (!s)
    CAF_FAIL("status read failed: " << render(s.error()));
  CAF_CHECK_EQUAL(s->unrouted_events, 0);
  CAF_CHECK_EQUAL(s->oldest_unrouted_age_seconds, 0.0);
  CAF_CHECK_EQUAL(s->per_status.size(), 6u);
  for (auto& [status, n] : s->per_status)
    CAF_CHECK_EQUAL(n, 0);
  CAF_CHECK(s->per_queue.empty());
}

CAF_TEST(counts are given per status and per queue) {
  make_deliveries(3, {60}, "qa");
  make_deliveries(2, {60}, "qb");
  publish("no.route", "{}");
  claim("qa", 1);
  status_repository st{names};
  auto s = st.read(db);
  if (!s)
    CAF_FAIL("status read failed: " << render(s.error()));
  CAF_CHECK_EQUAL(s->unrouted_events, 1);
  CAF_CHECK_EQUAL(s->per_status["pending"], 4);
  CAF_CHECK_EQUAL(s->per_status["dispatched"], 1);
  CAF_CHECK_EQUAL(s->per_status["completed"], 0);
  CAF_CHECK_EQUAL(s->per_queue["qa"].per_status["pending"], 2);
  CAF_CHECK_EQUAL(s->per_queue["qa"].per_status["dispatched"], 1);
  CAF_CHECK_EQUAL(s->per_queue["qb"].per_status["pending"], 2);
  CAF_CHECK_EQUAL(s->per_queue["qb"].per_status["failed"], 0);
  CAF_CHECK(s->oldest_open_age_seconds >= 0.0);
}

CAF_TEST_FIXTURE_SCOPE_END()
