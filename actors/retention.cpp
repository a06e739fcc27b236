#include "actors/retention.hpp"

#include <algorithm>

#include "core/base/logging.hpp"

namespace outbox {

namespace {

class retention_role : public pass_role {
public:
  retention_role(std::shared_ptr<retention_store> store, retention_policy policy)
    : store_(std::move(store)), policy_(policy) {
  }

  pass_outcome pass() override {
    pass_outcome out;
    auto leads = store_->lead();
    if (!leads || !*leads) {
      if (leading_)
        logger("retention")->warn("event=retention_lead_lost");
      leading_ = false;
      if (!leads)
        out.error = leads.error();
      return out;
    }
    if (!leading_) {
      leading_ = true;
      out.counters["took_lead"] = 1;
      logger("retention")->info("event=retention_leader");
    }
    if (auto err = delete_batches(out)) {
      out.error = err;
      leading_ = false; // the next pass that leads says so again
    }
    return out;
  }

  // Another node leads this database's sweeping, and so its retention:
  // the lock goes with the connection, for that node's retention to take.
  void stand_aside() override {
    store_->step_down();
    if (leading_)
      logger("retention")->info("event=retention_lead_released");
    leading_ = false;
  }

private:
  // One batch per final status with a window, then one of old quarantined
  // events: a pass stays short, and a full batch asks for the next at once.
  caf::error delete_batches(pass_outcome& out) {
    deleted_rows total;
    // A ring that fails (a lost connection, a deadlock) fails the pass,
    // but only after the deletes below had their turn.
    auto ring_error = turn_ring(out, total);
    for (auto status : final_delivery_statuses()) {
      auto hours = policy_.hours_of(status);
      if (hours <= 0)
        continue; // kept forever
      auto gone = store_->delete_finished(status, hours, retention_batch_rows);
      if (!gone)
        return gone.error();
      out.counters[std::string{"deleted_"} + to_string(status)] += gone->deliveries;
      total.deliveries += gone->deliveries;
      total.events += gone->events;
      out.more = out.more || gone->deliveries >= retention_batch_rows;
    }
    auto quarantined = store_->delete_quarantined_events(policy_.longest_hours(),
                                                         retention_batch_rows);
    if (!quarantined)
      return quarantined.error();
    out.more = out.more || *quarantined >= retention_batch_rows;
    out.counters["deleted_deliveries"] += total.deliveries;
    out.counters["deleted_events"] += total.events + *quarantined;
    out.rows = total.deliveries + total.events + *quarantined;
    if (out.rows > 0)
      log_batch(out, total, *quarantined);
    return ring_error;
  }

  // The events and the completion log go a partition at a time
  // (schema/022), once a span, by the completed window; a ring kept forever
  // (a window of 0) never turns.
  caf::error turn_ring(pass_outcome& out, deleted_rows& total) {
    auto hours = policy_.hours_of(delivery_status::completed);
    if (hours <= 0)
      return caf::none;
    auto turned = store_->turn_ring(hours, policy_.longest_hours());
    if (!turned)
      return turned.error();
    if (turned->span_changed)
      logger("retention")->info("event=retention_ring_span spanSeconds={}",
                                hours * 3600 / 2);
    if (turned->busy)
      out.counters["ring_busy"] += 1;
    if (turned->behind)
      out.counters["ring_behind"] += 1;
    if (!turned->emptied)
      return caf::none;
    out.counters["emptied_partitions"] += 1;
    out.counters["deleted_completed"] += turned->deleted.deliveries;
    total.deliveries += turned->deleted.deliveries;
    total.events += turned->deleted.events;
    logger("retention")->info(
      "event=retention_partition_emptied events={} completed={} keptEvents={} "
      "keptCompleted={}",
      turned->deleted.events, turned->deleted.deliveries, turned->kept.events,
      turned->kept.deliveries);
    return caf::none;
  }

  static void log_batch(pass_outcome& out, const deleted_rows& total,
                        int64_t quarantined) {
    logger("retention")->debug(
      "event=retention_batch deliveries={} events={} completed={} "
      "superseded={} failed={} expired={} quarantinedEvents={}",
      total.deliveries, total.events, out.counters["deleted_completed"],
      out.counters["deleted_superseded"], out.counters["deleted_failed"],
      out.counters["deleted_expired"], quarantined);
  }

  std::shared_ptr<retention_store> store_;
  retention_policy policy_;
  bool leading_ = false;
};

} // namespace

pass_actor::behavior_type
retention(pass_actor::stateful_pointer<pass_state> self,
          std::shared_ptr<retention_store> store, retention_policy policy,
          pass_settings settings, node_agent_actor agent) {
  settings.idle = std::min(settings.idle, retention_max_period);
  return pass_behavior<pass_actor>(
    self, std::make_shared<retention_role>(std::move(store), policy),
    identity("retention"), settings, std::move(agent));
}

} // namespace outbox
