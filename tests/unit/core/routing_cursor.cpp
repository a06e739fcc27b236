#define CAF_SUITE core.routing_cursor
#include <caf/test/unit_test.hpp>

#include "core/domain/routing_cursor.hpp"

using namespace outbox;

namespace {

seen_event plain(int64_t id) {
  return {id, true, false, false, false};
}

seen_event ordered(int64_t id) {
  return {id, true, true, false, false};
}

std::vector<int64_t> ids(std::initializer_list<int64_t> xs) {
  return xs;
}

std::vector<int64_t> open_ids(const routing_step& s) {
  return {s.open.begin(), s.open.end()};
}

} // namespace

CAF_TEST(without gaps the cursor follows the newest event seen) {
  routing_cursor c;
  c.resume(0);
  auto step = c.decide({plain(1), plain(2), plain(3)}, 0);
  CAF_CHECK_EQUAL(step.route, ids({1, 2, 3}));
  CAF_CHECK_EQUAL(step.done, 3);
  CAF_CHECK_EQUAL(step.scanned, 3);
  CAF_CHECK(step.open.empty());
  // Nothing moves until the transaction commits.
  CAF_CHECK_EQUAL(c.done(), 0);
  c.commit(step);
  CAF_CHECK_EQUAL(c.done(), 3);
  CAF_CHECK_EQUAL(c.unstored(), 3);
  c.stored(3);
  CAF_CHECK_EQUAL(c.unstored(), -1);
}

CAF_TEST(a gap holds the cursor but not the unordered events above it) {
  routing_cursor c;
  c.resume(0);
  // 2 is still open in its transaction: 1, 3 and 4 go now.
  auto step = c.decide({plain(1), plain(3), plain(4)}, 0);
  CAF_CHECK_EQUAL(step.route, ids({1, 3, 4}));
  CAF_CHECK_EQUAL(open_ids(step), ids({2}));
  CAF_CHECK_EQUAL(step.done, 1);
  CAF_CHECK_EQUAL(step.scanned, 4);
  c.commit(step);
  // It commits: the next look finds it among the open ids, and only it.
  step = c.decide({plain(2)}, 0);
  CAF_CHECK_EQUAL(step.route, ids({2}));
  CAF_CHECK_EQUAL(step.done, 4);
  CAF_CHECK(step.open.empty());
}

CAF_TEST(a gap the horizon passed that stays invisible rolled back) {
  routing_cursor c;
  c.resume(10);
  auto step = c.decide({plain(12)}, 10);
  CAF_CHECK_EQUAL(open_ids(step), ids({11}));
  c.commit(step);
  // Not yet passed by the horizon: still open.
  step = c.decide({}, 10);
  CAF_CHECK_EQUAL(open_ids(step), ids({11}));
  CAF_CHECK_EQUAL(step.done, 10);
  // Passed and not seen: it will never exist.
  step = c.decide({}, 12);
  CAF_CHECK(step.open.empty());
  CAF_CHECK_EQUAL(step.done, 12);
  CAF_CHECK(step.route.empty());
}

CAF_TEST(ordered events wait for the horizon and come in id order) {
  routing_cursor c;
  c.resume(0);
  // 1 is open; ordered 2 and 3 must not overtake it, plain 4 goes.
  auto step = c.decide({ordered(2), ordered(3), plain(4)}, 0);
  CAF_CHECK_EQUAL(step.route, ids({4}));
  CAF_CHECK_EQUAL(open_ids(step), ids({1, 2, 3}));
  CAF_CHECK_EQUAL(step.held, 2u); // 1 is a gap, not held
  c.commit(step);
  // 1 commits, the horizon passes 3.
  step = c.decide({ordered(1), ordered(2), ordered(3)}, 3);
  CAF_CHECK_EQUAL(step.route, ids({1, 2, 3}));
  CAF_CHECK_EQUAL(step.done, 4);
}

CAF_TEST(events without routes and quarantined ones are passed) {
  routing_cursor c;
  c.resume(0);
  seen_event no_route{1, false, false, false, false};
  seen_event quarantined{2, true, false, true, false};
  auto step = c.decide({no_route, quarantined, plain(3)}, 0);
  CAF_CHECK_EQUAL(step.route, ids({3}));
  CAF_CHECK_EQUAL(step.set_aside, ids({1}));
  CAF_CHECK_EQUAL(step.done, 3);
}

CAF_TEST(set aside events of routed types are routed below the cursor) {
  routing_cursor c;
  c.resume(50);
  seen_event aside{7, true, true, false, true};
  auto step = c.decide({aside, plain(51)}, 0);
  // Below C, every transaction has ended: ordered or not, it goes.
  CAF_CHECK_EQUAL(step.route, ids({7, 51}));
  CAF_CHECK_EQUAL(step.done, 51);
  CAF_CHECK(step.set_aside.empty());
}

CAF_TEST(a position another router stored is taken over) {
  routing_cursor c;
  c.resume(5);
  auto step = c.decide({plain(7)}, 0);
  c.commit(step);
  CAF_CHECK_EQUAL(c.done(), 5);
  CAF_CHECK_EQUAL(c.scanned(), 7);
  // The same position again: this router's memory above it holds.
  c.resume(5);
  CAF_CHECK_EQUAL(c.scanned(), 7);
  CAF_CHECK_EQUAL(c.open().size(), 1u);
  // Another router moved it: look again from there.
  c.resume(9);
  CAF_CHECK_EQUAL(c.done(), 9);
  CAF_CHECK_EQUAL(c.scanned(), 9);
  CAF_CHECK(c.open().empty());
  CAF_CHECK_EQUAL(c.unstored(), -1);
}

CAF_TEST(open ids are bounded and the look stops at the bound) {
  routing_cursor c;
  c.resume(0);
  auto far = static_cast<int64_t>(routing_cursor::max_open) + 100;
  auto step = c.decide({plain(far)}, 0);
  CAF_CHECK_EQUAL(step.open.size(), routing_cursor::max_open);
  CAF_CHECK(step.route.empty()); // beyond the cut: not looked at yet
  CAF_CHECK_EQUAL(step.scanned, static_cast<int64_t>(routing_cursor::max_open));
  c.commit(step);
  CAF_CHECK(!c.may_look_ahead());
  // The horizon passes them all: they rolled back, the cursor jumps.
  step = c.decide({}, static_cast<int64_t>(routing_cursor::max_open));
  CAF_CHECK(step.open.empty());
  CAF_CHECK_EQUAL(step.done, static_cast<int64_t>(routing_cursor::max_open));
}

CAF_TEST(a wide gap below the safe id costs no walk) {
  routing_cursor c;
  c.resume(0);
  // Ids deleted or rolled back long ago, all settled: nothing stays open.
  auto step = c.decide({plain(int64_t{1} << 40)}, (int64_t{1} << 40) - 1);
  CAF_CHECK(step.open.empty());
  CAF_CHECK_EQUAL(step.done, int64_t{1} << 40);
}

CAF_TEST(a forgotten memory starts from the stored position again) {
  routing_cursor c;
  c.resume(5);
  c.commit(c.decide({plain(7)}, 0)); // 6 open, 7 routed ahead
  c.forget();
  c.resume(5); // the same position, but a new connection
  CAF_CHECK_EQUAL(c.scanned(), 5);
  CAF_CHECK(c.open().empty());
}
