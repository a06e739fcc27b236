#define CAF_SUITE actors.result_handler
#define FAIL(msg) CAF_FAIL(msg)
#include "tests/unit/actors/actor_fixture.hpp"

#include "actors/result_handler.hpp"
#include "core/amqp/wire.hpp"
#include "core/domain/dispatch_tag.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

const std::string uuid = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";

std::string result(int64_t id, const char* outcome = "completed",
                   const std::string& dispatch_id = uuid) {
  return R"({"outboxDeliveryId":")" + std::to_string(id)
         + R"(","outboxDispatchId":")" + dispatch_id
         + R"(","job":"PublishStockJob","outcome":")" + outcome + R"("})";
}

std::vector<result_target> only(std::shared_ptr<fakes::delivery_store> store) {
  return {{"", std::move(store), ""}};
}

std::shared_ptr<result_parker> no_parker() {
  return {};
}

// Keeps what it was asked to park; fails while `fail` says so.
struct parker_stub : result_parker {
  std::vector<std::pair<std::string, std::vector<send_result>>> parked;
  bool fail = false;
  caf::error park(const std::string& database,
                  const std::vector<send_result>& results) override {
    if (fail)
      return make_error(errc::broker_unavailable, "no broker");
    parked.emplace_back(database, results);
    return caf::none;
  }
};

struct fixture : actor_fixture {
  std::shared_ptr<fakes::delivery_store> store
    = std::make_shared<fakes::delivery_store>();
  std::shared_ptr<fakes::result_source> source
    = std::make_shared<fakes::result_source>();
  pass_actor handler = sys.spawn(result_handler, only(store), source, "stock.publish",
                                 100, std::chrono::milliseconds{0},
                                 manual_passes(), node_agent_actor{}, no_parker());
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(result_handler_tests, fixture)

CAF_TEST(results are applied in one batch and acked after the commit) {
  source->push(result(1));
  source->push(result(2, "retry"));
  source->push(result(3, "failed"));
  CAF_CHECK_EQUAL(request<int64_t>(handler, once_atom::value), 3);
  CAF_REQUIRE_EQUAL(store->applied.size(), 1u);
  CAF_CHECK_EQUAL(store->applied[0].size(), 3u);
  CAF_CHECK(store->applied[0][1].result == outcome::retry);
  CAF_CHECK_EQUAL(source->acked_through, 3u);
  auto& m = pass_state_of(handler).metrics;
  CAF_CHECK_EQUAL(m.counters["completed"], 1);
  CAF_CHECK_EQUAL(m.counters["retried"], 1);
  CAF_CHECK_EQUAL(m.counters["failed"], 1);
}

CAF_TEST(malformed unknown stale and wrong-job results are counted and acked) {
  source->push("{not json");
  source->push(R"({"outboxDeliveryId":"1"})");
  source->push(result(10));
  source->push(result(11));
  source->push(result(12));
  source->push(result(13));
  store->verdicts[11] = result_verdict::unknown_delivery;
  store->verdicts[12] = result_verdict::stale;
  store->verdicts[13] = result_verdict::wrong_job;
  CAF_CHECK_EQUAL(request<int64_t>(handler, once_atom::value), 1);
  CAF_CHECK_EQUAL(store->applied.at(0).size(), 4u); // the parsed ones
  CAF_CHECK_EQUAL(source->acked_through, 6u);
  auto& m = pass_state_of(handler).metrics;
  CAF_CHECK_EQUAL(m.counters["malformed"], 2);
  CAF_CHECK_EQUAL(m.counters["unknown_delivery"], 1);
  CAF_CHECK_EQUAL(m.counters["stale"], 1);
  CAF_CHECK_EQUAL(m.counters["wrong_job"], 1);
  CAF_CHECK_EQUAL(m.errors, 0);
}

CAF_TEST(an empty wait for results is followed by the next wait at once) {
  pass_settings s;
  s.idle = std::chrono::seconds{10};
  auto h = sys.spawn(result_handler, only(store), source, "stock.publish", 100,
                     std::chrono::milliseconds{250}, s, node_agent_actor{}, no_parker());
  self->send(h, wake_atom::value);
  expect((wake_atom), from(self).to(h));
  expect((pass_atom, uint64_t), from(h).to(h));
  // Nothing came within the fetch's own wait: no timer, another pass now.
  expect((pass_atom, uint64_t), from(h).to(h).with(_, 2u));
  source->push(result(1));
  expect((pass_atom, uint64_t), from(h).to(h).with(_, 3u));
  CAF_CHECK_EQUAL(source->acked_through, 1u);
  stop(h);
}

CAF_TEST(a batch whose commit failed is kept unacked and applied again) {
  source->push(result(1));
  source->push(result(2));
  store->apply_errors.push_back(make_error(errc::database_unavailable, "down"));
  self->send(handler, wake_atom::value);
  expect((wake_atom), from(self).to(handler));
  expect((pass_atom, uint64_t), from(handler).to(handler));
  CAF_CHECK_EQUAL(source->acked_through, 0u);
  CAF_CHECK_EQUAL(pass_state_of(handler).metrics.errors, 1);
  source->push(result(3)); // arrives meanwhile: must not be acked with it
  self->send(handler, wake_atom::value);
  expect((wake_atom), from(self).to(handler));
  expect((pass_atom, uint64_t), from(handler).to(handler));
  CAF_CHECK_EQUAL(source->fetches, 1); // the held batch went first
  CAF_REQUIRE_EQUAL(store->applied.size(), 1u);
  CAF_CHECK_EQUAL(store->applied[0].size(), 2u);
  CAF_CHECK_EQUAL(source->acked_through, 2u);
  self->send(handler, wake_atom::value);
  expect((wake_atom), from(self).to(handler));
  expect((pass_atom, uint64_t), from(handler).to(handler));
  CAF_CHECK_EQUAL(source->acked_through, 3u);
}

CAF_TEST(a message of many results is applied with the others but its bad entries) {
  source->push("[" + result(1) + "," + result(2, "retry") + ",{}]");
  source->push(result(3));
  CAF_CHECK_EQUAL(request<int64_t>(handler, once_atom::value), 3);
  CAF_REQUIRE_EQUAL(store->applied.size(), 1u);
  CAF_REQUIRE_EQUAL(store->applied[0].size(), 3u);
  CAF_CHECK_EQUAL(store->applied[0][1].delivery_id, 2);
  CAF_CHECK_EQUAL(store->applied[0][2].delivery_id, 3);
  CAF_CHECK_EQUAL(source->acked_through, 2u);
  CAF_CHECK_EQUAL(pass_state_of(handler).metrics.counters["malformed"], 1);
}

CAF_TEST(only malformed results are acked without touching the database) {
  source->push("[]");
  CAF_CHECK_EQUAL(request<int64_t>(handler, once_atom::value), 0);
  CAF_CHECK(store->applied.empty());
  CAF_CHECK_EQUAL(source->acked_through, 1u);
}


CAF_TEST(results of a queue that two databases share go to the database of their tag) {
  auto orders = std::make_shared<fakes::delivery_store>();
  auto billing = std::make_shared<fakes::delivery_store>();
  auto orders_tag = dispatch_tag_of("orders");
  auto billing_tag = dispatch_tag_of("billing");
  std::vector<result_target> targets{{orders_tag, orders, "orders"},
                                     {billing_tag, billing, "billing"}};
  auto h = sys.spawn(result_handler, targets, source, "mail", 100,
                     std::chrono::milliseconds{0}, manual_passes(),
                     node_agent_actor{}, no_parker());
  auto tagged = [](const std::string& tag) { return tag + uuid.substr(8); };
  // The same delivery id in both databases, each with its own send.
  source->push(result(7, "completed", tagged(orders_tag)));
  source->push(result(7, "completed", tagged(billing_tag)));
  source->push(result(8, "completed", tagged(billing_tag)));
  // A send from before the config named two databases: tried in both,
  // applied where it matches.
  source->push(result(9, "completed", uuid));
  orders->verdicts[9] = result_verdict::unknown_delivery;
  CAF_CHECK_EQUAL(request<int64_t>(h, once_atom::value), 4);
  CAF_REQUIRE_EQUAL(orders->applied.size(), 1u);
  CAF_REQUIRE_EQUAL(billing->applied.size(), 1u);
  CAF_REQUIRE_EQUAL(orders->applied[0].size(), 2u);
  CAF_CHECK_EQUAL(orders->applied[0][0].delivery_id, 7);
  CAF_CHECK_EQUAL(orders->applied[0][1].delivery_id, 9);
  CAF_REQUIRE_EQUAL(billing->applied[0].size(), 3u);
  CAF_CHECK_EQUAL(billing->applied[0][1].delivery_id, 8);
  CAF_CHECK_EQUAL(source->acked_through, 4u);
  auto& m = pass_state_of(h).metrics;
  CAF_CHECK_EQUAL(m.counters.count("unknown_delivery"), 0u);
  stop(h);
}

CAF_TEST(the lifecycle events of a queue of one named database say its name) {
  auto rec = sys.spawn(lifecycle_recorder, "embedder");
  sched.run();
  auto orders = std::make_shared<fakes::delivery_store>();
  auto h = sys.spawn(result_handler,
                     std::vector<result_target>{{dispatch_tag_of("orders"), orders,
                                                 "orders"}},
                     source, "pack", 100, std::chrono::milliseconds{0},
                     manual_passes(), node_agent_actor{}, no_parker());
  source->push(result(7));
  CAF_CHECK_EQUAL(request<int64_t>(h, once_atom::value), 1);
  sched.run();
  auto& evs = deref<caf::stateful_actor<lifecycle_recorder_state>>(rec).state.events;
  CAF_REQUIRE_EQUAL(evs.size(), 1u);
  CAF_CHECK_EQUAL(evs[0].database, "orders");
  stop(h);
  stop(rec); // the group holds its subscribers until they exit
}

CAF_TEST(the part of a database that is down is parked and the rest acked) {
  auto orders = std::make_shared<fakes::delivery_store>();
  auto billing = std::make_shared<fakes::delivery_store>();
  std::vector<result_target> targets{{dispatch_tag_of("orders"), orders, "orders"},
                                     {dispatch_tag_of("billing"), billing, "billing"}};
  auto parker = std::make_shared<parker_stub>();
  auto h = sys.spawn(result_handler, targets, source, "mail", 100,
                     std::chrono::milliseconds{0}, manual_passes(),
                     node_agent_actor{}, std::shared_ptr<result_parker>{parker});
  source->push(result(1, "completed", dispatch_tag_of("orders") + uuid.substr(8)));
  source->push(result(2, "completed", dispatch_tag_of("billing") + uuid.substr(8)));
  billing->apply_errors.push_back(make_error(errc::database_unavailable, "down"));
  CAF_CHECK_EQUAL(request<int64_t>(h, once_atom::value), 1);
  CAF_CHECK_EQUAL(source->acked_through, 2u);
  CAF_REQUIRE_EQUAL(parker->parked.size(), 1u);
  CAF_CHECK_EQUAL(parker->parked[0].first, "billing");
  CAF_REQUIRE_EQUAL(parker->parked[0].second.size(), 1u);
  CAF_CHECK_EQUAL(parker->parked[0].second[0].delivery_id, 2);
  CAF_CHECK_EQUAL(orders->applied.size(), 1u);
  auto& m = pass_state_of(h).metrics;
  CAF_CHECK_EQUAL(m.counters["parked"], 1);
  CAF_CHECK_EQUAL(m.errors, 0);
  stop(h);
}

CAF_TEST(a part that can be neither applied nor parked keeps the whole batch) {
  auto orders = std::make_shared<fakes::delivery_store>();
  auto billing = std::make_shared<fakes::delivery_store>();
  std::vector<result_target> targets{{dispatch_tag_of("orders"), orders, "orders"},
                                     {dispatch_tag_of("billing"), billing, "billing"}};
  auto parker = std::make_shared<parker_stub>();
  parker->fail = true;
  auto h = sys.spawn(result_handler, targets, source, "mail", 100,
                     std::chrono::milliseconds{0}, manual_passes(),
                     node_agent_actor{}, std::shared_ptr<result_parker>{parker});
  source->push(result(1, "completed", dispatch_tag_of("orders") + uuid.substr(8)));
  source->push(result(2, "completed", dispatch_tag_of("billing") + uuid.substr(8)));
  billing->apply_errors.push_back(make_error(errc::database_unavailable, "down"));
  self->send(h, wake_atom::value);
  expect((wake_atom), from(self).to(h));
  expect((pass_atom, uint64_t), from(h).to(h));
  CAF_CHECK_EQUAL(source->acked_through, 0u);
  CAF_CHECK_EQUAL(pass_state_of(h).metrics.errors, 1);
  stop(h);
}

CAF_TEST_FIXTURE_SCOPE_END()
