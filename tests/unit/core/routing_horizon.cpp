#define CAF_SUITE core.routing_horizon
#include <caf/test/unit_test.hpp>

#include "core/domain/routing_horizon.hpp"

using namespace outbox;
using std::chrono::milliseconds;

CAF_TEST(with nobody inserting every event taken so far is safe) {
  routing_horizon h;
  CAF_CHECK_EQUAL(h.advance({10, {}}), 10);
  CAF_CHECK(h.progressed());
  CAF_CHECK_EQUAL(h.advance({10, {}}), 10);
  CAF_CHECK(!h.progressed());
}

CAF_TEST(a sample is safe once none of its holders holds the lock) {
  routing_horizon h;
  CAF_CHECK_EQUAL(h.advance({10, {"3/7", "4/2"}}), 0);
  CAF_CHECK(h.progressed()); // a sample a later pass can use
  // 3/7 ended, 4/2 still inserting: not yet.
  CAF_CHECK_EQUAL(h.advance({12, {"4/2", "5/1"}}), 0);
  // 4/2 ended: the first sample's 10 is safe, not the second's 12 (5/1).
  CAF_CHECK_EQUAL(h.advance({12, {"5/1"}}), 10);
  CAF_CHECK_EQUAL(h.advance({15, {"6/9"}}), 12);
  CAF_CHECK_EQUAL(h.advance({15, {}}), 15);
}

CAF_TEST(an open inserting transaction holds every later sample back) {
  routing_horizon h;
  h.advance({5, {"9/1"}});
  for (int64_t q = 6; q < 200; ++q)
    CAF_CHECK_EQUAL(h.advance({q, {"9/1", "10/" + std::to_string(q)}}), 0);
  // Thinned to a bounded memory; once 9/1 ends the newest usable sample
  // (its holder gone too) makes everything up to it safe.
  CAF_CHECK_EQUAL(h.advance({200, {"11/1"}}), 199);
  CAF_CHECK_EQUAL(h.advance({200, {}}), 200);
}

CAF_TEST(the retry delay is short while the horizon moves and grows while still) {
  routing_horizon h;
  h.advance({5, {"1/1"}});
  CAF_CHECK(h.retry_delay(milliseconds{1000}) == milliseconds{2});
  h.advance({5, {"1/1"}}); // nothing new, still held
  CAF_CHECK(!h.progressed());
  CAF_CHECK(h.retry_delay(milliseconds{1000}) == milliseconds{4});
  CAF_CHECK(h.retry_delay(milliseconds{1000}) == milliseconds{8});
  for (int i = 0; i < 20; ++i)
    h.retry_delay(milliseconds{1000});
  CAF_CHECK(h.retry_delay(milliseconds{1000}) == milliseconds{1000});
  h.advance({6, {"1/1"}});
  CAF_CHECK(h.retry_delay(milliseconds{1000}) == milliseconds{2});
}

// After a point-in-time restore the sequence hands out ids the horizon had
// already called safe: an open transaction may now hold one of them.
CAF_TEST(a newest id that went back starts the horizon afresh) {
  routing_horizon h;
  CAF_CHECK_EQUAL(h.advance({100, {}}), 100);
  // Restored to id 40; 41 is taken by a transaction still open.
  CAF_CHECK_EQUAL(h.advance({42, {"7/1"}}), 0);
  CAF_CHECK_EQUAL(h.advance({42, {"7/1"}}), 0);
  CAF_CHECK_EQUAL(h.advance({43, {}}), 43);
  // Samples taken before the restore count no more either.
  routing_horizon g;
  g.advance({10, {}});
  g.advance({50, {"3/1"}});
  CAF_CHECK_EQUAL(g.advance({20, {"4/1"}}), 0);
  CAF_CHECK_EQUAL(g.advance({21, {"4/1"}}), 0); // 3/1's 50 must not count
  CAF_CHECK_EQUAL(g.advance({21, {}}), 21);
}
