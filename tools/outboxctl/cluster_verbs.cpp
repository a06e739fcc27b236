#include "tools/outboxctl/cluster_verbs.hpp"

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <set>

#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/node_tls.hpp"
#include "actors/status_actor.hpp"
#include "cli/node_options.hpp"
#include "core/base/errors.hpp"
#include "status_view/status_report.hpp"

namespace outbox {

namespace {

constexpr int exit_usage = 2;   // bad flags
constexpr int exit_failure = 1; // the cluster is unreachable or refused

// Every wait on the network is bounded: a server that accepts and then says
// nothing (a wrong port, a hung node) must not hang an operator's shell.
constexpr auto handshake_timeout = std::chrono::seconds{5};
constexpr auto status_timeout = std::chrono::seconds{10};
// A drain waits for the node's agent to say yes (the status node gives it
// 5 s) on top of the status node's own answer.
constexpr auto drain_timeout = std::chrono::seconds{15};

// Mutual TLS with the status node when the --tls-* flags are given (0), or
// the exit code of a bad flag or file.
int use_tls_flags(const std::string& verb, caf::actor_system_config& cfg,
                  const tls_flags& flags) {
  auto tls = read_tls_flags(flags);
  if (!tls) {
    std::cerr << "outboxctl " << verb << ": " << context_of(tls.error()) << "\n";
    return exit_usage;
  }
  if (!*tls)
    return 0;
  if (auto cn = check_node_tls(**tls); !cn) {
    std::cerr << "outboxctl " << verb << ": " << context_of(cn.error()) << "\n";
    return exit_usage;
  }
  use_node_tls(cfg, **tls);
  return 0;
}

// Ends the process at once: the middleman still waits on a connection
// that does not answer, and tearing the actor system down would wait with
// it.
[[noreturn]] void exit_now(int rc) {
  std::cerr.flush();
  std::cout.flush();
  std::_Exit(rc);
}

// The status actor at `target`, or nullopt after printing why not. The
// middleman's own remote_actor() waits for the handshake without a limit;
// asking its actor with a timeout bounds that wait.
std::optional<status_actor>
connect_status_node(const std::string& verb, caf::actor_system& sys,
                    caf::scoped_actor& self, const host_port& where,
                    const std::string& target) {
  caf::strong_actor_ptr remote;
  std::set<std::string> ifs;
  bool timed_out = false;
  self
    ->request(node_middleman(sys), handshake_timeout,
              caf::connect_atom::value, where.host, where.port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr,
          std::set<std::string>& xs) {
        remote = std::move(ptr);
        ifs = std::move(xs);
      },
      [&](caf::error& err) { timed_out = err == caf::sec::request_timeout; });
  if (timed_out) {
    std::cerr << "outboxctl " << verb << ": " << target
              << " accepted the connection but did not answer as a status "
                 "node within "
              << handshake_timeout.count()
              << " s (is it outboxd's status port? use --connect HOST:PORT"
              << (verb == "status" ? ", or --db to read the database" : "")
              << ")\n";
    exit_now(exit_failure);
  }
  if (!remote || !sys.assignable<status_actor>(ifs)) {
    std::cerr << "outboxctl " << verb << ": no status node reachable at "
              << target << " (is outboxd running? use --connect HOST:PORT"
              << (verb == "status" ? ", or --db to read the database" : "")
              << ")\n";
    return std::nullopt;
  }
  return caf::actor_cast<status_actor>(std::move(remote));
}

using ask_fn = std::function<int(caf::actor_system&, caf::scoped_actor&,
                                 const status_actor&, const std::string&)>;

// Connects to the status node of `t` and runs `ask` with it; the exit
// code (`ask`'s once connected).
int with_status_node(const std::string& verb, caf::actor_system_config& cfg,
                     const cluster_target& t, const ask_fn& ask) {
  auto where = parse_host_port(t.connect.empty()
                                 ? std::to_string(default_status_port)
                                 : t.connect,
                               "127.0.0.1");
  if (!where) {
    std::cerr << "outboxctl " << verb << ": --connect: "
              << context_of(where.error()) << "\n";
    return exit_usage;
  }
  if (int rc = use_tls_flags(verb, cfg, t.tls); rc != 0)
    return rc;
  caf::actor_system sys{cfg};
  auto target = where->host + ":" + std::to_string(where->port);
  caf::scoped_actor self{sys};
  auto status = connect_status_node(verb, sys, self, *where, target);
  if (!status)
    return exit_failure;
  return ask(sys, self, *status, target);
}

} // namespace

void print_status(const cluster_status& s, bool json, bool with_nodes) {
  if (json)
    std::cout << status_json(s, with_nodes) << "\n";
  else
    std::cout << status_table(s, with_nodes);
}

int status_from_cluster(caf::actor_system_config& cfg,
                        const cluster_target& t, bool json) {
  return with_status_node(
    "status", cfg, t,
    [json](caf::actor_system& sys, caf::scoped_actor& self,
           const status_actor& status, const std::string& target) {
      int rc = exit_failure;
      self->request(status, status_timeout, status_atom::value)
        .receive(
          [&](const cluster_status& s) {
            print_status(s, json, true);
            rc = 0;
          },
          [&](caf::error& err) {
            std::cerr << "outboxctl status: the status node at " << target
                      << " did not answer within " << status_timeout.count()
                      << " s (" << sys.render(err) << ")\n";
            exit_now(rc); // do not wait for a node that does not answer
          });
      return rc;
    });
}

int drain_node(caf::actor_system_config& cfg, const cluster_target& t,
               const std::string& node) {
  return with_status_node(
    "drain", cfg, t,
    [&node](caf::actor_system& sys, caf::scoped_actor& self,
            const status_actor& status, const std::string& target) {
      int rc = exit_failure;
      self->request(status, drain_timeout, drain_atom::value, node)
        .receive(
          [&](const std::string&) {
            std::cout << "node " << node
                      << " is draining: it stops claiming, finishes what it "
                         "has in flight, hands its leaderships on and exits "
                         "(see outboxctl status)\n";
            rc = 0;
          },
          [&](caf::error& err) {
            // Our own refusals carry their reason; anything else is the
            // connection's, rendered by CAF.
            auto why = context_of(err);
            std::cerr << "outboxctl drain: " << node << ": "
                      << (why.empty() ? "the status node at " + target
                                          + " did not answer ("
                                          + sys.render(err) + ")"
                                      : why)
                      << "\n";
          });
      exit_now(rc); // a drained status node goes away with our connection
      return rc;
    });
}

} // namespace outbox
