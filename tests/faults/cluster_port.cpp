#define CAF_SUITE faults.cluster_port
#include <caf/test/unit_test.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "tests/faults/fault_cluster.hpp"
#include "tests/integration/http_node.hpp"
#include "tests/integration/stranger.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

using namespace std::chrono_literals;


// Every node of the TLS cluster shows one certificate of the cluster's
// CA; the status node serves /metrics. Beside it a plain status node on
// loopback, the "plain test port", with /metrics of its own.
//
// ASan keeps freed memory in quarantine (256 MiB by default) before it
// reuses it: with it, a node's resident memory grows with every
// connection it ever freed, which is the sanitizer's and not the node's.
// The nodes of this test run with a quarantine of 1 MiB.
struct fixture : fault_cluster {
  metrics_endpoint http{free_port(), "", ""};
  uint16_t plain_port = free_port();
  metrics_endpoint plain_http{free_port(), "", ""};
  std::unique_ptr<child_process> plain_node;
  std::string asan_before;
  bool had_asan = false;

  fixture() : fault_cluster("[1, 1]", 5) {
    auto made = run_command(
      "bash -c 'source " + std::string{OUTBOX_SOURCE_DIR}
      + "/tools/lib/test_certs.sh && test_ca " + dir + "ok && test_cert " + dir
      + "ok node node && test_cert " + dir + "ok operator && test_ca " + dir
      + "other && test_cert " + dir
      + "other rogue rogue-node'");
    if (made.first != 0)
      CAF_FAIL("test certificates: " << made.second);
    node_args = {"--tls-cert", dir + "ok/node.pem", "--tls-key", dir + "ok/node.key",
                 "--tls-ca", dir + "ok/ca.pem"};
    status_args = {"--http", "127.0.0.1:" + std::to_string(http.port)};
    http.cert = dir + "ok/operator.pem";
    http.key = dir + "ok/operator.key";
    if (auto* old = std::getenv("ASAN_OPTIONS")) {
      had_asan = true;
      asan_before = old;
    }
    auto opts = asan_before.empty() ? std::string{} : asan_before + ":";
    ::setenv("ASAN_OPTIONS", (opts + "quarantine_size_mb=1").c_str(), 1);
  }

  ~fixture() {
    plain_node.reset();
    if (had_asan)
      ::setenv("ASAN_OPTIONS", asan_before.c_str(), 1);
    else
      ::unsetenv("ASAN_OPTIONS");
  }

  bool joined(const std::string& node) {
    return lines_with(node, "event=joined_status") > 0;
  }

  int flaps() {
    return lines_with("router", "event=status_lost")
           + lines_with("dispatcher", "event=status_lost")
           + lines_with("status", "event=node_down");
  }
};

/// The stranger's attempts, by kind, cycled one every 20 ms.
struct attempts {
  int bare = 0, garbage = 0, no_certificate = 0, foreign_ca = 0, silent = 0,
      huge_header = 0;
  int at_tls_port() const {
    return bare + garbage + no_certificate + foreign_ca + silent;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(cluster_port_faults, fixture)

// Strangers at 50 connections a second for 30 s, of every kind at once:
// bare connects, garbage, TLS without a certificate, TLS of another CA,
// connections that never speak (held until the node closes them) and a
// BASP header claiming 2 GiB at a plain port. The members are not
// disturbed: no node_down or status_lost, commit→completed p99 within
// 1.5× of the quiet run before, no node's memory up by 10 MiB, and every
// attempt counted once by its reason.
CAF_TEST(strangers at 50 connections a second disturb no member) {
  start_all();
  plain_node = http_node(dir + "outbox.json", plain_http.port,
                         {"--roles", "status", "--listen",
                          "127.0.0.1:" + std::to_string(plain_port)},
                         dir + "plain.log");
  start_workers();
  CAF_REQUIRE(wait_until([&] { return joined("router") && joined("dispatcher"); }));
  CAF_REQUIRE(wait_until([&] {
    return !refused_by_reason(http).empty() && !refused_by_reason(plain_http).empty();
  }));
  keep_publishing(50);
  // The quiet reference: 400 events (8 s at 50 a second) once the flow runs.
  CAF_REQUIRE(wait_until([&] { return published() >= 100; }));
  auto quiet_from = last_event_id();
  CAF_REQUIRE(wait_until([&] { return last_event_id() >= quiet_from + 400; }, 60s));
  auto quiet_to = last_event_id();
  std::vector<child_process*> nodes{status_node.get(), router_node.get(),
                                    dispatcher_node.get(), plain_node.get()};
  // The memory reference once the HTTPS endpoint that this test reads
  // the counts from is warm: each of its 16 worker threads allocates on
  // its first requests (some 30 MiB under ASan), which is not the
  // strangers' doing. Warm: 16 more requests move the status node by less
  // than 512 KiB.
  CAF_REQUIRE(wait_until([&] {
    auto rss = resident_kib(status_node->pid());
    for (int i = 0; i < 16; ++i)
      refused_by_reason(http);
    return resident_kib(status_node->pid()) - rss < 512;
  }, 60s));
  std::vector<long> before;
  for (auto* n : nodes)
    before.push_back(resident_kib(n->pid()));
  // The stranger.
  auto tls_port = static_cast<uint16_t>(std::stoi(status_port()));
  attempts made;
  std::vector<int> silent;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; std::chrono::steady_clock::now() - start < 30s; ++i) {
    switch (i % 6) {
      case 0:
        bare_connect(tls_port);
        ++made.bare;
        break;
      case 1:
        send_and_leave(tls_port, "GET / HTTP/1.0\r\n\r\n");
        ++made.garbage;
        break;
      case 2:
        tls_attempt(tls_port);
        ++made.no_certificate;
        break;
      case 3:
        tls_attempt(tls_port, dir + "other/rogue.pem", dir + "other/rogue.key");
        ++made.foreign_ca;
        break;
      case 4:
        if (auto fd = open_loopback_connection(tls_port); fd >= 0) {
          silent.push_back(fd);
          ++made.silent;
        }
        break;
      default:
        send_and_leave(plain_port, huge_basp_header());
        ++made.huge_header;
    }
    std::this_thread::sleep_until(start + (i + 1) * 20ms);
  }
  auto stranger_to = last_event_id();
  CAF_MESSAGE("attempts: bare " << made.bare << ", garbage " << made.garbage
              << ", no certificate " << made.no_certificate << ", foreign CA "
              << made.foreign_ca << ", silent " << made.silent
              << ", huge header " << made.huge_header);
  // Every attempt at the TLS port counted once, whatever its reason (one
  // refused at once for its address's unfinished handshakes counts as
  // that); the silent ones end at their deadline or at that bound.
  auto tls_counted = [&] {
    double sum = 0;
    for (auto& [reason, n] : refused_by_reason(http))
      sum += n;
    return sum;
  };
  CAF_CHECK(wait_until([&] { return tls_counted() >= made.at_tls_port(); }, 60s));
  auto tls = refused_by_reason(http);
  CAF_CHECK_EQUAL(tls_counted(), double(made.at_tls_port()));
  for (auto reason : {"closed_early", "protocol_garbage", "no_certificate",
                      "unknown_ca", "handshake_timeout", "too_many_half_open"}) {
    CAF_MESSAGE(reason << ": " << tls[reason]);
    CAF_CHECK_GREATER(tls[reason], 0.0);
  }
  CAF_CHECK_LESS_OR_EQUAL(tls["handshake_timeout"] + tls["too_many_half_open"],
                          double(made.at_tls_port()));
  CAF_CHECK(wait_until([&] {
    return refused_by_reason(plain_http)["oversized_header"] >= made.huge_header;
  }));
  auto plain = refused_by_reason(plain_http);
  CAF_CHECK_EQUAL(plain["oversized_header"], double(made.huge_header));
  for (auto fd : silent)
    ::close(fd);
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto after = resident_kib(nodes[i]->pid());
    CAF_MESSAGE("node " << i << " resident " << before[i] << " KiB, then " << after);
    CAF_CHECK_LESS(after - before[i], 10 * 1024);
  }
  auto v = settle();
  check("cluster_port", v);
  CAF_CHECK_EQUAL(flaps(), 0);
  // The p99 of the stranger's 30 s against the quiet run's. A member
  // knocked off the cluster costs seconds (its deliveries wait for the
  // rejoin); the strangers' own TLS work only takes CPU from the pipeline
  // (some 600 handshakes, both ends on these 2 cores, beside whatever
  // other suite ctest runs). So the bound sits at a second, or twice the
  // quiet p99 on a machine slow enough to make that higher: between the
  // two, not at the edge of the machine's noise. flaps() above sees a
  // knocked-off member directly.
  auto quiet = completion_percentile(0.99, quiet_from, quiet_to);
  auto loud = completion_percentile(0.99, quiet_to, stranger_to);
  CAF_MESSAGE("commit->completed p99: quiet " << quiet << " s, with strangers " << loud);
  auto bound = std::max(2 * quiet, 1.0);
  CAF_CHECK_LESS(loud, bound);
}

CAF_TEST_FIXTURE_SCOPE_END()
