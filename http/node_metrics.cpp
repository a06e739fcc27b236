#include "http/node_metrics.hpp"

#include <algorithm>

#include "http/prometheus_text.hpp"

namespace outbox {

namespace {

using kind = prometheus_text::kind;

void build_and_process(prometheus_text& t, const metrics_input& in) {
  t.family("outbox_build_info", kind::gauge, "The outbox build this node runs.");
  t.sample({{"version", in.version}}, 1);
  t.family("outbox_process_start_time_seconds", kind::gauge,
           "When the process started, as Unix time.");
  t.sample({}, in.process.start_time_seconds);
  t.family("outbox_process_resident_memory_bytes", kind::gauge,
           "Resident memory of the process.");
  t.sample({}, in.process.resident_bytes);
  t.family("outbox_process_cpu_seconds_total", kind::counter,
           "User and system CPU time of the process.");
  t.sample({}, in.process.cpu_seconds);
  t.family("outbox_process_open_fds", kind::gauge,
           "Open file descriptors (database, broker and cluster connections "
           "among them).");
  t.sample({}, in.process.open_fds);
}

// Two dispatchers of one queue in one node serve two databases: the
// database tells their series apart.
metric_labels actor_labels(const actor_metrics& m) {
  if (!m.database.empty())
    return {{"role", m.role}, {"queue", m.queue}, {"database", m.database}};
  return {{"role", m.role}, {"queue", m.queue}};
}

template <class F>
void per_actor(prometheus_text& t, const metrics_input& in, const char* name,
               kind k, const char* help, F value) {
  t.family(name, k, help);
  for (auto& a : in.node.view.actors)
    t.sample(actor_labels(a.metrics), value(a));
}

// The values actors report as they are now (actor_metrics::gauges), each
// a family of its own over the actors that report it.
struct gauge_family {
  const char* key;
  const char* name;
  const char* help;
};

const gauge_family gauge_families[] = {
  {"in_flight_window", "outbox_in_flight_window",
   "The queue's in-flight limit as its dispatcher sets it from what the "
   "workers finish (maxInFlight is its ceiling)."},
  {"completion_rate", "outbox_completion_rate",
   "Deliveries of the queue its workers finished per second, as the "
   "dispatcher last measured it for the window."},
  {"broker_blocked", "outbox_broker_blocked",
   "1 while the broker blocks the dispatcher's publishing (a memory or disk "
   "alarm): nothing of the queue is claimed until it ends."},
  {"results_waiting", "outbox_results_waiting",
   "Workers' results waiting unread in the queue's results queue, as its "
   "dispatcher last looked (every second)."},
  {"results_behind", "outbox_results_behind",
   "1 while the queue's results wait longer than 5 s at the workers' pace "
   "(or wait while none finish): its result handling falls behind."},
  {"stalled_queues", "outbox_sweeper_stalled_queues",
   "Queues whose result handlers the status node does not hear: the sweep "
   "leaves their timeouts alone."},
};

void gauges(prometheus_text& t, const metrics_input& in) {
  for (auto& g : gauge_families) {
    bool any = false;
    for (auto& a : in.node.view.actors) {
      auto it = a.metrics.gauges.find(g.key);
      if (it == a.metrics.gauges.end())
        continue;
      if (!any)
        t.family(g.name, kind::gauge, g.help);
      any = true;
      t.sample(actor_labels(a.metrics), double(it->second));
    }
  }
}

void actors(prometheus_text& t, const metrics_input& in) {
  per_actor(t, in, "outbox_actor_up", kind::gauge,
            "1 while the actor runs, 0 once it has terminated.",
            [](const actor_view& a) { return a.up ? 1.0 : 0.0; });
  per_actor(t, in, "outbox_actor_passes_total", kind::counter,
            "Passes the actor ran.",
            [](const actor_view& a) { return double(a.metrics.passes); });
  per_actor(t, in, "outbox_actor_rows_total", kind::counter,
            "Rows the actor handled (events routed, deliveries sent, results "
            "applied, deliveries swept).",
            [](const actor_view& a) { return double(a.metrics.rows); });
  per_actor(t, in, "outbox_actor_errors_total", kind::counter,
            "Passes that failed.",
            [](const actor_view& a) { return double(a.metrics.errors); });
  per_actor(t, in, "outbox_actor_connected", kind::gauge,
            "1 when the actor's last pass reached its database and broker.",
            [](const actor_view& a) { return a.metrics.connected ? 1.0 : 0.0; });
  auto now = in.now_ms;
  per_actor(t, in, "outbox_actor_last_pass_age_seconds", kind::gauge,
            "Seconds since the actor's last pass ended (since the node "
            "started, before its first).",
            [&](const actor_view& a) {
              auto at = a.metrics.last_pass_ms != 0 ? a.metrics.last_pass_ms
                                                    : in.node.started_ms;
              return std::max<double>(0, (now - at) / 1000.0);
            });
  t.family("outbox_actor_outcomes_total", kind::counter,
           "What the actor's passes did, by outcome (e.g. a result handler's "
           "malformed, unknown_delivery, stale and wrong_job messages).");
  for (auto& a : in.node.view.actors)
    for (auto& [outcome, n] : a.metrics.counters) {
      auto labels = actor_labels(a.metrics);
      labels.emplace_back("outcome", outcome);
      t.sample(labels, double(n));
    }
  gauges(t, in);
}

// The histograms the actors keep, by their name in actor_metrics.
struct histogram_family {
  const char* key;
  const char* name;
  const char* help;
};

const histogram_family histogram_families[] = {
  {"pass", "outbox_pass_duration_seconds",
   "How long a pass took, by role and queue (a result handler's pass "
   "includes its wait for results)."},
  {"commit_to_published", "outbox_commit_to_published_seconds",
   "From the event's commit to the broker's confirm of its job message."},
  {"confirm", "outbox_confirm_latency_seconds",
   "From sending a batch of job messages to the broker's confirms."},
  {"publish_to_result", "outbox_publish_to_result_seconds",
   "From a delivery's dispatch to its worker's result being applied."},
};

void histogram_samples(prometheus_text& t, metric_labels labels,
                       const latency_histogram& h) {
  int64_t cumulative = 0;
  labels.emplace_back("le", "");
  for (size_t i = 0; i <= latency_histogram::bounds.size(); ++i) {
    cumulative += i < h.counts.size() ? h.counts[i] : 0;
    labels.back().second = i < latency_histogram::bounds.size()
                             ? format_metric_value(latency_histogram::bounds[i])
                             : "+Inf";
    t.sample(labels, double(cumulative), "_bucket");
  }
  labels.pop_back();
  t.sample(labels, h.sum, "_sum");
  t.sample(labels, double(h.count), "_count");
}

void histograms(prometheus_text& t, const metrics_input& in) {
  for (auto& f : histogram_families) {
    t.family(f.name, kind::histogram, f.help);
    for (auto& a : in.node.view.actors)
      if (auto it = a.metrics.histograms.find(f.key); it != a.metrics.histograms.end())
        histogram_samples(t, actor_labels(a.metrics), it->second);
  }
}

void lifecycle(prometheus_text& t, const metrics_input& in) {
  t.family("outbox_lifecycle_events_total", kind::counter,
           "Lifecycle events of this node's actors since it started, by kind "
           "and queue.");
  for (auto& [k, by_queue] : in.node.lifecycle_by_queue)
    for (auto& [queue, n] : by_queue)
      t.sample({{"kind", k}, {"queue", queue}}, double(n));
  t.family("outbox_status_joined", kind::gauge,
           "1 while this node is joined to the status node.");
  t.sample({}, in.node.status_joined ? 1 : 0);
}

// The databases whose counts were read: counts that could not be read are
// left out, not zero. Each sample names its database.
using read_databases = std::vector<const database_status*>;

read_databases readable(const cluster_status& c) {
  read_databases out;
  for (auto& db : c.databases)
    if (db.ok)
      out.push_back(&db);
  return out;
}

metric_labels with_database(const database_status& db, metric_labels labels) {
  labels.insert(labels.begin(), {"database", db.name});
  return labels;
}

// Every queue gets a sample (0 without ordered routes), so an alert on
// them needs no absent() for the queues that never order.
void ordered_keys(prometheus_text& t, const read_databases& dbs) {
  t.family("outbox_blocked_keys", kind::gauge,
           "Keys of ordered routes waiting for an operator (a head failed or "
           "expired under onFailure: block), by database and queue.");
  for (auto* db : dbs)
    for (auto& [queue, q] : db->counts.per_queue)
      t.sample(with_database(*db, {{"queue", queue}}), double(q.blocked_keys));
  t.family("outbox_longest_held_key_seconds", kind::gauge,
           "Age of the oldest delivery waiting for its key (0 when none "
           "waits), by database and queue.");
  for (auto* db : dbs)
    for (auto& [queue, q] : db->counts.per_queue)
      t.sample(with_database(*db, {{"queue", queue}}), q.longest_held_key_seconds);
}

// Every queue gets a sample (0 when it is not paused), so an alert on a
// pause that lasts needs no absent(). Who paused it and why are in the
// status, not in labels.
void pauses(prometheus_text& t, const read_databases& dbs) {
  t.family("outbox_queue_paused", kind::gauge,
           "1 while an operator has the queue paused (outboxctl pause), by "
           "database and queue.");
  for (auto* db : dbs)
    for (auto& [queue, q] : db->counts.per_queue)
      t.sample(with_database(*db, {{"queue", queue}}),
               db->counts.paused.count(queue) ? 1 : 0);
  t.family("outbox_queue_paused_seconds", kind::gauge,
           "How long the queue has been paused (0 when it is not), by "
           "database and queue.");
  for (auto* db : dbs)
    for (auto& [queue, q] : db->counts.per_queue) {
      auto p = db->counts.paused.find(queue);
      t.sample(with_database(*db, {{"queue", queue}}),
               p == db->counts.paused.end() ? 0.0 : p->second.paused_seconds);
    }
}

void cluster(prometheus_text& t, const cluster_status& c) {
  t.family("outbox_database_up", kind::gauge,
           "1 when the status node's last read of the database's counts "
           "succeeded, by database.");
  for (auto& db : c.databases)
    t.sample({{"database", db.name}}, db.ok ? 1 : 0);
  t.family("outbox_nodes", kind::gauge, "Nodes in the status view, up or down.");
  double up = 0, down = 0;
  for (auto& n : c.nodes)
    (n.up ? up : down) += 1;
  t.sample({{"state", "up"}}, up);
  t.sample({{"state", "down"}}, down);
  auto dbs = readable(c);
  if (dbs.empty())
    return;
  t.family("outbox_deliveries", kind::gauge,
           "Deliveries by database, queue and status.");
  for (auto* db : dbs)
    for (auto& [queue, q] : db->counts.per_queue)
      for (auto& [status, n] : q.per_status)
        t.sample(with_database(*db, {{"queue", queue}, {"status", status}}),
                 double(n));
  t.family("outbox_unrouted_events", kind::gauge,
           "Events not routed yet, by database.");
  for (auto* db : dbs)
    t.sample(with_database(*db, {}), double(db->counts.unrouted_events));
  t.family("outbox_oldest_unrouted_event_age_seconds", kind::gauge,
           "Age of the oldest event not routed yet (0 when there is none), by "
           "database.");
  for (auto* db : dbs)
    t.sample(with_database(*db, {}), db->counts.oldest_unrouted_age_seconds);
  t.family("outbox_oldest_open_delivery_age_seconds", kind::gauge,
           "Age of the oldest pending or dispatched delivery, by database and "
           "queue.");
  for (auto* db : dbs)
    for (auto& [queue, q] : db->counts.per_queue)
      t.sample(with_database(*db, {{"queue", queue}}), q.oldest_open_age_seconds);
  ordered_keys(t, dbs);
  pauses(t, dbs);
  t.family("outbox_database_connections", kind::gauge,
           "The relay's connections to the database as it counts them, by "
           "database and node.");
  for (auto* db : dbs)
    for (auto& [node, n] : db->counts.connections)
      t.sample(with_database(*db, {{"node", node}}), double(n));
}

// Every kind gets a sample (0 until one happens), so that a rate() of a
// kind sees its first refusal.
void port(prometheus_text& t, const cluster_port::port_figures& f) {
  t.family("outbox_cluster_refused_connections_total", kind::counter,
           "Connections to this node's cluster port refused before they "
           "joined, by reason.");
  for (size_t i = 0; i < cluster_port::refusal_kinds; ++i)
    t.sample({{"reason", cluster_port::refusal_name(static_cast<cluster_port::refusal>(i))}},
             double(f.refused[i]));
  t.family("outbox_cluster_half_open_connections", kind::gauge,
           "Connections to this node's cluster port whose handshake is not "
           "done yet.");
  t.sample({}, double(f.half_open));
}

} // namespace

std::string render_node_metrics(const metrics_input& in) {
  prometheus_text t;
  build_and_process(t, in);
  actors(t, in);
  histograms(t, in);
  lifecycle(t, in);
  if (in.cluster)
    cluster(t, *in.cluster);
  if (in.cluster_port)
    port(t, *in.cluster_port);
  return t.str();
}

} // namespace outbox
