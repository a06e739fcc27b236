#define CAF_SUITE integration.amqp_client
#include <caf/test/unit_test.hpp>

#include <thread>

#include "core/amqp/amqp_client.hpp"
#include "core/amqp/amqp_session.hpp"
#include "core/base/errors.hpp"
#include "tests/integration/test_services.hpp"

using namespace outbox;
using namespace outbox::testing;
using namespace std::chrono_literals;

namespace {

struct fixture {
  std::string queue = unique_prefix() + "jobs";
  std::vector<std::string> extra_queues;
  std::unique_ptr<amqp_client> client;

  fixture() {
    auto c = amqp_client::connect(amqp_url(), "outbox-test");
    if (!c)
      CAF_FAIL("cannot connect to the test broker: " << render(c.error()));
    client = std::move(*c);
    CAF_REQUIRE(!client->declare_queue(queue));
  }

  ~fixture() {
    auto c = amqp_client::connect(amqp_url(), "outbox-test-cleanup");
    if (!c)
      return;
    (*c)->delete_queue(queue);
    for (auto& q : extra_queues)
      (*c)->delete_queue(q);
  }

  static outgoing_message msg(const std::string& q, int i) {
    outgoing_message m;
    m.routing_key = q;
    m.body = "{\"n\":" + std::to_string(i) + "}";
    m.message_id = std::to_string(i);
    m.correlation_id = "dispatch-" + std::to_string(i);
    m.type = "J";
    return m;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(amqp_client_tests, fixture)

CAF_TEST(a pipelined batch is confirmed and consumed with its properties) {
  std::vector<outgoing_message> batch;
  for (int i = 0; i < 250; ++i)
    batch.push_back(msg(queue, i));
  auto st = client->publish_batch(batch, 10s);
  CAF_REQUIRE_EQUAL(st.size(), 250u);
  for (auto s : st)
    CAF_CHECK_EQUAL(to_string(s), std::string{"confirmed"});
  auto consumer = amqp_client::connect(amqp_url(), "outbox-test-consumer");
  CAF_REQUIRE(consumer);
  CAF_REQUIRE(!(*consumer)->consume(queue, 50));
  int received = 0;
  uint64_t last_tag = 0;
  while (received < 250) {
    auto m = (*consumer)->next_message(5s);
    CAF_REQUIRE(m);
    CAF_REQUIRE(m->has_value());
    if (received == 0) {
      CAF_CHECK_EQUAL((*m)->message_id, "0");
      CAF_CHECK_EQUAL((*m)->correlation_id, "dispatch-0");
      CAF_CHECK_EQUAL((*m)->type, "J");
      CAF_CHECK_EQUAL((*m)->body, "{\"n\":0}");
    }
    last_tag = (*m)->delivery_tag;
    if (++received % 50 == 0)
      CAF_REQUIRE(!(*consumer)->ack(last_tag, true));
  }
  auto none = (*consumer)->next_message(200ms);
  CAF_REQUIRE(none);
  CAF_CHECK(!none->has_value());
}

CAF_TEST(a batch leaves at once although its writes are held back until its end) {
  // The socket is corked while a batch is written; a cork left on would
  // hold each batch for the kernel's 200 ms ceiling: 30 batches, 6 s.
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 30; ++i) {
    auto st = client->publish_batch({msg(queue, i)}, 10s);
    CAF_REQUIRE_EQUAL(st.size(), 1u);
    CAF_CHECK_EQUAL(to_string(st[0]), std::string{"confirmed"});
  }
  CAF_CHECK_LESS(std::chrono::steady_clock::now() - start, 3s);
}

CAF_TEST(a message no queue takes is returned not lost) {
  auto missing = unique_prefix() + "nobody";
  auto st = client->publish_batch({msg(queue, 1), msg(missing, 2), msg(queue, 3)}, 10s);
  CAF_CHECK_EQUAL(to_string(st[0]), std::string{"confirmed"});
  CAF_CHECK_EQUAL(to_string(st[1]), std::string{"returned"});
  CAF_CHECK_EQUAL(to_string(st[2]), std::string{"confirmed"});
}

CAF_TEST(a full queue that rejects publishes nacks) {
  auto full = unique_prefix() + "full";
  extra_queues.push_back(full);
  queue_options opts;
  opts.max_length = 1;
  opts.reject_overflow = true;
  CAF_REQUIRE(!client->declare_queue(full, opts));
  auto st = client->publish_batch({msg(full, 1), msg(full, 2), msg(full, 3)}, 10s);
  CAF_CHECK_EQUAL(to_string(st[0]), std::string{"confirmed"});
  CAF_CHECK_EQUAL(to_string(st[1]), std::string{"nacked"});
  CAF_CHECK_EQUAL(to_string(st[2]), std::string{"nacked"});
}

CAF_TEST(a refused operation closes the channel and the client recovers) {
  queue_options other;
  other.max_length = 5; // same name, other arguments: PRECONDITION_FAILED
  auto err = client->declare_queue(queue, other);
  CAF_CHECK(err == errc::broker_error);
  CAF_CHECK_NOT_EQUAL(render(err).find("code 406"), std::string::npos);
  CAF_CHECK(client->is_open());
  auto st = client->publish_batch({msg(queue, 1)}, 10s);
  CAF_CHECK_EQUAL(to_string(st[0]), std::string{"confirmed"});
}

CAF_TEST(an unreachable broker is a clear error) {
  auto c = amqp_client::connect("amqp://guest:guest@127.0.0.1:1/", "x");
  CAF_REQUIRE(!c);
  CAF_CHECK(c.error() == errc::broker_unavailable);
  CAF_CHECK_EQUAL(render(c.error()),
                  "broker_unavailable: cannot connect to the broker at 127.0.0.1:1");
  auto bad_login = amqp_client::connect(
    amqp_url().replace(amqp_url().find("guest:guest"), 11, "guest:wrong"), "x");
  CAF_REQUIRE(!bad_login);
  CAF_CHECK_EQUAL(render(bad_login.error()).find("wrong"), std::string::npos);
}

CAF_TEST(a connection the broker dropped is detected and fails fast) {
  // rabbitmq-c answers heartbeats only inside library calls: with a 1 s
  // heartbeat and no calls the broker drops the connection after two to
  // three seconds (two missed beats, checked once a beat). The silence
  // lasts well past that, so that the publish starts after the drop rather
  // than racing it (a publish written just before the drop is `lost`).
  auto c = amqp_client::connect(amqp_url(), "outbox-test-silent", 1s);
  CAF_REQUIRE(c);
  auto deadline = std::chrono::steady_clock::now() + 30s;
  std::vector<publish_status> st;
  while ((*c)->is_open() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5s); // stay silent so that heartbeats lapse
    st = (*c)->publish_batch({msg(queue, 1)}, 2s);
  }
  CAF_CHECK(!(*c)->is_open());
  CAF_REQUIRE_EQUAL(st.size(), 1u);
  // Found broken before a byte was written: never sent, so safe to send
  // again on a new connection (not `lost`, whose fate is unknown).
  CAF_CHECK_EQUAL(to_string(st[0]), std::string{"unsent"});
  auto next = (*c)->publish_batch({msg(queue, 2)}, 2s);
  CAF_CHECK_EQUAL(to_string(next[0]), std::string{"unsent"});
  CAF_CHECK((*c)->ack(1) == errc::broker_unavailable);
}

CAF_TEST(a session declares its queues on every connect and consumes again after a reset) {
  auto results = queue + ".session";
  extra_queues.push_back(results);
  amqp_session consumer{{amqp_url(), "outbox-test consumer", {results}, results, 10}};
  amqp_session publisher{{amqp_url(), "outbox-test publisher", {}, {}, 0}};
  CAF_REQUIRE(!consumer.ready());
  CAF_REQUIRE(!publisher.declare(results));
  auto st = publisher.publish({msg(results, 1)}, 10s);
  CAF_REQUIRE_EQUAL(st.size(), 1u);
  CAF_CHECK_EQUAL(to_string(st[0]), std::string{"confirmed"});
  auto m = consumer.next_message(5s);
  CAF_REQUIRE(m && *m);
  CAF_CHECK_EQUAL((*m)->message_id, "1");
  // Dropped unacked: the new connection consumes again and gets it back.
  consumer.reset();
  CAF_CHECK(!consumer.is_open());
  CAF_CHECK(consumer.ack((*m)->delivery_tag, false)); // no connection
  CAF_REQUIRE(!consumer.ready());
  auto again = consumer.next_message(5s);
  CAF_REQUIRE(again && *again);
  CAF_CHECK_EQUAL((*again)->message_id, "1");
  CAF_CHECK((*again)->redelivered);
  CAF_CHECK(!consumer.ack((*again)->delivery_tag, false));
  // A queue declared once is declared again by every later connect: a
  // mandatory publish after the queue vanished is not returned.
  CAF_REQUIRE(!client->delete_queue(results));
  publisher.reset();
  st = publisher.publish({msg(results, 2)}, 10s);
  CAF_REQUIRE_EQUAL(st.size(), 1u);
  CAF_CHECK_EQUAL(to_string(st[0]), std::string{"confirmed"});
}

CAF_TEST_FIXTURE_SCOPE_END()
