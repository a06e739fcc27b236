#include "actors/ready_listener.hpp"

#include <memory>

#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/base/timestamp.hpp"
#include "core/domain/failure_streak.hpp"
#include "core/domain/ready_notice.hpp"

namespace outbox {

namespace {

class ready_loop {
public:
  ready_loop(caf::blocking_actor* self, ready_listener_args args)
    : self_(self), args_(std::move(args)) {}

  void run() {
    report("not listening yet");
    while (running_) {
      poll_mailbox(std::chrono::milliseconds{0});
      if (!running_)
        break;
      if (!listener_ && !connect())
        continue;
      // Short waits keep the mailbox (and so shutdown) responsive.
      auto payloads = listener_->wait_payloads(std::chrono::milliseconds{200});
      if (!payloads) {
        listener_.reset();
        report("listen connection lost");
        continue;
      }
      for (auto& p : *payloads)
        on_notice(p);
    }
  }

private:
  bool connect() {
    auto l = args_.listen();
    if (!l) {
      if (failures_.failed())
        logger("dispatcher")->warn("event=listen_failed channel={} attempts={} "
                                   "since={} error={}",
                                   kv(args_.channel), failures_.count(),
                                   format_timestamp(failures_.since()),
                                   kv(render(l.error())));
      report("listen connection down: " + render(l.error()));
      poll_mailbox(failures_.backoff(std::chrono::milliseconds{5000}));
      return false;
    }
    listener_ = std::move(*l);
    failures_.succeeded();
    report("");
    // Deliveries may have become ready while nobody listened.
    for (auto& d : args_.dispatchers)
      self_->send(d.dispatcher, wake_atom::value);
    return true;
  }

  void on_notice(const std::string& payload) {
    auto notice = parse_ready_payload(payload);
    if (!notice || notice->origin == args_.origin)
      return;
    for (auto& d : args_.dispatchers)
      if (d.queue == notice->queue)
        self_->send(d.dispatcher, wake_atom::value);
  }

  // Tells the node agent when the state of the wake-up path changed.
  void report(const std::string& degraded) {
    if (degraded == reported_ || !args_.agent)
      return;
    reported_ = degraded;
    self_->send(args_.agent, wakeup_atom::value,
                degraded.empty() || args_.database.empty()
                  ? degraded
                  : "database " + args_.database + ": " + degraded);
  }

  void poll_mailbox(std::chrono::milliseconds wait) {
    self_->receive(
      [&](caf::exit_msg& em) {
        running_ = false;
        self_->fail_state(std::move(em.reason));
      },
      caf::after(wait) >> [] {});
  }

  caf::blocking_actor* self_;
  ready_listener_args args_;
  std::unique_ptr<notice_listener> listener_;
  failure_streak failures_;
  bool running_ = true;
  std::string reported_;
};

} // namespace

void ready_listener(caf::blocking_actor* self, ready_listener_args args) {
  ready_loop{self, std::move(args)}.run();
}

} // namespace outbox
