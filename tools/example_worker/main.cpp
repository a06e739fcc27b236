// example_worker: a worker built on the C++ worker library, serving one
// queue of the demo config. What a job does is chosen by the event's
// payload field "scenario", so the demo can show every path:
//   "ok" (default)  completes
//   "flaky"         asks for a retry unless this is the last attempt
//   "busy"          always asks for a retry (ends failed, or expired when
//                   the route has a time to live)
//   "fail"          fails for good
//   "slow"          the first send takes longer than the delivery timeout
//                   (field "seconds", default 6), later sends complete
// With --inbox, SendConfirmationJob runs in the worker library's inbox
// (worker/inbox.hpp), kept in the config's database as the table
// <eventsTableName>_inbox: a confirmation is recorded once per delivery,
// however often its job arrives (the "slow" scenario sends it twice).
#include <csignal>
#include <iostream>
#include <thread>

#include <rapidjson/document.h>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/config/config.hpp"
#include "cli/cli_config.hpp"
#include "worker/worker.hpp"

namespace {

outbox::worker* running = nullptr;

extern "C" void on_signal(int) {
  if (running != nullptr)
    running->stop(); // an atomic store: safe in a signal handler
}

struct worker_config : outbox::cli_config {
  std::string config_file = "config/outbox.json";
  std::string queue;
  int64_t prefetch = 10;
  int64_t max_jobs = 0;
  bool inbox = false;
  worker_config() {
    opt_group{options(), "global"}
      .add(config_file, "config,c", "path of the outbox JSON config")
      .add(queue, "queue,q", "the queue to serve (required)")
      .add(prefetch, "prefetch", "unacked jobs held at most, 1..1000")
      .add(max_jobs, "max-jobs", "exit after this many jobs (0: never)")
      .add(inbox, "inbox", "run SendConfirmationJob in an inbox");
  }
};

// The demo's jobs: a worker refuses to start for a queue that routes jobs
// it does not know.
const char* const demo_jobs[] = {"PublishStockJob", "IndexStockJob",
                                 "SendConfirmationJob"};

void run_scenario(const outbox::job_context& ctx) {
  // Iterative, so that no payload can overflow the stack (the worker
  // library already refuses job messages nested deeper than 65 levels).
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(ctx.payload_json.c_str());
  std::string scenario = "ok";
  int seconds = 6;
  if (doc.IsObject() && doc.HasMember("scenario") && doc["scenario"].IsString())
    scenario = doc["scenario"].GetString();
  if (doc.IsObject() && doc.HasMember("seconds") && doc["seconds"].IsInt())
    seconds = doc["seconds"].GetInt();
  if (scenario == "flaky" && !ctx.last_attempt)
    throw outbox::retryable_error("the example says: try again");
  if (scenario == "busy")
    throw outbox::retryable_error("the example says: still busy");
  if (scenario == "fail")
    throw outbox::job_failed("the example says: this one fails");
  if (scenario == "slow" && !ctx.last_attempt) {
    // Slower than the delivery timeout: the relay sends it again, and this
    // send's result arrives stale.
    std::this_thread::sleep_for(std::chrono::seconds{seconds});
  }
}

} // namespace

int main(int argc, char** argv) {
  worker_config opts;
  if (auto err = opts.parse_args(argc, argv); !err.empty()) {
    std::cerr << "example_worker: " << err << "\n";
    return 2;
  }
  if (opts.answered_help("example_worker",
                         std::string{"usage: example_worker --config FILE --queue "
                                     "QUEUE [--prefetch 1..1000] [--max-jobs N] [--inbox]\n\n"
                                     "The demo worker: runs the example jobs of "
                                     "one queue.\n\noptions:\n"}
                           + opts.options_text({})))
    return 0;
  if (opts.queue.empty() || opts.prefetch < 1 || opts.prefetch > 1000
      || opts.max_jobs < 0 || !opts.remainder.empty()) {
    std::cerr << "usage: example_worker --config FILE --queue QUEUE "
                 "[--prefetch 1..1000] [--max-jobs N] [--inbox]\n";
    return 2;
  }
  auto cfg = outbox::load_config(opts.config_file);
  if (!cfg) {
    std::cerr << "example_worker: " << outbox::render(cfg.error()) << "\n";
    return 2;
  }
  outbox::worker w{outbox::worker_options{
    cfg->amqp_url, opts.queue, static_cast<uint16_t>(opts.prefetch),
    cfg->queue_type_of(opts.queue)}};
  for (auto job : demo_jobs)
    w.handle(job, run_scenario);
  if (opts.inbox) {
    outbox::inbox_options io;
    io.database_url = cfg->database_url; // the demo's: it stands for the worker's own
    io.table = cfg->names.events + "_inbox";
    auto ib = outbox::inbox::make(io, outbox::inbox_retention_floor(*cfg, opts.queue));
    if (!ib) {
      std::cerr << "example_worker: " << outbox::render(ib.error()) << "\n";
      return 2;
    }
    if (auto err = ib->migrate()) {
      std::cerr << "example_worker: " << outbox::render(err) << "\n";
      return 1;
    }
    w.use_inbox(std::move(*ib));
    w.handle("SendConfirmationJob",
             [](const outbox::job_context& ctx, outbox::pg_connection&) {
               run_scenario(ctx); // its record is the confirmation's
             });
  }
  if (auto err = w.check_routes(*cfg)) {
    std::cerr << "example_worker: " << outbox::render(err) << "\n";
    return 2;
  }
  running = &w;
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  w.run(opts.max_jobs);
  auto& c = w.counters();
  outbox::logger("worker")->info("event=stopped completed={} retried={} "
                                 "failed={} malformed={} repeats={} expired={}",
                                 c.completed, c.retried, c.failed, c.malformed,
                                 c.repeats, c.expired);
  return 0;
}
