#define CAF_SUITE integration.queue_types
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <iterator>

#include "core/amqp/amqp_session.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/running_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Debian's python3-pika lives with /usr/bin/python3.
const std::string python = "/usr/bin/python3";
const std::string scripts = std::string{OUTBOX_SOURCE_DIR} + "/clients/python/";

// Nothing listens on port 1 of loopback: a connect there is refused at
// once, so a list that starts with it shows the next broker is tried.
const std::string dead_broker = "amqp://guest:guest@127.0.0.1:1/";

struct fixture : cluster_fixture {
  std::string q = queue("qt");
  std::string log_path = "/tmp/" + queue_prefix + "python_worker.log";

  ~fixture() { std::remove(log_path.c_str()); }

  config quorum_config() {
    auto cfg = make_config({make_route("e", "J", q, {1})});
    cfg.amqp_url = dead_broker + "," + amqp_url();
    cfg.default_queue_type = queue_type::quorum;
    return cfg;
  }

  // The declaration of `name` as `type`, on a connection of its own.
  caf::error declare(const std::string& name, queue_type type) {
    auto c = amqp_client::connect(amqp_url(), "test declare");
    CAF_REQUIRE(c);
    queue_options opts;
    opts.type = type;
    return (*c)->declare_queue(name, opts);
  }

  std::unique_ptr<child_process> python_worker(const std::string& type) {
    return std::make_unique<child_process>(
      python,
      std::vector<std::string>{scripts + "outbox_worker.py", "--queue", q, "--jobs",
                               "J", "--queue-type", type},
      log_path,
      std::vector<std::string>{"OUTBOX_AMQP_URL=" + dead_broker + "," + amqp_url()});
  }

  std::string log_text() {
    std::ifstream in{log_path};
    return std::string{std::istreambuf_iterator<char>{in}, {}};
  }

  void publish_events(int n) {
    for (int i = 0; i < n; ++i)
      publish("e", "{}");
  }
};

bool refused_for_type(const caf::error& err, const std::string& queue) {
  auto text = render(err);
  return err == errc::broker_error
         && text.find("queue \"" + queue + "\" exists with another queue type "
                      "(or other arguments)")
              != std::string::npos
         // The broker's own words stay out.
         && text.find("inequivalent") == std::string::npos;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(queue_type_tests, fixture)

CAF_TEST(quorum queues carry jobs and results between relay and cpp worker) {
  running_node node{quorum_config()};
  worker_options opts{dead_broker + "," + amqp_url(), q, 5, queue_type::quorum};
  running_worker w{opts, {{"J", [](const job_context&) {}}}};
  publish_events(5);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 5; }));
  // Both queues are quorum queues: a classic declaration is refused.
  CAF_CHECK(refused_for_type(declare(q, queue_type::classic), q));
  CAF_CHECK(refused_for_type(declare(results_queue(q), queue_type::classic),
                             results_queue(q)));
  CAF_CHECK(!declare(q, queue_type::quorum));
}

CAF_TEST(quorum queues carry jobs and results for the python worker) {
  running_node node{quorum_config()};
  auto worker = python_worker("quorum");
  publish_events(3);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 3; }));
  worker->signal(SIGTERM);
  CAF_CHECK_EQUAL(worker->wait(), 0);
  CAF_CHECK(refused_for_type(declare(results_queue(q), queue_type::classic),
                             results_queue(q)));
}

CAF_TEST(a queue of another type is refused by name and the channel lives on) {
  auto c = amqp_client::connect(amqp_url(), "test declare");
  CAF_REQUIRE(c);
  CAF_REQUIRE(!(*c)->declare_queue(q)); // classic
  queue_options quorum;
  quorum.type = queue_type::quorum;
  auto err = (*c)->declare_queue(q, quorum);
  CAF_CHECK(refused_for_type(err, q));
  CAF_CHECK_NOT_EQUAL(render(err).find("than the quorum queue declared here"),
                      std::string::npos);
  // The channel was reopened: the same connection goes on working.
  CAF_CHECK((*c)->is_open());
  CAF_CHECK(!(*c)->declare_queue(q));
  outgoing_message m;
  m.routing_key = q;
  m.body = "{}";
  CAF_CHECK((*c)->publish_batch({m}, std::chrono::seconds{5}).at(0)
            == publish_status::confirmed);
  // A session's connect stops at the refusal instead of trying the other
  // brokers, and says the same.
  amqp_session s{{amqp_url() + "," + amqp_url(), "test session", {q}, {}, 0,
                  queue_type::quorum}};
  CAF_CHECK(refused_for_type(s.ready(), q));
  CAF_CHECK(!s.is_open());
}

CAF_TEST(relay and workers on a queue of another type report it and back off) {
  CAF_REQUIRE(!declare(q, queue_type::classic));
  running_node node{quorum_config()};
  auto started = std::chrono::steady_clock::now();
  auto worker = python_worker("quorum");
  worker_options opts{amqp_url(), q, 5, queue_type::quorum};
  running_worker w{opts, {{"J", [](const job_context&) {}}}};
  publish_events(1);
  auto refused = [&](const std::string& actor) {
    auto m = node.metrics_of(actor);
    return m.errors >= 2
           && m.last_error.find("queue \"" + q + "\" exists with another queue type")
                != std::string::npos;
  };
  // Each keeps trying (the queue may be deleted and declared again)...
  CAF_REQUIRE(wait_until([&] {
    return refused("dispatcher " + q) && refused("results " + q)
           && log_text().find("event=queue_declare_refused queue='" + q + "'")
                != std::string::npos;
  }));
  // ...but with backoff, not in a hot loop.
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                               - started).count();
  CAF_CHECK_LESS(node.metrics_of("dispatcher " + q).errors, 10 + 10 * seconds);
  CAF_CHECK_LESS(node.metrics_of("results " + q).errors, 10 + 10 * seconds);
  CAF_CHECK_EQUAL(count_status("completed"), 0);
  worker->signal(SIGTERM);
  CAF_CHECK_EQUAL(worker->wait(), 0);
  auto text = log_text();
  CAF_CHECK_EQUAL(text.find("inequivalent"), std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
