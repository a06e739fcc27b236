// The job message: written by the relay (and directly, without the
// outbox), read strictly by a worker, or just attributed when it is bad.
#include "core/amqp/wire.hpp"

#include <algorithm>

#include "core/amqp/wire_detail.hpp"
#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"
#include "core/domain/event_headers.hpp"
#include "core/json/json_parse.hpp"

namespace outbox {

using namespace wire_detail;

namespace {

// The producer API checked JSON payloads before they were written or sent.
void write_payload(json_writer_t& w, const std::string& content_type,
                   const std::string& payload) {
  w.Key("payload");
  if (content_type == "application/json")
    w.RawValue(payload.data(), payload.size(), rapidjson::kObjectType);
  else
    write_string(w, payload);
}

} // namespace

std::string job_message_body(const job_to_send& job) {
  rapidjson::StringBuffer sb;
  json_writer_t w(sb);
  w.StartObject();
  w.Key("job");
  write_string(w, job.job);
  w.Key("eventType");
  write_string(w, job.event_type);
  w.Key("outboxEventId");
  write_string(w, std::to_string(job.event_id));
  w.Key("outboxDeliveryId");
  write_string(w, std::to_string(job.delivery_id));
  w.Key("outboxDispatchId");
  write_string(w, job.dispatch_id);
  w.Key("outboxLastAttempt");
  w.Bool(job.last_attempt);
  if (job.replayed) { // left out of every other message
    w.Key("outboxReplayed");
    w.Bool(true);
  }
  if (job.start_by) { // ordered routes only (docs/ordering.md)
    w.Key("outboxExpiresAt");
    write_string(w, format_timestamp(*job.start_by));
  }
  write_payload(w, job.content_type, job.payload);
  w.EndObject();
  return sb.GetString();
}

std::string expiration_property(int64_t ms) {
  if (ms <= 0)
    return {};
  return std::to_string(std::min(ms, max_expiration_ms));
}

outgoing_message job_message(const job_to_send& job) {
  outgoing_message m;
  m.routing_key = job.queue;
  m.body = job_message_body(job);
  m.message_id = std::to_string(job.delivery_id);
  m.correlation_id = job.dispatch_id;
  m.type = job.job;
  m.expiration = expiration_property(job.expiration_ms);
  m.headers = wire_headers(job.headers);
  return m;
}

outgoing_message direct_job_message(const std::string& job,
                                    const std::string& queue, const event& ev,
                                    std::string message_id,
                                    int64_t expiration_ms) {
  rapidjson::StringBuffer sb;
  json_writer_t w(sb);
  w.StartObject();
  w.Key("job");
  write_string(w, job);
  w.Key("eventType");
  write_string(w, ev.event_type);
  w.Key("outboxDirect");
  w.Bool(true);
  w.Key("outboxLastAttempt");
  w.Bool(true);
  write_payload(w, ev.content_type, ev.payload);
  w.EndObject();
  outgoing_message m;
  m.routing_key = queue;
  m.body = sb.GetString();
  m.message_id = std::move(message_id);
  m.type = job;
  m.headers = wire_headers(ev.headers);
  m.expiration = expiration_property(expiration_ms);
  return m;
}

namespace {

caf::error bad_job(const std::string& why) {
  return make_error(errc::deserialize_failed, "job message: " + why);
}

// The three fields a result needs; "" when one is missing or malformed.
std::optional<send_result> read_attribution(const rapidjson::Document& doc) {
  if (!doc.IsObject())
    return std::nullopt;
  auto id = doc.FindMember("outboxDeliveryId");
  auto dispatch = doc.FindMember("outboxDispatchId");
  send_result r;
  if (id == doc.MemberEnd() || dispatch == doc.MemberEnd()
      || !dispatch->value.IsString() || read_job(doc, r.job))
    return std::nullopt;
  auto parsed = read_id(id->value);
  std::string dispatch_id{dispatch->value.GetString(),
                          dispatch->value.GetStringLength()};
  if (!parsed || !is_uuid(dispatch_id))
    return std::nullopt;
  r.delivery_id = *parsed;
  r.dispatch_id = std::move(dispatch_id);
  return r;
}

caf::error read_event_type(const rapidjson::Document& doc,
                           job_message_fields& out) {
  auto type = doc.FindMember("eventType");
  if (type == doc.MemberEnd() || !type->value.IsString())
    return bad_job("eventType must be a string");
  out.event_type.assign(type->value.GetString(), type->value.GetStringLength());
  return caf::none;
}

caf::error read_payload(const rapidjson::Document& doc, job_message_fields& out) {
  auto payload = doc.FindMember("payload");
  if (payload == doc.MemberEnd())
    return bad_job("payload is missing");
  rapidjson::StringBuffer sb;
  json_writer_t w(sb);
  payload->value.Accept(w);
  out.payload_json = sb.GetString();
  return caf::none;
}

// A direct message has no ids: nobody waits for its result.
caf::expected<job_message_fields> parse_direct_job(const rapidjson::Document& doc) {
  job_message_fields out;
  out.direct = true;
  out.last_attempt = true;
  if (auto why = read_job(doc, out.job))
    return bad_job(*why);
  if (auto err = read_event_type(doc, out))
    return err;
  if (auto err = read_payload(doc, out))
    return err;
  return out;
}

} // namespace

caf::expected<job_message_fields> parse_job_message(const std::string& body) {
  rapidjson::Document doc;
  if (auto why = parse_message(body, doc))
    return bad_job(*why);
  if (!doc.IsObject())
    return bad_job("not a JSON object");
  if (has_duplicate_keys(doc))
    return bad_job("a key is given twice");
  if (auto direct = doc.FindMember("outboxDirect"); direct != doc.MemberEnd()) {
    if (!direct->value.IsBool() || !direct->value.GetBool())
      return bad_job("outboxDirect must be true when present");
    return parse_direct_job(doc);
  }
  auto ids = read_attribution(doc);
  if (!ids)
    return bad_job("outboxDeliveryId, outboxDispatchId (a UUID) and job are "
                   "required");
  job_message_fields out;
  out.delivery_id = ids->delivery_id;
  out.dispatch_id = ids->dispatch_id;
  out.job = ids->job;
  auto event_id = doc.FindMember("outboxEventId");
  if (event_id == doc.MemberEnd() || !read_id(event_id->value))
    return bad_job("outboxEventId must be a positive integer or a string of "
                   "digits");
  out.event_id = *read_id(event_id->value);
  if (auto err = read_event_type(doc, out))
    return err;
  auto last = doc.FindMember("outboxLastAttempt");
  if (last == doc.MemberEnd() || !last->value.IsBool())
    return bad_job("outboxLastAttempt must be true or false");
  out.last_attempt = last->value.GetBool();
  if (auto r = doc.FindMember("outboxReplayed"); r != doc.MemberEnd()) {
    if (!r->value.IsBool())
      return bad_job("outboxReplayed must be true or false when present");
    out.replayed = r->value.GetBool();
  }
  if (auto x = doc.FindMember("outboxExpiresAt"); x != doc.MemberEnd()) {
    auto at = x->value.IsString()
                ? parse_timestamp({x->value.GetString(), x->value.GetStringLength()})
                : std::nullopt;
    if (!at)
      return bad_job("outboxExpiresAt must be an ISO 8601 UTC time when present");
    out.expires_at = at;
  }
  if (auto err = read_payload(doc, out))
    return err;
  return out;
}

std::optional<send_result> attribute_job_message(const std::string& body) {
  rapidjson::Document doc;
  if (parse_message(body, doc) || (doc.IsObject() && has_duplicate_keys(doc)))
    return std::nullopt;
  return read_attribution(doc);
}

} // namespace outbox
