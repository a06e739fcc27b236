#define CAF_SUITE integration.broker_list
#include <caf/test/unit_test.hpp>

#include "core/amqp/amqp_session.hpp"
#include "tests/integration/cluster_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Nothing listens on ports 1 and 2 of loopback: refused at once.
const std::string dead = "amqp://guest:secret1@127.0.0.1:1/";
const std::string dead_too = "amqp://guest:secret2@127.0.0.1:2/";

struct fixture : cluster_fixture {
  std::string q = queue("list");

  static outgoing_message message(const std::string& queue) {
    outgoing_message m;
    m.routing_key = queue;
    m.body = "{}";
    m.message_id = "1";
    return m;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(broker_list_tests, fixture)

CAF_TEST(a session takes the first broker that answers and the next after a loss) {
  auto real = amqp_url();
  amqp_session s{{dead + "," + real + ", " + real, "test list", {q}, {}, 0}};
  CAF_REQUIRE(!s.ready());
  CAF_CHECK_EQUAL(s.broker_index(), 1u);
  s.reset(); // as after a lost connection: the next one first
  CAF_REQUIRE(!s.ready());
  CAF_CHECK_EQUAL(s.broker_index(), 2u);
  s.reset(); // round the list: the dead first one, then the one after it
  CAF_REQUIRE(!s.ready());
  CAF_CHECK_EQUAL(s.broker_index(), 1u);
  auto st = s.publish({message(q)}, std::chrono::seconds{5});
  CAF_REQUIRE_EQUAL(st.size(), 1u);
  CAF_CHECK(st[0] == publish_status::confirmed);
}

CAF_TEST(a session that reaches no broker of its list says so without urls) {
  amqp_session s{{dead + "," + dead_too, "test dead list", {q}, {}, 0}};
  auto err = s.ready();
  CAF_CHECK(err == errc::broker_unavailable);
  auto text = render(err);
  CAF_CHECK_NOT_EQUAL(text.find("none of the 2 brokers of the list answered"),
                      std::string::npos);
  CAF_CHECK_EQUAL(text.find("secret"), std::string::npos);
  CAF_CHECK(!s.is_open());
  // Nothing reached a broker: every message stays unsent, none lost.
  auto st = s.publish({message(q)}, std::chrono::seconds{1});
  CAF_CHECK(st.at(0) == publish_status::unsent);
}

CAF_TEST(a client connects to the first broker of a list that answers) {
  auto c = amqp_client::connect(dead + "," + amqp_url(), "test list client");
  CAF_REQUIRE(c);
  CAF_CHECK(!(*c)->declare_queue(q));
  auto none = amqp_client::connect(dead + "," + dead_too, "test list client");
  CAF_REQUIRE(!none);
  CAF_CHECK_EQUAL(render(none.error()).find("secret"), std::string::npos);
  auto bad = amqp_client::connect(amqp_url() + ",,", "test list client");
  CAF_REQUIRE(!bad);
  CAF_CHECK(bad.error() == errc::invalid_url);
}

CAF_TEST_FIXTURE_SCOPE_END()
