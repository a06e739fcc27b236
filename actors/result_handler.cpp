#include "actors/result_handler.hpp"

#include "core/amqp/wire.hpp"
#include "core/domain/dispatch_tag.hpp"
#include "core/domain/trace_context.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"

namespace outbox {

namespace {

const char* verdict_name(result_verdict v) {
  switch (v) {
    case result_verdict::applied: return "applied";
    case result_verdict::unknown_delivery: return "unknown_delivery";
    case result_verdict::stale: return "stale";
    case result_verdict::wrong_job: return "wrong_job";
    case result_verdict::parked: return "parked";
  }
  return "unknown_delivery";
}

class result_role : public pass_role {
public:
  result_role(std::vector<result_target> targets,
              std::shared_ptr<result_source> source, std::string queue,
              int32_t batch_size, std::chrono::milliseconds wait,
              std::shared_ptr<result_parker> parker)
    : targets_(std::move(targets)), parker_(std::move(parker)),
      source_(std::move(source)),
      queue_(std::move(queue)), batch_size_(batch_size), wait_(wait) {
  }

  pass_outcome pass() override {
    pass_outcome out;
    // A batch whose apply failed is kept and applied first: acking later
    // messages would ack it too (acks are cumulative).
    if (held_.empty()) {
      auto fetched = source_->fetch(static_cast<size_t>(batch_size_), wait_);
      if (!fetched) {
        out.error = fetched.error();
        return out;
      }
      held_ = std::move(*fetched);
    }
    if (held_.empty()) {
      // The wait for a first result was this pass's sleep: listen again at
      // once, so a result never waits for a timer.
      out.again = true;
      return out;
    }
    out.more = true;
    if (auto err = apply_held(out)) {
      out.error = std::move(err);
      return out;
    }
    // If the ack fails, the broker hands the results out again; applying
    // them twice changes nothing (they are stale the second time).
    auto last = held_.back().delivery_tag;
    held_.clear();
    if (auto err = source_->ack_through(last))
      out.error = std::move(err);
    return out;
  }

private:
  // The traces the workers sent back, for the outcome's log lines.
  static std::map<int64_t, std::string>
  trace_ids_of(const std::vector<send_result>& results) {
    std::map<int64_t, std::string> out;
    for (auto& r : results)
      if (auto id = trace_id_of(r.traceparent); !id.empty())
        out[r.delivery_id] = std::move(id);
    return out;
  }

  caf::error apply_held(pass_outcome& out) {
    std::vector<send_result> results;
    for (auto& m : held_) {
      auto content = read_result_message(m.body);
      for (auto& why : content.refused) {
        ++out.counters["malformed"];
        logger("results")->warn("event=result_ignored queue={} verdict=malformed "
                                "deliveryTag={} why={}",
                                kv(queue_), m.delivery_tag, kv(why));
      }
      for (auto& r : content.results)
        results.push_back(std::move(r));
    }
    if (results.empty())
      return caf::none;
    auto applied = apply(results);
    if (!applied)
      return applied.error();
    for (size_t i = 0; i < results.size(); ++i) {
      auto v = applied->verdicts[i];
      if (v == result_verdict::applied) {
        ++out.rows;
        continue;
      }
      if (v == result_verdict::parked) {
        ++out.counters["parked"];
        continue;
      }
      ++out.counters[verdict_name(v)];
      logger("results")->info("event=result_ignored queue={} verdict={} "
                              "outboxDeliveryId={} job={} outcome={}",
                              kv(queue_), verdict_name(v),
                              results[i].delivery_id, kv(results[i].job),
                              to_string(results[i].result));
    }
    for (auto& t : applied->transitions) {
      out.events.push_back(transition_event(t));
      if (t.since_dispatch_seconds)
        out.latencies["publish_to_result"].push_back(*t.since_dispatch_seconds);
    }
    add_trace_ids(out.events, trace_ids_of(results));
    out.counters["completed"] += applied->completed;
    out.counters["retried"] += applied->retried;
    out.counters["failed"] += applied->failed;
    if (applied->released > 0)
      out.counters["keys_released"] += applied->released;
    return caf::none;
  }

  // The results of several databases: each database's part applied in its
  // own transaction, the verdicts put back in the results' order (a
  // result sent to every database, its tag being none of theirs, counts
  // where it applied).
  caf::expected<apply_result> apply(const std::vector<send_result>& results) {
    if (targets_.size() == 1) {
      auto applied = targets_[0].store->apply_results(results);
      if (applied)
        for (auto& tr : applied->transitions)
          tr.database = targets_[0].database;
      return applied;
    }
    std::vector<std::string> ids, tags;
    for (auto& r : results)
      ids.push_back(r.dispatch_id);
    for (auto& t : targets_)
      tags.push_back(t.tag);
    auto parts = split_by_tag(ids, tags);
    apply_result all;
    all.verdicts.assign(results.size(), result_verdict::unknown_delivery);
    for (size_t t = 0; t < targets_.size(); ++t) {
      if (parts[t].empty())
        continue;
      std::vector<send_result> part;
      for (auto i : parts[t])
        part.push_back(results[i]);
      // A database this node does not serve: its results wait for a node
      // that does.
      auto applied = targets_[t].store
                       ? targets_[t].store->apply_results(part)
                       : caf::expected<apply_result>{make_error(
                           errc::config_invalid, "not served by this node")};
      if (!applied && parker_) {
        // Its database cannot take them now: they wait in its own queue,
        // the others' are applied and acked.
        if (auto err = parker_->park(targets_[t].database, part))
          return applied.error();
        if (targets_[t].store)
          logger("results")->warn("event=results_parked queue={} database={} "
                                  "results={} error={}",
                                  kv(queue_), kv(targets_[t].database), part.size(),
                                  kv(render(applied.error())));
        else
          logger("results")->debug("event=results_parked queue={} database={} "
                                   "results={} why=not_served_here",
                                   kv(queue_), kv(targets_[t].database),
                                   part.size());
        for (auto i : parts[t])
          if (all.verdicts[i] == result_verdict::unknown_delivery)
            all.verdicts[i] = result_verdict::parked;
        continue;
      }
      if (!applied)
        return applied.error();
      for (auto& tr : applied->transitions)
        tr.database = targets_[t].database;
      for (size_t k = 0; k < parts[t].size(); ++k) {
        auto& v = all.verdicts[parts[t][k]];
        auto got = applied->verdicts[k];
        if (v == result_verdict::unknown_delivery || got == result_verdict::applied)
          v = got;
      }
      add(all, *applied);
    }
    return all;
  }

  static void add(apply_result& all, apply_result& part) {
    all.completed += part.completed;
    all.retried += part.retried;
    all.failed += part.failed;
    all.expired += part.expired;
    all.released += part.released;
    all.late_held += part.late_held;
    all.late_ended += part.late_ended;
    for (auto& t : part.transitions)
      all.transitions.push_back(std::move(t));
  }

  std::vector<result_target> targets_;
  std::shared_ptr<result_parker> parker_;
  std::shared_ptr<result_source> source_;
  std::string queue_;
  int32_t batch_size_;
  std::chrono::milliseconds wait_;
  std::vector<incoming_message> held_;
};

} // namespace

pass_actor::behavior_type
result_handler(pass_actor::stateful_pointer<pass_state> self,
               std::vector<result_target> targets,
               std::shared_ptr<result_source> source, std::string queue,
               int32_t batch_size, std::chrono::milliseconds wait,
               pass_settings settings, node_agent_actor agent,
               std::shared_ptr<result_parker> parker) {
  auto role = std::make_shared<result_role>(std::move(targets), std::move(source),
                                            queue, batch_size, wait,
                                            std::move(parker));
  return pass_behavior<pass_actor>(self, role, identity("results", queue),
                                   settings, std::move(agent));
}

} // namespace outbox
