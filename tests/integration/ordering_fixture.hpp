// Deliveries of ordered routes on a schema of their own: the routes, a
// router that keeps its horizon between passes as the router actor does,
// and ways to look at what the claim hands out.
#pragma once

#include <algorithm>
#include <memory>
#include <set>

#include "tests/integration/delivery_fixture.hpp"
#include "tests/integration/wait_until.hpp"

namespace outbox::testing {

struct ordering_fixture : delivery_fixture {
  std::unique_ptr<routing_repository> router;

  /// Event type "e" to job J on `queue`, ordered by key.
  route ordered_route(const std::string& queue = "oq",
                      failure_policy on_failure = failure_policy::continue_key,
                      merge_mode merge = merge_mode::none) {
    route r;
    r.event_type = "e";
    r.job = "J";
    r.queue = queue;
    r.rules.retry_delays_seconds = {60};
    r.rules.merge = merge;
    r.rules.ordering = key_ordering::key;
    r.rules.on_failure = on_failure;
    return r;
  }

  /// Event type `type` to job J on `queue`, not ordered, no coalescing.
  route plain_route(const std::string& queue, const std::string& type) {
    route r;
    r.event_type = type;
    r.job = "J";
    r.queue = queue;
    r.rules.retry_delays_seconds = {60};
    r.rules.merge = merge_mode::none;
    return r;
  }

  void use_routes(std::vector<route> routes) {
    router = std::make_unique<routing_repository>(names, routes);
  }

  /// Routes until `n` events were routed (ordered ones wait for
  /// transactions older than them, which other tests may have open).
  void route_events(int64_t n) {
    int64_t routed = 0;
    bool ok = wait_until([&] {
      auto r = router->route_batch(db, 1000);
      if (!r)
        CAF_FAIL("routing failed: " << render(r.error()));
      routed += r->events_routed;
      return routed >= n;
    });
    CAF_REQUIRE(ok);
    CAF_REQUIRE_EQUAL(routed, n);
  }

  /// Publishes an event of `key` in a transaction of `other` that stays
  /// open: an earlier id that commits after later ones.
  int64_t publish_left_open(pg_connection& other, const std::string& key) {
    CAF_REQUIRE(!other.exec_script("begin", "BEGIN"));
    return must_exec(other, "SELECT " + names.publish_function + "('e', '{}', $1)", {key})
      .int64(0, 0);
  }

  /// One routing pass routes nothing and says it held events back.
  void check_held_back() {
    auto r = router->route_batch(db, 100);
    CAF_REQUIRE(r);
    CAF_CHECK_EQUAL(r->events_routed, 0);
    CAF_CHECK(r->held_back);
  }

  int64_t publish_expiring(const std::string& key, int64_t ttl_seconds) {
    return must_exec(db, "SELECT " + names.publish_function
                           + "('e', '{}', $1, $2)",
                     {key, std::to_string(ttl_seconds)})
      .int64(0, 0);
  }

  /// Moves every pending delivery with a time to live past it.
  void expire_all_pending_ttl() {
    must_exec(db, "UPDATE " + names.deliveries
                    + " SET expires_at = now() - interval '1 second'"
                      " WHERE status = 'pending' AND expires_at IS NOT NULL");
  }

  /// Deliveries waiting for their key.
  int64_t parked() {
    return must_exec(db, "SELECT count(*) FROM " + names.deliveries
                           + " WHERE ordered AND status = 'pending'"
                             " AND available_at IS NULL")
      .int64(0, 0);
  }

  static std::set<int64_t> events_of(const claim_result& c) {
    std::set<int64_t> out;
    for (auto& j : c.jobs)
      out.insert(j.event_id);
    return out;
  }

  static const job_to_send& job_of(const claim_result& c, int64_t event_id) {
    auto it = std::find_if(c.jobs.begin(), c.jobs.end(),
                           [&](const job_to_send& j) { return j.event_id == event_id; });
    CAF_REQUIRE(it != c.jobs.end());
    return *it;
  }
};

} // namespace outbox::testing
