// The worker's side of the inbox (worker/inbox.hpp): running a job in its
// transaction, waiting for the inbox's database after an outage, pruning.
#include "worker/worker.hpp"

#include <thread>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/base/text.hpp"
#include "core/amqp/wire.hpp"
#include "core/domain/trace_context.hpp"

namespace outbox {

std::optional<send_result> worker::run_in_inbox(const job_message_fields& job,
                                                const inbox_handler& handler) {
  auto log = logger("worker");
  // A direct job has no delivery, so no identity to record: its handler
  // gets a transaction, and runs as often as the job arrives.
  // Delivery ids repeat across the databases of one cluster: a job that
  // names its database is recorded under the inbox's source and that name.
  auto db = job.headers.find(database_header);
  auto source = db == job.headers.end() ? std::string{}
                                        : inbox_->source_of(db->second);
  auto started = job.direct
                   ? inbox_->begin_unrecorded()
                   : inbox_->begin(job.delivery_id, opts_.queue, job.job, source);
  if (started == inbox::start::unavailable) {
    inbox_down_ = true;
    log->warn("event=inbox_unavailable queue={} outboxDeliveryId={} action=requeued",
              kv(opts_.queue), job.delivery_id);
    return std::nullopt;
  }
  if (started == inbox::start::repeat) {
    // Its effects are committed: say so again, so that a result lost
    // before (a worker killed before its ack) still reaches the relay.
    ++counters_.repeats;
    log->info("event=job_repeat outboxDeliveryId={} job={} action=completed",
              job.delivery_id, kv(job.job));
    handler_map done{{job.job, [](const job_context&) {}}};
    return run_job(job, done);
  }
  handler_map in_tx{{job.job, [&](const job_context& ctx) {
                       handler(ctx, inbox_->connection());
                     }}};
  auto result = run_job(job, in_tx);
  if (result.result != outcome::completed) {
    // Its writes go, and its record with them: the next attempt runs.
    inbox_->rollback();
    return result;
  }
  if (auto err = inbox_->commit()) {
    // Committed or not, nobody knows: it goes back to the queue, and the
    // next run finds its record if the commit took.
    inbox_down_ = true;
    log->warn("event=inbox_unavailable queue={} outboxDeliveryId={} "
              "action=requeued error={}",
              kv(opts_.queue), job.delivery_id, kv(render(err)));
    return std::nullopt;
  }
  if (after_commit_)
    after_commit_(job.delivery_id);
  return result;
}

bool worker::inbox_back() {
  // No jobs are taken meanwhile; the results connection is kept alive.
  for (int i = 0; i < 10 && !stop_; ++i) {
    if (inbox_->reachable()) {
      inbox_down_ = false;
      logger("worker")->info("event=inbox_back queue={}", kv(opts_.queue));
      return true;
    }
    if (publisher_.is_open())
      publisher_.keep_alive();
    std::this_thread::sleep_for(std::chrono::milliseconds{100 * (i + 1)});
  }
  return false;
}

void worker::prune_inbox() {
  if (!inbox_ || !seen_empty_)
    return;
  auto now = std::chrono::steady_clock::now();
  if (last_prune_ != std::chrono::steady_clock::time_point{}
      && now - last_prune_ < inbox_->options().prune_every)
    return;
  last_prune_ = now;
  auto removed = inbox_->prune();
  if (!removed) {
    logger("worker")->warn("event=inbox_prune_failed queue={} error={}",
                           kv(opts_.queue), kv(render(removed.error())));
    return;
  }
  counters_.pruned += *removed;
  if (*removed > 0)
    logger("worker")->info("event=inbox_pruned queue={} removed={}", kv(opts_.queue),
                           *removed);
}

} // namespace outbox
