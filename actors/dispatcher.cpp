#include "actors/dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "core/amqp/wire.hpp"
#include "core/base/logging.hpp"
#include "core/domain/trace_context.hpp"

namespace outbox {

namespace {

// How soon a dispatcher at its in-flight limit looks again. Results free
// room continuously; the broker still holds up to the limit for the
// workers meanwhile, so a short wait costs them nothing as long as the
// limit is more than 100 ms of their work, and a pass per 100 ms (one
// count and an empty claim when nothing freed) is no spin. It is also the
// floor next_delay puts under any `due`.
constexpr std::chrono::milliseconds saturated_recheck{100};

// How often a dispatcher looks how many results wait unread in its queue's
// results queue (a passive declare: one round trip), and how long their
// wait may be, at the workers' measured pace, before the queue's result
// handling counts as behind.
constexpr std::chrono::seconds results_look_interval{1};
constexpr double results_behind_after_seconds = 5;

// How soon a dispatcher whose broker blocks publishers looks again: it
// reads connection.unblocked only when it services the connection.
constexpr std::chrono::milliseconds broker_recheck{250};

// How soon a dispatcher of a queue an operator paused looks again (each
// look is the claim, which reads the pause): a resume takes effect within
// this, on every node.
constexpr std::chrono::milliseconds pause_recheck{1000};

class dispatcher_role : public pass_role {
public:
  dispatcher_role(std::shared_ptr<delivery_store> store,
                  std::shared_ptr<job_publisher> publisher, std::string queue,
                  dispatch_limits limits, std::shared_ptr<handoff_box> box)
    : store_(std::move(store)), publisher_(std::move(publisher)),
      queue_(std::move(queue)), limits_(limits), box_(std::move(box)),
      window_(window_for(limits)) {
  }

  pass_outcome pass() override {
    pass_outcome out;
    // Claim nothing while the broker is unreachable: claimed deliveries
    // would only wait for their timeout. Nor take any handed over: they
    // go back to pending for a pass that can publish them.
    if (auto err = publisher_->ready()) {
      if (box_) {
        box_->set_accepting(false);
        give_back(box_->take());
      }
      out.error = std::move(err);
      return out;
    }
    if (held_by_broker(out))
      return out;
    look_at_results(out);
    if (box_ && paused_) {
      // Handed before the router saw the pause: pending again, for a
      // claim after the resume (never sent, so no timeout runs on them).
      box_->set_accepting(true);
      give_back(box_->take());
    }
    else if (box_) {
      box_->set_accepting(true);
      // A batch at a time, as a claim takes: the rest in a pass at once.
      auto handed = box_->take(static_cast<size_t>(limits_.batch_size));
      if (auto err = publish_handed(std::move(handed), out)) {
        box_->set_accepting(false); // nothing more until a pass succeeds
        out.error = std::move(err);
        return out;
      }
    }
    claim_request request{queue_, limits_.batch_size,
                          static_cast<int32_t>(window_.limit()), cursor_};
    request.cohort_start_us = window_.cohort_start_us();
    auto claimed = store_->claim_batch(request);
    // A failed claim learnt nothing: the next one starts from the beginning.
    cursor_ = claimed ? claimed->resume : claim_cursor{};
    if (!claimed) {
      if (box_)
        box_->set_accepting(false);
      out.error = claimed.error();
      return out;
    }
    auto& jobs = claimed->jobs;
    if (claimed->window)
      window_.observe(*claimed->window, static_cast<int64_t>(jobs.size()));
    out.gauges["in_flight_window"] = window_.limit();
    out.gauges["completion_rate"]
      = static_cast<int64_t>(window_.completion_rate());
    out.counters["expired"] = claimed->expired;
    for (auto& t : claimed->transitions)
      out.events.push_back(transition_event(t));
    if (claimed->quarantined > 0)
      out.counters["quarantined"] = claimed->quarantined;
    if (follow_pause(*claimed, out))
      return out;
    // More is waiting: the rest of what was handed, or a full claim.
    out.more = out.more
               || static_cast<int64_t>(jobs.size()) + claimed->expired
                      + claimed->quarantined
                    >= limits_.batch_size;
    if (box_)
      give_credit(*claimed, out);
    if (!jobs.empty())
      out.error = publish(jobs, out);
    if (box_ && out.error)
      box_->set_accepting(false);
    if (!out.more && claimed->next_ready_seconds)
      out.due = std::chrono::milliseconds{
        static_cast<int64_t>(*claimed->next_ready_seconds * 1000)};
    if (!out.more && claimed->at_limit)
      wait_for_room(out);
    return out;
  }

  /// As the dispatcher exits: nothing more is handed to it, and what it
  /// holds goes back to pending rather than waiting for its timeout.
  void close() {
    if (!box_)
      return;
    box_->close();
    give_back(box_->take());
  }

private:
  // An operator's pause of the queue (outboxctl pause), as the claim read
  // it: the claim took nothing, the router gets no credit (new deliveries
  // wait pending) and what it handed meanwhile goes back to pending. The
  // next look comes after pause_recheck, or when the pause ends by itself,
  // and no wake-up brings it forward. True while paused.
  bool follow_pause(const claim_result& claimed, pass_outcome& out) {
    out.gauges["paused"] = claimed.paused ? 1 : 0;
    if (claimed.paused && !paused_)
      logger("dispatcher")->info("event=queue_paused queue={} action=claims_held",
                                 kv(queue_));
    else if (!claimed.paused && paused_) {
      logger("dispatcher")->info("event=queue_resumed queue={}", kv(queue_));
      window_.restart(); // nothing was claimed meanwhile: measure anew
    }
    paused_ = claimed.paused;
    if (!paused_)
      return false;
    if (box_) {
      box_->set_credit(0);
      give_back(box_->take());
    }
    out.more = false;
    out.due = pause_recheck;
    if (claimed.pause_ends_in_seconds)
      out.due = std::min(pause_recheck,
                         std::chrono::milliseconds{static_cast<int64_t>(
                           *claimed.pause_ends_in_seconds * 1000) + 1});
    out.hold = true;
    return true;
  }

  // While the broker blocks publishers (a memory or disk alarm) nothing is
  // claimed or taken from the box: what would be sent waits in the table,
  // where no timeout runs, and the pass looks again soon for the broker's
  // connection.unblocked. Not a failure of the pass: no backoff, no error.
  bool held_by_broker(pass_outcome& out) {
    bool blocked = publisher_->blocked();
    out.gauges["broker_blocked"] = blocked ? 1 : 0;
    if (blocked != blocked_)
      log_blocking(blocked);
    if (!blocked && blocked_)
      window_.restart(); // nothing was claimed meanwhile: measure anew
    blocked_ = blocked;
    if (!blocked)
      return false;
    if (box_) {
      box_->set_accepting(false);
      give_back(box_->take());
    }
    out.due = broker_recheck;
    out.hold = true;
    return true;
  }

  // Results that wait unread mean the queue's result handling falls
  // behind (or nobody reads them): shown as gauges, and a line when it
  // starts and ends. Their wait is estimated from the workers' measured
  // pace; results wait also while none finish.
  void look_at_results(pass_outcome& out) {
    auto now = std::chrono::steady_clock::now();
    if (now - results_looked_at_ < results_look_interval)
      return;
    results_looked_at_ = now;
    auto waiting = publisher_->results_waiting();
    if (!waiting)
      return; // the claim finds out about the connection
    auto rate = window_.completion_rate();
    // Before the first measure of the pace nothing can be said.
    bool behind = *waiting > 0 && window_.measured()
                  && (rate <= 0
                      || static_cast<double>(*waiting) / rate
                           > results_behind_after_seconds);
    out.gauges["results_waiting"] = *waiting;
    out.gauges["results_behind"] = behind ? 1 : 0;
    if (behind && !results_behind_)
      logger("dispatcher")->warn("event=results_behind queue={} waiting={}",
                                 kv(queue_), *waiting);
    else if (!behind && results_behind_)
      logger("dispatcher")->info("event=results_caught_up queue={}", kv(queue_));
    results_behind_ = behind;
  }

  void log_blocking(bool blocked) const {
    if (blocked)
      logger("dispatcher")->warn("event=broker_blocked queue={} "
                                 "action=claims_held", kv(queue_));
    else
      logger("dispatcher")->info("event=broker_unblocked queue={}", kv(queue_));
  }

  // The queue's window starts at a batch (or the ceiling, if lower) and
  // follows what the workers finish (core/domain/in_flight_window.hpp).
  static in_flight_window window_for(const dispatch_limits& limits) {
    window_settings s;
    s.ceiling = limits.max_in_flight;
    s.start = limits.batch_size;
    return in_flight_window{s};
  }

  // The router's credit after a claim (core/domain/handoff.hpp): what the
  // claim's count of the queue's dispatched deliveries left. None while
  // deliveries wait (the claim took all it could or hit the limit, or
  // handed ones are still in the box): new ones are inserted pending
  // behind them, so that they do not go out first. A claim without a
  // count gives none either.
  void give_credit(const claim_result& claimed, const pass_outcome& out) {
    auto backlog = out.more || claimed.at_limit;
    box_->set_credit(backlog ? 0
                             : claimed.room.value_or(0)
                                 - static_cast<int64_t>(claimed.jobs.size()));
  }

  // Publishes what the router handed over (core/domain/handoff.hpp). When
  // their job messages cannot be read (a data error, say), they go back to
  // pending: the claim then sends them, or quarantines the one that fails.
  // So do those the read left out for their time to live: the claim
  // expires them.
  caf::error publish_handed(std::vector<handed_delivery> handed,
                            pass_outcome& out) {
    if (handed.empty())
      return caf::none;
    if (box_->waiting() > 0)
      out.more = true; // the rest of what was handed: a pass at once
    auto fetched = store_->fetch_handed(handed);
    if (!fetched) {
      give_back(std::move(handed));
      return fetched.error();
    }
    if (fetched->jobs.size() < handed.size())
      give_back(left_out(handed, fetched->jobs));
    out.counters["handed"] += static_cast<int64_t>(fetched->jobs.size());
    if (fetched->jobs.empty())
      return caf::none;
    return publish(fetched->jobs, out);
  }

  static std::vector<handed_delivery>
  left_out(const std::vector<handed_delivery>& handed,
           const std::vector<job_to_send>& jobs) {
    std::set<int64_t> read;
    for (auto& j : jobs)
      read.insert(j.delivery_id);
    std::vector<handed_delivery> out;
    for (auto& h : handed)
      if (read.count(h.id) == 0)
        out.push_back(h);
    return out;
  }

  // Handed deliveries this dispatcher will not publish: pending again, or,
  // should that fail too, left to their delivery timeout.
  void give_back(std::vector<handed_delivery> handed) {
    if (handed.empty())
      return;
    if (!store_->release_handed(handed))
      logger("dispatcher")->warn("event=handoff_release_failed queue={} deliveries={} "
                                 "action=wait_for_timeout",
                                 kv(queue_), handed.size());
  }

  // At the limit the queue's work waits in the table: look again soon,
  // neither at once (nothing freed yet) nor after the idle sleep (results
  // free room all the time), and let no wake-up bring that forward.
  static void wait_for_room(pass_outcome& out) {
    out.due = out.due ? std::min(*out.due, saturated_recheck) : saturated_recheck;
    out.hold = true;
  }

  caf::error publish(const std::vector<job_to_send>& jobs, pass_outcome& out) {
    std::vector<outgoing_message> messages;
    messages.reserve(jobs.size());
    for (auto& j : jobs)
      messages.push_back(job_message(j));
    // The claim just returned: its event ages plus the time from here to
    // the confirms make each job's commit→published latency.
    auto sent = std::chrono::steady_clock::now();
    auto statuses = publisher_->publish(messages);
    auto confirm = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent)
                     .count();
    out.latencies["confirm"].push_back(confirm);
    std::vector<send_result> failures;
    std::vector<handed_delivery> not_sent;
    for (size_t i = 0; i < jobs.size(); ++i) {
      auto status = i < statuses.size() ? statuses[i] : publish_status::lost;
      if (status == publish_status::confirmed) {
        ++out.rows;
        out.events.push_back(published_event(jobs[i]));
        out.latencies["commit_to_published"].push_back(jobs[i].event_age_seconds
                                                       + confirm);
        continue;
      }
      ++out.counters[to_string(status)];
      if (status == publish_status::blocked)
        not_sent.push_back({jobs[i].delivery_id, jobs[i].dispatch_id});
      else
        failures.push_back(failed_send(jobs[i], status, out));
    }
    // Held by a broker that blocked publishers: no fault of the delivery,
    // so pending again with no attempt counted, and not finished work for
    // the window. (An `unsent` one went once more over a new connection
    // already, amqp_session::publish: if that failed too, it takes the
    // retry path, so that a message that can never be written does not
    // come back for ever.)
    window_.released(static_cast<int64_t>(not_sent.size()));
    give_back(std::move(not_sent));
    if (failures.empty())
      return caf::none;
    // The broker did not take these: a retryable failure of each alone.
    // If this fails too, they stay dispatched and the sweeper retries them
    // at their timeout: later, but nothing is lost.
    auto applied = store_->apply_results(failures);
    if (!applied)
      return applied.error();
    std::map<int64_t, std::string> trace_ids;
    for (auto& j : jobs)
      trace_ids[j.delivery_id] = trace_id_of(j.headers);
    for (auto& t : applied->transitions)
      out.events.push_back(transition_event(t));
    add_trace_ids(out.events, trace_ids);
    return caf::none;
  }

  send_result failed_send(const job_to_send& j, publish_status status,
                          pass_outcome& out) {
    send_result r;
    r.delivery_id = j.delivery_id;
    r.dispatch_id = j.dispatch_id;
    r.job = j.job;
    r.result = outcome::retry;
    r.reason = std::string{"publish "} + to_string(status);
    out.events.push_back(publish_failed_event(j, r.reason));
    return r;
  }

  std::shared_ptr<delivery_store> store_;
  std::shared_ptr<job_publisher> publisher_;
  std::string queue_;
  dispatch_limits limits_;
  std::shared_ptr<handoff_box> box_; ///< null: nothing is handed over
  /// Where the next claim of the queue starts (see claim_cursor): the
  /// dispatcher's own, since it is the one that claims the queue in runs.
  claim_cursor cursor_;
  /// The queue's in-flight limit, as its workers' pace allows.
  in_flight_window window_;
  bool blocked_ = false; ///< the broker blocked publishers at the last look
  bool paused_ = false;  ///< the queue was paused at the last claim
  std::chrono::steady_clock::time_point results_looked_at_{};
  bool results_behind_ = false; ///< at the last look
};

} // namespace

pass_actor::behavior_type
dispatcher(pass_actor::stateful_pointer<pass_state> self,
           std::shared_ptr<delivery_store> store,
           std::shared_ptr<job_publisher> publisher, std::string queue,
           dispatch_limits limits, pass_settings settings,
           node_agent_actor agent, std::shared_ptr<handoff_box> box) {
  auto role = std::make_shared<dispatcher_role>(std::move(store),
                                                std::move(publisher), queue,
                                                limits, std::move(box));
  self->attach_functor([role] { role->close(); });
  return pass_behavior<pass_actor>(self, role, identity("dispatcher", queue),
                                   settings, std::move(agent));
}

} // namespace outbox
