#include "actors/result_handler.hpp"

#include "core/amqp/wire.hpp"
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
  }
  return "unknown_delivery";
}

class result_role : public pass_role {
public:
  result_role(std::shared_ptr<delivery_store> store,
              std::shared_ptr<result_source> source, std::string queue,
              int32_t batch_size, std::chrono::milliseconds wait)
    : store_(std::move(store)), source_(std::move(source)),
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
    auto applied = store_->apply_results(results);
    if (!applied)
      return applied.error();
    for (size_t i = 0; i < results.size(); ++i) {
      auto v = applied->verdicts[i];
      if (v == result_verdict::applied) {
        ++out.rows;
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

  std::shared_ptr<delivery_store> store_;
  std::shared_ptr<result_source> source_;
  std::string queue_;
  int32_t batch_size_;
  std::chrono::milliseconds wait_;
  std::vector<incoming_message> held_;
};

} // namespace

pass_actor::behavior_type
result_handler(pass_actor::stateful_pointer<pass_state> self,
               std::shared_ptr<delivery_store> store,
               std::shared_ptr<result_source> source, std::string queue,
               int32_t batch_size, std::chrono::milliseconds wait,
               pass_settings settings, node_agent_actor agent) {
  auto role = std::make_shared<result_role>(std::move(store), std::move(source),
                                            queue, batch_size, wait);
  return pass_behavior<pass_actor>(self, role, identity("results", queue),
                                   settings, std::move(agent));
}

} // namespace outbox
