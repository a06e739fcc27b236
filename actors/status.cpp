#include "actors/status.hpp"

#include "actors/pass_loop.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"

namespace outbox {

const char* status_state::name = "outbox status";

namespace {

using self_ptr = status_actor::stateful_pointer<status_state>;

void on_join(self_ptr self, node_info& info) {
  auto& rec = self->state.nodes[info.name];
  rec.view = node_view{};
  rec.view.name = info.name;
  rec.view.roles = info.roles;
  rec.view.queues = info.queues;
  rec.view.joined_ms = now_ms();
  for (auto& a : info.actors) {
    actor_view v;
    v.metrics = identity(a.role, a.queue);
    v.metrics.name = a.name;
    rec.view.actors.push_back(std::move(v));
    self->monitor(a.handle);
  }
  self->monitor(info.agent);
  rec.info = std::move(info);
  logger("status")->info("event=node_joined node={} actors={}",
                         kv(rec.view.name), rec.view.actors.size());
}

void on_metrics(self_ptr self, const std::string& node,
                std::vector<actor_metrics>& ms) {
  auto it = self->state.nodes.find(node);
  if (it == self->state.nodes.end())
    return; // not joined (yet): its join will follow
  for (auto& m : ms)
    for (auto& a : it->second.view.actors)
      if (a.metrics.name == m.name)
        a.metrics = std::move(m);
}

void on_down(self_ptr self, const caf::down_msg& dm) {
  for (auto& [name, n] : self->state.nodes) {
    if (n.view.up && dm.source == caf::actor_cast<caf::actor_addr>(n.info.agent)) {
      n.view.up = false;
      n.view.down_ms = now_ms();
      for (auto& a : n.view.actors)
        a.up = false;
      logger("status")->warn("event=node_down node={}", kv(name));
      continue;
    }
    for (size_t i = 0; i < n.info.actors.size(); ++i)
      if (n.view.actors[i].up
          && dm.source == caf::actor_cast<caf::actor_addr>(n.info.actors[i].handle)) {
        n.view.actors[i].up = false;
        logger("status")->warn("event=actor_down node={} actor={}", kv(name),
                               kv(n.view.actors[i].metrics.name));
      }
  }
}

cluster_status snapshot(self_ptr self) {
  cluster_status out;
  out.now_ms = now_ms();
  if (!self->state.store) {
    out.database_error = "this status node has no database connection";
  } else if (auto counts = self->state.store->read()) {
    out.database_ok = true;
    out.counts = std::move(*counts);
  } else {
    out.database_error = render(counts.error());
  }
  for (auto& [_, n] : self->state.nodes)
    out.nodes.push_back(n.view);
  return out;
}

} // namespace

status_actor::behavior_type status(status_actor::stateful_pointer<status_state> self,
                                   std::shared_ptr<status_store> store) {
  self->state.store = std::move(store);
  self->set_down_handler([self](caf::down_msg& dm) { on_down(self, dm); });
  return {
    [self](join_atom, node_info& info) { on_join(self, info); },
    [self](metrics_atom, const std::string& node,
           std::vector<actor_metrics>& ms) { on_metrics(self, node, ms); },
    [self](lifecycle_atom, const std::string& node,
           std::map<std::string, int64_t>& counts) {
      auto it = self->state.nodes.find(node);
      if (it != self->state.nodes.end())
        it->second.view.lifecycle = std::move(counts);
    },
    [self](wakeup_atom, const std::string& node, std::string& degraded) {
      auto it = self->state.nodes.find(node);
      if (it != self->state.nodes.end())
        it->second.view.wakeups_degraded = std::move(degraded);
    },
    [self](status_atom) { return snapshot(self); },
  };
}

} // namespace outbox
