// ordering_worker: the worker of faults.ordering, on the C++ worker library.
// Each job's payload is {"key": K, "seq": N}. A run fails retryably at
// random (--fail-percent), or sleeps --sleep-ms (past the delivery
// timeout) before it completes (--sleep-percent), else completes after
// --job-ms. Every run appends one line to --journal:
//   key seq delivery_id dispatch_id start_us end_us outcome
// (wall-clock microseconds, the clock PostgreSQL's clock_timestamp() reads
// on this host), so that the test can join what workers ran with what the
// relay applied, by dispatch id. The journal is a test file, not a log.
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include <rapidjson/document.h>

#include "core/config/config.hpp"
#include "cli/cli_config.hpp"
#include "worker/worker.hpp"

namespace {

outbox::worker* running = nullptr;

extern "C" void on_signal(int) {
  if (running != nullptr)
    running->stop(); // an atomic store: safe in a signal handler
}

struct ordering_worker_config : outbox::cli_config {
  std::string config_file;
  std::string queue;
  std::string job = "J";
  std::string journal;
  int64_t job_ms = 1;
  int64_t fail_percent = 10;
  int64_t sleep_percent = 2;
  int64_t sleep_ms = 3000;
  int64_t seed = 1;
  int64_t prefetch = 1;
  ordering_worker_config() {
    opt_group{options(), "global"}
      .add(config_file, "config,c", "path of the outbox JSON config")
      .add(queue, "queue", "the queue to serve")
      .add(job, "job", "the job to run (default J)")
      .add(journal, "journal", "file that gets a line per run")
      .add(job_ms, "job-ms", "milliseconds a normal run takes")
      .add(fail_percent, "fail-percent", "runs that ask for a retry")
      .add(sleep_percent, "sleep-percent", "runs that sleep --sleep-ms")
      .add(sleep_ms, "sleep-ms", "milliseconds a sleeping run takes")
      .add(seed, "seed", "seed of the random choices")
      .add(prefetch, "prefetch", "unacked jobs held at most");
  }
};

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

struct job_payload {
  std::string key;
  int64_t seq = 0;
};

job_payload read_payload(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  job_payload out;
  if (doc.IsObject() && doc.HasMember("key") && doc["key"].IsString()
      && doc.HasMember("seq") && doc["seq"].IsInt64()) {
    out.key = doc["key"].GetString();
    out.seq = doc["seq"].GetInt64();
  }
  return out; // an empty key: the test counts it as a foreign job
}

class journal_file {
public:
  explicit journal_file(const std::string& path) : out_(path, std::ios::app) {}

  void add(const outbox::job_context& ctx, const job_payload& p,
           int64_t start, const char* outcome) {
    std::lock_guard<std::mutex> guard{mtx_};
    out_ << p.key << ' ' << p.seq << ' ' << ctx.delivery_id << ' '
         << ctx.dispatch_id << ' ' << start << ' ' << now_us() << ' ' << outcome
         << std::endl; // flushed: the line survives whatever comes next
  }

private:
  std::mutex mtx_;
  std::ofstream out_;
};

} // namespace

int main(int argc, char** argv) {
  ordering_worker_config opts;
  if (auto err = opts.parse_args(argc, argv); !err.empty()) {
    std::cerr << "ordering_worker: " << err << "\n";
    return 2;
  }
  auto cfg = outbox::load_config(opts.config_file);
  if (!cfg || opts.queue.empty() || opts.journal.empty()) {
    std::cerr << "ordering_worker: --config, --queue and --journal are required\n";
    return 2;
  }
  journal_file journal{opts.journal};
  std::mt19937_64 rng{static_cast<uint64_t>(opts.seed)};
  std::uniform_int_distribution<int> percent{0, 99};
  outbox::worker w{outbox::worker_options{cfg->amqp_url, opts.queue,
                                          static_cast<uint16_t>(opts.prefetch),
                                          cfg->queue_type_of(opts.queue)}};
  w.handle(opts.job, [&](const outbox::job_context& ctx) {
    auto start = now_us();
    auto p = read_payload(ctx.payload_json);
    auto draw = percent(rng);
    if (draw < opts.fail_percent) {
      journal.add(ctx, p, start, "retry");
      throw outbox::retryable_error("random failure of the ordering test");
    }
    bool slow = draw < opts.fail_percent + opts.sleep_percent;
    std::this_thread::sleep_for(
      std::chrono::milliseconds{slow ? opts.sleep_ms : opts.job_ms});
    journal.add(ctx, p, start, slow ? "late" : "completed");
  });
  running = &w;
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  w.run();
  return 0;
}
