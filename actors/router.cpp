#include "actors/router.hpp"

#include <functional>

#include "actors/listen_demand.hpp"
#include "core/base/logging.hpp"

namespace outbox {

namespace {

class router_role : public pass_role {
public:
  using wake_fn = std::function<void(const std::string& queue)>;

  router_role(std::shared_ptr<routing_store> store, int32_t batch_size,
              std::vector<std::shared_ptr<handoff_box>> handoffs, wake_fn wake)
    : store_(std::move(store)), batch_size_(batch_size),
      handoffs_(std::move(handoffs)), wake_(std::move(wake)) {
  }

  pass_outcome pass() override {
    pass_outcome out;
    // Only dispatchers that can publish now and have credit left.
    std::vector<handoff_queue> offers;
    for (auto& box : handoffs_)
      if (auto offer = box->offer(); offer.room > 0)
        offers.push_back(std::move(offer));
    auto routed = store_->route_batch(batch_size_, offers);
    if (!routed) {
      out.error = routed.error();
      return out;
    }
    for (auto& s : routed->superseded)
      out.events.push_back(superseded_event(s));
    int64_t handed = 0;
    for (auto& [queue, ds] : routed->handed)
      if (auto box = box_of(queue); box && !ds.empty()) {
        auto n = static_cast<int64_t>(ds.size());
        if (!box->put(std::move(ds))) {
          // Its dispatcher exited after the offer: they wait for their
          // delivery timeout, as a claimed batch of a stopped one would.
          logger("router")->warn("event=handoff_refused queue={} deliveries={} "
                                 "action=wait_for_timeout",
                                 kv(queue), n);
          continue;
        }
        handed += n;
        wake_(queue);
      }
    for (auto& [queue, n] : routed->per_queue)
      if (n > 0 && routed->handed.count(queue) == 0)
        wake_(queue);
    if (routed->events_routed > 0)
      logger("router")->debug("event=routed events={} deliveries={} superseded={}",
                              routed->events_routed, routed->deliveries_created,
                              routed->deliveries_superseded);
    out.rows = routed->events_routed;
    // A quarantined event took a place in the batch as well.
    out.more = routed->more
               || routed->events_routed + routed->events_quarantined >= batch_size_;
    if (routed->held_back) {
      // Events wait for older transactions (routing_horizon.hpp).
      out.poll = std::chrono::milliseconds{routed->held_retry_ms};
    } else if (routed->due_ms > 0) {
      // Gaps to settle, the cursor's position to store: a pass a moment
      // later, which a linger or a wake-up may bring forward.
      out.due = std::chrono::milliseconds{routed->due_ms};
    }
    out.counters["deliveries"] = routed->deliveries_created;
    out.counters["superseded"] = routed->deliveries_superseded;
    if (handed > 0)
      out.counters["handed"] = handed;
    if (routed->deliveries_released > 0)
      out.counters["keys_released"] = routed->deliveries_released;
    if (routed->events_quarantined > 0)
      out.counters["quarantined"] = routed->events_quarantined;
    return out;
  }

private:
  std::shared_ptr<handoff_box> box_of(const std::string& queue) const {
    for (auto& box : handoffs_)
      if (box->queue() == queue)
        return box;
    return nullptr;
  }

  std::shared_ptr<routing_store> store_;
  int32_t batch_size_;
  std::vector<std::shared_ptr<handoff_box>> handoffs_;
  wake_fn wake_;
};

} // namespace

router_actor::behavior_type
router(router_actor::stateful_pointer<pass_state> self,
       std::shared_ptr<routing_store> store, int32_t batch_size,
       std::vector<dispatcher_entry> local,
       std::vector<std::shared_ptr<handoff_box>> handoffs,
       pass_settings settings, node_agent_actor agent, bool wake_dispatchers) {
  // Other nodes' dispatchers are woken by the routing transaction's NOTIFY
  // (core/domain/ready_notice.hpp); this node's at once, without that round trip.
  auto wake = [self, local = std::move(local),
               wake_dispatchers](const std::string& queue) {
    if (!wake_dispatchers)
      return;
    for (auto& d : local)
      if (d.queue == queue && d.dispatcher)
        self->send(d.dispatcher, wake_atom::value);
  };
  auto role = std::make_shared<router_role>(std::move(store), batch_size,
                                            std::move(handoffs), wake);
  auto listener = std::make_shared<caf::actor>();
  auto demand = std::make_shared<listen_demand>(listener_pause_after_passes);
  self->state.after_pass = [listener, demand](bool self_paced) {
    if (auto wanted = demand->after_pass(self_paced); wanted && *listener)
      caf::anon_send(*listener, listen_atom::value, *wanted);
  };
  return pass_behavior<router_actor>(
    self, role, identity("router"), settings, std::move(agent),
    [listener, demand](listener_atom, caf::actor& l) {
      *listener = std::move(l);
      if (!demand->wanted())
        caf::anon_send(*listener, listen_atom::value, false);
    });
}

} // namespace outbox
