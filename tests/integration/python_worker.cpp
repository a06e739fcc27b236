#define CAF_SUITE integration.python_worker
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>

#include "core/amqp/wire.hpp"
#include "core/base/timestamp.hpp"
#include "core/producer/producer.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

// Debian's python3-pika and python3-psycopg2 live with /usr/bin/python3,
// not with whatever python3 comes first on PATH.
const std::string python = "/usr/bin/python3";
const std::string scripts = std::string{OUTBOX_SOURCE_DIR} + "/clients/python/";

struct fixture : cluster_fixture {
  std::string q = queue("py");

  // The database URL goes in a file only its owner reads: a password on a
  // command line is there for every user's ps (and the scripts refuse it).
  std::string db_url_file = write_private("/tmp/" + queue_prefix + "db.url",
                                          database_url());

  ~fixture() { std::remove(db_url_file.c_str()); }

  static std::string write_private(const std::string& path,
                                   const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CAF_REQUIRE(fd >= 0);
    CAF_REQUIRE_EQUAL(::write(fd, text.data(), text.size()),
                      static_cast<ssize_t>(text.size()));
    ::close(fd);
    return path;
  }

  std::string producer_command() {
    return python + " " + scripts + "outbox_producer.py --database-url-file "
           + db_url_file + " --function " + names.publish_function;
  }

  std::pair<int, std::string> produce(const std::string& payload, int count) {
    return run_command(producer_command() + " --event-type e --count "
                       + std::to_string(count) + " --payload '" + payload + "'");
  }

  std::string log_path = "/tmp/" + queue_prefix + "python_worker.log";

  // The broker URL (with its password) goes in the environment.
  std::unique_ptr<child_process> python_worker(const std::string& url = amqp_url()) {
    return std::make_unique<child_process>(
      python,
      std::vector<std::string>{scripts + "outbox_worker.py", "--queue", q,
                               "--jobs", "J"},
      log_path, std::vector<std::string>{"OUTBOX_AMQP_URL=" + url});
  }

  std::string log_text() {
    std::ifstream in{log_path};
    return std::string{std::istreambuf_iterator<char>{in}, {}};
  }

  static size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos;
         at = text.find(what, at + 1))
      ++n;
    return n;
  }

  int64_t with_error(const std::string& text) {
    return must_exec(db, "SELECT count(*) FROM " + all_deliveries(names)
                           + " d WHERE last_error = $1",
                     {text})
      .int64(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(python_worker_tests, fixture)

CAF_TEST(a python producer and worker follow the wire contract) {
  running_node node{make_config({make_route("e", "J", q, {1, 1})})};
  auto worker = python_worker();
  auto ok = produce(R"({"scenario":"ok"})", 3);
  CAF_CHECK_EQUAL(ok.first, 0);
  CAF_CHECK_NOT_EQUAL(ok.second.find("published 3 event(s)"), std::string::npos);
  // Flaky jobs ask for retries until the last attempt, then complete.
  CAF_CHECK_EQUAL(produce(R"({"scenario":"flaky"})", 1).first, 0);
  CAF_CHECK_EQUAL(produce(R"({"scenario":"fail"})", 1).first, 0);
  CAF_REQUIRE(wait_until([&] {
    return count_status("completed") == 4 && count_status("failed") == 1;
  }));
  auto flaky = must_exec(db, "SELECT attempts FROM " + all_deliveries(names)
                               + " d WHERE attempts > 0 AND status = 'completed'");
  CAF_REQUIRE_EQUAL(flaky.size(), 1);
  CAF_CHECK_EQUAL(flaky.int64(0, 0), 2); // two retries, done on the third send
  CAF_CHECK_EQUAL(with_error("the example says: this one fails"), 1);
  // Garbage on the queue is rejected or answered, and the worker goes on.
  auto amqp = amqp_client::connect(amqp_url(), "test producer");
  CAF_REQUIRE(amqp);
  outgoing_message junk;
  junk.routing_key = q;
  junk.body = "{oops";
  CAF_CHECK((*amqp)->publish_batch({junk}, std::chrono::seconds{5}).at(0)
            == publish_status::confirmed);
  CAF_CHECK_EQUAL(produce(R"({"scenario":"ok"})", 1).first, 0);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 5; }));
  worker->signal(SIGTERM);
  CAF_CHECK_EQUAL(worker->wait(), 0);
}

CAF_TEST(the python worker runs a direct job and sends no result) {
  auto cfg = make_config({make_route("metrics.cpu", "J", q, {1})});
  cfg.direct_patterns = {"metrics.*"};
  producer p{cfg};
  auto worker = python_worker();
  event ev;
  ev.event_type = "metrics.cpu";
  ev.payload = R"({"scenario":"ok"})";
  CAF_REQUIRE(p.add(nullptr, ev));
  CAF_REQUIRE(p.add(nullptr, ev));
  CAF_CHECK(wait_until([&] {
    auto text = log_text();
    auto first = text.find("event=direct_job_done job=J outcome=completed");
    return first != std::string::npos
           && text.find("event=direct_job_done", first + 1) != std::string::npos;
  }));
  worker->signal(SIGTERM);
  CAF_CHECK_EQUAL(worker->wait(), 0);
  CAF_CHECK_NOT_EQUAL(log_text().find("completed=0 retry=0 failed=0 malformed=0 direct=2"),
                      std::string::npos);
  auto c = amqp_client::connect(amqp_url(), "test reader");
  CAF_REQUIRE(c);
  CAF_REQUIRE(!(*c)->consume(results_queue(q), 10));
  auto m = (*c)->next_message(std::chrono::milliseconds{500});
  CAF_REQUIRE(m);
  CAF_CHECK(!*m); // nothing waits on the results queue
  CAF_CHECK_EQUAL(count_status("pending") + count_status("completed"), 0);
}

// With a 1 s heartbeat, a job of 4 s and then 5 s of idleness: the worker's
// connection must stay up through both (the broker drops one that is silent
// for two intervals), so each job runs once and completes on its first try.
CAF_TEST(the python worker keeps its connection through a long job and idleness) {
  running_node node{make_config({make_route("e", "J", q, {60})})};
  auto worker = python_worker(amqp_url() + "?heartbeat=1");
  CAF_CHECK_EQUAL(produce(R"({"scenario":"slow","seconds":4})", 1).first, 0);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; },
                         std::chrono::seconds{20}));
  // The idleness is the scenario, not a wait for a result: longer than two
  // heartbeats, after which the broker drops a connection gone silent.
  constexpr auto idle_past_two_heartbeats = std::chrono::seconds{5};
  std::this_thread::sleep_for(idle_past_two_heartbeats);
  CAF_CHECK_EQUAL(produce(R"({"scenario":"ok"})", 1).first, 0);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 2; }, std::chrono::seconds{20}));
  CAF_CHECK_EQUAL(must_exec(db, "SELECT max(attempts) FROM " + all_deliveries(names) + " d")
                    .int64(0, 0), 0);
  worker->signal(SIGTERM);
  CAF_CHECK_EQUAL(worker->wait(), 0);
  auto text = log_text();
  CAF_CHECK_EQUAL(occurrences(text, "event=job_done"), 2u); // none ran twice
  CAF_CHECK_EQUAL(occurrences(text, "event=broker_error"), 0u);
}

// A job message nested a million deep made the Python worker exit with a
// RecursionError, and the unacked message came back to crash it again.
CAF_TEST(the python worker settles a message nested a million deep once) {
  running_node node{make_config({make_route("e", "J", q, {60})})};
  auto worker = python_worker();
  auto amqp = amqp_client::connect(amqp_url(), "test producer");
  CAF_REQUIRE(amqp);
  CAF_REQUIRE(!(*amqp)->declare_queue(q));
  outgoing_message named;
  named.routing_key = q;
  named.body = std::string(1'000'000, '[');
  named.message_id = "42";
  named.correlation_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";
  named.type = "J";
  auto anonymous = named;
  anonymous.message_id = "";
  for (auto st : (*amqp)->publish_batch({named, anonymous}, std::chrono::seconds{5}))
    CAF_REQUIRE(st == publish_status::confirmed);
  CAF_CHECK_EQUAL(produce(R"({"scenario":"ok"})", 1).first, 0);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; },
                         std::chrono::seconds{20}));
  // Its `failed` result reached the relay, which knows no delivery 42.
  CAF_REQUIRE(wait_until([&] {
    return node.counters_of("results " + q)["unknown_delivery"] == 1;
  }, std::chrono::seconds{10}));
  CAF_CHECK(!worker->exited());
  worker->signal(SIGTERM);
  CAF_CHECK_EQUAL(worker->wait(), 0);
  auto text = log_text();
  CAF_CHECK_EQUAL(occurrences(text, "event=malformed_job outboxDeliveryId=42 "
                                    "action=failed why='job message: nested deeper "
                                    "than 65 levels'"), 1u);
  CAF_CHECK_EQUAL(occurrences(text, "event=malformed_job action=acked"), 1u);
  CAF_CHECK_NOT_EQUAL(text.find("malformed=2"), std::string::npos);
  // Nothing is left for the next worker.
  CAF_REQUIRE(!(*amqp)->consume(q, 10));
  auto left = (*amqp)->next_message(std::chrono::milliseconds{500});
  CAF_REQUIRE(left);
  CAF_CHECK(!*left);
}

// As the C++ worker library (integration.late_sends): a job of an ordered
// route reached after its outboxExpiresAt, here behind a slow job in the
// prefetch buffer, is answered `retry` unrun; one in time runs.
CAF_TEST(the python worker does not start a job past its expiry) {
  auto amqp = amqp_client::connect(amqp_url(), "test relay");
  CAF_REQUIRE(amqp);
  CAF_REQUIRE(!(*amqp)->declare_queue(q));
  CAF_REQUIRE(!(*amqp)->declare_queue(results_queue(q)));
  auto job = [&](int64_t id, std::string payload) {
    job_to_send j;
    j.delivery_id = id;
    j.event_id = id;
    j.job = "J";
    j.queue = q;
    j.dispatch_id = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6" + std::to_string(id);
    j.event_type = "e";
    j.payload = std::move(payload);
    j.content_type = "application/json";
    return j;
  };
  auto slow = job(1, R"({"scenario":"slow","seconds":1})");
  auto expiring = job(2, R"({"scenario":"ok"})");
  expiring.start_by = clock_type::now() + std::chrono::milliseconds{300};
  auto in_time = job(3, R"({"scenario":"ok"})");
  in_time.start_by = clock_type::now() + std::chrono::minutes{5};
  for (auto st : (*amqp)->publish_batch(
         {job_message(slow), job_message(expiring), job_message(in_time)},
         std::chrono::seconds{5}))
    CAF_REQUIRE(st == publish_status::confirmed);
  auto worker = python_worker();
  CAF_REQUIRE(!(*amqp)->consume(results_queue(q), 100));
  std::map<int64_t, send_result> results;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{20};
  while (results.size() < 3 && std::chrono::steady_clock::now() < deadline) {
    auto m = (*amqp)->next_message(std::chrono::milliseconds{100});
    CAF_REQUIRE(m);
    if (*m) {
      for (auto& r : read_result_message((*m)->body).results)
        results[r.delivery_id] = r;
      CAF_CHECK(!(*amqp)->ack((*m)->delivery_tag));
    }
  }
  worker->signal(SIGTERM);
  CAF_CHECK_EQUAL(worker->wait(), 0);
  CAF_REQUIRE_EQUAL(results.size(), 3u);
  CAF_CHECK(results.at(1).result == outcome::completed);
  CAF_CHECK(results.at(2).result == outcome::retry);
  CAF_CHECK_EQUAL(results.at(2).reason,
                  "the job message expired before a worker started it");
  CAF_CHECK(results.at(3).result == outcome::completed);
  auto text = log_text();
  CAF_CHECK_EQUAL(occurrences(text, "event=job_expired outboxDeliveryId=2 job=J "
                                    "action=not_started"), 1u);
  CAF_CHECK_EQUAL(occurrences(text, "event=job_done"), 2u);
  CAF_CHECK_NOT_EQUAL(text.find("expired=1"), std::string::npos);
}

// The URLs hold passwords: they come from the environment or a file, and
// one with a password on the command line is refused.
CAF_TEST(no password shows on the python tools command lines) {
  auto password = parse_amqp_url(amqp_url());
  CAF_REQUIRE(password);
  CAF_REQUIRE(!password->password.empty()); // else this test proves nothing
  running_node node{make_config({make_route("e", "J", q, {60})})};
  auto worker = python_worker();
  CAF_CHECK_EQUAL(produce(R"({"scenario":"ok"})", 1).first, 0);
  CAF_REQUIRE(wait_until([&] { return count_status("completed") == 1; },
                         std::chrono::seconds{20}));
  // It works, and its command line, as ps shows it, has no password.
  std::ifstream in{"/proc/" + std::to_string(worker->pid()) + "/cmdline"};
  std::string cmdline{std::istreambuf_iterator<char>{in}, {}};
  CAF_CHECK_NOT_EQUAL(cmdline.find("outbox_worker.py"), std::string::npos);
  CAF_CHECK_EQUAL(cmdline.find(":" + password->password + "@"), std::string::npos);
  CAF_CHECK_EQUAL(cmdline.find("amqp://"), std::string::npos);
  worker->signal(SIGTERM);
  CAF_CHECK_EQUAL(worker->wait(), 0);
  auto refused = run_command(python + " " + scripts
                             + "outbox_worker.py --queue q --amqp-url "
                               "amqp://u:s3cret@127.0.0.1:1/");
  CAF_CHECK_EQUAL(refused.first, 2);
  CAF_CHECK_NOT_EQUAL(refused.second.find("--amqp-url carries a password"),
                      std::string::npos);
  CAF_CHECK_EQUAL(refused.second.find("s3cret"), std::string::npos);
  auto refused_db = run_command(python + " " + scripts
                                + "outbox_producer.py --event-type e --database-url "
                                  "'host=127.0.0.1 password=s3cret'");
  CAF_CHECK_EQUAL(refused_db.first, 2);
  CAF_CHECK_NOT_EQUAL(refused_db.second.find("--database-url carries a password"),
                      std::string::npos);
  CAF_CHECK_EQUAL(refused_db.second.find("s3cret"), std::string::npos);
}

CAF_TEST(the python producer refuses bad input clearly) {
  auto bad_json = produce("{nope", 1);
  CAF_CHECK_NOT_EQUAL(bad_json.first, 0);
  CAF_CHECK_NOT_EQUAL(bad_json.second.find("--payload is not valid JSON"),
                      std::string::npos);
  auto bad_type = run_command(producer_command() + " --event-type ''");
  CAF_CHECK_NOT_EQUAL(bad_type.first, 0);
  CAF_CHECK_NOT_EQUAL(bad_type.second.find("SQLSTATE OB001"), std::string::npos);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.events).int64(0, 0), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
