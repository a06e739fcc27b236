#include "worker/job_runner.hpp"

#include <cxxabi.h>
#include <cstdlib>
#include <memory>
#include <typeinfo>

#include "core/domain/trace_context.hpp"

namespace outbox {

namespace {

// An exception's type is safe to report; its message may quote anything.
std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name{
    abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free};
  return status == 0 && name ? name.get() : t.name();
}

} // namespace

send_result run_job(const job_message_fields& job, const handler_map& handlers) {
  send_result r;
  r.delivery_id = job.delivery_id;
  r.dispatch_id = job.dispatch_id;
  r.job = job.job;
  // Back with the result, so the relay's log lines of the outcome carry the
  // trace; only a valid one (the relay would drop any other).
  if (auto tp = job.headers.find(traceparent_header);
      tp != job.headers.end() && !traceparent_problem(tp->second))
    r.traceparent = tp->second;
  auto it = handlers.find(job.job);
  if (it == handlers.end()) {
    r.result = outcome::failed;
    r.reason = "no handler for this job in the worker";
    return r;
  }
  job_context ctx{job.event_id,   job.delivery_id,  job.dispatch_id,
                  job.job,        job.event_type,   job.last_attempt,
                  job.payload_json, job.headers,   job.replayed};
  try {
    it->second(ctx);
    r.result = outcome::completed;
  } catch (const retryable_error& e) {
    r.result = outcome::retry;
    r.reason = e.what();
  } catch (const job_failed& e) {
    r.result = outcome::failed;
    r.reason = e.what();
  } catch (const std::exception& e) {
    r.result = outcome::failed;
    r.reason = "handler threw " + type_name(typeid(e));
  } catch (...) {
    r.result = outcome::failed;
    r.reason = "handler threw a non-standard exception";
  }
  return r;
}

} // namespace outbox
