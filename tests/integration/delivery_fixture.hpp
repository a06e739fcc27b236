// A schema with routed deliveries ready to claim, for the dispatch and
// result suites.
#pragma once

#include "core/base/errors.hpp"
#include "core/pg/claim_repository.hpp"
#include "core/pg/result_repository.hpp"
#include "core/pg/routing_repository.hpp"
#include "core/pg/sweep_repository.hpp"
#include "tests/integration/test_services.hpp"

namespace outbox::testing {

struct delivery_fixture : schema_fixture {
  claim_repository claims{names};
  result_repository results{names};
  sweep_repository sweeps{names};
  /// Each queue's claim cursor, kept between claim() calls as a
  /// dispatcher keeps its own.
  std::map<std::string, claim_cursor> cursors;

  /// Routes `n` events of one route with these retry delays into `queue`.
  void make_deliveries(int n, std::vector<int32_t> delays,
                       const std::string& queue = "q") {
    route r;
    r.event_type = "e";
    r.job = "J";
    r.queue = queue;
    r.rules.retry_delays_seconds = std::move(delays);
    routing_repository router{names, {r}};
    for (int i = 0; i < n; ++i)
      publish("e", "{}");
    auto routed = router.route_batch(db, 10000);
    if (!routed)
      CAF_FAIL("routing failed: " << render(routed.error()));
  }

  claim_result claim(const std::string& queue = "q", int batch = 100,
                     int32_t max_in_flight = claim_request::no_limit) {
    auto& cursor = cursors[queue];
    auto c = claims.claim_batch(db, {queue, batch, max_in_flight, cursor});
    cursor = c ? c->resume : claim_cursor{};
    if (!c)
      CAF_FAIL("claim failed: " << render(c.error()));
    return std::move(*c);
  }

  apply_result apply(std::vector<send_result> rs) {
    auto a = results.apply_results(db, rs);
    if (!a)
      CAF_FAIL("apply failed: " << render(a.error()));
    return std::move(*a);
  }

  /// Makes every waiting delivery ready now (instead of waiting for
  /// delays); those of ordered keys waiting for their key stay parked.
  void make_ready() {
    must_exec(db, "UPDATE " + names.deliveries
                    + " SET available_at = now() WHERE status = 'pending'"
                      " AND available_at IS NOT NULL");
  }

  static send_result result_of(const job_to_send& j, outcome o) {
    return {j.delivery_id, j.dispatch_id, j.job, o, "test", {}};
  }
};

} // namespace outbox::testing
