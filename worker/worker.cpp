#include "worker/worker.hpp"

#include <algorithm>
#include <thread>

#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/base/text.hpp"
#include "core/base/timestamp.hpp"
#include "core/domain/failure_streak.hpp"
#include "core/domain/trace_context.hpp"
#include "worker/job_screen.hpp"

namespace outbox {

namespace {

constexpr auto confirm_timeout = std::chrono::seconds{10};
constexpr auto poll_interval = std::chrono::milliseconds{200};
// How often the connections are serviced while a handler runs: far more
// often than any heartbeat interval needs, and a poll costs little.
constexpr auto service_interval = std::chrono::milliseconds{100};

} // namespace

worker::worker(worker_options opts)
  : opts_(std::move(opts)),
    consumer_({opts_.amqp_url, "outbox worker " + opts_.queue, {opts_.queue},
               opts_.queue, opts_.prefetch, opts_.type}),
    // The relay declares both queues too; declaring here lets a worker
    // start first.
    publisher_({opts_.amqp_url, "outbox worker results " + opts_.queue,
                {results_queue(opts_.queue)}, {}, 0, opts_.type}) {
}

void worker::handle(const std::string& job, job_handler handler) {
  inbox_handlers_.erase(job);
  handlers_[job] = std::move(handler);
}

void worker::handle(const std::string& job, inbox_handler handler) {
  handlers_.erase(job);
  inbox_handlers_[job] = std::move(handler);
}

void worker::use_inbox(inbox ib) {
  inbox_.emplace(std::move(ib));
}

caf::error worker::check_routes(const config& cfg) const {
  std::vector<std::string> missing;
  if (!inbox_handlers_.empty() && !inbox_)
    return make_error(errc::config_invalid,
                      "queue \"" + opts_.queue
                        + "\": handlers run in an inbox but the worker has none");
  for (auto& r : cfg.routes)
    if (r.queue == opts_.queue && handlers_.count(r.job) == 0
        && inbox_handlers_.count(r.job) == 0
        && std::find(missing.begin(), missing.end(), r.job) == missing.end())
      missing.push_back(r.job);
  if (missing.empty())
    return caf::none;
  return make_error(errc::config_invalid,
                    "queue \"" + opts_.queue
                      + "\": no handler for the routed job(s) "
                      + join(missing, ", "));
}

caf::error worker::connect() {
  consumer_.reset();
  publisher_.reset();
  backlog_.clear(); // they went back to the queue with the old channel
  // The results connection first: a consumer must not take jobs whose
  // results could not go anywhere.
  if (auto err = publisher_.ready())
    return err;
  return consumer_.ready();
}

void worker::run(int64_t max_jobs) {
  auto log = logger("worker");
  failure_streak unreachable;
  int64_t handled = 0;
  while (!stop_ && (max_jobs <= 0 || handled < max_jobs)) {
    if (inbox_down_ && !inbox_back())
      continue;
    if (!consumer_.is_open() || !publisher_.is_open()) {
      if (auto err = connect()) {
        // A refused declaration (a queue of another type) is no outage:
        // it says so, and waits as long, until someone fixes the queue.
        if (unreachable.failed())
          log->warn("event={} queue={} attempts={} since={} error={}",
                    err == errc::broker_error ? "broker_refused" : "broker_unreachable",
                    kv(opts_.queue), unreachable.count(),
                    format_timestamp(unreachable.since()), kv(render(err)));
        std::this_thread::sleep_for(unreachable.backoff(std::chrono::milliseconds{5000}));
        continue;
      }
      unreachable.succeeded();
      log->info("event=consuming queue={} prefetch={}", kv(opts_.queue),
                opts_.prefetch);
    }
    auto first = next_job(poll_interval);
    if (!first)
      continue; // reconnect; unacked jobs went back to the queue
    if (!*first) {
      // Idle: the consumer's wait sent its heartbeats, the results
      // connection gets its own here (or is found dropped and renewed
      // before a result needs it).
      publisher_.keep_alive();
      seen_empty_ = true;
      prune_inbox();
      continue;
    }
    // Take what else is already here (up to the prefetch), so that the
    // results go out as one pipelined, confirmed batch.
    std::vector<incoming_message> batch{std::move(**first)};
    auto limit = max_jobs > 0 ? std::min<int64_t>(opts_.prefetch, max_jobs - handled)
                              : int64_t{opts_.prefetch};
    while (static_cast<int64_t>(batch.size()) < limit) {
      auto more = next_job(std::chrono::milliseconds{0});
      if (!more || !*more)
        break;
      batch.push_back(std::move(**more));
    }
    process(batch);
    handled += static_cast<int64_t>(batch.size());
  }
}

worker::decision worker::decide(const incoming_message& m) {
  auto log = logger("worker");
  // The wire's bounded reader refuses a body too big or too deep before it
  // could crash this worker (and then every worker the broker hands it to).
  auto job = parse_job_message(m.body);
  if (!job) {
    // Settled once, never requeued: acked after its `failed` result is
    // confirmed when its delivery is known, else acked at once. Logged and
    // counted by its ids or tag only, never its body.
    ++counters_.malformed;
    auto why = context_of(job.error());
    auto ids = attribute_job_message(m.body);
    if (!ids)
      ids = attribute_by_properties(m);
    if (ids) {
      // Its delivery is known: fail it, so it does not wait for a timeout.
      ids->result = outcome::failed;
      ids->reason = why;
      log->warn("event=malformed_job outboxDeliveryId={} job={} why={} "
                "action=failed",
                ids->delivery_id, kv(ids->job), kv(why));
      return {decision::send, std::move(*ids)};
    }
    log->warn("event=malformed_job deliveryTag={} why={} action=acked",
              m.delivery_tag, kv(why));
    return {decision::ack, {}};
  }
  job->headers = m.headers;
  if (job->expires_at && clock_type::now() > *job->expires_at)
    return refuse_expired(*job);
  // Once the inbox was found unreachable, the rest of the batch goes back
  // to the queue with it, unrun.
  if (inbox_down_)
    return {decision::requeue, {}};
  send_result result;
  if (auto ih = inbox_handlers_.find(job->job); ih != inbox_handlers_.end()) {
    auto r = run_in_inbox(*job, ih->second);
    if (!r)
      return {decision::requeue, {}};
    result = std::move(*r);
  } else {
    result = run_job(*job, handlers_);
  }
  if (job->direct) {
    // Published without the outbox: there is no delivery to report to.
    ++counters_.direct;
    log->info("event=direct_job_done eventType={} job={} outcome={}",
              kv(job->event_type), kv(job->job), to_string(result.result));
    return {decision::ack, {}};
  }
  ++(result.result == outcome::completed ? counters_.completed
     : result.result == outcome::retry   ? counters_.retried
                                         : counters_.failed);
  auto trace_id = trace_id_of(job->headers);
  log->info("event=job_done outboxEventId={} outboxDeliveryId={} eventType={} "
            "job={} lastAttempt={} outcome={}{}{}",
            job->event_id, job->delivery_id, kv(job->event_type), kv(job->job),
            job->last_attempt, to_string(result.result),
            trace_id.empty() ? "" : " traceId=", trace_id);
  return {decision::send, std::move(result)};
}

// A job of an ordered route past its outboxExpiresAt: its send timed out,
// and the relay lets the key's next event go once this send is answered
// (or one more timeout passed). Running it now could overlap that next
// event, so it is answered `retry` unrun: the relay retries the delivery
// in the key's order if it has not timed it out yet, and otherwise takes
// the answer as the end of the late send.
worker::decision worker::refuse_expired(const job_message_fields& job) {
  ++counters_.expired;
  logger("worker")->warn("event=job_expired outboxEventId={} outboxDeliveryId={} "
                         "job={} action=not_started",
                         job.event_id, job.delivery_id, kv(job.job));
  send_result r;
  r.delivery_id = job.delivery_id;
  r.dispatch_id = job.dispatch_id;
  r.job = job.job;
  r.result = outcome::retry;
  r.reason = "the job message expired before a worker started it";
  return {decision::send, std::move(r)};
}

caf::expected<std::optional<incoming_message>>
worker::next_job(std::chrono::milliseconds wait) {
  if (!backlog_.empty()) {
    auto m = std::move(backlog_.front());
    backlog_.pop_front();
    return std::optional<incoming_message>{std::move(m)};
  }
  return consumer_.next_message(wait);
}

void worker::keep_alive() {
  // A delivery read here is kept for the next batch; its tag is newer than
  // any of the running batch, so that batch's cumulative ack leaves it be.
  if (consumer_.is_open()) {
    auto m = consumer_.next_message(std::chrono::milliseconds{0});
    if (m && *m)
      backlog_.push_back(std::move(**m));
  }
  if (publisher_.is_open())
    publisher_.keep_alive();
}

void worker::process(const std::vector<incoming_message>& batch) {
  std::vector<decision> decisions;
  std::vector<send_result> results;
  // The handlers run on the helper thread, which touches no connection;
  // this thread keeps both alive meanwhile.
  handler_thread_.run(
    [&] {
      for (auto& m : batch)
        decisions.push_back(decide(m));
    },
    [this] { keep_alive(); }, service_interval);
  for (auto& d : decisions)
    if (d.action == decision::send)
      results.push_back(d.result);
  // The batch's results travel together: one message for the broker to
  // store, confirm, deliver and have acked, instead of one per job.
  auto out = result_batch_messages(opts_.queue, results);
  // Results that never left because the results connection had been
  // dropped go again over a new one: the jobs are not run twice for it.
  auto statuses = out.empty() ? std::vector<publish_status>{}
                              : publisher_.publish(out, confirm_timeout);
  // One cumulative ack covers every job of the batch up to the last one
  // whose result is confirmed: the channel holds no older unacked job
  // (each batch ends acked, or the connection is dropped).
  std::optional<uint64_t> ack_through;
  auto ack_done = [&] {
    if (ack_through)
      consumer_.ack(*ack_through, /*multiple*/ true);
  };
  size_t next = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto& d = decisions[i];
    if (d.action == decision::ack) {
      ack_through = batch[i].delivery_tag;
      continue;
    }
    if (d.action == decision::requeue) {
      // This and the rest go back to the queue with the connection: the
      // worker takes nothing until the inbox answers again.
      counters_.requeued += static_cast<int64_t>(batch.size() - i);
      ack_done();
      consumer_.reset();
      return;
    }
    // The n-th result went in message n / max_results_per_message.
    auto message = next++ / max_results_per_message;
    auto st = message < statuses.size() ? statuses[message]
                                        : publish_status::lost;
    if (st == publish_status::confirmed) {
      ack_through = batch[i].delivery_tag;
      continue;
    }
    // Not confirmed: leave this and the rest unacked and drop the
    // connection, so the broker hands them out again; a result that did
    // arrive makes the repeat stale.
    logger("worker")->warn("event=result_not_confirmed outboxDeliveryId={} "
                           "status={}",
                           d.result.delivery_id, to_string(st));
    ack_done();
    consumer_.reset();
    publisher_.reset();
    return;
  }
  ack_done();
}

} // namespace outbox
