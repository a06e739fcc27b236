#define CAF_SUITE core.leader_assignment
#include <caf/test/unit_test.hpp>

#include "actors/leadership_view.hpp"
#include "core/domain/leader_assignment.hpp"

using namespace outbox;

namespace {

const std::vector<std::string> all_roles{"router", "dispatcher", "results",
                                         "sweeper"};

std::map<std::string, int> load_of(const leader_map& m, const std::string& role) {
  std::map<std::string, int> out;
  for (auto& [db, roles] : m)
    ++out[roles.at(role)];
  return out;
}

} // namespace

CAF_TEST(three nodes and six databases lead two each) {
  std::vector<leader_candidate> nodes{{"c:3", all_roles, {}, true, {}},
                                      {"a:1", all_roles, {}, true, {}},
                                      {"b:2", all_roles, {}, true, {}}};
  auto m = assign_leaders({"d6", "d1", "d2", "d3", "d4", "d5"}, nodes);
  CAF_REQUIRE_EQUAL(m.size(), 6u);
  for (auto role : {"router", "sweeper"})
    CAF_CHECK_EQUAL(load_of(m, role),
                    (std::map<std::string, int>{{"a:1", 2}, {"b:2", 2}, {"c:3", 2}}));
  CAF_CHECK_EQUAL(m["d1"]["router"], "a:1");
  CAF_CHECK_EQUAL(m["d2"]["router"], "b:2");
  // The same view, in another order, gives the same leaders.
  std::reverse(nodes.begin(), nodes.end());
  CAF_CHECK(assign_leaders({"d1", "d2", "d3", "d4", "d5", "d6"}, nodes) == m);
}

CAF_TEST(a node that is down or lacks the role or the database leads nothing) {
  std::vector<leader_candidate> nodes{
    {"a:1", all_roles, {}, false, {}},                  // down
    {"b:2", {"dispatcher", "results"}, {}, true, {}},   // no led role
    {"c:3", {"router"}, {"orders"}, true, {}},          // one database, routing only
    {"d:4", {"sweeper", "router"}, {"billing"}, true, {}}};
  auto m = assign_leaders({"orders", "billing", "stock"}, nodes);
  CAF_CHECK_EQUAL(m["orders"]["router"], "c:3");
  CAF_CHECK_EQUAL(m["orders"].count("sweeper"), 0u);
  CAF_CHECK_EQUAL(m["billing"]["router"], "d:4");
  CAF_CHECK_EQUAL(m["billing"]["sweeper"], "d:4");
  CAF_CHECK_EQUAL(m.count("stock"), 0u); // nobody serves it
}

CAF_TEST(an actor that cannot lead gives its database to a fit one) {
  std::vector<leader_candidate> nodes{{"a:1", all_roles, {}, true, {"router@d1"}},
                                      {"b:2", all_roles, {}, true, {}}};
  auto m = assign_leaders({"d1", "d2"}, nodes);
  CAF_CHECK_EQUAL(m["d1"]["router"], "b:2");
  CAF_CHECK_EQUAL(m["d1"]["sweeper"], "a:1");
  // None fit: the least loaded all the same.
  nodes[1].unfit = {"router@d1"};
  auto none_fit = assign_leaders({"d1"}, nodes);
  CAF_CHECK_EQUAL(none_fit["d1"]["router"], "a:1");
}

CAF_TEST(a joining node takes its share) {
  std::vector<leader_candidate> nodes{{"a:1", all_roles, {}, true, {}}};
  auto alone = assign_leaders({"d1", "d2"}, nodes);
  CAF_CHECK_EQUAL(load_of(alone, "router"), (std::map<std::string, int>{{"a:1", 2}}));
  nodes.push_back({"b:2", all_roles, {}, true, {}});
  auto two = assign_leaders({"d1", "d2"}, nodes);
  CAF_CHECK_EQUAL(load_of(two, "router"),
                  (std::map<std::string, int>{{"a:1", 1}, {"b:2", 1}}));
}

CAF_TEST(the view lets a node run what it leads and everything without word) {
  leadership_view view;
  auto now = leadership_view::clock::now();
  // No word from the status node yet: every node runs.
  CAF_CHECK(view.leads("router", "orders", "a:1", now));
  view.update({{"orders", {{"router", "b:2"}}}}, now);
  CAF_CHECK(!view.leads("router", "orders", "a:1", now));
  CAF_CHECK(view.leads("router", "orders", "b:2", now));
  CAF_CHECK(view.leads("sweeper", "orders", "a:1", now)); // no leader named
  CAF_CHECK(view.leads("router", "billing", "a:1", now)); // nor for billing
  // A word older than stale_after: the status node is lost, all run.
  auto later = now + leadership_view::stale_after + std::chrono::seconds{1};
  CAF_CHECK(view.leads("router", "orders", "a:1", later));
}
