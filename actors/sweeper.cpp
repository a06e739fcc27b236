#include "actors/sweeper.hpp"

#include "core/base/logging.hpp"

namespace outbox {

namespace {

class sweeper_role : public pass_role {
public:
  sweeper_role(std::shared_ptr<delivery_store> store, int32_t batch_size)
    : store_(std::move(store)), batch_size_(batch_size) {
  }

  pass_outcome pass() override {
    pass_outcome out;
    auto swept = store_->sweep(batch_size_);
    if (!swept) {
      out.error = swept.error();
      return out;
    }
    for (auto& t : swept->transitions)
      out.events.push_back(transition_event(t));
    out.rows = swept->timed_out + swept->expired;
    out.more = swept->timed_out >= batch_size_ || swept->expired >= batch_size_;
    out.counters["timed_out"] = swept->timed_out;
    out.counters["retried"] = swept->retried;
    out.counters["failed"] = swept->failed;
    out.counters["expired"] = swept->expired;
    if (swept->released > 0)
      out.counters["keys_released"] = swept->released;
    if (out.rows > 0)
      logger("sweeper")->info("event=swept timedOut={} retried={} failed={} "
                              "expired={}",
                              swept->timed_out, swept->retried, swept->failed,
                              swept->expired);
    return out;
  }

private:
  std::shared_ptr<delivery_store> store_;
  int32_t batch_size_;
};

} // namespace

pass_actor::behavior_type sweeper(pass_actor::stateful_pointer<pass_state> self,
                                  std::shared_ptr<delivery_store> store,
                                  int32_t batch_size, pass_settings settings,
                                  node_agent_actor agent) {
  return pass_behavior<pass_actor>(
    self, std::make_shared<sweeper_role>(std::move(store), batch_size),
    identity("sweeper"), settings, std::move(agent));
}

} // namespace outbox
