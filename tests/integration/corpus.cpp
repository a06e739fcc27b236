#define CAF_SUITE integration.corpus
#include <caf/test/unit_test.hpp>

#include <atomic>
#include <fstream>
#include <sstream>

#include "core/amqp/wire.hpp"
#include "tests/corpus/corpus.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/running_worker.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A sanitizer's report, or a crash that left a trace in the output.
bool crashed(const std::string& output) {
  return mentions(output, "Sanitizer") || mentions(output, "runtime error")
         || mentions(output, "Segmentation") || mentions(output, "terminate");
}

struct fixture : cluster_fixture {
  std::string dir = "/tmp/" + queue_prefix + "corpus";

  fixture() {
    std::string cmd = "mkdir -p " + dir;
    CAF_REQUIRE_EQUAL(std::system(cmd.c_str()), 0);
  }

  ~fixture() {
    std::string cmd = "rm -rf " + dir;
    [[maybe_unused]] auto rc = std::system(cmd.c_str());
  }

  /// Publishes raw bodies to a queue, each confirmed.
  void publish_raw(const std::string& queue, const std::vector<std::string>& bodies) {
    auto amqp = amqp_client::connect(amqp_url(), "corpus publisher");
    CAF_REQUIRE(amqp);
    CAF_REQUIRE(!(*amqp)->declare_queue(queue));
    std::vector<outgoing_message> ms;
    for (size_t i = 0; i < bodies.size(); ++i) {
      outgoing_message m;
      m.routing_key = queue;
      m.message_id = "corpus-" + std::to_string(i);
      m.body = bodies[i];
      ms.push_back(std::move(m));
    }
    for (auto st : (*amqp)->publish_batch(ms, std::chrono::seconds{30}))
      CAF_REQUIRE(st == publish_status::confirmed);
  }
};

std::vector<std::string> bodies_of(const std::string& kind) {
  std::vector<std::string> out;
  for (auto& m : corpus_messages())
    if (m.kind == kind)
      out.push_back(m.body);
  return out;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(corpus_tests, fixture)

CAF_TEST(every flag set of the corpus ends in a usage error) {
  auto config = write_config_file(
    dir + "/good.json",
    R"({"e": [{"job": "A", "queue": "qa"}, {"job": "B", "queue": "qb"}]})");
  auto sets = corpus_flag_sets();
  CAF_CHECK_GREATER_OR_EQUAL(sets.size(), 100u);
  int n = 0;
  for (auto& f : sets) {
    auto args = f.args;
    for (auto& a : args) {
      if (auto p = a.find("{config}"); p != std::string::npos)
        a.replace(p, 8, config);
    }
    auto log = dir + "/flags-" + std::to_string(++n) + ".log";
    auto path = f.binary == "outboxd" ? OUTBOXD_PATH : OUTBOXCTL_PATH;
    child_process p{path, args, log};
    auto rc = p.wait(20);
    auto output = read_file(log);
    std::string shown;
    for (auto& a : f.args)
      shown += " " + a;
    if (rc != 2 || !mentions(output, f.expect) || crashed(output)
        || (output.rfind(f.binary, 0) != 0
            && output.rfind("usage: " + f.binary, 0) != 0))
      CAF_ERROR(f.binary << shown << ": exit " << rc << " (expected 2 and \""
                         << f.expect << "\"), said: " << output.substr(0, 300));
  }
  CAF_MESSAGE(sets.size() << " flag sets tried");
}

CAF_TEST(poison result messages are settled and later results still apply) {
  auto q = queue("results");
  running_node node{make_config({make_route("e", "J", q, {1})})};
  auto bodies = bodies_of("result");
  int64_t refused = 0;
  for (auto& b : bodies)
    refused += static_cast<int64_t>(read_result_message(b).refused.size());
  publish_raw(results_queue(q), bodies);
  CAF_REQUIRE(wait_until([&] {
    return node.counters_of("results " + q)["malformed"] == refused;
  }));
  // The relay is still up and its results still flow.
  test_worker w{amqp_url(), q, [](const job_seen&, int) { return answer::completed; }};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  CAF_MESSAGE(bodies.size() << " result messages, " << refused
                            << " entries refused");
}

CAF_TEST(poison job messages are settled and the worker goes on) {
  auto q = queue("jobs");
  std::atomic<int> ran{0};
  running_worker w{q, {{"J", [&](const job_context&) { ++ran; }}}};
  auto bodies = bodies_of("job");
  publish_raw(q, bodies);
  // Behind the poison, a real job: it completes once the worker took
  // every message before it.
  running_node node{make_config({make_route("e", "J", q, {1})})};
  publish("e", "{}");
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; }));
  CAF_CHECK_EQUAL(ran.load(), 1);
  CAF_MESSAGE(bodies.size() << " job messages settled");
}

CAF_TEST_FIXTURE_SCOPE_END()
