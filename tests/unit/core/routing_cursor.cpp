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

cursor_state at(int64_t position) {
  return {position, position, {}};
}

std::vector<int64_t> open_ids(const routing_step& s) {
  return {s.open.begin(), s.open.end()};
}

} // namespace

CAF_TEST(without gaps the cursor follows the newest event seen) {
  routing_cursor c;
  c.resume(at(0));
  auto step = c.decide({plain(1), plain(2), plain(3)}, 0);
  CAF_CHECK_EQUAL(step.route, ids({1, 2, 3}));
  CAF_CHECK_EQUAL(step.done, 3);
  CAF_CHECK_EQUAL(step.scanned, 3);
  CAF_CHECK(step.open.empty());
  // Nothing moves until the transaction commits.
  CAF_CHECK_EQUAL(c.done(), 0);
  auto store = c.to_store(step);
  CAF_REQUIRE(store);
  CAF_CHECK(*store == (cursor_state{3, 3, {}}));
  c.commit(step);
  CAF_CHECK_EQUAL(c.done(), 3);
  // A look that changes nothing stores nothing.
  CAF_CHECK(!c.to_store(c.decide({}, 0)));
}

CAF_TEST(a gap holds the cursor but not the unordered events above it) {
  routing_cursor c;
  c.resume(at(0));
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
  c.resume(at(10));
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
  c.resume(at(0));
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
  c.resume(at(0));
  seen_event no_route{1, false, false, false, false};
  seen_event quarantined{2, true, false, true, false};
  auto step = c.decide({no_route, quarantined, plain(3)}, 0);
  CAF_CHECK_EQUAL(step.route, ids({3}));
  CAF_CHECK_EQUAL(step.set_aside, ids({1}));
  CAF_CHECK_EQUAL(step.done, 3);
}

CAF_TEST(set aside events of routed types are routed below the cursor) {
  routing_cursor c;
  c.resume(at(50));
  seen_event aside{7, true, true, false, true};
  auto step = c.decide({aside, plain(51)}, 0);
  // Below C, every transaction has ended: ordered or not, it goes.
  CAF_CHECK_EQUAL(step.route, ids({7, 51}));
  CAF_CHECK_EQUAL(step.done, 51);
  CAF_CHECK(step.set_aside.empty());
}

CAF_TEST(what another router stored is taken over exactly) {
  routing_cursor c;
  c.resume(at(5));
  auto step = c.decide({plain(7)}, 0); // 6 open, 7 routed ahead
  auto store = c.to_store(step);
  CAF_REQUIRE(store);
  CAF_CHECK(*store == (cursor_state{5, 7, {6}}));
  // A new router (or this one on a new connection) resumes from it: 7 is
  // not looked at again, 6 is.
  routing_cursor other;
  other.resume(*store);
  CAF_CHECK_EQUAL(other.done(), 5);
  CAF_CHECK_EQUAL(other.scanned(), 7);
  CAF_CHECK_EQUAL(std::vector<int64_t>(other.open().begin(), other.open().end()),
                  ids({6}));
  step = other.decide({plain(6), plain(8)}, 0);
  CAF_CHECK_EQUAL(step.route, ids({6, 8}));
  CAF_CHECK_EQUAL(step.done, 8);
}

CAF_TEST(a stored state out of shape is settled on resume) {
  routing_cursor c;
  // A below C (a position stored by an older version or a bulk load),
  // open ids at or below C and above A.
  c.resume({10, 4, {3, 10, 12}});
  CAF_CHECK_EQUAL(c.done(), 10);
  CAF_CHECK_EQUAL(c.scanned(), 10);
  CAF_CHECK(c.open().empty());
}

CAF_TEST(a restart is stored even where nothing else moved) {
  routing_cursor c;
  c.resume(at(0));
  c.restart(0);
  CAF_CHECK(c.to_store(c.decide({}, 0)));
}

CAF_TEST(open ids are stored as ranges) {
  CAF_CHECK_EQUAL(to_ranges({}), ids({}));
  CAF_CHECK_EQUAL(to_ranges({4, 5, 6, 9, 11, 12}), ids({4, 6, 9, 9, 11, 12}));
  auto back = from_ranges(ids({4, 6, 9, 9, 11, 12}));
  CAF_REQUIRE(back);
  CAF_CHECK_EQUAL(std::vector<int64_t>(back->begin(), back->end()),
                  ids({4, 5, 6, 9, 11, 12}));
  CAF_CHECK(!from_ranges(ids({4})));       // odd
  CAF_CHECK(!from_ranges(ids({6, 4})));    // out of order
  CAF_CHECK(!from_ranges(ids({0, 1 << 20}))); // more than the bound
}

CAF_TEST(open ids are bounded and the look stops at the bound) {
  routing_cursor c;
  c.resume(at(0));
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
  c.resume(at(0));
  // Ids deleted or rolled back long ago, all settled: nothing stays open.
  auto step = c.decide({plain(int64_t{1} << 40)}, (int64_t{1} << 40) - 1);
  CAF_CHECK(step.open.empty());
  CAF_CHECK_EQUAL(step.done, int64_t{1} << 40);
}
