// In-memory stand-ins for the database and broker seams (core/domain/stores.hpp),
// scripted by the test and recording every call, so the actor tests run
// without servers and deterministically.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "core/base/errors.hpp"
#include "core/domain/stores.hpp"

namespace outbox::fakes {

class routing_store : public outbox::routing_store {
public:
  std::deque<caf::expected<routing_result>> script; ///< one per call
  int calls = 0;
  /// The handoff queues each call was offered, in order.
  std::vector<std::vector<handoff_queue>> offers;

  caf::expected<routing_result>
  route_batch(int32_t, const std::vector<handoff_queue>& handoff) override {
    ++calls;
    offers.push_back(handoff);
    if (script.empty())
      return routing_result{};
    auto r = std::move(script.front());
    script.pop_front();
    return r;
  }
};

class delivery_store : public outbox::delivery_store {
public:
  std::deque<caf::expected<claim_result>> claims;
  std::deque<caf::error> apply_errors; ///< popped per apply call, none = ok
  std::vector<std::vector<send_result>> applied;
  /// Verdicts by delivery id; applied when absent.
  std::map<int64_t, result_verdict> verdicts;
  std::deque<caf::expected<sweep_result>> sweeps;
  /// What an empty claim reports as the next ready time.
  std::optional<double> next_ready;
  /// The next try the fake reports for every retry it applies.
  time_point retry_at = time_point{std::chrono::seconds{1'800'000'000}};
  int claim_calls = 0;
  std::vector<claim_request> requests; ///< every claim's, in order

  caf::expected<claim_result> claim_batch(const claim_request& request) override {
    ++claim_calls;
    requests.push_back(request);
    if (claims.empty()) {
      claim_result none;
      none.next_ready_seconds = next_ready;
      return none;
    }
    auto c = std::move(claims.front());
    claims.pop_front();
    return c;
  }

  caf::expected<apply_result>
  apply_results(const std::vector<send_result>& rs) override {
    if (!apply_errors.empty()) {
      auto err = std::move(apply_errors.front());
      apply_errors.pop_front();
      if (err)
        return err;
    }
    applied.push_back(rs);
    apply_result out;
    for (auto& r : rs) {
      auto it = verdicts.find(r.delivery_id);
      auto v = it == verdicts.end() ? result_verdict::applied : it->second;
      out.verdicts.push_back(v);
      if (v != result_verdict::applied)
        continue;
      ++(r.result == outcome::completed ? out.completed
         : r.result == outcome::retry   ? out.retried
                                        : out.failed);
      // As the real store reports it: a retry comes back with its next try.
      delivery_transition t;
      t.delivery_id = r.delivery_id;
      t.job = r.job;
      t.status = r.result == outcome::retry       ? delivery_status::pending
                 : r.result == outcome::completed ? delivery_status::completed
                                                  : delivery_status::failed;
      if (r.result == outcome::retry)
        t.next_try = retry_at;
      out.transitions.push_back(std::move(t));
    }
    return out;
  }

  std::vector<sweep_request> sweep_requests; ///< every sweep's, in order

  caf::expected<sweep_result> sweep(const sweep_request& request) override {
    sweep_requests.push_back(request);
    if (sweeps.empty())
      return sweep_result{};
    auto s = std::move(sweeps.front());
    sweeps.pop_front();
    return s;
  }

  /// Handed deliveries the fake knows, by id: fetch_handed returns the job
  /// of each one it is asked for whose dispatch id matches.
  std::map<int64_t, job_to_send> handed_jobs;
  std::vector<std::vector<handed_delivery>> fetched; ///< every fetch's
  std::vector<std::vector<handed_delivery>> released; ///< every release's
  caf::error fetch_error; ///< returned by fetch_handed when set

  caf::expected<claim_result>
  fetch_handed(const std::vector<handed_delivery>& ds) override {
    fetched.push_back(ds);
    if (fetch_error)
      return fetch_error;
    claim_result out;
    for (auto& d : ds)
      if (auto it = handed_jobs.find(d.id);
          it != handed_jobs.end() && it->second.dispatch_id == d.dispatch_id)
        out.jobs.push_back(it->second);
    return out;
  }

  caf::expected<int64_t>
  release_handed(const std::vector<handed_delivery>& ds) override {
    released.push_back(ds);
    return static_cast<int64_t>(ds.size());
  }

};

class job_publisher : public outbox::job_publisher {
public:
  caf::error not_ready; ///< returned by ready() when set
  std::vector<publish_status> statuses; ///< per message; confirmed beyond
  std::vector<outgoing_message> published;
  int ready_calls = 0;
  bool is_blocked = false; ///< returned by blocked()

  caf::error ready() override {
    ++ready_calls;
    return not_ready;
  }

  bool blocked() const override {
    return is_blocked;
  }

  int64_t waiting_results = 0; ///< returned by results_waiting()

  caf::expected<int64_t> results_waiting() override {
    return waiting_results;
  }

  std::vector<publish_status>
  publish(const std::vector<outgoing_message>& ms) override {
    std::vector<publish_status> out;
    for (size_t i = 0; i < ms.size(); ++i) {
      published.push_back(ms[i]);
      out.push_back(i < statuses.size() ? statuses[i] : publish_status::confirmed);
    }
    return out;
  }
};

class result_source : public outbox::result_source {
public:
  std::deque<incoming_message> waiting;
  uint64_t acked_through = 0;
  int fetches = 0;

  /// Queues a result message body with the next delivery tag.
  void push(std::string body) {
    incoming_message m;
    m.delivery_tag = ++last_tag_;
    m.body = std::move(body);
    waiting.push_back(std::move(m));
  }

  caf::expected<std::vector<incoming_message>>
  fetch(size_t max, std::chrono::milliseconds) override {
    ++fetches;
    std::vector<incoming_message> out;
    while (!waiting.empty() && out.size() < max) {
      out.push_back(waiting.front());
      waiting.pop_front();
    }
    return out;
  }

  caf::error ack_through(uint64_t tag) override {
    acked_through = tag;
    return caf::none;
  }

private:
  uint64_t last_tag_ = 0;
};

class status_store : public outbox::status_store {
public:
  caf::expected<status_counts> next = status_counts{};
  int reads = 0;
  caf::expected<status_counts> read() override {
    ++reads;
    return next;
  }
};

/// The listeners a notice_listener_factory hands out, scripted by the test.
/// The blocking actor that owns them runs on its own thread, so the script
/// is behind a mutex. Each connection is an error or a list of waits; a
/// connection whose waits are used up waits out its timeouts (at most
/// 20 ms each) with nothing to report.
class notice_channel : public std::enable_shared_from_this<notice_channel> {
public:
  using waits = std::deque<caf::expected<std::vector<std::string>>>;

  void add_connection(waits w) {
    std::lock_guard<std::mutex> guard{mx_};
    connections_.push_back(std::move(w));
  }
  void add_refusal(caf::error e) {
    std::lock_guard<std::mutex> guard{mx_};
    connections_.push_back(std::move(e));
  }
  int connects() const {
    std::lock_guard<std::mutex> guard{mx_};
    return connects_;
  }

  notice_listener_factory factory() {
    return [self = shared_from_this()] { return self->connect(); };
  }

private:
  class listener : public notice_listener {
  public:
    explicit listener(waits w) : waits_(std::move(w)) {}
    caf::expected<std::vector<std::string>>
    wait_payloads(std::chrono::milliseconds timeout) override {
      if (waits_.empty()) {
        std::this_thread::sleep_for(std::min(timeout, std::chrono::milliseconds{20}));
        return std::vector<std::string>{};
      }
      auto next = std::move(waits_.front());
      waits_.pop_front();
      return next;
    }

  private:
    waits waits_;
  };

  caf::expected<std::unique_ptr<notice_listener>> connect() {
    std::lock_guard<std::mutex> guard{mx_};
    ++connects_;
    if (connections_.empty())
      return make_error(errc::database_unavailable, "no connection scripted");
    auto next = std::move(connections_.front());
    connections_.pop_front();
    if (auto e = std::get_if<caf::error>(&next))
      return std::move(*e);
    return std::unique_ptr<notice_listener>{
      new listener{std::move(std::get<waits>(next))}};
  }

  mutable std::mutex mx_;
  std::deque<std::variant<waits, caf::error>> connections_;
  int connects_ = 0;
};

} // namespace outbox::fakes
