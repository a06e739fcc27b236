// inbox_worker: the worker of integration.inbox, on the C++ worker library
// with its inbox. Each job adds 1 to a counter row through the inbox's
// transaction, so the counter says how often a job's effects happened.
// Faults on request, at the moments that matter: SIGKILL of itself or a
// drop of its broker connections right after the Nth commit (before the
// result and the ack), a handler slower than the delivery timeout, and a
// handler that fails each delivery's first run after its write.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <set>
#include <thread>

#include "cli/cli_config.hpp"
#include "core/amqp/amqp_url.hpp"
#include "core/base/errors.hpp"
#include "core/config/config.hpp"
#include "worker/worker.hpp"

namespace {

outbox::worker* running = nullptr;

extern "C" void on_signal(int) {
  if (running != nullptr)
    running->stop(); // an atomic store: safe in a signal handler
}

struct inbox_worker_config : outbox::cli_config {
  std::string config_file, queue, job = "J", inbox_url_file, inbox_table,
    counter_table;
  int64_t kill_after_commit = 0, drop_after_commit = 0, job_ms = 0;
  bool fail_first_run = false;
  inbox_worker_config() {
    opt_group{options(), "global"}
      .add(config_file, "config,c", "path of the outbox JSON config")
      .add(queue, "queue", "the queue to serve")
      .add(job, "job", "the job (default J)")
      .add(inbox_url_file, "inbox-url-file", "file holding the inbox's database URL")
      .add(inbox_table, "inbox-table", "the inbox's table")
      .add(counter_table, "counter-table", "table whose row id=1 counts effects")
      .add(kill_after_commit, "kill-after-commit", "SIGKILL after the Nth commit")
      .add(drop_after_commit, "drop-after-commit",
           "drop the broker connections after the Nth commit")
      .add(job_ms, "job-ms", "milliseconds a job takes")
      .add(fail_first_run, "fail-first-run",
           "each delivery's first run writes, then asks for a retry");
  }
};

std::string read_file(const std::string& path) {
  std::ifstream in{path};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

// Shuts down every TCP connection of this process to `port`: the broker
// sees them go as in a network failure and puts the unacked jobs back.
void drop_connections_to(uint16_t port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr)
    return;
  while (auto* e = readdir(dir)) {
    int fd = atoi(e->d_name);
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    if (fd <= 2 || getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0)
      continue;
    uint16_t p = peer.ss_family == AF_INET
                   ? ntohs(reinterpret_cast<sockaddr_in*>(&peer)->sin_port)
                   : ntohs(reinterpret_cast<sockaddr_in6*>(&peer)->sin6_port);
    if (p == port)
      shutdown(fd, SHUT_RDWR);
  }
  closedir(dir);
}

} // namespace

int main(int argc, char** argv) {
  inbox_worker_config opts;
  if (auto err = opts.parse_args(argc, argv); !err.empty()) {
    std::cerr << "inbox_worker: " << err << "\n";
    return 2;
  }
  auto cfg = outbox::load_config(opts.config_file);
  if (!cfg || opts.queue.empty() || opts.inbox_url_file.empty()
      || opts.inbox_table.empty() || opts.counter_table.empty()) {
    std::cerr << "inbox_worker: --config, --queue, --inbox-url-file, "
                 "--inbox-table and --counter-table are required\n";
    return 2;
  }
  auto broker = outbox::parse_amqp_url(cfg->amqp_url);
  if (!broker) {
    std::cerr << "inbox_worker: the config's broker URL is not one\n";
    return 2;
  }
  outbox::inbox_options io;
  io.database_url = read_file(opts.inbox_url_file);
  io.table = opts.inbox_table;
  auto ib = outbox::inbox::make(io, outbox::inbox_retention_floor(*cfg, opts.queue));
  if (!ib) {
    std::cerr << "inbox_worker: " << outbox::render(ib.error()) << "\n";
    return 2;
  }
  if (auto err = ib->migrate()) {
    std::cerr << "inbox_worker: " << outbox::render(err) << "\n";
    return 1;
  }
  std::atomic<int64_t> commits{0};
  outbox::worker w{outbox::worker_options{cfg->amqp_url, opts.queue, 10,
                                          cfg->queue_type_of(opts.queue)}};
  w.after_commit([&, port = static_cast<uint16_t>(broker->port)](int64_t) {
    auto n = ++commits;
    if (n == opts.kill_after_commit)
      ::kill(::getpid(), SIGKILL);
    if (n == opts.drop_after_commit)
      drop_connections_to(port);
  });
  w.use_inbox(std::move(*ib));
  std::set<int64_t> failed_once;
  auto bump = "UPDATE " + opts.counter_table + " SET n = n + 1 WHERE id = 1";
  w.handle(opts.job, [&](const outbox::job_context& ctx, outbox::pg_connection& tx) {
    if (!tx.exec("bump", bump))
      throw outbox::retryable_error("the counter could not be written");
    std::this_thread::sleep_for(std::chrono::milliseconds{opts.job_ms});
    if (opts.fail_first_run && failed_once.insert(ctx.delivery_id).second)
      throw outbox::retryable_error("first run: try again");
  });
  if (auto err = w.check_routes(*cfg)) {
    std::cerr << "inbox_worker: " << outbox::render(err) << "\n";
    return 2;
  }
  running = &w;
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  w.run();
  auto& c = w.counters();
  std::cerr << "inbox_worker: event=stopped completed=" << c.completed
            << " repeats=" << c.repeats << " requeued=" << c.requeued
            << " pruned=" << c.pruned << std::endl;
  return 0;
}
