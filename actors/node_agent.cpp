#include "actors/node_agent.hpp"

#include <utility>
#include <vector>

#include <caf/io/middleman.hpp>

#include "actors/join_rules.hpp"
#include "actors/lifecycle_group.hpp"
#include "actors/node_tls.hpp"
#include "actors/pass_loop.hpp"
#include "core/base/logging.hpp"
#include "core/base/timestamp.hpp"

namespace outbox {

const char* node_agent_state::name = "outbox node agent";

namespace {

using self_ptr = node_agent_actor::stateful_pointer<node_agent_state>;

constexpr auto tick_interval = std::chrono::milliseconds{500};
constexpr auto max_connect_delay = std::chrono::milliseconds{5000};
// How long a drained node waits before it stops: its yes must reach the
// operator first (through the status node, which may be this very node).
constexpr auto drain_delay = std::chrono::milliseconds{500};

// Sends what changed; with `beat`, the metrics message goes also when
// nothing did, empty: the status node learns from it that the node is not
// stalled (results_liveness_of).
void flush_metrics(self_ptr self, bool beat) {
  auto& st = self->state;
  if (st.status && st.lifecycle_changed) {
    st.lifecycle_changed = false;
    self->send(st.status, lifecycle_atom::value, st.info.name, st.lifecycle);
  }
  if (st.status && st.wakeups_changed) {
    st.wakeups_changed = false;
    self->send(st.status, wakeup_atom::value, st.info.name, st.wakeups_degraded);
  }
  if (!st.status || (st.changed.empty() && !beat))
    return;
  std::vector<actor_metrics> ms;
  for (auto& name : st.changed) {
    ms.push_back(st.metrics[name]);
    ms.back().histograms.clear(); // the node's own /metrics shows them
  }
  st.changed.clear();
  self->send(st.status, metrics_atom::value, st.info.name, std::move(ms));
}

// The status node's view of live result handlers, for this node's sweeper.
// A reply that does not come leaves the last view to age (relay_stalls).
void fetch_results_view(self_ptr self) {
  auto& st = self->state;
  if (!st.status || !st.results)
    return;
  auto view = st.results;
  self->request(st.status, std::chrono::seconds{2}, liveness_atom::value)
    .then(
      [view](std::map<std::string, int64_t>& liveness) {
        view->update(std::move(liveness), std::chrono::steady_clock::now());
      },
      [](caf::error&) {});
}

// The led role whose leader runs a local actor's passes, and its
// database ("router@orders": router, orders); empty for the others.
std::pair<std::string, std::string> led_as(const actor_entry& a) {
  auto at = a.name.rfind('@');
  if (at == std::string::npos)
    return {};
  auto db = a.name.substr(at + 1);
  if (a.role == "router" || a.role == "sweeper")
    return {a.role, db};
  if (a.role == "retention")
    return {"sweeper", db}; // retention follows the sweeper's leader
  return {};
}

// Who leads each database, for this node's routers, sweepers and
// retention. A reply that does not come leaves the last word to age
// (leadership_view::stale_after). An actor whose node takes a lead is
// woken: a router that did not lead has its event watcher paused, and
// would otherwise wait for its idle timer.
void fetch_leaders(self_ptr self) {
  auto& st = self->state;
  if (!st.status || !st.leadership)
    return;
  auto view = st.leadership;
  self->request(st.status, std::chrono::seconds{2}, leaders_atom::value)
    .then(
      [self, view](leader_map& leaders) {
        auto& st = self->state;
        auto now = std::chrono::steady_clock::now();
        std::vector<size_t> waiting;
        for (size_t i = 0; i < st.info.actors.size(); ++i) {
          auto [role, db] = led_as(st.info.actors[i]);
          if (!role.empty() && !view->leads(role, db, st.info.name, now))
            waiting.push_back(i);
        }
        view->update(std::move(leaders), now);
        for (auto i : waiting) {
          auto [role, db] = led_as(st.info.actors[i]);
          if (view->leads(role, db, st.info.name, now))
            self->send(st.info.actors[i].handle, wake_atom::value);
        }
      },
      [](caf::error&) {});
}

// Every listener's reason, within what the status node takes
// (join_limits::max_wakeup_text_bytes), cut at a character's start.
std::string joined_reasons(const std::map<caf::actor_addr, std::string>& reasons) {
  std::string out;
  for (auto& [_, why] : reasons)
    out += (out.empty() ? "" : "; ") + why;
  auto limit = join_limits{}.max_wakeup_text_bytes;
  if (out.size() > limit) {
    out.resize(limit);
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
      out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0)
      out.pop_back(); // a lead byte without its continuation
  }
  return out;
}

void joined(self_ptr self, status_actor status) {
  auto& st = self->state;
  st.status = std::move(status);
  st.connect_failures.succeeded();
  self->monitor(st.status);
  self->send(st.status, join_atom::value, st.info);
  for (auto& [name, _] : st.metrics)
    st.changed.insert(name);
  st.lifecycle_changed = !st.lifecycle.empty();
  st.wakeups_changed = !st.wakeups_degraded.empty();
  flush_metrics(self, false);
  logger("node")->info("event=joined_status node={}", kv(st.info.name));
}

void connect_failed(self_ptr self, const std::string& why) {
  auto& st = self->state;
  st.connecting = false;
  bool log = st.connect_failures.failed();
  st.next_connect_ms = now_ms() + st.connect_failures.backoff(max_connect_delay).count();
  if (log)
    logger("node")->warn("event=status_unreachable node={} host={} port={} "
                         "attempts={} since={} why={}",
                         kv(st.info.name), kv(st.target.host), st.target.port,
                         st.connect_failures.count(),
                         format_timestamp(st.connect_failures.since()), kv(why));
}

void try_connect(self_ptr self) {
  auto& st = self->state;
  if (st.status || st.connecting || now_ms() < st.next_connect_ms)
    return;
  if (st.target.local) {
    joined(self, st.target.local);
    return;
  }
  if (st.target.host.empty())
    return; // a node on its own
  st.connecting = true;
  // With TLS a peer without a certificate of the CA fails here: the
  // handshake is refused, and the agent retries as for any lost node.
  auto mm = node_middleman(self->system());
  self->request(mm, std::chrono::seconds{5}, caf::connect_atom::value,
                st.target.host, st.target.port)
    .then(
      [self](const caf::node_id&, caf::strong_actor_ptr& ptr,
             const std::set<std::string>& ifs) {
        self->state.connecting = false;
        if (!ptr)
          return connect_failed(self, "no actor published at that port");
        if (ifs != self->system().message_types<status_actor>())
          return connect_failed(self, "the actor at that port is not an "
                                      "outbox status actor of this version");
        joined(self, caf::actor_cast<status_actor>(std::move(ptr)));
      },
      [self](caf::error& err) {
        connect_failed(self, self->system().render(err));
      });
}

// Local actors are watched for the report: one that ended is down there
// (the status node sees it through its own monitor).
void watch_actors(self_ptr self) {
  for (auto& a : self->state.info.actors)
    self->monitor(a.handle);
}

void on_down(self_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  for (auto& a : st.info.actors)
    if (dm.source == caf::actor_cast<caf::actor_addr>(a.handle))
      st.terminated.insert(a.name);
  if (dm.source != caf::actor_cast<caf::actor_addr>(st.status))
    return;
  st.status = nullptr;
  logger("node")->warn("event=status_lost node={}", kv(st.info.name));
  // Not at once: the middleman drops the lost connection's proxy only on
  // its own down message, and a connect before that returns the dead
  // proxy (a join that is lost again at once). The tick tries later.
  st.next_connect_ms = now_ms() + backoff_delay(1, max_connect_delay).count();
}

// An operator's drain (outboxctl drain, via the status actor): the node
// stops as SIGTERM stops it, after its answer has left. A second request
// while it drains is answered yes again; the agent's own reminder, after
// drain_delay, stops the node.
bool on_drain(self_ptr self) {
  auto& st = self->state;
  // The reminder is anonymous (it expects no answer); a request is not.
  if (st.draining && !self->current_sender()) {
    if (auto drain = std::move(st.drain)) {
      st.drain = nullptr; // once
      drain();
    }
    return true;
  }
  if (st.draining)
    return true;
  if (!st.drain)
    return false;
  st.draining = true;
  logger("node")->info("event=drain_requested node={} action=stopping",
                       kv(st.info.name));
  caf::delayed_anon_send(caf::actor_cast<node_agent_actor>(self), drain_delay,
                         drain_atom::value);
  return true;
}

} // namespace

node_report local_report(const node_agent_state& st) {
  node_report out;
  auto& v = out.view;
  v.name = st.info.name;
  v.roles = st.info.roles;
  v.queues = st.info.queues;
  v.lifecycle = st.lifecycle;
  v.wakeups_degraded = st.wakeups_degraded;
  v.draining = st.draining;
  for (auto& a : st.info.actors) {
    actor_view av;
    auto m = st.metrics.find(a.name);
    if (m != st.metrics.end())
      av.metrics = m->second;
    av.metrics.name = a.name;
    av.metrics.role = a.role;
    av.metrics.queue = a.queue;
    av.up = st.terminated.count(a.name) == 0;
    v.actors.push_back(std::move(av));
  }
  out.status_joined = static_cast<bool>(st.status);
  out.lifecycle_by_queue = st.lifecycle_by_queue;
  out.started_ms = st.started_ms;
  return out;
}

node_agent_actor::behavior_type
node_agent(node_agent_actor::stateful_pointer<node_agent_state> self,
           status_address target, std::shared_ptr<results_view> results,
           std::function<void()> drain,
           std::shared_ptr<leadership_view> leadership) {
  self->state.target = std::move(target);
  self->state.drain = std::move(drain);
  self->state.results = std::move(results);
  self->state.leadership = std::move(leadership);
  self->state.started_ms = now_ms();
  subscribe_lifecycle(self);
  self->set_down_handler([self](caf::down_msg& dm) { on_down(self, dm); });
  return {
    [self](status_atom) { return local_report(self->state); },
    [self](join_atom, node_info& info) {
      self->state.info = std::move(info);
      self->state.info.agent = self;
      watch_actors(self);
      try_connect(self);
      self->delayed_send(self, tick_interval, tick_atom::value);
    },
    [self](metrics_atom, actor_metrics& m) {
      auto name = m.name;
      self->state.metrics[name] = std::move(m);
      self->state.changed.insert(name);
    },
    [self](wakeup_atom, std::string& degraded) {
      auto& st = self->state;
      auto& sender = self->current_sender();
      auto from = sender ? caf::actor_cast<caf::actor_addr>(sender) : caf::actor_addr{};
      if (degraded.empty())
        st.wakeup_reasons.erase(from);
      else
        st.wakeup_reasons[from] = std::move(degraded);
      auto all = joined_reasons(st.wakeup_reasons);
      st.wakeups_changed |= all != st.wakeups_degraded;
      st.wakeups_degraded = std::move(all);
    },
    [self](const lifecycle_event& ev) {
      ++self->state.lifecycle[to_string(ev.kind)];
      ++self->state.lifecycle_by_queue[to_string(ev.kind)][ev.queue];
      self->state.lifecycle_changed = true;
    },
    [self](tick_atom) {
      flush_metrics(self, true);
      fetch_results_view(self);
      fetch_leaders(self);
      try_connect(self);
      self->delayed_send(self, tick_interval, tick_atom::value);
    },
    [self](drain_atom) { return on_drain(self); },
  };
}

} // namespace outbox
