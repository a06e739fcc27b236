#define CAF_SUITE http.prometheus_text
#include <caf/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "tests/unit/case_check.hpp"
#include "http/node_health.hpp"
#include "http/node_metrics.hpp"
#include "http/prometheus_text.hpp"

using namespace outbox;

namespace {

node_report sample_report() {
  node_report r;
  r.started_ms = 1000;
  actor_view d;
  d.metrics.name = "dispatcher q\"1";
  d.metrics.role = "dispatcher";
  d.metrics.queue = "q\"1";
  d.metrics.passes = 4;
  d.metrics.rows = 7;
  d.metrics.last_pass_ms = 9000;
  d.metrics.counters = {{"expired", 2}};
  d.metrics.gauges = {{"in_flight_window", 250}, {"completion_rate", 50}};
  r.view.actors.push_back(d);
  r.lifecycle_by_queue["published"]["q\"1"] = 7;
  r.status_joined = true;
  return r;
}

template <class F>
bool throws_logic_error(F f) {
  try {
    f();
  } catch (const std::logic_error&) {
    return true;
  }
  return false;
}

} // namespace

CAF_TEST(families have HELP and TYPE lines and samples escape label values) {
  prometheus_text t;
  t.family("outbox_x_total", prometheus_text::kind::counter, "Things\nseen \\ here.");
  t.sample({{"queue", "a\"b\\c\nd"}}, 3);
  t.sample({}, 0.5);
  CAF_CHECK_EQUAL(t.str(), "# HELP outbox_x_total Things\\nseen \\\\ here.\n"
                           "# TYPE outbox_x_total counter\n"
                           "outbox_x_total{queue=\"a\\\"b\\\\c\\nd\"} 3\n"
                           "outbox_x_total 0.5\n");
}

CAF_TEST(values are written as the text format wants) {
  struct {
    double v;
    const char* text;
  } cases[] = {
    {0, "0"},
    {42, "42"},
    {-3, "-3"},
    {0.25, "0.25"},
    {std::numeric_limits<double>::infinity(), "+Inf"},
    {-std::numeric_limits<double>::infinity(), "-Inf"},
    {std::nan(""), "NaN"},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.text, format_metric_value(c.v), std::string{c.text});
}

CAF_TEST(bad family and label names are bugs) {
  prometheus_text t;
  using k = prometheus_text::kind;
  // A counter without _total, a name starting with a digit.
  CAF_CHECK(throws_logic_error([&] { t.family("outbox_things", k::counter, ""); }));
  CAF_CHECK(throws_logic_error([&] { t.family("1abc", k::gauge, ""); }));
  t.family("outbox_ok", k::gauge, "");
  CAF_CHECK(throws_logic_error([&] { t.family("outbox_ok", k::gauge, ""); }));
  CAF_CHECK(throws_logic_error([&] { t.sample({{"bad-label", "x"}}, 1); }));
}

CAF_TEST(the metrics of a node name its actors by role and queue only) {
  metrics_input in{sample_report(), {}, 11000, "1.2.3", std::nullopt, std::nullopt};
  auto text = render_node_metrics(in);
  for (auto line : {"outbox_build_info{version=\"1.2.3\"} 1\n",
                    "outbox_actor_passes_total{role=\"dispatcher\",queue=\"q\\\"1\"} 4\n",
                    "outbox_actor_rows_total{role=\"dispatcher\",queue=\"q\\\"1\"} 7\n",
                    "outbox_actor_last_pass_age_seconds{role=\"dispatcher\","
                    "queue=\"q\\\"1\"} 2\n",
                    "outbox_actor_outcomes_total{role=\"dispatcher\",queue=\"q\\\"1\","
                    "outcome=\"expired\"} 2\n",
                    "outbox_lifecycle_events_total{kind=\"published\",queue=\"q\\\"1\"} 7\n",
                    "# TYPE outbox_in_flight_window gauge\n",
                    "outbox_in_flight_window{role=\"dispatcher\",queue=\"q\\\"1\"} 250\n",
                    "outbox_completion_rate{role=\"dispatcher\",queue=\"q\\\"1\"} 50\n",
                    "outbox_status_joined 1\n"})
    OUTBOX_CHECK_CASE(line, text.find(line) != std::string::npos);
  // No cluster view: no database figures; no cluster port: no refusals.
  CAF_CHECK_EQUAL(text.find("outbox_deliveries"), std::string::npos);
  CAF_CHECK_EQUAL(text.find("outbox_cluster_"), std::string::npos);
}

CAF_TEST(a node with a cluster port counts its refusals by reason) {
  cluster_port::port_figures port;
  port.refused[static_cast<size_t>(cluster_port::refusal::unknown_ca)] = 3;
  port.half_open = 2;
  metrics_input in{sample_report(), {}, 11000, "1", std::nullopt, port};
  auto text = render_node_metrics(in);
  for (auto line : {"outbox_cluster_refused_connections_total{reason=\"unknown_ca\"} 3\n",
                    "outbox_cluster_refused_connections_total{reason=\"no_certificate\"} 0\n",
                    "outbox_cluster_refused_connections_total{reason=\"handshake_timeout\"} 0\n",
                    "outbox_cluster_half_open_connections 2\n"})
    OUTBOX_CHECK_CASE(line, text.find(line) != std::string::npos);
}

CAF_TEST(a status node adds the database counts unless it cannot read them) {
  cluster_status c;
  database_status db;
  db.name = "orders";
  db.ok = true;
  auto& counts = db.counts;
  counts.unrouted_events = 5;
  counts.oldest_unrouted_age_seconds = 1.5;
  counts.per_queue["q"].per_status = {{"pending", 3}, {"completed", 9}};
  counts.per_queue["q"].oldest_open_age_seconds = 4;
  counts.per_queue["q"].blocked_keys = 2;
  counts.per_queue["q"].longest_held_key_seconds = 7.5;
  counts.per_queue["p"].per_status = {{"pending", 1}};
  counts.paused["p"].paused_seconds = 12.5;
  counts.paused["p"].paused_by = "not a label";
  counts.connections = {{"host:7", 6}};
  database_status billing;
  billing.name = "billing";
  billing.error = "database_unavailable: down";
  c.databases = {billing, db};
  node_view up, down;
  down.up = false;
  c.nodes = {up, up, down};
  metrics_input in{sample_report(), {}, 11000, "1", c, std::nullopt};
  auto text = render_node_metrics(in);
  for (auto line : {"outbox_database_up{database=\"orders\"} 1\n",
                    "outbox_database_up{database=\"billing\"} 0\n",
                    "outbox_nodes{state=\"up\"} 2\n",
                    "outbox_nodes{state=\"down\"} 1\n",
                    "outbox_deliveries{database=\"orders\",queue=\"q\",status=\"completed\"} 9\n",
                    "outbox_deliveries{database=\"orders\",queue=\"q\",status=\"pending\"} 3\n",
                    "outbox_unrouted_events{database=\"orders\"} 5\n",
                    "outbox_oldest_unrouted_event_age_seconds{database=\"orders\"} 1.5\n",
                    "outbox_oldest_open_delivery_age_seconds{database=\"orders\",queue=\"q\"} 4\n",
                    "# TYPE outbox_blocked_keys gauge\n",
                    "outbox_blocked_keys{database=\"orders\",queue=\"q\"} 2\n",
                    "# TYPE outbox_longest_held_key_seconds gauge\n",
                    "outbox_longest_held_key_seconds{database=\"orders\",queue=\"q\"} 7.5\n",
                    "outbox_queue_paused{database=\"orders\",queue=\"p\"} 1\n",
                    "outbox_queue_paused{database=\"orders\",queue=\"q\"} 0\n",
                    "outbox_queue_paused_seconds{database=\"orders\",queue=\"p\"} 12.5\n",
                    "outbox_queue_paused_seconds{database=\"orders\",queue=\"q\"} 0\n",
                    "# TYPE outbox_database_connections gauge\n",
                    "outbox_database_connections{database=\"orders\",node=\"host:7\"} 6\n"})
    OUTBOX_CHECK_CASE(line, text.find(line) != std::string::npos);
  CAF_CHECK_EQUAL(text.find("not a label"), std::string::npos);
  // The unreadable database has no counts, not zeros.
  CAF_CHECK_EQUAL(text.find("database=\"billing\",queue"), std::string::npos);
  in.cluster->databases[1].ok = false;
  text = render_node_metrics(in);
  CAF_CHECK_NOT_EQUAL(text.find("outbox_database_up{database=\"orders\"} 0\n"),
                      std::string::npos);
  CAF_CHECK_EQUAL(text.find("outbox_deliveries"), std::string::npos);
}

CAF_TEST(histograms are written cumulative with an Inf bucket a sum and a count) {
  auto r = sample_report();
  auto& h = r.view.actors[0].metrics.histograms["confirm"];
  for (double s : {0.0005, 0.001, 0.003, 400.0, -1.0})
    h.observe(s);
  CAF_CHECK_EQUAL(h.count, 5);
  CAF_CHECK_EQUAL(h.counts.front(), 3); // 0.0005, 0.001 and the clock step
  CAF_CHECK_EQUAL(h.counts.back(), 1);  // 400 s: above every bound
  metrics_input in{r, {}, 11000, "1", std::nullopt, std::nullopt};
  auto text = render_node_metrics(in);
  auto labels = std::string{"role=\"dispatcher\",queue=\"q\\\"1\""};
  for (auto line :
       {std::string{"# TYPE outbox_confirm_latency_seconds histogram\n"},
        "outbox_confirm_latency_seconds_bucket{" + labels + ",le=\"0.001\"} 3\n",
        "outbox_confirm_latency_seconds_bucket{" + labels + ",le=\"0.005\"} 4\n",
        "outbox_confirm_latency_seconds_bucket{" + labels + ",le=\"300\"} 4\n",
        "outbox_confirm_latency_seconds_bucket{" + labels + ",le=\"+Inf\"} 5\n",
        "outbox_confirm_latency_seconds_count{" + labels + "} 5\n"})
    OUTBOX_CHECK_CASE(line, text.find(line) != std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find("outbox_confirm_latency_seconds_sum{" + labels
                                + "} 400.004"),
                      std::string::npos);
  // No observations of the others: their families, without samples.
  CAF_CHECK_NOT_EQUAL(text.find("# TYPE outbox_publish_to_result_seconds histogram\n"),
                      std::string::npos);
  CAF_CHECK_EQUAL(text.find("outbox_publish_to_result_seconds_count"),
                  std::string::npos);
}
