#define CAF_SUITE core.fake_event_store
#include <caf/test/unit_test.hpp>

#include "core/base/errors.hpp"
#include "core/testing/fake_event_store.hpp"
#include "tests/sample_events.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Application code under test: written against the event_store interface.
caf::error place_order(event_store& store, const std::string& id, int64_t items) {
  auto ev = make_event(order_placed{id, items});
  if (!ev)
    return ev.error();
  auto added = store.add(nullptr, *ev);
  return added ? caf::error{} : added.error();
}

} // namespace

CAF_TEST(the fake records what the application published) {
  testing::fake_event_store store;
  CAF_CHECK(!place_order(store, "o-1", 2));
  CAF_CHECK(!place_order(store, "o-2", 5));
  CAF_REQUIRE_EQUAL(store.published().size(), 2u);
  CAF_CHECK_EQUAL(store.published()[0].event_type, "order.placed");
  auto orders = store.published_as<order_placed>();
  CAF_REQUIRE_EQUAL(orders.size(), 2u);
  CAF_CHECK_EQUAL(orders[1].order, "o-2");
  CAF_CHECK_EQUAL(store.count_published<order_placed>(
                    [](const order_placed& o) { return o.items > 3; }),
                  1u);
  store.clear();
  CAF_CHECK(store.published().empty());
}

CAF_TEST(the fake refuses what the database would refuse) {
  testing::fake_event_store store;
  event bad;
  bad.event_type = "order.placed";
  bad.payload = "{not json";
  auto r = store.add(nullptr, bad);
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(to_string(static_cast<errc>(r.error().code())), "invalid_event");
  CAF_CHECK(store.published().empty());
}
