#define CAF_SUITE integration.node_tls
#include <caf/test/unit_test.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <sys/socket.h>
#include <unistd.h>

#include <rapidjson/document.h>

#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/node_tls.hpp"
#include "tests/integration/child_process.hpp"
#include "tests/integration/cluster_fixture.hpp"
#include "tests/integration/stranger.hpp"
#include "tests/integration/test_worker.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

/// Resident memory of process `pid` in MiB, -1 if unknown.
long resident_mib(pid_t pid) {
  auto kib = resident_kib(pid);
  return kib < 0 ? -1 : kib / 1024;
}

/// Connects to 127.0.0.1:`port`, sends `bytes` as they are, and returns
/// whether the peer closed the connection within `deadline`.
bool peer_closes_after(uint16_t port, const std::string& bytes,
                       std::chrono::seconds deadline) {
  int fd = open_loopback_connection(port);
  if (fd < 0)
    return false;
  timeval tv{static_cast<time_t>(deadline.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  bool closed = false;
  if (::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL)
      == static_cast<ssize_t>(bytes.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0)
      ; // whatever the server says before it hangs up
    closed = n == 0 || (n < 0 && errno == ECONNRESET);
  }
  ::close(fd);
  return closed;
}

struct tls_fixture : cluster_fixture {
  std::string q = queue("tls");
  std::string dir = "/tmp/" + queue_prefix + "tls/";
  std::string config_path = dir + "outbox.json";
  std::string port = std::to_string(free_port());

  tls_fixture() {
    // Two CAs: the cluster's ("ok") and a stranger's ("other").
    auto made = run_command(
      "bash -c 'source " + std::string{OUTBOX_SOURCE_DIR}
      + "/tools/lib/test_certs.sh && test_ca " + dir + "ok && test_cert "
      + dir + "ok status status-node && test_cert " + dir
      + "ok sweeper sweeper-node && test_cert " + dir
      + "ok router router-node && test_cert " + dir
      + "ok dispatcher dispatcher-node && test_cert " + dir
      + "ok operator && test_ca " + dir + "other && test_cert " + dir
      + "other rogue rogue-node'");
    if (made.first != 0)
      CAF_FAIL("test certificates: " << made.second);
    write_config_file(config_path, "{\"e\": [{\"job\": \"J\", \"queue\": \""
                                     + q + "\"}]}");
  }

  ~tls_fixture() { run_command("rm -rf " + dir); }

  std::unique_ptr<child_process> start(const std::string& name,
                                       std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path});
    return std::make_unique<child_process>(OUTBOXD_PATH, args,
                                           dir + name + ".log");
  }

  /// The --tls-* flags of certificate NAME signed by CA `ca`, trusting `trust`.
  std::vector<std::string> tls(const std::string& ca, const std::string& name,
                               const std::string& trust = "") {
    auto at = dir + ca + "/";
    return {"--tls-cert", at + name + ".pem", "--tls-key", at + name + ".key",
            "--tls-ca", dir + (trust.empty() ? ca : trust) + "/ca.pem"};
  }

  std::string tls_text(const std::string& ca, const std::string& name,
                       const std::string& trust = "") {
    std::string out;
    for (auto& x : tls(ca, name, trust))
      out += x + " ";
    return out;
  }

  std::unique_ptr<child_process> tls_status_node() {
    auto args = tls("ok", "status");
    args.insert(args.end(), {"--roles", "status", "--listen", "127.0.0.1:" + port});
    return start("status", args);
  }

  std::unique_ptr<child_process> sweeper_node(const std::string& ca,
                                              const std::string& name,
                                              const std::string& trust = "") {
    return joining_node(tls(ca, name, trust), name, {"--roles", "sweeper"});
  }

  /// A node with `tls_args` and `args` joining the status node.
  std::unique_ptr<child_process> joining_node(std::vector<std::string> tls_args,
                                              const std::string& name,
                                              std::vector<std::string> args) {
    args.insert(args.begin(), tls_args.begin(), tls_args.end());
    args.insert(args.end(), {"--join", "127.0.0.1:" + port});
    return start(name, args);
  }

  /// The node names in `outboxctl status --json` over TLS ("" when it fails).
  std::string names_seen() {
    auto [rc, out] = ctl_status(tls_text("ok", "operator"));
    if (rc != 0)
      return "";
    rapidjson::Document doc;
    doc.Parse(out.c_str());
    std::string names;
    if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("nodes"))
      for (auto& n : doc["nodes"].GetArray())
        names += std::string{n["name"].GetString()} + " ";
    return names;
  }

  /// `outboxctl status --connect 127.0.0.1:PORT` with `extra` flags.
  std::pair<int, std::string> ctl_status(const std::string& extra = "") {
    return run_command(std::string{OUTBOXCTL_PATH} + " status --json "
                       + extra + " --connect 127.0.0.1:" + port);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(node_tls_tests, tls_fixture)

CAF_TEST(a plain status port off loopback takes --insecure) {
  auto refused = run_command(std::string{OUTBOXD_PATH} + " --config "
                             + config_path + " --roles status --listen 0.0.0.0:"
                             + port);
  check_ends(refused, 2, "is not a loopback address");
  CAF_CHECK_NOT_EQUAL(refused.second.find("--insecure"), std::string::npos);
  auto open = start("insecure", {"--roles", "status", "--listen",
                                 "0.0.0.0:" + port, "--insecure"});
  CAF_REQUIRE(wait_until([&] { return ctl_status().first == 0; }));
  CAF_CHECK(wait_until([&] {
    return read_file(dir + "insecure.log").find("event=insecure_listen")
           != std::string::npos;
  }));
  open->signal(SIGTERM);
  CAF_CHECK_EQUAL(open->wait(), 0);
}

CAF_TEST(three TLS nodes complete events and answer status over TLS) {
  auto s = tls_status_node();
  auto r = joining_node(tls("ok", "router"), "router",
                        {"--roles", "router,sweeper", "--sleep", "1"});
  auto d = joining_node(tls("ok", "dispatcher"), "dispatcher",
                        {"--roles", "dispatcher,results", "--queues", q,
                         "--sleep", "1"});
  test_worker worker{amqp_url(), q, [](const job_seen&, int) {
                       return answer::completed;
                     }};
  // All three show up under the CN of their certificates.
  CAF_REQUIRE(wait_until([&] {
    auto names = names_seen();
    return names.find("status-node@") != std::string::npos
           && names.find("router-node@") != std::string::npos
           && names.find("dispatcher-node@") != std::string::npos;
  }));
  for (int i = 0; i < 20; ++i)
    publish("e", "{}");
  CAF_CHECK(wait_until([&] { return count_status("completed") == 20; },
                       std::chrono::seconds{20}));
  CAF_CHECK_NOT_EQUAL(read_file(dir + "status.log").find("identity=status-node"),
                      std::string::npos);
  for (auto* p : {d.get(), r.get(), s.get()}) {
    p->signal(SIGTERM);
    CAF_CHECK_EQUAL(p->wait(), 0);
  }
}

CAF_TEST(bytes before the TLS handshake cost no more than the handshake) {
  auto s = tls_status_node();
  CAF_REQUIRE(wait_until([&] { return !names_seen().empty(); }));
  auto before = resident_mib(s->pid());
  // A plain BASP header claiming 2 GiB is not a TLS record: the handshake
  // fails and the connection closes without the claimed payload ever
  // being allocated.
  CAF_CHECK(peer_closes_after(static_cast<uint16_t>(std::stoi(port)),
                              huge_basp_header(), std::chrono::seconds{10}));
  auto after = resident_mib(s->pid());
  CAF_MESSAGE("status node resident " << before << " MiB, then " << after);
  CAF_CHECK_LESS(after - before, 64);
  CAF_CHECK(!names_seen().empty()); // still answering
  s->signal(SIGTERM);
  CAF_CHECK_EQUAL(s->wait(), 0);
}

// An authenticated peer is still held to what a real node announces: the
// join of an in-test actor system holding the operator's certificate.
CAF_TEST(an authenticated peer cannot flood the view or take a live name) {
  auto s = tls_status_node();
  auto sweeper = sweeper_node("ok", "sweeper");
  std::string live;
  CAF_REQUIRE(wait_until([&] {
    auto names = names_seen();
    auto at = names.find("sweeper-node@");
    if (at != std::string::npos)
      live = names.substr(at, names.find(' ', at) - at);
    return !live.empty();
  }));
  node_test_config cfg;
  use_node_tls(cfg, node_tls{dir + "ok/operator.pem", dir + "ok/operator.key",
                             dir + "ok/ca.pem", ""});
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  caf::strong_actor_ptr remote;
  self->request(node_middleman(sys), std::chrono::seconds{10},
                caf::connect_atom::value, std::string{"127.0.0.1"},
                static_cast<uint16_t>(std::stoi(port)))
    .receive([&](const caf::node_id&, caf::strong_actor_ptr& ptr,
                 std::set<std::string>&) { remote = std::move(ptr); },
             [&](caf::error& err) { CAF_FAIL("connect: " << sys.render(err)); });
  CAF_REQUIRE(remote != nullptr);
  auto status = caf::actor_cast<status_actor>(remote);
  // (An argument: CAF 0.17 trips UBSan spawning a function without any.)
  auto dummy = sys.spawn([](caf::event_based_actor*, int) {
    return caf::behavior{[](int) {}};
  }, 0);
  node_info bulky{"bulky@host:1", {"sweeper"}, {}, {}, {},
                  caf::actor_cast<node_agent_actor>(dummy)};
  for (int i = 0; i < 5000; ++i)
    bulky.actors.push_back({"sweeper", "sweeper", "", caf::actor_cast<pass_actor>(dummy)});
  self->send(status, join_atom::value, bulky);
  node_info impostor{live, {"sweeper"}, {}, {}, {}, caf::actor_cast<node_agent_actor>(dummy)};
  self->send(status, join_atom::value, impostor);
  CAF_CHECK(wait_until([&] {
    auto log = read_file(dir + "status.log");
    return log.find("event=join_refused reason=") != std::string::npos
           && log.find("event=join_refused node=" + live) != std::string::npos;
  }));
  // The view answers, without the flood, and the real node is still up.
  auto [rc, out] = ctl_status(tls_text("ok", "operator"));
  CAF_CHECK_EQUAL(rc, 0);
  CAF_CHECK_EQUAL(out.find("bulky"), std::string::npos);
  rapidjson::Document doc;
  doc.Parse(out.c_str());
  CAF_REQUIRE(!doc.HasParseError() && doc.IsObject() && doc.HasMember("nodes"));
  bool live_up = false;
  for (auto& n : doc["nodes"].GetArray())
    live_up |= n["name"].GetString() == live && n["up"].GetBool();
  CAF_CHECK(live_up);
  self->send_exit(dummy, caf::exit_reason::user_shutdown);
  for (auto* p : {sweeper.get(), s.get()}) {
    p->signal(SIGTERM);
    CAF_CHECK_EQUAL(p->wait(), 0);
  }
}

CAF_TEST(a node of another CA cannot join and plain clients read nothing) {
  auto s = tls_status_node();
  CAF_REQUIRE(wait_until([&] { return !names_seen().empty(); }));
  // One rogue trusts its own CA, one the cluster's: neither gets in.
  auto rogue = sweeper_node("other", "rogue");
  auto rogue_trusting = start("rogue2", [&] {
    auto args = tls("other", "rogue", "ok");
    args.insert(args.end(), {"--roles", "sweeper", "--join", "127.0.0.1:" + port});
    return args;
  }());
  CAF_REQUIRE(wait_until([&] {
    auto log = read_file(dir + "rogue.log") + read_file(dir + "rogue2.log");
    size_t seen = 0;
    for (auto at = log.find("event=status_unreachable"); at != std::string::npos;
         at = log.find("event=status_unreachable", at + 1))
      ++seen;
    return seen >= 2;
  }));
  // A plain client, and one with a stranger's certificate, read nothing...
  check_ends(ctl_status(), 1, "no status node reachable");
  check_ends(ctl_status(tls_text("other", "rogue")), 1, "no status node reachable");
  check_ends(ctl_status(tls_text("other", "rogue", "ok")), 1,
             "no status node reachable");
  // ...and the status node still answers the cluster's own, listing no rogue.
  auto names = names_seen();
  CAF_CHECK_NOT_EQUAL(names.find("status-node@"), std::string::npos);
  CAF_CHECK_EQUAL(names.find("rogue"), std::string::npos);
  CAF_CHECK_EQUAL(read_file(dir + "rogue.log").find("event=joined_status"),
                  std::string::npos);
  for (auto* p : {rogue.get(), rogue_trusting.get(), s.get()}) {
    p->signal(SIGTERM);
    CAF_CHECK_EQUAL(p->wait(), 0);
  }
}

CAF_TEST(strangers and a client that leaves do not knock a member off) {
  auto s = tls_status_node();
  auto member = sweeper_node("ok", "sweeper");
  CAF_REQUIRE(wait_until([&] {
    return read_file(dir + "sweeper.log").find("event=joined_status")
           != std::string::npos;
  }));
  auto flaps = [&] {
    auto count = [](const std::string& log, const std::string& what) {
      size_t n = 0;
      for (auto at = log.find(what); at != std::string::npos; at = log.find(what, at + 1))
        ++n;
      return n;
    };
    return count(read_file(dir + "sweeper.log"), "event=status_lost")
           + count(read_file(dir + "status.log"), "event=node_down");
  };
  auto p = static_cast<uint16_t>(std::stoi(port));
  // A bare connect, a line of garbage, TLS without a certificate, TLS
  // with a stranger's, and operators that ask and leave (CAF sends no
  // close_notify, so each leaves with an "unexpected eof").
  for (int i = 0; i < 2; ++i) {
    ::close(open_loopback_connection(p));
    peer_closes_after(p, "GET / HTTP/1.0\r\n\r\n", std::chrono::seconds{5});
    run_command("timeout 10 openssl s_client -connect 127.0.0.1:" + port
                + " </dev/null");
    ctl_status(tls_text("other", "rogue", "ok"));
    CAF_CHECK_EQUAL(ctl_status(tls_text("ok", "operator")).first, 0);
  }
  // A flap shows within a heartbeat or two (500 ms each): a bounded
  // window, on purpose, after which the member must still be joined once.
  CAF_CHECK(!wait_until([&] { return flaps() > 0; }, std::chrono::seconds{3}));
  CAF_CHECK_EQUAL(flaps(), 0u);
  for (auto* n : {member.get(), s.get()}) {
    n->signal(SIGTERM);
    CAF_CHECK_EQUAL(n->wait(), 0);
  }
}

// The status node, with TLS unless `plain`, serving /metrics at `http`.
std::unique_ptr<child_process> guarded_status_node(tls_fixture& f, uint16_t http,
                                                   bool plain = false) {
  std::vector<std::string> args;
  if (!plain)
    args = f.tls("ok", "status");
  args.insert(args.end(), {"--roles", "status", "--listen", "127.0.0.1:" + f.port,
                           "--http", "127.0.0.1:" + std::to_string(http)});
  return f.start("status", args);
}

// Where the operator's certificate reads that node's /metrics (HTTPS
// with TLS, as the node's cluster port).
metrics_endpoint operator_metrics(tls_fixture& f, uint16_t http, bool plain = false) {
  if (plain)
    return {http, "", ""};
  return {http, f.dir + "ok/operator.pem", f.dir + "ok/operator.key"};
}

// Whether the node counted at least `want` of each reason.
bool counted(const metrics_endpoint& at, const std::map<std::string, double>& want) {
  auto got = refused_by_reason(at);
  for (auto& [reason, n] : want)
    if (got[reason] < n)
      return false;
  return !got.empty();
}

// Each kind of stranger is refused, counted by its reason in /metrics and
// logged with its address (cluster_port/); a member's handshake is not
// a refusal.
CAF_TEST(each refused connection is counted and logged by its reason) {
  auto http = operator_metrics(*this, free_port());
  auto s = guarded_status_node(*this, http.port);
  CAF_REQUIRE(wait_until([&] { return !refused_by_reason(http).empty(); }));
  auto p = static_cast<uint16_t>(std::stoi(port));
  bare_connect(p);
  send_and_leave(p, "GET / HTTP/1.0\r\n\r\n");
  CAF_CHECK(!tls_attempt(p));
  CAF_CHECK(!tls_attempt(p, dir + "other/rogue.pem", dir + "other/rogue.key"));
  std::map<std::string, double> want{{"closed_early", 1}, {"protocol_garbage", 1},
                                     {"no_certificate", 1}, {"unknown_ca", 1}};
  CAF_CHECK(wait_until([&] { return counted(http, want); }));
  CAF_CHECK_EQUAL(ctl_status(tls_text("ok", "operator")).first, 0);
  auto got = refused_by_reason(http);
  CAF_CHECK_EQUAL(got.size(), 8u); // every reason has its sample
  for (auto& [reason, n] : got)
    CAF_CHECK_EQUAL(n, want.count(reason) ? 1.0 : 0.0);
  auto log = read_file(dir + "status.log");
  for (auto& [reason, n] : want)
    CAF_CHECK_NOT_EQUAL(log.find("event=cluster_connection_refused reason=" + reason
                                 + " peer=127.0.0.1"),
                        std::string::npos);
  s->signal(SIGTERM);
  CAF_CHECK_EQUAL(s->wait(), 0);
}

// A connection that never completes its handshake is closed at the
// deadline (5 s), and an address holds at most 16 such at once: the 17th
// is closed as it comes.
CAF_TEST(a silent connection is closed at its deadline and an address holds a bounded number) {
  auto http = operator_metrics(*this, free_port());
  auto s = guarded_status_node(*this, http.port);
  CAF_REQUIRE(wait_until([&] { return !refused_by_reason(http).empty(); }));
  auto p = static_cast<uint16_t>(std::stoi(port));
  std::vector<int> held;
  for (int i = 0; i < 16; ++i)
    held.push_back(open_loopback_connection(p));
  CAF_CHECK(wait_until([&] { return half_open(http) == 16; }));
  CAF_CHECK(peer_closes_after(p, "", std::chrono::seconds{3}));
  CAF_CHECK(wait_until([&] { return counted(http, {{"handshake_timeout", 16}}); },
                       std::chrono::seconds{30}));
  for (auto fd : held) {
    char byte;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    CAF_CHECK_LESS_OR_EQUAL(::recv(fd, &byte, 1, 0), 0); // closed by the node
    ::close(fd);
  }
  auto got = refused_by_reason(http);
  CAF_CHECK_EQUAL(got["handshake_timeout"], 16.0);
  CAF_CHECK_EQUAL(got["too_many_half_open"], 1.0);
  CAF_CHECK_EQUAL(ctl_status(tls_text("ok", "operator")).first, 0);
  s->signal(SIGTERM);
  CAF_CHECK_EQUAL(s->wait(), 0);
}

// A plain port (loopback, no TLS) reads a first BASP header of at most
// 64 KiB of payload: one that claims 2 GiB closes the connection before
// CAF allocates it (it took 1.7 GiB before the guard).
CAF_TEST(a plain port refuses a first header that claims a huge payload) {
  auto http = operator_metrics(*this, free_port(), true);
  auto s = guarded_status_node(*this, http.port, true);
  CAF_REQUIRE(wait_until([&] { return !refused_by_reason(http).empty(); }));
  auto before = resident_mib(s->pid());
  CAF_CHECK(peer_closes_after(static_cast<uint16_t>(std::stoi(port)),
                              huge_basp_header(), std::chrono::seconds{10}));
  CAF_CHECK(wait_until([&] { return counted(http, {{"oversized_header", 1}}); }));
  auto after = resident_mib(s->pid());
  CAF_MESSAGE("plain status node resident " << before << " MiB, then " << after);
  CAF_CHECK_LESS(after - before, 64);
  CAF_CHECK_EQUAL(ctl_status().first, 0); // a plain client still joins
  s->signal(SIGTERM);
  CAF_CHECK_EQUAL(s->wait(), 0);
}

CAF_TEST(TLS takes a certificate a key and a CA) {
  auto ok = dir + "ok/";
  auto no_ca = run_command(std::string{OUTBOXD_PATH} + " --config " + config_path
                           + " --roles status --tls-cert " + ok + "status.pem"
                           + " --tls-key " + ok + "status.key");
  check_ends(no_ca, 2, "--tls-cert, --tls-key and --tls-ca together");
  auto wrong_key = run_command(std::string{OUTBOXD_PATH} + " --config "
                               + config_path + " --roles status --tls-cert "
                               + ok + "status.pem --tls-key " + ok
                               + "operator.key --tls-ca " + ok + "ca.pem");
  check_ends(wrong_key, 2, "not the key of");
  auto ctl_no_ca = ctl_status("--tls-cert " + ok + "operator.pem");
  check_ends(ctl_no_ca, 2, "--tls-cert, --tls-key and --tls-ca together");
  // With TLS the status port may leave loopback without --insecure.
  auto args = tls("ok", "status");
  args.insert(args.end(), {"--roles", "status", "--listen", "0.0.0.0:" + port});
  auto s = start("open", args);
  CAF_REQUIRE(wait_until([&] { return !names_seen().empty(); }));
  CAF_CHECK_EQUAL(read_file(dir + "open.log").find("event=insecure_listen"),
                  std::string::npos);
  s->signal(SIGTERM);
  CAF_CHECK_EQUAL(s->wait(), 0);
}

CAF_TEST(an encrypted key takes its passphrase from a file) {
  auto ok = dir + "ok/";
  auto made = run_command("openssl pkey -in " + ok + "status.key -aes256 "
                          "-passout pass:s3cret -out " + ok + "locked.key"
                          " && printf 's3cret\\n' >" + dir + "pass"
                          " && printf 'wrong\\n' >" + dir + "wrong");
  CAF_REQUIRE_EQUAL(made.first, 0);
  auto flags = " --config " + config_path + " --roles status --listen 127.0.0.1:"
               + port + " --tls-cert " + ok + "status.pem --tls-key " + ok
               + "locked.key --tls-ca " + ok + "ca.pem";
  auto wrong = run_command(std::string{OUTBOXD_PATH} + flags
                           + " --tls-key-passphrase-file " + dir + "wrong");
  check_ends(wrong, 2, "wrong passphrase");
  CAF_CHECK_EQUAL(wrong.second.find("wrong\n"), std::string::npos);
  auto s = start("locked", {"--roles", "status", "--listen", "127.0.0.1:" + port,
                            "--tls-cert", ok + "status.pem", "--tls-key",
                            ok + "locked.key", "--tls-ca", ok + "ca.pem",
                            "--tls-key-passphrase-file", dir + "pass"});
  CAF_REQUIRE(wait_until([&] { return !names_seen().empty(); }));
  CAF_CHECK_EQUAL(read_file(dir + "locked.log").find("s3cret"), std::string::npos);
  s->signal(SIGTERM);
  CAF_CHECK_EQUAL(s->wait(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
