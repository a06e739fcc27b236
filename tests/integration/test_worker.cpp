#include "tests/integration/test_worker.hpp"

#include <map>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/amqp/amqp_client.hpp"
#include "core/amqp/wire.hpp"

namespace outbox::testing {

namespace {

// Reads the job message by hand, from docs/design.md's wire contract, not with
// core's parse_job_message: a mistake shared by the relay's writer and
// core's reader would otherwise go unnoticed.
bool parse_job(const incoming_message& m, job_seen& out) {
  rapidjson::Document doc;
  doc.Parse(m.body.c_str());
  if (doc.HasParseError() || !doc.IsObject())
    return false;
  for (auto key : {"job", "eventType", "outboxEventId", "outboxDeliveryId",
                   "outboxDispatchId"})
    if (!doc.HasMember(key) || !doc[key].IsString())
      return false;
  if (!doc.HasMember("outboxLastAttempt") || !doc["outboxLastAttempt"].IsBool()
      || !doc.HasMember("payload"))
    return false;
  out.job = doc["job"].GetString();
  out.event_type = doc["eventType"].GetString();
  out.event_id = std::stoll(doc["outboxEventId"].GetString());
  out.delivery_id = std::stoll(doc["outboxDeliveryId"].GetString());
  out.dispatch_id = doc["outboxDispatchId"].GetString();
  out.last_attempt = doc["outboxLastAttempt"].GetBool();
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  doc["payload"].Accept(w);
  out.payload_json = sb.GetString();
  out.message_id = m.message_id;
  out.correlation_id = m.correlation_id;
  out.type = m.type;
  out.headers = m.headers;
  return true;
}

} // namespace

test_worker::test_worker(std::string url, std::string queue, policy p)
  : url_(std::move(url)), queue_(std::move(queue)), policy_(std::move(p)) {
  thread_ = std::thread{[this] { run(); }};
}

test_worker::~test_worker() {
  stop_ = true;
  thread_.join();
}

std::vector<job_seen> test_worker::seen() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return seen_;
}

std::vector<job_seen> test_worker::seen_for(int64_t delivery_id) const {
  std::vector<job_seen> out;
  for (auto& j : seen())
    if (j.delivery_id == delivery_id)
      out.push_back(j);
  return out;
}

void test_worker::run() {
  using namespace std::chrono;
  std::unique_ptr<amqp_client> consumer, publisher;
  std::map<int64_t, int> sends;
  while (!stop_) {
    if (!consumer || !consumer->is_open() || !publisher || !publisher->is_open()) {
      consumer.reset();
      publisher.reset();
      auto c = amqp_client::connect(url_, "test worker " + queue_);
      auto p = amqp_client::connect(url_, "test worker results " + queue_);
      if (!c || !p || (*c)->declare_queue(queue_)
          || (*p)->declare_queue(results_queue(queue_))
          || (*c)->consume(queue_, 20)) {
        std::this_thread::sleep_for(milliseconds{200});
        continue;
      }
      consumer = std::move(*c);
      publisher = std::move(*p);
    }
    auto m = consumer->next_message(milliseconds{100});
    if (!m || !*m)
      continue;
    job_seen job;
    if (!parse_job(**m, job)) {
      ++malformed_;
      consumer->reject((*m)->delivery_tag);
      continue;
    }
    job.received_at = std::chrono::duration<double>(
                        steady_clock::now().time_since_epoch())
                        .count();
    {
      std::lock_guard<std::mutex> guard{mtx_};
      seen_.push_back(job);
    }
    auto a = policy_(job, ++sends[job.delivery_id]);
    if (a != answer::silent) {
      send_result r;
      r.delivery_id = job.delivery_id;
      r.dispatch_id = job.dispatch_id;
      r.job = job.job;
      r.result = a == answer::completed ? outcome::completed
                 : a == answer::retry   ? outcome::retry
                                        : outcome::failed;
      r.reason = a == answer::completed ? "" : "test worker said so";
      auto st = publisher->publish_batch({result_message(queue_, r)},
                                         milliseconds{5000});
      if (st.empty() || st[0] != publish_status::confirmed)
        continue; // not acked: the broker hands the job out again
    }
    consumer->ack((*m)->delivery_tag);
  }
}

} // namespace outbox::testing
