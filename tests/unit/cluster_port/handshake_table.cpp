#define CAF_SUITE cluster_port.handshake_table
#include <caf/test/unit_test.hpp>

#include <set>

#include "cluster_port/handshake_table.hpp"

using namespace outbox::cluster_port;
using namespace std::chrono_literals;

namespace {

using clock = handshake_table::clock;

port_limits small_limits() {
  port_limits l;
  l.handshake_deadline = 5s;
  l.half_open_per_address = 2;
  l.max_first_payload = 1000;
  return l;
}

/// A BASP header with `operation` announcing `payload` bytes.
std::string header(uint8_t operation, uint32_t payload) {
  std::string h(32, '\0');
  h[0] = static_cast<char>(operation);
  h[4] = static_cast<char>(payload >> 24);
  h[5] = static_cast<char>(payload >> 16);
  h[6] = static_cast<char>(payload >> 8);
  h[7] = static_cast<char>(payload);
  return h;
}

} // namespace

CAF_TEST(an address gets the bound of unfinished handshakes and no more) {
  handshake_table t{small_limits()};
  auto now = clock::now();
  CAF_CHECK(!t.accepted(10, "10.0.0.1", now));
  CAF_CHECK(!t.accepted(11, "10.0.0.1", now));
  CAF_CHECK(t.accepted(12, "10.0.0.1", now) == refusal::too_many_half_open);
  // Another address is not held back by the first one's.
  CAF_CHECK(!t.accepted(13, "10.0.0.2", now));
  // A finished handshake frees its place; a refused one never took one.
  t.completed(10);
  CAF_CHECK(!t.accepted(14, "10.0.0.1", now));
  CAF_CHECK(t.accepted(15, "10.0.0.1", now) == refusal::too_many_half_open);
}

CAF_TEST(a refusal is counted once however the connection then ends) {
  handshake_table t{small_limits()};
  auto now = clock::now();
  CAF_CHECK(!t.accepted(10, "a", now));
  CAF_CHECK(!t.accepted(11, "a", now));
  CAF_REQUIRE(t.accepted(12, "a", now) == refusal::too_many_half_open);
  // The close the refusal caused fails the handshake: not a second count.
  CAF_CHECK(!t.failed(12, refusal::closed_early));
  CAF_CHECK(!t.tracks(12));
  CAF_CHECK(t.failed(10, refusal::no_certificate) == refusal::no_certificate);
  CAF_CHECK(!t.failed(10, refusal::no_certificate)); // gone already
  CAF_CHECK(!t.failed(99, refusal::unknown_ca));      // never seen
}

CAF_TEST(a handshake past the deadline is returned once) {
  handshake_table t{small_limits()};
  auto now = clock::now();
  CAF_CHECK(!t.accepted(10, "a", now));
  CAF_CHECK(!t.accepted(11, "b", now + 3s));
  CAF_CHECK(t.overdue(now + 4s).empty());
  auto due = t.overdue(now + 5s);
  CAF_REQUIRE_EQUAL(due.size(), 1u);
  CAF_CHECK_EQUAL(due[0], 10);
  CAF_CHECK(t.overdue(now + 6s).empty()); // 10 refused already, 11 not due
  CAF_CHECK(!t.failed(10, refusal::closed_early));
  CAF_CHECK_EQUAL(t.overdue(now + 8s).size(), 1u);
  // A finished handshake has no deadline.
  CAF_CHECK(!t.accepted(12, "c", now));
  t.completed(12);
  CAF_CHECK(t.overdue(now + 60s).empty());
}

CAF_TEST(a plain port reads the first header in pieces and bounds its payload) {
  handshake_table t{small_limits()};
  auto now = clock::now();
  CAF_CHECK(!t.accepted(10, "a", now));
  auto ok = header(1, 1000);
  CAF_CHECK(t.plain_bytes(10, ok.data(), 5).pass);
  CAF_CHECK(t.tracks(10));
  CAF_CHECK(t.plain_bytes(10, ok.data() + 5, 27).pass);
  // Still held to the deadline until the handshake's payload is read.
  CAF_CHECK(t.tracks(10));
  std::string payload(1000, 'p');
  CAF_CHECK(t.plain_bytes(10, payload.data(), 600).pass);
  CAF_CHECK(t.tracks(10));
  CAF_CHECK(t.plain_bytes(10, payload.data(), 400).pass);
  CAF_CHECK(!t.tracks(10)); // done: BASP has its first message
  CAF_CHECK(!t.accepted(11, "a", now));
  auto huge = header(1, 0x7fffffff);
  auto refused = t.plain_bytes(11, huge.data(), huge.size());
  CAF_CHECK(!refused.pass);
  CAF_CHECK(refused.refused == refusal::oversized_header);
  auto again = t.plain_bytes(11, huge.data(), huge.size());
  CAF_CHECK(!again.pass);     // never passes
  CAF_CHECK(!again.refused);  // counted once
  CAF_CHECK(!t.accepted(12, "b", now));
  auto garbage = std::string{"GET / HTTP/1.0\r\n\r\n"} + std::string(20, 'x');
  CAF_CHECK(t.plain_bytes(12, garbage.data(), garbage.size()).refused
            == refusal::protocol_garbage);
  // A header and its payload in one read.
  CAF_CHECK(!t.accepted(13, "c", now));
  auto whole = header(1, 4) + "abcd";
  CAF_CHECK(t.plain_bytes(13, whole.data(), whole.size()).pass);
  CAF_CHECK(!t.tracks(13));
}

// A connection refused for its address's bound or its deadline may have
// sent its header before anything read it: none of its bytes pass.
CAF_TEST(bytes of a refused connection never pass however harmless they look) {
  handshake_table t{small_limits()};
  auto now = clock::now();
  CAF_CHECK(!t.accepted(10, "a", now));
  CAF_CHECK(!t.accepted(11, "a", now));
  CAF_REQUIRE(t.accepted(12, "a", now) == refusal::too_many_half_open);
  auto huge = header(1, 0x7fffffff);
  auto verdict = t.plain_bytes(12, huge.data(), huge.size());
  CAF_CHECK(!verdict.pass);
  CAF_CHECK(!verdict.refused);
  CAF_REQUIRE_EQUAL(t.overdue(now + 5s).size(), 2u);
  auto ok = header(1, 10);
  CAF_CHECK(!t.plain_bytes(10, ok.data(), ok.size()).pass);
}

CAF_TEST(a closed connection is forgotten and its number may come again) {
  handshake_table t{small_limits()};
  auto now = clock::now();
  CAF_CHECK(!t.accepted(10, "a", now));
  t.closed(10);
  CAF_CHECK(!t.tracks(10));
  CAF_CHECK_EQUAL(t.size(), 0u);
  CAF_CHECK(!t.accepted(10, "b", now + 10s));
  CAF_CHECK_EQUAL(t.address(10), "b");
  CAF_CHECK(t.overdue(now + 12s).empty());
}

CAF_TEST(one log line per kind and interval says how many went unlogged) {
  refusal_log_limit limit{10s};
  auto now = clock::now();
  auto first = limit.admit(refusal::no_certificate, now);
  CAF_CHECK(first.log);
  CAF_CHECK_EQUAL(first.suppressed, 0u);
  CAF_CHECK(!limit.admit(refusal::no_certificate, now + 1s).log);
  CAF_CHECK(!limit.admit(refusal::no_certificate, now + 2s).log);
  // Another kind has its own interval.
  CAF_CHECK(limit.admit(refusal::unknown_ca, now + 2s).log);
  auto later = limit.admit(refusal::no_certificate, now + 10s);
  CAF_CHECK(later.log);
  CAF_CHECK_EQUAL(later.suppressed, 2u);
}

CAF_TEST(every refusal kind has its own label) {
  std::set<std::string> names;
  for (size_t i = 0; i < refusal_kinds; ++i)
    names.insert(refusal_name(static_cast<refusal>(i)));
  CAF_CHECK_EQUAL(names.size(), refusal_kinds);
  CAF_CHECK_EQUAL(names.count("unknown"), 0u);
}
