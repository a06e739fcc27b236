#define CAF_SUITE integration.benchmark
#include <caf/test/unit_test.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <rapidjson/document.h>

#include "tests/integration/child_process.hpp"
#include "tests/integration/test_services.hpp"

using namespace outbox;
using namespace outbox::testing;

// The benchmark tool on a tiny scale: that every phase runs and reports
// figures that fit together, and that it refuses bad knobs. (Its figures are
// not judged here: speed is the benchmark's business, not a test's.)

namespace {

std::pair<int, std::string> bench(const std::string& args) {
  return run_command(std::string{OUTBOX_BENCH_PATH} + " --outboxd " + OUTBOXD_PATH
                     + " --database-url '" + database_url() + "' --amqp-url '"
                     + amqp_url() + "' " + args);
}

int64_t bench_tables() {
  auto db = connect_db();
  return must_exec(db, "SELECT count(*) FROM pg_tables WHERE tablename LIKE"
                       " 'bench\\_%\\_outbox\\_%'")
    .int64(0, 0);
}

} // namespace

CAF_TEST(every phase runs on a small scale and its figures fit together) {
  auto json_path = "/tmp/" + unique_prefix() + "bench.json";
  auto tables_before = bench_tables();
  auto [status, output] = bench("--events 300 --latency-events 40 --backlog 2000"
                                " --json " + json_path);
  CAF_MESSAGE("outbox_bench output:\n" << output);
  CAF_REQUIRE_EQUAL(status, 0);
  std::ifstream in{json_path};
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  CAF_REQUIRE(!doc.HasParseError() && doc.IsObject());
  CAF_CHECK_EQUAL(doc["knobs"]["events"].GetInt64(), 300);
  CAF_CHECK_EQUAL(doc["knobs"]["backlog"].GetInt64(), 2000);
  for (auto key : {"baselineAEventsPerS", "baselineBMessagesPerS", "routedPerS",
                   "dispatchedPerS", "completedPerS", "outboxdPeakRssMiB",
                   "drainFirst10PerS", "drainLast10PerS", "drainOverallPerS"}) {
    CAF_MESSAGE(key);
    CAF_CHECK_GREATER(doc[key].GetDouble(), 0.0);
  }
  auto& published = doc["commitToPublishedMs"];
  CAF_CHECK_GREATER(published["p50"].GetDouble(), 0.0);
  CAF_CHECK_LESS_OR_EQUAL(published["p50"].GetDouble(), published["p95"].GetDouble());
  CAF_CHECK_LESS_OR_EQUAL(published["p95"].GetDouble(), published["p99"].GetDouble());
  // Both drains: by a relay started on the backlog, and by the one
  // already running.
  for (auto key : {"drainTenthsPerS", "warmDrainTenthsPerS"}) {
    auto& tenths = doc[key];
    CAF_REQUIRE(tenths.IsArray());
    CAF_CHECK_EQUAL(tenths.Size(), 10u);
    for (auto& t : tenths.GetArray())
      CAF_CHECK_GREATER(t.GetDouble(), 0.0);
  }
  CAF_CHECK_GREATER(doc["cpuSecondsPer1000EventsPipeline"]["machine"].GetDouble(), 0.0);
  // Its tables are gone with it.
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
  std::remove(json_path.c_str());
}

CAF_TEST(bad knobs are refused by name before anything is made) {
  auto tables_before = bench_tables();
  auto few = bench("--events 5");
  CAF_CHECK_EQUAL(few.first, 2);
  CAF_CHECK_NOT_EQUAL(few.second.find("--events = 5: must be at least 100"),
                      std::string::npos);
  auto cluster = bench("--cluster two");
  CAF_CHECK_EQUAL(cluster.first, 2);
  CAF_CHECK_NOT_EQUAL(cluster.second.find("--cluster = \"two\": must be one or three"),
                      std::string::npos);
  auto fraction = bench("--rate-fraction 0");
  CAF_CHECK_EQUAL(fraction.first, 2);
  CAF_CHECK_NOT_EQUAL(
    fraction.second.find("--rate-fraction = 0: must be above 0 and at most 1"),
    std::string::npos);
  auto linger = bench("--router-linger-ms 5000");
  CAF_CHECK_EQUAL(linger.first, 2);
  CAF_CHECK_NOT_EQUAL(linger.second.find("routerLingerMs = 5000"), std::string::npos);
  auto unknown = bench("--no-such-knob 1");
  CAF_CHECK_EQUAL(unknown.first, 2);
  CAF_CHECK_NOT_EQUAL(unknown.second.find("--no-such-knob: no such option"),
                      std::string::npos);
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
}

CAF_TEST(a broker that cannot be reached fails the run and leaves no tables) {
  auto tables_before = bench_tables();
  auto r = run_command(std::string{OUTBOX_BENCH_PATH} + " --outboxd " + OUTBOXD_PATH
                       + " --database-url '" + database_url()
                       + "' --amqp-url amqp://guest:guest@127.0.0.1:1/"
                         " --events 100 --latency-events 10 --backlog 0");
  CAF_CHECK_EQUAL(r.first, 1);
  CAF_CHECK_NOT_EQUAL(r.second.find("cannot connect to the broker"), std::string::npos);
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
}

CAF_TEST(a relay that exits ends the run at once and leaves no tables) {
  auto tables_before = bench_tables();
  // /bin/false stands in for an outboxd that cannot start (a port in use,
  // a broken build): nothing would ever complete.
  auto r = run_command(std::string{OUTBOX_BENCH_PATH} + " --outboxd /bin/false"
                       + " --database-url '" + database_url() + "' --amqp-url '"
                       + amqp_url()
                       + "' --events 100 --latency-events 10 --backlog 0");
  CAF_CHECK_EQUAL(r.first, 1);
  CAF_CHECK_NOT_EQUAL(r.second.find("outboxd exited during the run"), std::string::npos);
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
}
