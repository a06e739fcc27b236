#define CAF_SUITE core.wire
#include <caf/test/unit_test.hpp>

#include <rapidjson/document.h>

#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

namespace {

const std::string uuid = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";

job_to_send sample_job() {
  job_to_send j;
  j.delivery_id = 42;
  j.event_id = 7;
  j.job = "PublishStockJob";
  j.queue = "stock.publish";
  j.dispatch_id = uuid;
  j.event_type = "stock.available_changed";
  j.payload = R"({"sku":"A-1","qty":3})";
  j.content_type = "application/json";
  j.last_attempt = true;
  return j;
}

// The one result a message carries, or why it carries none.
std::string why(const std::string& body) {
  auto content = read_result_message(body);
  if (content.refused.size() == 1 && content.results.empty())
    return content.refused.front();
  if (content.refused.empty() && content.results.size() == 1)
    return "accepted";
  return "not one result";
}

// The one result a message carries; fails the test otherwise.
send_result only_result(const std::string& body) {
  auto content = read_result_message(body);
  CAF_REQUIRE(content.refused.empty());
  CAF_REQUIRE_EQUAL(content.results.size(), 1u);
  return content.results.front();
}

} // namespace

CAF_TEST(job messages carry the properties and body of the contract) {
  auto m = job_message(sample_job());
  CAF_CHECK_EQUAL(m.routing_key, "stock.publish");
  CAF_CHECK_EQUAL(m.message_id, "42");
  CAF_CHECK_EQUAL(m.correlation_id, uuid);
  CAF_CHECK_EQUAL(m.type, "PublishStockJob");
  CAF_CHECK_EQUAL(m.content_type, "application/json");
  rapidjson::Document doc;
  doc.Parse(m.body.c_str());
  CAF_REQUIRE(!doc.HasParseError());
  CAF_CHECK_EQUAL(doc["job"].GetString(), std::string{"PublishStockJob"});
  CAF_CHECK_EQUAL(doc["eventType"].GetString(),
                  std::string{"stock.available_changed"});
  CAF_CHECK_EQUAL(doc["outboxEventId"].GetString(), std::string{"7"});
  CAF_CHECK_EQUAL(doc["outboxDeliveryId"].GetString(), std::string{"42"});
  CAF_CHECK_EQUAL(doc["outboxDispatchId"].GetString(), uuid);
  CAF_CHECK_EQUAL(doc["outboxLastAttempt"].GetBool(), true);
  CAF_CHECK_EQUAL(doc["payload"]["sku"].GetString(), std::string{"A-1"});
  CAF_CHECK_EQUAL(doc["payload"]["qty"].GetInt(), 3);
  CAF_CHECK_EQUAL(doc.MemberCount(), 7u);
  CAF_CHECK_EQUAL(m.expiration, ""); // sample_job has no lifetime
}

// A replayed delivery (outboxctl replay) says so in its job message; every
// other message goes without the field, as before.
CAF_TEST(the job message of a replayed delivery says so) {
  auto j = sample_job();
  CAF_CHECK_EQUAL(job_message(j).body.find("outboxReplayed"), std::string::npos);
  auto plain = parse_job_message(job_message(j).body);
  CAF_REQUIRE(plain);
  CAF_CHECK(!plain->replayed);
  j.replayed = true;
  auto body = job_message(j).body;
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  CAF_REQUIRE(!doc.HasParseError());
  CAF_CHECK_EQUAL(doc["outboxReplayed"].GetBool(), true);
  auto parsed = parse_job_message(body);
  CAF_REQUIRE(parsed);
  CAF_CHECK(parsed->replayed);
  auto bad = body;
  bad.replace(bad.find("\"outboxReplayed\":true"), 21, "\"outboxReplayed\":1   ");
  CAF_CHECK_EQUAL(context_of(parse_job_message(bad).error()),
                  "job message: outboxReplayed must be true or false when present");
}

// A send of an ordered route carries the latest time a worker may start
// it (docs/ordering.md "A late send"); other sends go without the field.
CAF_TEST(the job message of an ordered send says until when it may start) {
  auto j = sample_job();
  CAF_CHECK_EQUAL(job_message(j).body.find("outboxExpiresAt"), std::string::npos);
  auto plain = parse_job_message(job_message(j).body);
  CAF_REQUIRE(plain);
  CAF_CHECK(!plain->expires_at);
  j.start_by = from_unix_micros(1796000000123456);
  auto body = job_message(j).body;
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  CAF_REQUIRE(!doc.HasParseError());
  CAF_CHECK_EQUAL(std::string{doc["outboxExpiresAt"].GetString()},
                  "2026-11-30T00:53:20.123456Z");
  auto parsed = parse_job_message(body);
  CAF_REQUIRE(parsed);
  CAF_REQUIRE(parsed->expires_at);
  CAF_CHECK(*parsed->expires_at == *j.start_by);
  for (std::string wrong : {"\"yesterday\"", "1796000000", "\"2026-11-30T00:53:20\""}) {
    auto bad = body;
    auto at = bad.find("\"2026-11-30T00:53:20.123456Z\"");
    bad.replace(at, 29, wrong);
    CAF_CHECK_EQUAL(context_of(parse_job_message(bad).error()),
                    "job message: outboxExpiresAt must be an ISO 8601 UTC time "
                    "when present");
  }
}

// RabbitMQ closes the channel on an expiration above ten years
// (`value_too_large`): every message of that channel's publish would fail.
CAF_TEST(message expirations stay within what RabbitMQ takes) {
  auto j = sample_job();
  j.expiration_ms = 30000;
  CAF_CHECK_EQUAL(job_message(j).expiration, "30000");
  j.expiration_ms = int64_t{INT32_MAX} * 1000; // deliveryTimeoutSeconds' most
  CAF_CHECK_EQUAL(job_message(j).expiration, "315360000000");
  CAF_CHECK_EQUAL(expiration_property(max_expiration_ms), "315360000000");
  CAF_CHECK_EQUAL(expiration_property(max_expiration_ms + 1), "315360000000");
  CAF_CHECK_EQUAL(expiration_property(1), "1");
  CAF_CHECK_EQUAL(expiration_property(0), "");
  CAF_CHECK_EQUAL(expiration_property(-5), "");
  event ev;
  ev.event_type = "metrics.cpu";
  ev.payload = "{}";
  CAF_CHECK_EQUAL(direct_job_message("J", "q", ev, "id", int64_t{INT32_MAX} * 1000).expiration,
                  "315360000000");
}

CAF_TEST(payloads of other content types travel as a JSON string) {
  auto j = sample_job();
  j.content_type = "text/plain";
  j.payload = "hello \"world\"";
  rapidjson::Document doc;
  doc.Parse(job_message_body(j).c_str());
  CAF_REQUIRE(!doc.HasParseError());
  CAF_CHECK_EQUAL(doc["payload"].GetString(), std::string{"hello \"world\""});
}

CAF_TEST(a result message round-trips) {
  send_result r;
  r.delivery_id = 42;
  r.dispatch_id = uuid;
  r.job = "PublishStockJob";
  r.result = outcome::retry;
  r.reason = "timeout calling the shop";
  auto back = only_result(result_message_body(r));
  CAF_CHECK_EQUAL(back.delivery_id, 42);
  CAF_CHECK_EQUAL(back.dispatch_id, uuid);
  CAF_CHECK_EQUAL(back.job, "PublishStockJob");
  CAF_CHECK(back.result == outcome::retry);
  CAF_CHECK_EQUAL(back.reason, "timeout calling the shop");
}

CAF_TEST(a result message goes to the results queue with the job properties) {
  send_result r;
  r.delivery_id = 42;
  r.dispatch_id = uuid;
  r.job = "PublishStockJob";
  auto m = result_message("stock.publish", r);
  CAF_CHECK_EQUAL(m.routing_key, "stock.publish.results");
  CAF_CHECK_EQUAL(m.message_id, "42");
  CAF_CHECK_EQUAL(m.correlation_id, uuid);
  CAF_CHECK_EQUAL(m.type, "PublishStockJob");
  CAF_CHECK_EQUAL(m.content_type, "application/json");
  CAF_CHECK_EQUAL(why(m.body), "accepted");
}

CAF_TEST(numeric delivery ids are accepted) {
  CAF_CHECK_EQUAL(why(R"({"outboxDeliveryId":5,"outboxDispatchId":")" + uuid
                      + R"(","job":"J","outcome":"completed"})"),
                  "accepted");
}

CAF_TEST(bad result messages are refused with a safe reason) {
  auto base = [](const std::string& id, const std::string& dispatch,
                 const std::string& outcome) {
    return R"({"outboxDeliveryId":)" + id + R"(,"outboxDispatchId":)" + dispatch
           + R"(,"job":"J","outcome":)" + outcome + "}";
  };
  auto q = [](const std::string& s) { return "\"" + s + "\""; };
  struct {
    const char* name;
    std::string body;
    const char* expected;
  } cases[] = {
    {"not JSON", "{not json",
     "result message: not valid JSON at offset 1: Missing a name for object member."},
    {"a number", "17", "result message: not a JSON object"},
    {"an array of a number", "[1]", "result message: entry 1: not a JSON object"},
    {"no delivery id", R"({"outboxDispatchId":"x"})",
     "result message: outboxDeliveryId is missing"},
    {"a delivery id not of digits", base(q("12a"), q(uuid), q("completed")),
     "result message: outboxDeliveryId must be a positive integer or a string of digits"},
    {"a negative delivery id", base("-3", q(uuid), q("completed")),
     "result message: outboxDeliveryId must be a positive integer or a string of digits"},
    {"a dispatch id not a UUID", base(q("1"), q("not-a-uuid"), q("completed")),
     "result message: outboxDispatchId must be a UUID"},
    {"a numeric dispatch id", base(q("1"), "17", q("completed")),
     "result message: outboxDispatchId must be a string"},
    {"an unknown outcome", base(q("1"), q(uuid), q("done")),
     "result message: outcome must be completed, retry or failed"},
    {"an unknown key",
     R"({"outboxDeliveryId":"1","outboxDispatchId":")" + uuid
       + R"(","job":"J","outcome":"failed","extra":1})",
     "result message: unknown key (allowed: outboxDeliveryId, outboxDispatchId, job, "
     "outcome, reason, traceparent)"},
    {"an empty job",
     R"({"outboxDeliveryId":"1","outboxDispatchId":")" + uuid
       + R"(","job":"","outcome":"failed"})",
     "result message: job must not be empty"},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.name, why(c.body), c.expected);
}

CAF_TEST(long reasons are cut on a character boundary) {
  std::string reason = "x"; // then é (two bytes) starts at odd offsets
  for (int i = 0; i < 150; ++i)
    reason += "\xc3\xa9"; // é: two bytes each
  auto r = only_result(R"({"outboxDeliveryId":"1","outboxDispatchId":")"
                       + uuid + R"(","job":"J","outcome":"failed",)"
                       + R"("reason":")" + reason + "\"}");
  CAF_CHECK_EQUAL(r.reason.size(), 199u); // byte 200 is inside an é
  CAF_CHECK_EQUAL(r.reason, reason.substr(0, 199));
}

namespace {

send_result sample_result(int64_t id, outcome o = outcome::completed) {
  send_result r;
  r.delivery_id = id;
  r.dispatch_id = uuid;
  r.job = "PublishStockJob";
  r.result = o;
  return r;
}

std::vector<std::string> refusals(const std::string& body) {
  return read_result_message(body).refused;
}

} // namespace

CAF_TEST(a single result travels as the plain object) {
  auto ms = result_batch_messages("stock.publish", {sample_result(42)});
  CAF_REQUIRE_EQUAL(ms.size(), 1u);
  CAF_CHECK_EQUAL(ms[0].message_id, "42");
  CAF_CHECK_EQUAL(ms[0].type, "PublishStockJob");
  CAF_CHECK_EQUAL(why(ms[0].body), "accepted");
  CAF_CHECK(result_batch_messages("stock.publish", {}).empty());
}

CAF_TEST(a batch of results travels as one array and reads back in order) {
  auto ms = result_batch_messages(
    "stock.publish",
    {sample_result(1), sample_result(2, outcome::retry),
     sample_result(3, outcome::failed)});
  CAF_REQUIRE_EQUAL(ms.size(), 1u);
  CAF_CHECK_EQUAL(ms[0].routing_key, "stock.publish.results");
  CAF_CHECK_EQUAL(ms[0].body.front(), '[');
  auto content = read_result_message(ms[0].body);
  CAF_CHECK(content.refused.empty());
  CAF_REQUIRE_EQUAL(content.results.size(), 3u);
  CAF_CHECK_EQUAL(content.results[0].delivery_id, 1);
  CAF_CHECK(content.results[1].result == outcome::retry);
  CAF_CHECK(content.results[2].result == outcome::failed);
  CAF_CHECK_EQUAL(content.results[2].dispatch_id, uuid);
}

CAF_TEST(a batch larger than a message may carry is split in order) {
  std::vector<send_result> rs;
  for (int64_t id = 1; id <= 2500; ++id)
    rs.push_back(sample_result(id));
  auto ms = result_batch_messages("q", rs);
  CAF_REQUIRE_EQUAL(ms.size(), 3u);
  std::vector<size_t> sizes;
  int64_t expected_id = 1;
  for (auto& m : ms) {
    auto content = read_result_message(m.body);
    CAF_CHECK(content.refused.empty());
    sizes.push_back(content.results.size());
    for (auto& r : content.results)
      CAF_CHECK_EQUAL(r.delivery_id, expected_id++);
  }
  CAF_CHECK_EQUAL(sizes, (std::vector<size_t>{1000, 1000, 500}));
  // Message ids differ within the publish: a returned one is matched by it.
  CAF_CHECK_NOT_EQUAL(ms[0].message_id, ms[1].message_id);
}

CAF_TEST(a bad entry of a batch is refused alone and named by its place) {
  auto good = result_message_body(sample_result(7));
  auto content = read_result_message(
    "[" + good + R"(,{"outboxDeliveryId":"8","outboxDispatchId":")" + uuid
    + R"(","job":"J","outcome":"done"},)" + good + ",17]");
  CAF_CHECK_EQUAL(content.results.size(), 2u);
  CAF_CHECK_EQUAL(content.refused,
                  (std::vector<std::string>{
                    "result message: entry 2: outcome must be completed, "
                    "retry or failed",
                    "result message: entry 4: not a JSON object"}));
}

CAF_TEST(a result message as a whole is refused when it is no result) {
  using v = std::vector<std::string>;
  CAF_CHECK_EQUAL(refusals("{not json"),
                  v{"result message: not valid JSON at offset 1: Missing a "
                    "name for object member."});
  CAF_CHECK_EQUAL(refusals("17"), v{"result message: not a JSON object"});
  CAF_CHECK_EQUAL(refusals("[]"), v{"result message: an array must hold 1 to "
                                    "1000 results"});
  std::string big = "[";
  for (int i = 0; i <= 1000; ++i)
    big += (i ? "," : "") + result_message_body(sample_result(i + 1));
  big += "]";
  CAF_CHECK_EQUAL(refusals(big), v{"result message: an array must hold 1 to "
                                   "1000 results"});
  CAF_CHECK(read_result_message(big).results.empty());
  CAF_CHECK_EQUAL(refusals(R"({"outboxDispatchId":"x"})"),
                  v{"result message: outboxDeliveryId is missing"});
}

CAF_TEST(a result that is not UTF-8 is refused before it reaches the database) {
  // The database refuses the whole batch a bad byte comes in, on every try.
  auto body = R"({"outboxDeliveryId":"1","outboxDispatchId":")" + uuid
              + R"(","job":"J","outcome":"failed","reason":"bad )" + "\xff"
              + R"( byte"})";
  CAF_CHECK_EQUAL(why(body), "result message: a string is not valid UTF-8");
  CAF_CHECK_EQUAL(refusals("[" + body + "]"),
                  std::vector<std::string>{
                    "result message: a string is not valid UTF-8"});
}

CAF_TEST(a NUL character in a result is refused) {
  auto with = [](const std::string& job, const std::string& reason) {
    return why(R"({"outboxDeliveryId":"1","outboxDispatchId":")" + uuid
               + R"(","job":")" + job + R"(","outcome":"failed","reason":")"
               + reason + "\"}");
  };
  CAF_CHECK_EQUAL(with("J", "ok"), "accepted");
  CAF_CHECK_EQUAL(with("J\\u0000x", "ok"),
                  "result message: job must not contain a NUL character");
  CAF_CHECK_EQUAL(with("J", "a\\u0000b"),
                  "result message: reason must not contain a NUL character");
}

CAF_TEST(a job message parses back into its fields) {
  auto j = sample_job();
  auto parsed = parse_job_message(job_message_body(j));
  CAF_REQUIRE(parsed);
  CAF_CHECK_EQUAL(parsed->event_id, 7);
  CAF_CHECK_EQUAL(parsed->delivery_id, 42);
  CAF_CHECK_EQUAL(parsed->dispatch_id, uuid);
  CAF_CHECK_EQUAL(parsed->job, "PublishStockJob");
  CAF_CHECK_EQUAL(parsed->event_type, "stock.available_changed");
  CAF_CHECK_EQUAL(parsed->last_attempt, true);
  CAF_CHECK_EQUAL(parsed->payload_json, R"({"sku":"A-1","qty":3})");
}

CAF_TEST(a direct job message has no ids and parses as direct) {
  event ev;
  ev.event_type = "metrics.cpu";
  ev.payload = R"({"load":0.5})";
  auto m = direct_job_message("RecordCpu", "metrics", ev, "id-1", 1500);
  CAF_CHECK_EQUAL(m.routing_key, "metrics");
  CAF_CHECK_EQUAL(m.message_id, "id-1");
  CAF_CHECK_EQUAL(m.type, "RecordCpu");
  CAF_CHECK_EQUAL(m.correlation_id, "");
  CAF_CHECK_EQUAL(m.expiration, "1500");
  CAF_CHECK_EQUAL(m.body, R"({"job":"RecordCpu","eventType":"metrics.cpu",)"
                          R"("outboxDirect":true,"outboxLastAttempt":true,)"
                          R"("payload":{"load":0.5}})");
  CAF_CHECK_EQUAL(direct_job_message("J", "q", ev, "id-2", 0).expiration, "");
  auto parsed = parse_job_message(m.body);
  CAF_REQUIRE(parsed);
  CAF_CHECK(parsed->direct);
  CAF_CHECK_EQUAL(parsed->delivery_id, 0);
  CAF_CHECK_EQUAL(parsed->job, "RecordCpu");
  CAF_CHECK_EQUAL(parsed->payload_json, R"({"load":0.5})");
  auto reason = [](const std::string& body) {
    auto r = parse_job_message(body);
    return r ? "accepted" : context_of(r.error());
  };
  struct {
    const char* name;
    const char* body;
    const char* expected;
  } bad[] = {
    {"outboxDirect false", R"({"job":"J","eventType":"e","outboxDirect":false,"payload":{}})",
     "job message: outboxDirect must be true when present"},
    {"an empty job", R"({"job":"","eventType":"e","outboxDirect":true,"payload":{}})",
     "job message: job must not be empty"},
    {"a NUL in the job",
     R"({"job":"J\u0000","eventType":"e","outboxDirect":true,"payload":{}})",
     "job message: job must not contain a NUL character"},
    {"no event type", R"({"job":"J","outboxDirect":true,"payload":{}})",
     "job message: eventType must be a string"},
    {"no payload", R"({"job":"J","eventType":"e","outboxDirect":true})",
     "job message: payload is missing"},
  };
  for (auto& c : bad)
    OUTBOX_CHECK_CASE_EQUAL(c.name, reason(c.body), c.expected);
}

CAF_TEST(bad job messages are refused and attributed when possible) {
  auto reason = [](const std::string& body) {
    auto r = parse_job_message(body);
    return r ? "accepted" : context_of(r.error());
  };
  CAF_CHECK_EQUAL(reason("nope"),
                  "job message: not valid JSON at offset 1: Invalid value.");
  CAF_CHECK_EQUAL(reason("[]"), "job message: not a JSON object");
  CAF_CHECK_EQUAL(reason(R"({"job":"J"})"),
                  "job message: outboxDeliveryId, outboxDispatchId (a UUID) "
                  "and job are required");
  CAF_CHECK(!attribute_job_message(R"({"job":"J"})"));
  auto no_payload = R"({"job":"J","outboxDeliveryId":"5","outboxDispatchId":")"
                    + uuid + R"(","outboxEventId":"1","eventType":"e",)"
                    + R"("outboxLastAttempt":false})";
  CAF_CHECK_EQUAL(reason(no_payload), "job message: payload is missing");
  auto ids = attribute_job_message(no_payload);
  CAF_REQUIRE(ids);
  CAF_CHECK_EQUAL(ids->delivery_id, 5);
  CAF_CHECK_EQUAL(ids->job, "J");
  auto bad_flag = R"({"job":"J","outboxDeliveryId":"5","outboxDispatchId":")"
                  + uuid + R"(","outboxEventId":"1","eventType":"e",)"
                  + R"("outboxLastAttempt":"no","payload":{}})";
  CAF_CHECK_EQUAL(reason(bad_flag),
                  "job message: outboxLastAttempt must be true or false");
}

CAF_TEST(messages nested too deep are refused without exhausting the stack) {
  // 200,000 '[' on a results queue crashed outboxd at every restart, and a
  // job nested 1,000,000 deep crashed the worker.
  CAF_CHECK_EQUAL(why(std::string(200000, '[')),
                  "result message: nested deeper than 65 levels");
  auto deep_payload = std::string(1000000, '[') + std::string(1000000, ']');
  auto job = R"({"job":"J","eventType":"e","outboxEventId":"1",)"
             R"("outboxDeliveryId":"2","outboxDispatchId":")"
             + std::string{"123e4567-e89b-12d3-a456-426614174000"}
             + R"(","outboxLastAttempt":false,"payload":)" + deep_payload + "}";
  auto parsed = parse_job_message(job);
  CAF_REQUIRE(!parsed);
  CAF_CHECK_EQUAL(context_of(parsed.error()),
                  "job message: nested deeper than 65 levels");
  // A payload 64 levels deep (the producer API's limit) still travels.
  auto ok = R"({"job":"J","eventType":"e","outboxEventId":"1",)"
            R"("outboxDeliveryId":"2","outboxDispatchId":")"
            + std::string{"123e4567-e89b-12d3-a456-426614174000"}
            + R"(","outboxLastAttempt":false,"payload":)"
            + std::string(64, '[') + std::string(64, ']') + "}";
  CAF_CHECK(parse_job_message(ok));
}

CAF_TEST(a key given twice makes a message ambiguous and is refused) {
  auto uuid = std::string{"123e4567-e89b-12d3-a456-426614174000"};
  CAF_CHECK_EQUAL(why(R"({"outboxDeliveryId":"1","outboxDispatchId":")" + uuid
                      + R"(","job":"J","outcome":"failed","outcome":"completed"})"),
                  "result message: a key is given twice");
  auto job = parse_job_message(
    R"({"job":"J","job":"K","eventType":"e","outboxEventId":"1",)"
    R"("outboxDeliveryId":"2","outboxDispatchId":")"
    + uuid + R"(","outboxLastAttempt":false,"payload":{}})");
  CAF_REQUIRE(!job);
  CAF_CHECK_EQUAL(context_of(job.error()), "job message: a key is given twice");
}
