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
  auto tls = parse_amqp_url("amqps://u:secret@h/");
  CAF_REQUIRE(!tls);
  CAF_CHECK_NOT_EQUAL(render(tls.error()).find("not supported"), std::string::npos);
}
