#define CAF_SUITE integration.trace_context
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <iterator>
#include <mutex>

#include <libpq-fe.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "core/base/logging.hpp"
#include "core/domain/event_headers.hpp"
#include "core/domain/trace_context.hpp"
#include "core/producer/event_store.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/running_worker.hpp"
#include "tests/sample_job.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

const std::string tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const std::string trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";

// The log lines of the loggers that write lifecycle lines in this process,
// for as long as it lives (added before the node starts, removed after).
// The ring buffer sink locks itself for writers and readers alike.
struct log_capture {
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink =
    std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(100000);
  std::vector<std::shared_ptr<spdlog::logger>> loggers;

  log_capture() {
    for (auto* name : {"producer", "dispatcher", "results", "worker"}) {
      loggers.push_back(logger(name));
      loggers.back()->sinks().push_back(sink);
    }
  }
  ~log_capture() {
    for (auto& l : loggers)
      l->sinks().pop_back();
  }
  bool has(const std::string& a, const std::string& b) {
    for (auto& line : sink->last_formatted())
      if (line.find(a) != std::string::npos && line.find(b) != std::string::npos)
        return true;
    return false;
  }
};

// The first message on `queue` within 10 s, or a failed test.
incoming_message first_message(const std::string& queue) {
  auto c = amqp_client::connect(amqp_url(), "test reader");
  CAF_REQUIRE(c);
  CAF_REQUIRE(!(*c)->declare_queue(queue));
  CAF_REQUIRE(!(*c)->consume(queue, 10));
  std::optional<incoming_message> got;
  CAF_REQUIRE(wait_until([&] {
    auto m = (*c)->next_message(std::chrono::milliseconds{100});
    if (m && *m)
      got = std::move(**m);
    return got.has_value();
  }, std::chrono::seconds{10}));
  CAF_REQUIRE(!(*c)->ack(got->delivery_tag));
  return *got;
}

struct fixture : cluster_fixture {
  log_capture logs;

  int64_t publish_sql(const std::string& headers_json) {
    return must_exec(db, "SELECT " + names.publish_function
                           + "('e', '{\"scenario\":\"ok\"}', NULL, NULL, $1::jsonb)",
                     {headers_json})
      .int64(0, 0);
  }

  // A job message as a relay sends it, straight onto `q` (no relay runs).
  void send_job(const std::string& q, const header_map& headers) {
    auto c = amqp_client::connect(amqp_url(), "test producer");
    CAF_REQUIRE(c);
    CAF_REQUIRE(!(*c)->declare_queue(q));
    CAF_REQUIRE(!(*c)->declare_queue(results_queue(q)));
    auto st = (*c)->publish_batch({job_message(sample_job(q, headers))},
                                  std::chrono::seconds{5});
    CAF_REQUIRE(st.at(0) == publish_status::confirmed);
  }

  // The result a worker sent for send_job's job carries its traceparent.
  void check_result_traced(const std::string& q) {
    auto r = first_message(results_queue(q));
    CAF_CHECK_EQUAL(r.headers[traceparent_header], tp);
    auto content = read_result_message(r.body);
    CAF_REQUIRE_EQUAL(content.results.size(), 1u);
    CAF_CHECK_EQUAL(content.results[0].delivery_id, 42);
    CAF_CHECK_EQUAL(content.results[0].traceparent, tp);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(trace_context_tests, fixture)

CAF_TEST(headers given to the sql function reach the amqp headers and the log lines) {
  auto q = queue("sql");
  running_node node{make_config({make_route("e", "J", q, {60})})};
  publish_sql(R"({"traceparent":")" + tp
              + R"(","tracestate":"congo=t61rcWkgMzE","tenant":"t1"})");
  auto job = first_message(q);
  CAF_CHECK_EQUAL(job.headers[traceparent_header], tp);
  CAF_CHECK_EQUAL(job.headers[tracestate_header], "congo=t61rcWkgMzE");
  CAF_CHECK_EQUAL(job.headers["tenant"], "t1");
  CAF_CHECK_EQUAL(job.headers.size(), 3u);
  CAF_CHECK(wait_until([&] { return logs.has("event=published", "traceId=" + trace_id); }));
  // The result names the trace too: the outcome's line carries it.
  auto fields = parse_job_message(job.body);
  CAF_REQUIRE(fields);
  send_result r{fields->delivery_id, fields->dispatch_id, "J", outcome::completed,
                "", tp};
  auto c = amqp_client::connect(amqp_url(), "test worker");
  CAF_REQUIRE(c);
  CAF_REQUIRE((*c)->publish_batch({result_message(q, r)}, std::chrono::seconds{5}).at(0)
              == publish_status::confirmed);
  CAF_CHECK(wait_until([&] { return count_status("completed") == 1; }));
  CAF_CHECK(wait_until([&] {
    return logs.has("event=delivery_completed", "traceId=" + trace_id);
  }));
}

CAF_TEST(the sql function refuses a broken trace context and reserved names) {
  auto refused = [&](const std::string& headers_json) {
    auto r = db.exec("publish", "SELECT " + names.publish_function
                                  + "('e', '{}', NULL, NULL, $1::jsonb)",
                     {headers_json});
    CAF_REQUIRE(!r);
    return render(r.error());
  };
  auto bad_tp = refused(R"({"traceparent":"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"})");
  CAF_CHECK_NOT_EQUAL(bad_tp.find("headers: traceparent: must be W3C"), std::string::npos);
  CAF_CHECK_EQUAL(bad_tp.find("4BF92F"), std::string::npos); // never the value
  auto reserved = refused(R"({"outboxDeliveryId":"1"})");
  CAF_CHECK_NOT_EQUAL(reserved.find("a name is reserved"), std::string::npos);
  auto zeros = refused(R"({"traceparent":"00-00000000000000000000000000000000-00f067aa0ba902b7-01"})");
  CAF_CHECK_NOT_EQUAL(zeros.find("the trace id must not be all zeros"), std::string::npos);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.events).int64(0, 0), 0);
}

CAF_TEST(a traceparent given to the c++ api reaches the worker and the outcome log line) {
  auto q = queue("cpp");
  running_node node{make_config({make_route("e", "J", q, {60})})};
  std::mutex mtx;
  std::vector<job_context> seen;
  running_worker w{q, {{"J", [&](const job_context& ctx) {
                          std::lock_guard<std::mutex> guard{mtx};
                          seen.push_back(ctx);
                        }}}};
  db_event_store store{names};
  event ev;
  ev.event_type = "e";
  ev.payload = "{}";
  ev.headers = {{"traceparent", tp}, {"tenant", "t1"}};
  must_exec(db, "BEGIN");
  CAF_REQUIRE(store.add(db.native(), ev));
  must_exec(db, "COMMIT");
  CAF_CHECK(logs.has("event=stored", "traceId=" + trace_id));
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  {
    std::lock_guard<std::mutex> guard{mtx};
    CAF_REQUIRE_EQUAL(seen.size(), 1u);
    CAF_CHECK_EQUAL(seen[0].traceparent(), tp);
    CAF_CHECK_EQUAL(seen[0].headers.at("tenant"), "t1");
  }
  CAF_CHECK(logs.has("event=job_done", "traceId=" + trace_id));
  // Completed from the worker's result, which carried the traceparent.
  CAF_CHECK(wait_until([&] {
    return logs.has("event=delivery_completed", "traceId=" + trace_id);
  }));
  // A bad one is refused before anything is written.
  ev.headers = {{"traceparent", "00-xyz"}};
  must_exec(db, "BEGIN");
  auto bad = store.add(db.native(), ev);
  must_exec(db, "ROLLBACK");
  CAF_REQUIRE(!bad);
  CAF_CHECK(bad.error() == errc::invalid_event);
}

CAF_TEST(the c++ worker sends the traceparent back on its result message) {
  auto q = queue("cppres");
  send_job(q, {{"traceparent", tp}});
  std::string got;
  std::mutex mtx;
  running_worker w{q, {{"J", [&](const job_context& ctx) {
                          std::lock_guard<std::mutex> guard{mtx};
                          got = ctx.traceparent();
                        }}}};
  check_result_traced(q);
  std::lock_guard<std::mutex> guard{mtx};
  CAF_CHECK_EQUAL(got, tp);
}

CAF_TEST(the python worker sees the headers and sends the traceparent back) {
  auto q = queue("py");
  send_job(q, {{"traceparent", tp}, {"tenant", "t1"}});
  auto log_path = "/tmp/" + queue_prefix + "trace_python_worker.log";
  child_process worker{"/usr/bin/python3",
                       {std::string{OUTBOX_SOURCE_DIR} + "/clients/python/outbox_worker.py",
                        "--queue", q, "--jobs", "J"},
                       log_path,
                       {"OUTBOX_AMQP_URL=" + amqp_url()}};
  check_result_traced(q);
  worker.signal(SIGTERM);
  CAF_CHECK_EQUAL(worker.wait(), 0);
  std::ifstream in{log_path};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  CAF_CHECK_NOT_EQUAL(text.find("event=job_done outboxDeliveryId=42 job=J "
                                "lastAttempt=False outcome=completed traceId="
                                + trace_id),
                      std::string::npos);
  std::remove(log_path.c_str());
}

CAF_TEST_FIXTURE_SCOPE_END()
