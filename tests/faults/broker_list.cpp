#define CAF_SUITE faults.broker_list
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/amqp/amqp_client.hpp"
#include "tests/faults/fault_cluster.hpp"
#include "tests/faults/private_services.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Debian's python3-pika lives with /usr/bin/python3.
const std::string python = "/usr/bin/python3";

// Between its servers and the cluster: points OUTBOX_TEST_AMQP_URL at the
// list "peer,first" before fault_cluster writes it into the config, so that
// relay and workers connect to the peer node first, the one stopped.
struct broker_list {
  std::string first, peer;

  explicit broker_list(private_services& s)
    : first(s.broker_url()), peer(s.reserve_peer_broker()) {
    setenv("OUTBOX_TEST_AMQP_URL", (peer + "," + first).c_str(), 1);
  }
};

struct fixture : private_services, broker_list, fault_cluster {
  fixture() : broker_list(static_cast<private_services&>(*this)) {}

  ~fixture() {
    if (python_worker)
      python_worker->signal(SIGTERM);
  }

  std::unique_ptr<child_process> python_worker;

  // Where the queues live decides what stopping a node costs. A classic
  // queue lives on one node, and a quorum queue needs a majority of its
  // members: with two members that is both, so stopping either node would
  // stop the queue. The queues are therefore declared on the first node
  // while it is still alone (their one member, and leader, is the node
  // that stays up), and only then joins the peer. Three nodes would let the
  // queues be replicated and lose any one node, at the price of a third
  // RabbitMQ start on a loaded test machine; what this test is about is the
  // clients' failover, which two nodes show.
  void declare_queues_on_first() {
    auto c = amqp_client::connect(first, "test declare");
    CAF_REQUIRE(c);
    queue_options quorum;
    quorum.type = queue_type::quorum;
    for (auto& q : {jobs_queue, mail_queue})
      for (auto& name : {q, results_queue(q)})
        CAF_REQUIRE(!(*c)->declare_queue(name, quorum));
  }

  // fault_cluster writes its config without a queue type: add it in front
  // of the other keys, for the relay and the fault workers alike.
  void make_config_quorum() {
    auto path = dir + "outbox.json";
    std::ifstream in{path};
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    in.close();
    CAF_REQUIRE(!text.empty() && text[0] == '{');
    std::ofstream{path} << "{\"queueType\": \"quorum\", " << text.substr(1);
  }

  void start_python_worker() {
    python_worker = std::make_unique<child_process>(
      python,
      std::vector<std::string>{std::string{OUTBOX_SOURCE_DIR}
                                 + "/clients/python/outbox_worker.py",
                               "--queue", mail_queue, "--jobs", "K",
                               "--queue-type", "quorum"},
      dir + "python-worker.log",
      std::vector<std::string>{"OUTBOX_AMQP_URL=" + peer + "," + first});
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(broker_list_faults, fixture)

CAF_TEST(relay and workers fail over to the next broker of the list) {
  declare_queues_on_first();
  start_peer_broker();
  make_config_quorum();
  start_all();
  start_workers();
  start_python_worker(); // beside the C++ worker of the mail queue
  // Events keep coming until the failover has been shown, however long the
  // stop takes.
  keep_publishing(50);
  CAF_REQUIRE(wait_until([&] {
    return count_status("completed") >= 60
           && lines_with("python-worker", "event=job_done") > 0;
  }));
  // Everybody is connected to the peer, the first broker of the list.
  auto before = count_status("completed");
  auto stop_started = std::chrono::steady_clock::now();
  stop_peer_broker();
  CAF_MESSAGE("stopping the peer took "
              << std::chrono::duration<double>(std::chrono::steady_clock::now()
                                               - stop_started).count()
              << " s; completed before " << before << ", after "
              << count_status("completed"));
  // The first broker is gone: events published from now on can only
  // complete through the other one, and the Python worker runs some too.
  auto after_stop = count_status("completed");
  auto python_jobs = lines_with("python-worker", "event=job_done");
  CAF_REQUIRE(wait_until(
    [&] {
      return count_status("completed") >= after_stop + 60
             && lines_with("python-worker", "event=job_done") > python_jobs;
    },
    std::chrono::seconds{120}));
  auto v = settle(std::chrono::seconds{60});
  // What a connection held when it went down comes again: each worker's
  // unacked jobs (prefetch 10) and each dispatcher's batch without its
  // confirms (batch size 50).
  check("first broker stopped", v, 2 * 10 + 2 * 50);
  // The relay's connections and the C++ workers' went to the other broker
  // of the list, and say so; the Python worker ran jobs after the stop.
  CAF_CHECK_GREATER_OR_EQUAL(lines_with("dispatcher", "event=broker_failover"), 4);
  CAF_CHECK_GREATER_OR_EQUAL(lines_with("worker-0", "event=broker_failover"), 2);
  CAF_CHECK_GREATER_OR_EQUAL(lines_with("worker-0", "event=consuming"), 2);
  CAF_CHECK_GREATER_OR_EQUAL(lines_with("worker-1", "event=consuming"), 2);
  CAF_CHECK_GREATER(lines_with("python-worker", "event=broker_error"), 0);
  // No URL (with its password) in any log.
  for (auto log : {"dispatcher", "router", "worker-0", "worker-1", "python-worker"})
    CAF_CHECK_EQUAL(lines_with(log, "guest:guest"), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
