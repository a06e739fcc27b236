#define CAF_SUITE faults.readiness
#include <caf/test/unit_test.hpp>

#include <csignal>

#include "tests/faults/private_services.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/http_node.hpp"

using namespace outbox;
using namespace outbox::testing;

// /readyz of an idle node while its broker goes away and comes back: what a
// load balancer or Kubernetes would act on.

namespace {

// Its own servers first: the scenario stops the broker.
struct fixture : private_services, cluster_fixture {
  std::string q = queue("ready");
  std::string dir = "/tmp/" + queue_prefix + "readiness/";
  std::string config_path = dir + "outbox.json";
  std::string status_port = std::to_string(free_port());

  fixture() {
    run_command("mkdir -p " + dir);
    write_config_file(config_path, "{\"e\": [{\"job\": \"J\", \"queue\": \"" + q
                                     + "\"}]}");
  }

  ~fixture() { run_command("rm -rf " + dir); }

  std::unique_ptr<child_process> node(const std::string& name, uint16_t http,
                                      std::vector<std::string> args) {
    return http_node(config_path, http, std::move(args), dir + name + ".log");
  }

  /// Waits until /readyz of the node at `port` answers `code` with `text`
  /// in its body; the body seen last is left in `body`.
  static bool readyz_turns(uint16_t port, int code, const std::string& text,
                           std::chrono::seconds limit, std::string& body) {
    return wait_until([&] {
      auto r = http_get(port, "/readyz");
      body = r.second;
      return r.first == code && body.find(text) != std::string::npos;
    }, limit);
  }
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(readiness_faults, fixture)

CAF_TEST(readyz turns 503 naming the broker while it is stopped) {
  CAF_MESSAGE("logs in " << dir);
  // Idle (nothing published), so only the connections' own traffic can
  // tell that the broker went away. The relay's dispatcher runs a pass
  // every 30 s: its result handler's consumer, which waits 250 ms at a
  // time for results, is what notices. The second node is a dispatcher
  // alone at the default --sleep of 1 s: its idle passes notice.
  uint16_t relay_http = free_port(), dispatcher_http = free_port();
  auto relay = node("relay", relay_http,
                    {"--listen", "127.0.0.1:" + status_port, "--sleep", "30"});
  auto dispatcher = node("dispatcher", dispatcher_http,
                         {"--roles", "dispatcher", "--join",
                          "127.0.0.1:" + status_port});
  std::string body;
  for (auto port : {relay_http, dispatcher_http})
    CAF_REQUIRE(readyz_turns(port, 200, "", std::chrono::seconds{30}, body));
  auto stopping = std::chrono::steady_clock::now();
  stop_broker();
  CAF_MESSAGE("stopping the broker took " << seconds_since(stopping) << " s");
  // Seen within about a second on an idle machine (the messages say how
  // long it took); the deadline leaves room for a loaded one.
  CAF_CHECK(readyz_turns(relay_http, 503, "\"results " + q + ": broker_unavailable",
                         std::chrono::seconds{20}, body));
  CAF_MESSAGE("relay's readyz 503 " << seconds_since(stopping)
                                    << " s after the stop began: " << body);
  CAF_CHECK(readyz_turns(dispatcher_http, 503,
                         "\"dispatcher " + q + ": broker_unavailable",
                         std::chrono::seconds{20}, body));
  CAF_MESSAGE("dispatcher's readyz 503 " << seconds_since(stopping)
                                         << " s after the stop began: " << body);
  for (auto port : {relay_http, dispatcher_http})
    CAF_CHECK_EQUAL(http_get(port, "/healthz").first, 200);
  auto starting = std::chrono::steady_clock::now();
  start_broker();
  for (auto port : {relay_http, dispatcher_http})
    CAF_CHECK(readyz_turns(port, 200, "", std::chrono::seconds{60}, body));
  CAF_MESSAGE("readyz 200 on both " << seconds_since(starting)
                                    << " s after the start began");
  for (auto* p : {dispatcher.get(), relay.get()})
    p->signal(SIGTERM);
  CAF_CHECK_EQUAL(dispatcher->wait(), 0);
  CAF_CHECK_EQUAL(relay->wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
