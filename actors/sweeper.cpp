#include "actors/sweeper.hpp"

#include <set>

#include "core/base/logging.hpp"

namespace outbox {

namespace {

class sweeper_role : public pass_role {
public:
  sweeper_role(std::shared_ptr<delivery_store> store, int32_t batch_size,
               std::shared_ptr<results_view> results,
               std::vector<std::string> queues)
    : store_(std::move(store)), batch_size_(batch_size),
      results_(std::move(results)), stalls_(std::move(queues)) {
  }

  pass_outcome pass() override {
    pass_outcome out;
    sweep_request request{batch_size_};
    request.holds = holds();
    out.gauges["stalled_queues"] = static_cast<int64_t>(request.holds.stalled.size());
    auto swept = store_->sweep(request);
    if (!swept) {
      out.error = swept.error();
      return out;
    }
    for (auto& t : swept->transitions)
      out.events.push_back(transition_event(t));
    out.rows = swept->timed_out + swept->expired;
    out.more = swept->timed_out >= batch_size_ || swept->expired >= batch_size_
               || swept->late_ended >= batch_size_;
    out.counters["timed_out"] = swept->timed_out;
    out.counters["retried"] = swept->retried;
    out.counters["failed"] = swept->failed;
    out.counters["expired"] = swept->expired;
    if (swept->released > 0)
      out.counters["keys_released"] = swept->released;
    if (swept->late_held > 0)
      out.counters["late_held"] = swept->late_held;
    if (swept->late_ended > 0) {
      out.counters["late_ended"] = swept->late_ended;
      logger("sweeper")->info("event=late_sends_ended count={} "
                              "why=no_result_within_one_more_timeout",
                              swept->late_ended);
    }
    if (out.rows > 0)
      logger("sweeper")->info("event=swept timedOut={} retried={} failed={} "
                              "expired={}",
                              swept->timed_out, swept->retried, swept->failed,
                              swept->expired);
    return out;
  }

private:
  // What the sweep leaves alone now, from the newest view of live result
  // handlers; a queue that stalls or comes back gets a log line.
  sweep_holds holds() {
    if (results_)
      if (auto view = results_->latest(); view && view->at != seen_at_) {
        seen_at_ = view->at;
        stalls_.observe(view->liveness, view->at);
      }
    auto out = stalls_.holds(std::chrono::steady_clock::now());
    std::set<std::string> now{out.stalled.begin(), out.stalled.end()};
    for (auto& q : now)
      if (held_.count(q) == 0)
        logger("sweeper")->warn("event=results_stalled queue={} "
                                "action=timeouts_held", kv(q));
    for (auto& q : held_)
      if (now.count(q) == 0)
        logger("sweeper")->info("event=results_back queue={} "
                                "action=deadlines_moved_by_outage", kv(q));
    held_ = std::move(now);
    return out;
  }

  std::shared_ptr<delivery_store> store_;
  int32_t batch_size_;
  std::shared_ptr<results_view> results_;
  relay_stalls stalls_;
  std::chrono::steady_clock::time_point seen_at_{};
  std::set<std::string> held_; ///< queues held at the last pass
};

} // namespace

pass_actor::behavior_type sweeper(pass_actor::stateful_pointer<pass_state> self,
                                  std::shared_ptr<delivery_store> store,
                                  int32_t batch_size, pass_settings settings,
                                  node_agent_actor agent,
                                  std::shared_ptr<results_view> results,
                                  std::vector<std::string> queues) {
  return pass_behavior<pass_actor>(
    self, std::make_shared<sweeper_role>(std::move(store), batch_size,
                                         std::move(results), std::move(queues)),
    identity("sweeper"), settings, std::move(agent));
}

} // namespace outbox
