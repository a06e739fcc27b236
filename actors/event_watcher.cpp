#include "actors/event_watcher.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "actors/pass_loop.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/base/timestamp.hpp"
#include "core/pg/event_probe.hpp"

namespace outbox {

std::chrono::milliseconds probe_schedule::next(std::chrono::milliseconds last,
                                               bool changed) const {
  if (changed)
    return first;
  return std::clamp(last * 2, first, idle);
}

namespace {

using std::chrono::milliseconds;

// The watcher's state between two turns of its loop; each step either
// makes progress or waits on the mailbox, so shutdown stays responsive.
class watch_loop {
public:
  watch_loop(caf::blocking_actor* self, std::string database_url,
             schema_names names, router_actor router)
    : self_(self),
      database_url_(std::move(database_url)),
      names_(std::move(names)),
      router_(std::move(router)) {
  }

  void run() {
    while (running_) {
      if (!wanted_) {
        // The router passes by itself: wait for its word, not the table's.
        paused_ = true;
        poll_mailbox(milliseconds{200});
        continue;
      }
      poll_mailbox(wait_);
      if (!running_ || !wanted_ || !connect())
        continue;
      probe();
    }
  }

private:
  void poll_mailbox(milliseconds wait) {
    self_->receive([&](caf::exit_msg& em) {
      running_ = false;
      self_->fail_state(std::move(em.reason));
    }, [&](listen_atom, bool want) {
      wanted_ = want;
    }, caf::after(wait) >> [] {});
  }

  // The first failure and then summaries (core/domain/failure_streak).
  void note_failure(const caf::error& err) {
    if (failures_.failed())
      logger("router")->warn("event=listen_failed attempts={} since={} error={}",
                             failures_.count(), format_timestamp(failures_.since()),
                             kv(render(err)));
  }

  /// False after a failed attempt (it has waited its backoff then).
  bool connect() {
    if (probe_)
      return true;
    auto p = event_probe::connect(database_url_, names_);
    if (!p) {
      note_failure(p.error());
      poll_mailbox(failures_.backoff(milliseconds{5000}));
      return false;
    }
    probe_.emplace(std::move(*p));
    return true;
  }

  void probe() {
    auto now = probe_->read();
    if (!now) {
      // A probe that failed (a lock it waited for too long, a lost server,
      // a table not migrated yet) may fail again at once: back off.
      note_failure(now.error());
      probe_.reset();
      last_.reset(); // the next connection's first probe wakes the router
      poll_mailbox(failures_.backoff(milliseconds{5000}));
      return;
    }
    failures_.succeeded();
    // The first probe after (re)connecting or a pause wakes the router
    // once: events may have committed while nobody watched.
    bool changed = !last_ || *last_ != *now || paused_;
    last_ = std::move(*now);
    paused_ = false;
    if (changed)
      self_->send(router_, wake_atom::value);
    wait_ = schedule_.next(wait_, changed);
  }

  caf::blocking_actor* self_;
  std::string database_url_;
  schema_names names_;
  router_actor router_;
  probe_schedule schedule_;
  milliseconds wait_{0};
  bool running_ = true;
  bool wanted_ = true; // the router's demand (listen_demand.hpp)
  bool paused_ = false;
  std::optional<event_probe> probe_;
  std::optional<std::string> last_;
  failure_streak failures_;
};

} // namespace

void event_watcher(caf::blocking_actor* self, std::string database_url,
                   schema_names names, router_actor router) {
  watch_loop{self, std::move(database_url), std::move(names), std::move(router)}
    .run();
}

} // namespace outbox
