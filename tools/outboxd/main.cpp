// outboxd: one node of the outbox cluster. Alone it runs every role for
// every queue; --roles/--queues/--listen/--join split the roles over
// processes (docs/operations.md "A cluster").
#include <algorithm>
#include <csignal>
#include <unistd.h>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sys/resource.h>

#include <caf/io/middleman.hpp>

#include "actors/message_types.hpp"
#include "actors/node.hpp"
#include "actors/node_tls.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/config/config.hpp"
#include "cli/cli_config.hpp"
#include "http/http_endpoint.hpp"
#include "http/http_flags.hpp"
#include "cli/node_options.hpp"

namespace {

constexpr int exit_usage = 2;   // bad flags or config
constexpr int exit_failure = 1; // could not start, or a --once pass failed

// --help: the roles, then the flags, examples and exit codes.
constexpr const char* roles_help =
  "usage: outboxd [--config FILE] [--roles R,...] [--queues Q,...]\n"
  "               [--databases NAME,...]\n"
  "               [--listen [HOST:]PORT | --join HOST:PORT] [--http [HOST:]PORT]\n"
  "               [--tls-cert FILE --tls-key FILE --tls-ca FILE] [--once]\n"
  "\n"
  "One node of the outbox cluster. Alone it runs every role for every routed\n"
  "queue; --roles, --queues, --listen and --join split the work over nodes.\n"
  "\n"
  "roles:\n"
  "  status       the cluster's membership, status view and wake-ups; the\n"
  "               other nodes --join it\n"
  "  router       routes committed events to deliveries\n"
  "  dispatcher   publishes ready deliveries of its queues to RabbitMQ\n"
  "  results      applies the workers' results of its queues\n"
  "  sweeper      times out deliveries, expires them, deletes old final ones\n"
  "\n"
  "options:\n";

constexpr const char* daemon_examples_help =
  "\n"
  "examples:\n"
  "  outboxd --config /etc/outbox/outbox.json            every role, one process\n"
  "  outboxd --roles status,router,sweeper --listen 0.0.0.0:4250 \\\n"
  "      --tls-cert status.pem --tls-key status.key --tls-ca ca.pem\n"
  "  outboxd --roles dispatcher,results --queues stock.publish \\\n"
  "      --join 10.0.0.1:4250 --tls-cert work2.pem --tls-key work2.key --tls-ca ca.pem\n"
  "\n"
  "exit status: 0 stopped cleanly, 1 could not start or a --once pass failed,\n"
  "2 bad usage or config. More: man outboxd, docs/operations.md.\n";

struct daemon_config : outbox::cli_config {
  std::string config_file = "config/outbox.json";
  std::string log_level = "info";
  outbox::node_flags flags;
  std::string http;

  daemon_config() {
    opt_group{options(), "global"}
      .add(config_file, "config,c", "path of the outbox JSON config")
      .add(flags.roles, "roles",
           "roles of this node: status,router,dispatcher,results,sweeper "
           "(default: all)")
      .add(flags.queues, "queues",
           "queues of this node's dispatchers and result handlers "
           "(default: every routed queue)")
      .add(flags.databases, "databases",
           "databases this node serves, of the config's `databases` "
           "(default: every one)")
      .add(flags.listen, "listen",
           "status node: HOST:PORT or PORT to listen on (default "
           "127.0.0.1:4250)")
      .add(flags.join, "join", "HOST:PORT of the status node to join")
      .add(http, "http",
           "[HOST:]PORT of this node's HTTP endpoint (/metrics, /healthz, "
           "/readyz, /api/status); a HOST alone takes 4251 on the status "
           "node (default: off)")
      .add(flags.insecure, "insecure",
           "status node: listen off loopback without TLS (anyone who "
           "reaches the port can join)")
      .add(flags.once, "once", "run one pass of each local role and exit")
      .add(flags.sleep, "sleep",
           "seconds to wait when a pass finds nothing, 1..3600 (default 1)")
      .add(log_level, "log-level", "trace, debug, info, warn, error");
    opt_group tls{options(), "global"};
    outbox::add_tls_flags(tls, flags.tls);
    // A frozen node, not only a dead one, is seen as down within seconds.
    // CAF 0.17.6 has no node-down message, and without heartbeats a frozen
    // peer (TCP still open) sends no down_msg: only requests time out.
    set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{500}});
    set("middleman.connection-timeout", caf::timespan{std::chrono::seconds{3}});
    // CAF's scheduler workers poll every 50 us for 25 ms after each job
    // before they sleep; under load that cost about a third of outboxd's
    // CPU on a 2-core machine (the actors that wait on libpq or rabbitmq-c
    // run detached, the scheduler carries only light ones). They now sleep
    // at once and are woken by the next job. Keep CAF's number of workers:
    // with only two such workers, wake-ups between the nodes of a cluster
    // took hundreds of milliseconds. Both stay CLI options
    // (--work-stealing.*, --scheduler.*).
    set("work-stealing.moderate-poll-attempts", size_t{0});
    outbox::register_message_types(*this);
    load<caf::io::middleman>();
  }

  std::string help() const {
    return std::string{roles_help}
           + options_text({{"config", "FILE"}, {"roles", "R[,...]"},
                           {"queues", "Q[,...]"}, {"databases", "NAME[,...]"},
                           {"listen", "[HOST:]PORT"},
                           {"join", "HOST:PORT"}, {"http", "[HOST:]PORT"},
                           {"sleep", "SECONDS"}, {"log-level", "LEVEL"},
                           {"tls-cert", "FILE"}, {"tls-key", "FILE"},
                           {"tls-ca", "FILE"}, {"tls-key-passphrase-file", "FILE"}})
           + daemon_examples_help;
  }
};

// What the flags and the config file ask for, or the exit status (2) after
// saying what is wrong.
struct startup {
  std::optional<outbox::cluster_config> cfg;
  std::optional<outbox::node_settings> settings;
  std::optional<outbox::host_port> http;
  int exit_code = 0;
};

startup read_startup(daemon_config& opts, int argc, char** argv) {
  startup out;
  out.exit_code = exit_usage;
  if (auto err = opts.parse_args(argc, argv); !err.empty()) {
    std::cerr << "outboxd: " << err << "\n";
    return out;
  }
  if (opts.answered_help("outboxd", opts.help())) {
    out.exit_code = 0;
    return out;
  }
  if (!opts.remainder.empty()) {
    std::cerr << "outboxd: unexpected argument \"" << opts.remainder[0]
              << "\" (see --help)\n";
    return out;
  }
  if (!outbox::set_log_level(opts.log_level)) {
    std::cerr << "outboxd: --log-level: unknown level\n";
    return out;
  }
  auto cfg = outbox::load_cluster_config(opts.config_file);
  if (!cfg) {
    std::cerr << "outboxd: " << outbox::render(cfg.error()) << "\n";
    return out;
  }
  auto settings = outbox::make_node_settings(opts.flags, *cfg);
  if (!settings) {
    std::cerr << "outboxd: " << outbox::context_of(settings.error()) << "\n";
    return out;
  }
  auto http = outbox::read_http_flag(opts.http, *settings);
  if (!http) {
    std::cerr << "outboxd: " << outbox::context_of(http.error()) << "\n";
    return out;
  }
  out.http = *http;
  if (settings->tls) {
    auto identity = outbox::check_node_tls(*settings->tls);
    if (!identity) {
      std::cerr << "outboxd: " << outbox::context_of(identity.error()) << "\n";
      return out;
    }
    settings->identity = std::move(*identity);
    outbox::use_node_tls(opts, *settings->tls);
  }
  out.cfg = std::move(*cfg);
  out.settings = std::move(*settings);
  return out;
}

// One pass of each local role, then the exit status.
int run_once(outbox::node& n) {
  auto err = n.run_once();
  n.stop();
  if (err) {
    std::cerr << "outboxd: a pass failed: " << outbox::render(err) << "\n";
    return exit_failure;
  }
  return 0;
}

// Sockets are the relay's lifeline (database, broker, cluster), and an
// HTTP client holds one per connection until it is served: the soft limit
// on open files goes up to the hard one (at most 65,536), so that a flood
// of connections cannot starve the relay of descriptors.
void raise_fd_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
    return;
  auto want = std::min<rlim_t>(lim.rlim_max, 65536);
  if (lim.rlim_cur < want) {
    lim.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

// The node's HTTP endpoint, when --http asks for one.
caf::expected<std::unique_ptr<outbox::http_endpoint>>
start_http(caf::actor_system& sys, const startup& start, const outbox::node& n) {
  if (!start.http)
    return std::unique_ptr<outbox::http_endpoint>{};
  raise_fd_limit();
  outbox::http_settings hs;
  hs.where = *start.http;
  hs.tls = start.settings->tls;
  hs.health.joins_status = start.settings->join.has_value();
  // A pass runs at least every --sleep seconds; three missed ones, and at
  // least 30 s, mean an actor is stuck.
  hs.health.stuck_after_ms = std::max(3 * start.settings->sleep_seconds, 30) * 1000;
  hs.version = OUTBOX_VERSION;
  return outbox::http_endpoint::start(sys, {n.agent(), n.status()}, std::move(hs));
}

} // namespace

int main(int argc, char** argv) {
  // A database host that takes connections and never answers would hold
  // each of the node's actors that connects to it (and its stop) for good.
  outbox::bound_connect_timeout();
  // Blocked before CAF starts its threads, so only sigwait sees them.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  // A peer that closes its end (an HTTP client gone mid-response, a node
  // that died) makes a write fail with EPIPE; it must not end the node.
  std::signal(SIGPIPE, SIG_IGN);
  daemon_config opts;
  auto start = read_startup(opts, argc, argv);
  if (!start.settings)
    return start.exit_code;
  caf::actor_system sys{opts};
  // An operator's drain (outboxctl drain) is a SIGTERM, to the letter: the
  // sigwait below takes it like any other.
  start.settings->drain = [] { kill(getpid(), SIGTERM); };
  auto node = outbox::node::start(sys, *start.cfg, *start.settings);
  if (!node) {
    std::cerr << "outboxd: " << outbox::render(node.error()) << "\n";
    return exit_failure;
  }
  if (start.settings->once) {
    // Ends as a stop by signal ends, below, and for the same reason: after
    // ~actor_system, CAF 0.17.6's middleman was seen to leave its BASP
    // broker behind now and then (a cycle LeakSanitizer reports at exit).
    int rc = run_once(**node);
    (*node)->await_stopped(std::chrono::seconds{60});
    spdlog::shutdown();
    std::cout.flush();
    std::_Exit(rc);
  }
  auto http = start_http(sys, start, **node);
  if (!http) {
    std::cerr << "outboxd: " << outbox::context_of(http.error()) << "\n";
    (*node)->stop();
    (*node)->await_stopped(std::chrono::seconds{60});
    std::_Exit(exit_usage);
  }
  int sig = 0;
  sigwait(&sigs, &sig);
  outbox::logger("node")->info("event=stopping signal={}", sig);
  // The endpoint keeps serving while the node stops (its actors show as
  // terminated) and ends with the process: joining its threads could wait
  // on a client that sends a byte a second.
  (*node)->stop();
  // Every pass is over once every actor has terminated: nothing is left to
  // commit or ack. The process then ends here instead of in
  // ~actor_system, which in CAF 0.17.6 was seen to wait forever for a
  // detached actor's thread while the middleman still held a reference to
  // that actor (a thread stuck in private_thread::await_self_destroyed).
  bool clean = (*node)->await_stopped(std::chrono::seconds{60});
  outbox::logger("node")->info("event=stopped clean={}", clean);
  spdlog::shutdown();
  std::_Exit(clean ? 0 : exit_failure);
}
