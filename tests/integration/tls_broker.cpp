// amqps:// through amqp_client against the test broker's TLS listener: a
// verified connection carries messages, and each way TLS can go wrong ends
// in our own wording, quickly, without the password or library text.
#define CAF_SUITE integration.tls_broker
#include <caf/test/unit_test.hpp>

#include <fstream>
#include <unistd.h>

#include "core/amqp/amqp_client.hpp"
#include "core/base/errors.hpp"
#include "tests/integration/test_services.hpp"
#include "tests/integration/tls_env.hpp"

using namespace outbox;
using namespace outbox::testing;
using namespace std::chrono_literals;

namespace {

struct fixture : tls_required {
  std::string dir = tls_dir();
  std::string url = amqps_url();
  std::vector<std::string> files;

  ~fixture() {
    for (auto& f : files)
      ::unlink(f.c_str());
  }

  // The TLS URL with another host and/or query (after its own cacertfile).
  std::string with(const std::string& extra, const std::string& host = "localhost") {
    auto at = url.find('@') + 1;
    auto colon = url.find(':', at);
    return url.substr(0, at) + host + url.substr(colon) + extra;
  }

  std::string port() {
    auto at = url.find('@') + 1;
    auto colon = url.find(':', at);
    return url.substr(colon + 1, url.find('/', colon) - colon - 1);
  }

  std::string own_file(const std::string& text) {
    files.push_back("/tmp/" + unique_prefix() + "not_a_cert.pem");
    std::ofstream{files.back()} << text;
    return files.back();
  }

  // Connecting fails within the connect timeout, with `expected` in an
  // error that holds neither the password nor OpenSSL's words.
  void check_refused(const std::string& u, const std::string& expected) {
    auto start = std::chrono::steady_clock::now();
    auto c = amqp_client::connect(u, "outbox-test-tls");
    CAF_CHECK_LESS(std::chrono::steady_clock::now() - start, 10s);
    CAF_REQUIRE(!c);
    auto text = render(c.error());
    CAF_MESSAGE("error: " << text);
    CAF_CHECK(c.error() == errc::broker_unavailable);
    CAF_CHECK_NOT_EQUAL(text.find(expected), std::string::npos);
    CAF_CHECK_EQUAL(text.find("guest:guest"), std::string::npos);
    for (auto raw : {"routines", "SSL", "ssl3", "error:"})
      CAF_CHECK_EQUAL(text.find(raw), std::string::npos);
  }
};

void round_trip(const std::string& url) {
  auto c = amqp_client::connect(url, "outbox-test-tls");
  if (!c)
    CAF_FAIL("cannot connect over TLS: " << render(c.error()));
  auto& client = **c;
  auto queue = unique_prefix() + "tls";
  CAF_REQUIRE(!client.declare_queue(queue));
  outgoing_message m;
  m.routing_key = queue;
  m.body = "{}";
  m.message_id = "1";
  m.type = "J";
  auto st = client.publish_batch({m}, 10s);
  CAF_REQUIRE_EQUAL(st.size(), 1u);
  CAF_CHECK(st[0] == publish_status::confirmed);
  CAF_REQUIRE(!client.consume(queue, 1));
  auto got = client.next_message(10s);
  CAF_REQUIRE(got && *got);
  CAF_CHECK_EQUAL((*got)->message_id, "1");
  CAF_CHECK(!client.ack((*got)->delivery_tag));
  CAF_CHECK(!client.delete_queue(queue));
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(tls_broker_tests, fixture)

CAF_TEST(a verified tls connection publishes and consumes) {
  round_trip(url);
}

CAF_TEST(a client certificate is presented and accepted) {
  round_trip(with("&certfile=" + dir + "/client.pem&keyfile=" + dir + "/client.key"));
}

CAF_TEST(missing or broken certificate files are named) {
  auto base = url.substr(0, url.find('?'));
  check_refused(base + "?cacertfile=/nonexistent/ca.pem",
                "cannot read the CA file (cacertfile) /nonexistent/ca.pem");
  auto junk = own_file("not a certificate\n");
  check_refused(base + "?cacertfile=" + junk, "holds no PEM certificate");
  check_refused(with("&certfile=" + dir + "/client.pem&keyfile=/nonexistent/k.key"),
                "cannot read the client key (keyfile) /nonexistent/k.key");
  // The server's key does not belong to the client's certificate.
  check_refused(with("&certfile=" + dir + "/client.pem&keyfile=" + dir + "/server.key"),
                "cannot be used");
}

CAF_TEST(a broker certificate from an untrusted ca is refused) {
  auto base = url.substr(0, url.find('?'));
  check_refused(base + "?cacertfile=" + dir + "/other/ca.pem", "no trusted CA signed");
}

CAF_TEST(a broker certificate for another host name is refused) {
  // The certificate names localhost and, as an IP address, 127.0.0.1, which
  // rabbitmq-c does not match: the same server under that name is "wrong".
  check_refused(with("", "127.0.0.1"), "does not name the host 127.0.0.1");
}

CAF_TEST(a plain listener behind an amqps url fails the handshake) {
  auto plain = amqp_url();
  auto plain_port = plain.substr(plain.rfind(':') + 1);
  plain_port = plain_port.substr(0, plain_port.find('/'));
  auto u = with("");
  u.replace(u.find(port()), port().size(), plain_port);
  check_refused(u, "TLS handshake");
}

CAF_TEST_FIXTURE_SCOPE_END()
