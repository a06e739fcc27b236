#define CAF_SUITE integration.benchmark
#include <caf/test/unit_test.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <rapidjson/document.h>

#include "tests/integration/child_process.hpp"
#include "tests/integration/test_services.hpp"
#include "tests/integration/tls_env.hpp"

using namespace outbox;
using namespace outbox::testing;

// The benchmark tool on a tiny scale: that every phase runs and reports
// figures that fit together, and that it refuses bad knobs. (Its figures are
// not judged here: speed is the benchmark's business, not a test's.)

namespace {

/// Runs outbox_bench against the test servers; `outboxd` and `broker`
/// stand in for the real ones where a test needs them to fail.
std::pair<int, std::string> bench(const std::string& args,
                                  const std::string& outboxd = OUTBOXD_PATH,
                                  const std::string& broker = amqp_url()) {
  return run_command(std::string{OUTBOX_BENCH_PATH} + " --outboxd " + outboxd
                     + " --database-url '" + database_url() + "' --amqp-url '"
                     + broker + "' " + args);
}

/// The logs of outboxd nodes that benchmark runs left in /tmp
/// (bench_<pid>_<phase><node>.log).
size_t relay_logs() {
  size_t n = 0;
  for (auto& entry : std::filesystem::directory_iterator{"/tmp"}) {
    auto name = entry.path().filename().string();
    if (name.rfind("bench_", 0) == 0 && name.size() > 6
        && std::isdigit(static_cast<unsigned char>(name[6]))
        && entry.path().extension() == ".log")
      ++n;
  }
  return n;
}

/// A run with `args` that must succeed: the results file it wrote, parsed
/// (and removed); its output is left in `output`.
rapidjson::Document successful_run(const std::string& args, std::string& output,
                                   const std::string& broker = amqp_url()) {
  auto json_path = "/tmp/" + unique_prefix() + "bench.json";
  auto run = bench(args + " --json " + json_path, OUTBOXD_PATH, broker);
  output = run.second;
  CAF_MESSAGE("outbox_bench output:\n" << output);
  auto text = read_file(json_path);
  std::remove(json_path.c_str());
  CAF_REQUIRE_EQUAL(run.first, 0);
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  CAF_REQUIRE(!doc.HasParseError() && doc.IsObject());
  return doc;
}

/// Whether every tag of `xml` is closed in order (a well-formed SVG as far
/// as its elements go; attributes and text are the writer's business).
bool tags_balanced(const std::string& xml) {
  std::vector<std::string> open;
  for (auto at = xml.find('<'); at != std::string::npos; at = xml.find('<', at + 1)) {
    auto end = xml.find('>', at);
    if (end == std::string::npos)
      return false;
    auto tag = xml.substr(at + 1, end - at - 1);
    if (tag.empty() || tag.back() == '/')
      continue; // self-closing
    auto name = tag.substr(tag[0] == '/', tag.find_first_of(" \n") - (tag[0] == '/'));
    if (tag[0] != '/')
      open.push_back(name);
    else if (open.empty() || open.back() != name)
      return false;
    else
      open.pop_back();
  }
  return open.empty();
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// The benchmark's tables: the outbox's and phase C's lean table.
int64_t bench_tables() {
  auto db = connect_db();
  return must_exec(db, "SELECT count(*) FROM pg_tables WHERE tablename LIKE"
                       " 'bench\\_%\\_outbox\\_%' OR tablename LIKE"
                       " 'bench\\_%\\_plain'")
    .int64(0, 0);
}

} // namespace

CAF_TEST(every phase runs on a small scale and its figures fit together) {
  auto tables_before = bench_tables();
  auto logs_before = relay_logs();
  std::string output;
  // A table setting to weigh, run after the migrations.
  auto schema_sql = "/tmp/" + unique_prefix() + "schema.sql";
  std::ofstream{schema_sql} << "ALTER TABLE {{deliveries}}_logged SET (fillfactor = 95);\n";
  auto doc = successful_run("--events 300 --latency-events 40 --backlog 2000"
                            " --contention-clients 1,2 --contention-seconds 1"
                            " --idle-seconds 1 --idle-samples 1"
                            " --schema-sql " + schema_sql,
                            output);
  std::remove(schema_sql.c_str());
  CAF_CHECK_EQUAL(doc["knobs"]["events"].GetInt64(), 300);
  CAF_CHECK_EQUAL(doc["knobs"]["schemaSql"].GetString(), schema_sql);
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
    // At the test's tiny scale a tenth lasts milliseconds and may see no
    // completion (a dispatcher's 100 ms re-check at its in-flight limit):
    // every tenth is a rate, and the drain as a whole moved.
    double total = 0;
    for (auto& t : tenths.GetArray()) {
      CAF_CHECK_GREATER_OR_EQUAL(t.GetDouble(), 0.0);
      total += t.GetDouble();
    }
    CAF_CHECK_GREATER(total, 0.0);
  }
  CAF_CHECK_GREATER(doc["cpuSecondsPer1000EventsPipeline"]["machine"].GetDouble(), 0.0);
  // The database's writes: A only inserts events; the pipeline routes each
  // into one delivery (one route), writes nothing to the event, moves the
  // delivery to the completion log at its completion, and updates it at
  // its claim unless the router handed it over already dispatched (one
  // outboxd with every role: most are).
  auto& a_writes = doc["databaseWritesPerEventA"];
  auto& writes = doc["databaseWritesPerEventPipeline"];
  CAF_REQUIRE(a_writes["settled"].GetBool() && writes["settled"].GetBool());
  CAF_CHECK_EQUAL(a_writes["eventsInserted"].GetDouble(), 1.0);
  CAF_CHECK_EQUAL(a_writes["deliveriesInserted"].GetDouble(), 0.0);
  CAF_CHECK_EQUAL(writes["eventsInserted"].GetDouble(), 1.0);
  CAF_CHECK_EQUAL(writes["eventsUpdated"].GetDouble(), 0.0);
  CAF_CHECK_EQUAL(writes["deliveriesInserted"].GetDouble(), 1.0);
  auto handed = writes["deliveriesHanded"].GetDouble();
  CAF_CHECK_GREATER(handed, 0.0);
  CAF_CHECK_LESS_OR_EQUAL(handed, 1.0);
  // The claim updates a delivery the router did not hand over; the
  // completion moves every one to the completion log (a delete).
  CAF_CHECK_LESS(std::abs(writes["deliveriesUpdated"].GetDouble() - (1.0 - handed)),
                 1e-9);
  CAF_CHECK_EQUAL(writes["deliveriesDeleted"].GetDouble(), 1.0);
  CAF_CHECK_EQUAL(writes["completionsLogged"].GetDouble(), 1.0);
  // Both counted, but not compared: at 300 events each side's WAL is
  // mostly the full-page images of the first writes after a checkpoint,
  // and the relay's own 1,000 bytes or so per event can fall below that
  // difference (the measured ratio is the bench's, at 20,000 events).
  CAF_CHECK_GREATER(a_writes["walBytes"].GetDouble(), 0.0);
  CAF_CHECK_GREATER(writes["walBytes"].GetDouble(), 0.0);
  CAF_CHECK_NOT_EQUAL(output.find("machine CPU per event: pipeline / A"),
                      std::string::npos);
  // C: both kinds at each client count, in the order given; its events
  // were deleted (or the pipeline's writes above would count them).
  CAF_CHECK_EQUAL(doc["knobs"]["contentionClients"].GetString(), std::string{"1,2"});
  CAF_CHECK_EQUAL(doc["knobs"]["contentionSeconds"].GetInt64(), 1);
  auto& contention = doc["contention"];
  CAF_REQUIRE(contention.IsArray());
  CAF_REQUIRE_EQUAL(contention.Size(), 2u);
  for (rapidjson::SizeType i = 0; i < 2; ++i) {
    auto& x = contention[i];
    CAF_CHECK_EQUAL(x["clients"].GetInt64(), static_cast<int64_t>(i) + 1);
    CAF_CHECK_GREATER(x["plainPerS"].GetDouble(), 0.0);
    CAF_CHECK_GREATER(x["publishPerS"].GetDouble(), 0.0);
    auto ratio = x["publishPerS"].GetDouble() / x["plainPerS"].GetDouble();
    CAF_CHECK_LESS(std::abs(x["ratio"].GetDouble() - ratio), 1e-9 * ratio);
    CAF_CHECK_GREATER(x["apiPerS"].GetDouble(), 0.0);
    auto api = x["apiPerS"].GetDouble() / x["plainPerS"].GetDouble();
    CAF_CHECK_LESS(std::abs(x["apiRatio"].GetDouble() - api), 1e-9 * api);
  }
  CAF_CHECK_NOT_EQUAL(output.find("C  business commits/s, 2 clients"),
                      std::string::npos);
  // I: one event after a second of quiet. Its publication and completion
  // follow its commit; its routing time is the routing transaction's
  // start, which a loaded machine may place before the producer has read
  // the clock after COMMIT, so it is only asked to be there.
  auto& idle = doc["idleStart"];
  CAF_REQUIRE(idle.IsObject());
  CAF_CHECK_EQUAL(idle["quietSeconds"].GetInt64(), 1);
  for (auto key : {"routedMs", "publishedMs", "completedMs"}) {
    CAF_MESSAGE(key);
    CAF_REQUIRE(idle[key].IsArray());
    CAF_REQUIRE_EQUAL(idle[key].Size(), 1u);
    CAF_CHECK(idle[key][0].IsNumber());
  }
  CAF_CHECK_GREATER(idle["publishedMs"][0].GetDouble(), 0.0);
  CAF_CHECK_GREATER(idle["completedMs"][0].GetDouble(), 0.0);
  CAF_CHECK_EQUAL(idle["maxPublishedMs"].GetDouble(),
                  idle["publishedMs"][0].GetDouble());
  CAF_CHECK_EQUAL(idle["maxCompletedMs"].GetDouble(),
                  idle["completedMs"][0].GetDouble());
  CAF_CHECK_NOT_EQUAL(output.find("commit->published max of 1 (ms)"),
                      std::string::npos);
  // Nothing scraped without --scrape-interval-ms.
  CAF_CHECK_EQUAL(doc["knobs"]["scrapeIntervalMs"].GetInt64(), 0);
  CAF_CHECK_EQUAL(doc["scraping"]["scrapes"].GetInt64(), 0);
  // Its tables are gone with it, and so are its relay's logs.
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
  CAF_CHECK_EQUAL(relay_logs(), logs_before);
}

// --scrape-interval-ms: every node of the relay serves --http, and each
// one's /metrics is read all through the pipeline and latency phases.
CAF_TEST(a small run scrapes every node of the relay) {
  std::string output;
  auto doc = successful_run("--events 200 --latency-events 20 --backlog 0"
                            " --contention-seconds 0 --idle-seconds 0"
                            " --cluster three --scrape-interval-ms 100",
                            output);
  CAF_CHECK_EQUAL(doc["knobs"]["scrapeIntervalMs"].GetInt64(), 100);
  auto& scraping = doc["scraping"];
  // At least a round of the three nodes, nearly all of them answered once
  // up (a node still starting its endpoint counts no failure; one that
  // answered and then not within 5 s does).
  CAF_CHECK_GREATER_OR_EQUAL(scraping["scrapes"].GetInt64(), 3);
  CAF_CHECK_LESS_OR_EQUAL(scraping["failures"].GetInt64(), 3);
  CAF_CHECK_GREATER(scraping["meanMs"].GetDouble(), 0.0);
  CAF_CHECK_NOT_EQUAL(output.find("/metrics scrapes"), std::string::npos);
  // --idle-seconds 0: no phase I, and no entry for it.
  CAF_CHECK(!doc.HasMember("idleStart"));
  CAF_CHECK_EQUAL(output.find("idle start"), std::string::npos);
}

// --soak: after A alone (--soak-only), twelve intervals of 5 s at half of
// A, with a retention window of 12 s: the series in the JSON, its table and
// verdict in the text (against the eleventh interval, the first to begin
// four windows in, once retention's ring turns steadily), and its chart.
CAF_TEST(a short soak reports its series and writes its chart) {
  auto chart = "/tmp/" + unique_prefix() + "soak.svg";
  std::string output;
  auto doc = successful_run("--events 300 --soak-only --soak 1 --soak-interval-s 5"
                            " --soak-retention-minutes 0.2 --soak-chart " + chart,
                            output);
  auto& soak = doc["soak"];
  CAF_REQUIRE(soak.IsObject());
  CAF_CHECK_EQUAL(soak["intervalSeconds"].GetInt64(), 5);
  CAF_CHECK_GREATER(soak["rateEventsPerS"].GetDouble(), 0.0);
  auto& series = soak["series"];
  CAF_REQUIRE(series.IsArray());
  CAF_REQUIRE_EQUAL(series.Size(), 12u);
  int64_t completed = 0, committed = 0;
  double end = 0;
  for (auto& x : series.GetArray()) {
    CAF_CHECK_GREATER(x["endSeconds"].GetDouble(), end);
    end = x["endSeconds"].GetDouble();
    completed += x["completed"].GetInt64();
    committed += x["committed"].GetInt64();
    CAF_CHECK_LESS_OR_EQUAL(x["commitToPublishedP50Ms"].GetDouble(),
                            x["commitToPublishedP99Ms"].GetDouble());
    CAF_CHECK_GREATER(x["deliveries"]["bytes"].GetInt64(), 0);
    CAF_CHECK_GREATER(x["events"]["bytes"].GetInt64(), 0);
    CAF_CHECK_GREATER(x["walBytes"].GetInt64(), 0);
    CAF_CHECK(x["walBytesPerEvent"].IsNumber());
  }
  // Retention keeps the last 12 s: the last sample still has events. (Not
  // deliveries: a completion deletes its row, so the table holds only what
  // is out at that instant, which may be nothing.)
  CAF_CHECK_GREATER(completed, 0);
  CAF_CHECK_GREATER(committed, 0);
  CAF_CHECK_GREATER(series[11]["events"]["rows"].GetInt64(), 0);
  for (auto key : {"throughput", "p99", "tableSize", "deadTuples", "walPerEvent"})
    CAF_CHECK(soak["verdict"][key].IsBool());
  CAF_CHECK_EQUAL(soak["verdict"]["referenceInterval"].GetInt64(), 10);
  CAF_CHECK_NOT_EQUAL(output.find("soak verdict (last interval vs interval 11, the"
                                  " first after the retention ring turned steady"),
                      std::string::npos);
  // Only A and the soak ran.
  CAF_CHECK_EQUAL(doc["baselineBMessagesPerS"].GetDouble(), 0.0);
  auto svg = read_file(chart);
  std::remove(chart.c_str());
  CAF_CHECK_EQUAL(svg.rfind("<svg ", 0), 0u);
  CAF_CHECK_EQUAL(svg.substr(svg.find_last_not_of('\n') - 5), "</svg>\n");
  CAF_CHECK(tags_balanced(svg));
  CAF_CHECK_EQUAL(occurrences(svg, "class=\"panel\""), 4u);
  CAF_CHECK_EQUAL(occurrences(svg, "<polyline"), 6u); // 1 + 1 + 2 + 2 lines
}

// --contention-only: C alone, its rows alone in the table; the other
// phases' figures are zeros in the JSON.
CAF_TEST(a contention-only run measures business commits alone) {
  auto tables_before = bench_tables();
  std::string output;
  auto doc = successful_run("--contention-only --contention-clients 2"
                            " --contention-seconds 1",
                            output);
  auto& contention = doc["contention"];
  CAF_REQUIRE(contention.IsArray());
  CAF_REQUIRE_EQUAL(contention.Size(), 1u);
  CAF_CHECK_EQUAL(contention[0]["clients"].GetInt64(), 2);
  CAF_CHECK_GREATER(contention[0]["ratio"].GetDouble(), 0.0);
  CAF_CHECK_EQUAL(doc["baselineAEventsPerS"].GetDouble(), 0.0);
  CAF_CHECK_EQUAL(doc["completedPerS"].GetDouble(), 0.0);
  CAF_CHECK_NOT_EQUAL(output.find("C  business commits/s, 2 clients"),
                      std::string::npos);
  CAF_CHECK_EQUAL(output.find("A  producers only"), std::string::npos);
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
}

CAF_TEST(a results file that cannot be written is refused before the run) {
  auto tables_before = bench_tables();
  check_ends(bench("--json /nonexistent-outbox-dir/results.json"), 2,
             "--json = \"/nonexistent-outbox-dir/results.json\": cannot write there");
  check_ends(bench("--json /tmp"), 2, "--json = \"/tmp\": cannot write there");
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
}

CAF_TEST(bad knobs are refused by name before anything is made) {
  auto tables_before = bench_tables();
  check_ends(bench("--events 5"), 2, "--events = 5: must be at least 100");
  check_ends(bench("--cluster two"), 2, "--cluster = \"two\": must be one or three");
  check_ends(bench("--scrape-interval-ms -1"), 2,
             "--scrape-interval-ms = -1: must be at least 0");
  check_ends(bench("--rate-fraction 0"), 2,
             "--rate-fraction = 0: must be above 0 and at most 1");
  check_ends(bench("--router-linger-ms 5000"), 2, "routerLingerMs = 5000");
  check_ends(bench("--no-such-knob 1"), 2, "--no-such-knob: no such option");
  check_ends(bench("--soak 0.1 --soak-interval-s 5 --soak-retention-minutes 0"),
             2, "--soak = 0.1: must be 0 or last at least 3 intervals");
  // With a retention window: four windows' intervals and two more.
  check_ends(bench("--soak 0.9 --soak-interval-s 5 --soak-retention-minutes 0.2"),
             2, "--soak = 0.9: must be 0 or last at least 12 intervals");
  check_ends(bench("--soak-only"), 2, "--soak-only: needs --soak MINUTES");
  check_ends(bench("--schema-sql /nonexistent-outbox-dir/x.sql"), 2,
             "--schema-sql = \"/nonexistent-outbox-dir/x.sql\": cannot read it");
  check_ends(bench("--schema-sql /tmp"), 2, "--schema-sql = \"/tmp\": cannot read it");
  check_ends(bench("--soak 6 --soak-retention-minutes 1"), 2,
             "--soak-retention-minutes = 1: must be 0 or at least two intervals");
  check_ends(bench("--soak 3 --soak-retention-minutes 0 --soak-chart /tmp"), 2,
             "--soak-chart = \"/tmp\": cannot write there");
  for (auto clients : {"0", "65", "4,0", "4,", "1-4", "x"})
    check_ends(bench(std::string{"--contention-clients "} + clients), 2,
               "--contention-clients = \"" + std::string{clients}
                 + "\": must be client counts from 1 to 64 separated by commas");
  check_ends(bench("--contention-seconds -1"), 2,
             "--contention-seconds = -1: must be at least 0");
  check_ends(bench("--contention-only --contention-seconds 0"), 2,
             "--contention-only: needs --contention-seconds of at least 1");
  check_ends(bench("--contention-only --soak 3"), 2,
             "--contention-only: runs no other phase (not with --soak)");
  for (auto seconds : {"-1", "3601"})
    check_ends(bench(std::string{"--idle-seconds "} + seconds), 2,
               "--idle-seconds = " + std::string{seconds}
                 + ": must be from 0 to 3600");
  for (auto samples : {"0", "21"})
    check_ends(bench(std::string{"--idle-samples "} + samples), 2,
               "--idle-samples = " + std::string{samples}
                 + ": must be from 1 to 20");
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
}

CAF_TEST(a broker that cannot be reached fails the run and leaves no tables) {
  auto tables_before = bench_tables();
  check_ends(bench("--events 100 --latency-events 10 --backlog 0"
                   " --contention-seconds 0 --idle-seconds 0",
                   OUTBOXD_PATH,
                   "amqp://guest:guest@127.0.0.1:1/"),
             1, "cannot connect to the broker");
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
}

CAF_TEST(a relay that exits ends the run at once and leaves no tables) {
  auto tables_before = bench_tables();
  // /bin/false stands in for an outboxd that cannot start (a port in use,
  // a broken build): nothing would ever complete.
  auto run = bench("--events 100 --latency-events 10 --backlog 0"
                   " --contention-seconds 0 --idle-seconds 0",
                   "/bin/false");
  check_ends(run, 1, "outboxd exited during the run");
  CAF_CHECK_EQUAL(bench_tables(), tables_before);
  // The log the message names is kept for the reader.
  auto at = run.second.find("(its log: ");
  CAF_REQUIRE_NOT_EQUAL(at, std::string::npos);
  auto log = run.second.substr(at + 10, run.second.find(')', at) - at - 10);
  CAF_CHECK(std::ifstream{log}.good());
  std::remove(log.c_str());
}

// The run over TLS is a suite of its own, so that it alone is skipped
// where the TLS servers are not named.
#undef CAF_SUITE
#define CAF_SUITE integration.benchmark_tls

CAF_TEST_FIXTURE_SCOPE(benchmark_tls_tests, tls_required)

// --tls-dir: the nodes talk mutual TLS; with an amqps:// URL the relay,
// the workers and the broker-only phase reach the broker over TLS.
CAF_TEST(a small run over TLS completes every phase) {
  std::string output;
  auto doc = successful_run("--events 100 --latency-events 10 --backlog 0"
                            " --contention-seconds 0 --idle-seconds 0"
                            " --cluster three --tls-dir " + tls_dir(),
                            output, amqps_url());
  CAF_CHECK_EQUAL(doc["knobs"]["cluster"].GetString(), std::string{"three tls"});
  CAF_CHECK_GREATER(doc["completedPerS"].GetDouble(), 0.0);
  CAF_CHECK_GREATER(doc["commitToPublishedMs"]["p50"].GetDouble(), 0.0);
}

CAF_TEST_FIXTURE_SCOPE_END()
