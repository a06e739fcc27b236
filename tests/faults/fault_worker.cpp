// fault_worker: the worker of the fault tests, on the C++ worker library.
// It completes every job of one queue after --job-ms milliseconds and
// appends the delivery id of each run to --journal, so that a test can
// count how often a job ran (a resend) and which deliveries a worker
// completed (none of them may end failed). SIGUSR1 switches it to
// --slow-job-ms: a worker that slows down mid-run, as after a deploy.
#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <thread>

#include "core/base/errors.hpp"
#include "core/config/config.hpp"
#include "cli/cli_config.hpp"
#include "worker/worker.hpp"

namespace {

outbox::worker* running = nullptr;
std::atomic<bool> slow{false};

extern "C" void on_signal(int) {
  if (running != nullptr)
    running->stop(); // an atomic store: safe in a signal handler
}

extern "C" void on_slow_down(int) {
  slow = true; // lock-free atomic store: safe in a signal handler
}

struct fault_worker_config : outbox::cli_config {
  std::string config_file;
  std::string queue;
  std::string job = "J";
  std::string journal;
  int64_t job_ms = 0;
  int64_t slow_job_ms = 0;
  int64_t prefetch = 10;
  fault_worker_config() {
    opt_group{options(), "global"}
      .add(config_file, "config,c", "path of the outbox JSON config")
      .add(queue, "queue", "the queue to serve")
      .add(job, "job", "the job to complete (default J)")
      .add(journal, "journal", "file that gets a line per run")
      .add(job_ms, "job-ms", "milliseconds a job takes")
      .add(slow_job_ms, "slow-job-ms", "milliseconds a job takes after SIGUSR1")
      .add(prefetch, "prefetch", "unacked jobs held at most");
  }
};

} // namespace

int main(int argc, char** argv) {
  fault_worker_config opts;
  if (auto err = opts.parse_args(argc, argv); !err.empty()) {
    std::cerr << "fault_worker: " << err << "\n";
    return 2;
  }
  auto cfg = outbox::load_config(opts.config_file);
  if (!cfg || opts.queue.empty() || opts.journal.empty()) {
    std::cerr << "fault_worker: --config, --queue and --journal are required\n";
    return 2;
  }
  std::ofstream journal{opts.journal, std::ios::app};
  outbox::worker w{outbox::worker_options{cfg->amqp_url, opts.queue,
                                          static_cast<uint16_t>(opts.prefetch),
                                          cfg->queue_type_of(opts.queue)}};
  w.handle(opts.job, [&](const outbox::job_context& ctx) {
    std::this_thread::sleep_for(
      std::chrono::milliseconds{slow ? opts.slow_job_ms : opts.job_ms});
    journal << ctx.delivery_id << std::endl; // flushed: a kill -9 keeps it
  });
  running = &w;
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGUSR1, on_slow_down);
  w.run();
  return 0;
}
