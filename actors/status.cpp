#include "actors/status.hpp"

#include <optional>
#include <set>

#include "actors/join_rules.hpp"
#include "actors/pass_loop.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/base/text.hpp"
#include "core/base/timestamp.hpp"

namespace outbox {

const char* status_state::name = "outbox status";

namespace {

using self_ptr = status_actor::stateful_pointer<status_state>;

const join_limits limits;

// A refused join leaves the view as it was; the line names the node only
// when its name passed the rules (it is the peer's text).
bool admit(self_ptr self, const node_info& info) {
  auto why = join_refusal(info, limits);
  if (why.empty()) {
    auto& nodes = self->state.nodes;
    auto it = nodes.find(info.name);
    bool same_agent = it != nodes.end() && it->second.info.agent == info.agent;
    if (!make_room(nodes, info.name, same_agent, limits))
      why = it != nodes.end() ? "the name is taken by a live node"
                              : "the view is full of live nodes";
    else
      return true;
    logger("status")->warn("event=join_refused node={} reason={}",
                           kv(info.name), kv(why));
    return false;
  }
  logger("status")->warn("event=join_refused reason={}", kv(why));
  return false;
}

void on_join(self_ptr self, node_info& info) {
  if (!admit(self, info))
    return;
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
  rec.heard_ms = now_ms();
  rec.info = std::move(info);
  logger("status")->info("event=node_joined node={} actors={}",
                         kv(rec.view.name), rec.view.actors.size());
}

void on_metrics(self_ptr self, const std::string& node,
                std::vector<actor_metrics>& ms) {
  auto it = self->state.nodes.find(node);
  if (it == self->state.nodes.end())
    return; // not joined (yet): its join will follow
  it->second.heard_ms = now_ms(); // also an empty report: the agent's beat
  if (ms.size() > it->second.view.actors.size())
    return; // more than it announced: not a node's report
  for (auto& m : ms)
    for (auto& a : it->second.view.actors)
      if (a.metrics.name == m.name && metrics_readable(m, limits)) {
        // Who the actor is was fixed at the join.
        m.role = a.metrics.role;
        m.queue = a.metrics.queue;
        a.metrics = std::move(m);
      }
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

} // namespace

std::map<std::string, int64_t> results_liveness_of(const status_state& st,
                                                   int64_t at_ms) {
  std::map<std::string, int64_t> out;
  // A broker that blocks publishers (a resource alarm) blocks the workers'
  // results too: no result of such a queue can arrive, whoever would
  // apply it. Its dispatchers say so.
  std::set<std::string> blocked;
  for (auto& [_, n] : st.nodes)
    for (auto& a : n.view.actors) {
      auto it = a.metrics.gauges.find("broker_blocked");
      if (n.view.up && a.up && it != a.metrics.gauges.end() && it->second != 0)
        blocked.insert(a.metrics.queue);
    }
  for (auto& [_, n] : st.nodes) {
    if (!n.view.up)
      continue;
    auto age = std::max<int64_t>(0, at_ms - n.heard_ms);
    for (auto& a : n.view.actors)
      if (a.up && a.metrics.role == "results"
          && blocked.count(a.metrics.queue) == 0) {
        auto it = out.find(a.metrics.queue);
        if (it == out.end() || age < it->second)
          out[a.metrics.queue] = age;
      }
  }
  return out;
}

leader_map leaders_of(const status_state& st) {
  if (!st.named)
    return {};
  std::vector<std::string> dbs;
  for (auto& d : st.databases)
    dbs.push_back(d.name);
  std::vector<leader_candidate> nodes;
  for (auto& [name, n] : st.nodes) {
    leader_candidate c{name, n.info.roles, n.info.databases, n.view.up, {}};
    // An actor of a led role that died, or whose last pass could not reach
    // its database, is no leader while another node's is fit.
    for (size_t i = 0; i < n.view.actors.size() && i < n.info.actors.size(); ++i) {
      auto& a = n.view.actors[i];
      auto& role = n.info.actors[i].role;
      auto& full = n.info.actors[i].name; // "router@orders"
      auto at = full.rfind('@');
      if (at == std::string::npos || (role != "router" && role != "sweeper"))
        continue;
      if (!a.up || !a.metrics.connected)
        c.unfit.push_back(role + full.substr(at));
    }
    nodes.push_back(std::move(c));
  }
  return assign_leaders(std::move(dbs), nodes);
}

namespace {

cluster_status build_view(self_ptr self, int64_t asked_ms) {
  cluster_status out;
  out.now_ms = now_ms();
  if (self->state.databases.empty()) {
    database_status none;
    none.error = "this status node has no database connection";
    out.databases.push_back(std::move(none));
  }
  auto leaders = leaders_of(self->state);
  for (auto& d : self->state.databases) {
    auto db = d.cache.shown(d.name, asked_ms, out.now_ms);
    db.leaders = leaders[d.name];
    out.databases.push_back(std::move(db));
  }
  for (auto& [_, n] : self->state.nodes)
    out.nodes.push_back(n.view);
  return out;
}

// Answers every waiting request whose reads are all in, and the one whose
// wait is over, `due` (its databases without counts say why).
void answer_waiting(self_ptr self, std::optional<uint64_t> due = std::nullopt) {
  auto& waiting = self->state.waiting;
  for (auto it = waiting.begin(); it != waiting.end();) {
    bool all_in = true;
    for (auto& d : self->state.databases)
      all_in = all_in && d.cache.fresh_for(it->asked_ms);
    if (all_in || it->id == due) {
      it->promise.deliver(build_view(self, it->asked_ms));
      it = waiting.erase(it);
    } else {
      ++it;
    }
  }
}

// Starts a read of database `i` unless one runs; then one more is due.
void read_counts(self_ptr self, size_t i) {
  auto& d = self->state.databases[i];
  if (d.cache.reading) {
    d.read_again = true;
    return;
  }
  d.cache.reading = true;
  d.cache.reading_since_ms = now_ms();
  d.read_again = false;
  auto ended = [self, i](database_status s) {
    auto& d = self->state.databases[i];
    d.cache.reading = false;
    d.cache.last = std::move(s);
    d.cache.last_started_ms = d.cache.reading_since_ms;
    d.cache.last_ended_ms = now_ms();
    if (d.read_again)
      read_counts(self, i);
    answer_waiting(self);
  };
  // No timeout: the answer waits at most answer_wait_ms; the read ends
  // when its database answers or its connect times out.
  self->request(d.reader, caf::infinite, status_atom::value)
    .then([ended](database_status& s) { ended(std::move(s)); },
          [self, i, ended](caf::error&) {
            database_status s;
            s.name = self->state.databases[i].name;
            s.error = "its counts reader ended";
            ended(std::move(s));
          });
}

// One read per database that begins after this ask; the answer comes when
// all are in, or after answer_wait_ms with what is there.
caf::result<cluster_status> snapshot(self_ptr self) {
  auto asked = now_ms();
  for (size_t i = 0; i < self->state.databases.size(); ++i)
    read_counts(self, i);
  auto rp = self->make_response_promise<cluster_status>();
  auto id = ++self->state.last_answer_id;
  self->state.waiting.push_back({rp, asked, id});
  self->delayed_send(self, std::chrono::milliseconds{counts_cache::answer_wait_ms},
                     tick_atom::value, id);
  answer_waiting(self); // no database: at once
  return rp;
}

// How long the status node waits for a drained node's agent to answer.
constexpr auto drain_answer_timeout = std::chrono::seconds{5};

// An operator's drain of node `name` (outboxctl drain): asks its agent,
// which stops the node as SIGTERM does; the view shows it draining. The
// answer says what happened, or an error says why not.
caf::result<std::string> on_drain(self_ptr self, const std::string& name) {
  auto it = self->state.nodes.find(name);
  if (it == self->state.nodes.end()) {
    std::vector<std::string> names;
    for (auto& [n, rec] : self->state.nodes)
      if (rec.view.up)
        names.push_back(n);
    return make_error(errc::drain_refused,
                      "no node of that name in the status view (nodes up: "
                        + (names.empty() ? std::string{"none"} : join(names, ", "))
                        + ")");
  }
  if (!it->second.view.up)
    return make_error(errc::drain_refused,
                      "that node is down already (since "
                        + std::to_string((now_ms() - it->second.view.down_ms) / 1000)
                        + " s)");
  auto rp = self->make_response_promise<std::string>();
  auto agent = it->second.info.agent;
  self->request(agent, drain_answer_timeout, drain_atom::value)
    .then(
      [self, rp, name](bool accepted) mutable {
        if (!accepted) {
          rp.deliver(make_error(errc::drain_refused,
                                "that node cannot be drained (it runs no "
                                "outboxd drain hook)"));
          return;
        }
        auto it = self->state.nodes.find(name);
        if (it != self->state.nodes.end())
          it->second.view.draining = true;
        logger("status")->info("event=node_draining node={}", kv(name));
        rp.deliver(std::string{"draining"});
      },
      [rp](caf::error&) mutable {
        rp.deliver(make_error(errc::drain_refused,
                              "that node's agent did not answer within "
                                + std::to_string(drain_answer_timeout.count())
                                + " s"));
      });
  return rp;
}

} // namespace

status_actor::behavior_type status(status_actor::stateful_pointer<status_state> self,
                                   std::vector<named_status_store> stores,
                                   bool named, bool detached_reads) {
  for (auto& s : stores) {
    status_state::database_record d;
    d.name = s.database;
    // Linked: the readers end with the status actor (a read under way
    // ends first: a connect within 10 s, bound_connect_timeout; a query
    // on a connection whose host went silent only when TCP gives up).
    d.reader = detached_reads
                 ? self->spawn<caf::detached + caf::linked>(counts_reader, s.database,
                                                            s.store)
                 : self->spawn<caf::linked>(counts_reader, s.database, s.store);
    self->state.databases.push_back(std::move(d));
  }
  self->state.named = named;
  // A reader that ended (a bug) leaves its database's counts to say so
  // ("its counts reader ended"), not the whole view to end with it.
  self->set_exit_handler([self](caf::exit_msg& em) {
    for (auto& d : self->state.databases)
      if (em.source == caf::actor_cast<caf::actor_addr>(d.reader)) {
        logger("status")->error("event=counts_reader_ended database={}",
                                kv(d.name));
        return;
      }
    if (em.reason)
      self->quit(std::move(em.reason));
  });
  self->set_down_handler([self](caf::down_msg& dm) { on_down(self, dm); });
  return {
    [self](join_atom, node_info& info) { on_join(self, info); },
    [self](metrics_atom, const std::string& node,
           std::vector<actor_metrics>& ms) { on_metrics(self, node, ms); },
    [self](lifecycle_atom, const std::string& node,
           std::map<std::string, int64_t>& counts) {
      auto it = self->state.nodes.find(node);
      if (it != self->state.nodes.end()
          && counts_readable(counts, limits.max_lifecycle_kinds))
        it->second.view.lifecycle = std::move(counts);
    },
    [self](wakeup_atom, const std::string& node, std::string& degraded) {
      auto it = self->state.nodes.find(node);
      if (it != self->state.nodes.end()) {
        if (degraded.size() > limits.max_wakeup_text_bytes
            || !is_valid_utf8(degraded))
          degraded = "degraded (its reason was not readable)";
        it->second.view.wakeups_degraded = std::move(degraded);
      }
    },
    [self](status_atom) { return snapshot(self); },
    // An answer's deadline (from anyone else, at worst an early answer
    // whose slow databases say they are being read).
    [self](tick_atom, uint64_t id) { answer_waiting(self, id); },
    [self](liveness_atom) { return results_liveness_of(self->state, now_ms()); },
    [self](leaders_atom) { return leaders_of(self->state); },
    [self](drain_atom, const std::string& name) { return on_drain(self, name); },
  };
}

} // namespace outbox
