#define CAF_SUITE core.amqp_url
#include <caf/test/unit_test.hpp>

#include "core/amqp/amqp_client.hpp"
#include "core/base/errors.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

CAF_TEST(amqp urls are split into their parts) {
  auto p = parse_amqp_url("amqp://app:pw@mq.local:5673/prod");
  CAF_REQUIRE(p);
  CAF_CHECK_EQUAL(p->host, "mq.local");
  CAF_CHECK_EQUAL(p->port, 5673);
  CAF_CHECK_EQUAL(p->user, "app");
  CAF_CHECK_EQUAL(p->password, "pw");
  CAF_CHECK_EQUAL(p->vhost, "prod");
  auto d = parse_amqp_url("amqp://guest:guest@127.0.0.1:5672/");
  CAF_REQUIRE(d);
  CAF_CHECK_EQUAL(d->vhost, "/");
}

CAF_TEST(bad amqp urls are refused without echoing them) {
  for (auto url : {"http://u:secret@h/", "amqp://u:secret@h:notaport/", ""}) {
    auto p = parse_amqp_url(url);
    OUTBOX_CHECK_CASE(url, !p);
    if (p)
      continue;
    OUTBOX_CHECK_CASE(url, p.error() == errc::invalid_url);
    OUTBOX_CHECK_CASE_EQUAL(url, render(p.error()).find("secret"), std::string::npos);
  }
  // TLS files only with amqps://; a client certificate only with its key.
  for (auto url : {"amqp://u:secret@h/?cacertfile=/ca.pem",
                   "amqps://u:secret@h/?certfile=/c.pem",
                   "amqps://u:secret@h/?keyfile=/c.key",
                   "amqps://u:secret@h/?cacertfile=",
                   "amqps://u:secret@h/?cacertfile=%zz",
                   "amqps://u:secret@h/?verify=verify_none"}) {
    auto p = parse_amqp_url(url);
    OUTBOX_CHECK_CASE(url, !p);
    if (!p)
      OUTBOX_CHECK_CASE_EQUAL(url, render(p.error()).find("secret"), std::string::npos);
  }
}

CAF_TEST(amqps urls name tls files and default to port 5671) {
  auto plain = parse_amqp_url("amqps://u:pw@mq.example/");
  CAF_REQUIRE(plain);
  CAF_CHECK(plain->tls);
  CAF_CHECK_EQUAL(plain->port, 5671);
  CAF_CHECK_EQUAL(plain->cacertfile, "");
  auto p = parse_amqp_url("amqps://u:pw@mq.example:5999/prod?cacertfile=/etc/ca.pem"
                          "&certfile=/etc/a%26b.pem&keyfile=/etc/c.key&heartbeat=5");
  CAF_REQUIRE(p);
  CAF_CHECK_EQUAL(p->port, 5999);
  CAF_CHECK_EQUAL(p->vhost, "prod");
  CAF_CHECK_EQUAL(p->cacertfile, "/etc/ca.pem");
  CAF_CHECK_EQUAL(p->certfile, "/etc/a&b.pem");
  CAF_CHECK_EQUAL(p->keyfile, "/etc/c.key");
  CAF_CHECK_EQUAL(p->heartbeat, 5);
  auto amqp = parse_amqp_url("amqp://u:pw@h/");
  CAF_REQUIRE(amqp);
  CAF_CHECK(!amqp->tls);
}
