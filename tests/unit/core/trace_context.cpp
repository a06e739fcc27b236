#define CAF_SUITE core.trace_context
#include <caf/test/unit_test.hpp>

#include <string>
#include <vector>

#include "core/amqp/wire.hpp"
#include "core/domain/event_headers.hpp"
#include "core/domain/lifecycle_event.hpp"
#include "core/domain/trace_context.hpp"
#include "tests/sample_job.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

namespace {

const std::string tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const std::string uuid = "0b7c6a3e-5f1d-4a8e-9c2b-1d2e3f4a5b6c";

struct text_case {
  const char* name;
  std::string value;
  bool valid;
};

} // namespace

CAF_TEST(a traceparent is version-traceid-parentid-flags in lowercase hex) {
  std::vector<text_case> cases{
    {"W3C's example", tp, true},
    {"not sampled", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", true},
    {"a later version with more fields", "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-xyz", true},
    {"a later version as long as 00", "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", true},
    {"empty", "", false},
    {"uppercase hex", "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01", false},
    {"version ff", "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", false},
    {"version 00 with more after it", tp + "-01", false},
    {"a later version with more but no dash", "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x", false},
    {"trace id all zeros", "00-00000000000000000000000000000000-b7ad6b7169203331-01", false},
    {"parent id all zeros", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", false},
    {"trace id one short", "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01", false},
    {"parent id one long", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b71692033311-01", false},
    {"underscores for dashes", "00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01", false},
    {"not hex", "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01", false},
    {"flags of one digit", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1", false},
    {"a space in front", " " + tp.substr(0, 54), false},
  };
  for (auto& c : cases) {
    OUTBOX_CHECK_CASE_EQUAL(c.name, !traceparent_problem(c.value), c.valid);
    OUTBOX_CHECK_CASE_EQUAL(c.name, trace_id_of(c.value).empty(), !c.valid);
  }
  CAF_CHECK_EQUAL(trace_id_of(tp), "0af7651916cd43dd8448eb211c80319c");
  auto zeros = traceparent_problem("00-00000000000000000000000000000000-"
                                   "b7ad6b7169203331-01");
  CAF_CHECK_EQUAL(zeros.value_or(""), "traceparent: the trace id must not be all zeros");
}

CAF_TEST(a tracestate has at most 32 W3C members in 512 bytes) {
  std::string members_32, members_33;
  for (int i = 0; i < 33; ++i) {
    auto m = (i ? "," : "") + std::string{"k"} + std::to_string(i) + "=v";
    if (i < 32)
      members_32 += m;
    members_33 += m;
  }
  std::vector<text_case> cases{
    {"one member", "congo=t61rcWkgMzE", true},
    {"two members with spaces", "rojo=00f067aa0ba902b7 , congo=t61rcWkgMzE", true},
    {"a multi-tenant key", "fw529a3039@dt=aGVsbG8", true},
    {"empty", "", true},
    {"empty members", "a=1,,b=2,", true},
    {"32 members", members_32, true},
    {"33 members", members_33, false},
    {"512 bytes", "a=" + std::string(254, 'v') + ",b=" + std::string(253, 'v'), true},
    {"513 bytes", "a=" + std::string(254, 'v') + ",b=" + std::string(254, 'v'), false},
    {"a value of 257 characters", "a=" + std::string(257, 'v'), false},
    {"an uppercase key", "Congo=1", false},
    {"a key starting with a digit", "1a=1", false},
    {"no value", "congo=", false},
    {"no equals sign", "congo", false},
    {"an equals sign in the value", "a=b=c", false},
    {"a value ending in a space inside", "a=b ,c=d", true},
    {"a control character", "a=b\x01", false},
    {"non-ASCII", "a=\xc3\xa9", false},
    {"a system id of 15 characters", "t@abcdefghijklmno=1", false},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.name, !tracestate_problem(c.value), c.valid);
}

CAF_TEST(reserved header names are refused however they are spelled) {
  struct name_case {
    const char* name;
    bool reserved;
  };
  std::vector<name_case> cases{
    {"traceparent", false}, {"tracestate", false}, {"baggage", false},
    {"tenant", false},      {"x", false},          {"xray", false},
    {"outboxDeliveryId", true}, {"OUTBOX_anything", true}, {"outbox", true},
    {"x-death", true},      {"X-Delay", true},     {"x-match", true},
    {"CC", true},           {"bcc", true},         {"message_id", true},
    {"messageId", true},    {"Message-Id", true},  {"correlation_id", true},
    {"content_type", true}, {"type", true},        {"user-id", true},
    {"app_id", true},       {"reply_to", true},    {"expiration", true},
    {"job", true},          {"eventType", true},   {"payload", true},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.name, is_reserved_header(c.name), c.reserved);
}

CAF_TEST(publish-time header rules name the rule) {
  struct headers_case {
    const char* name;
    header_map headers;
    std::string problem; ///< "" when accepted
  };
  const std::string reserved = "headers: a name is reserved by the wire contract "
                               "(outbox*, x-*, cc, bcc, the AMQP properties, "
                               "job, eventType, payload)";
  std::vector<headers_case> cases{
    {"none", {}, ""},
    {"trace context and more", {{"traceparent", tp}, {"tracestate", "a=1"}, {"tenant", "t1"}}, ""},
    {"a reserved name", {{"traceparent", tp}, {"x-death", "1"}}, reserved},
    {"a spoofed delivery id", {{"outboxDeliveryId", "1"}}, reserved},
    {"a traceparent in capitals", {{"Traceparent", tp}},
     "headers: traceparent and tracestate must be spelled in lowercase"},
    {"a bad traceparent", {{"traceparent", "00-xyz"}},
     "headers: traceparent: must be W3C version-traceid-parentid-flags "
     "(00-<32 hex>-<16 hex>-<2 hex>), lowercase hex"},
    {"a bad tracestate", {{"tracestate", "A=1"}},
     "headers: tracestate: list members must be W3C key=value (lowercase "
     "key, printable ASCII value)"},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.name, header_problem(c.headers).value_or(""),
                            c.problem);
}

CAF_TEST(a job message carries every event header but reserved and broken ones) {
  // Rows written past the publish function may hold anything.
  auto j = testing::sample_job("q");
  j.headers = headers_from_json(R"({"traceparent":")" + tp
                                + R"(","tracestate":"a=1","tenant":"t1",)"
                                  R"("message_id":"99","x-death":"1","CC":"other",)"
                                  R"("TraceParent":"x","n":1})");
  auto m = job_message(j);
  header_map expected{{"traceparent", tp}, {"tracestate", "a=1"}, {"tenant", "t1"}};
  CAF_CHECK(m.headers == expected);
  CAF_CHECK_EQUAL(m.message_id, "42"); // the relay's own, whatever a header said
  CAF_CHECK_EQUAL(published_event(j).trace_id, "0af7651916cd43dd8448eb211c80319c");
  j.headers = {{"traceparent", "00-bad"}, {"tenant", "t1"}};
  CAF_CHECK(job_message(j).headers == (header_map{{"tenant", "t1"}}));
  CAF_CHECK_EQUAL(published_event(j).trace_id, "");
  event ev;
  ev.event_type = "t";
  ev.payload = "{}";
  ev.headers = {{"traceparent", tp}, {"outboxDirect", "false"}};
  auto direct = direct_job_message("J", "q", ev, uuid, 0);
  CAF_CHECK(direct.headers == (header_map{{"traceparent", tp}}));
}

CAF_TEST(headers past the frame budget stay behind with the trace context first) {
  header_map h{{"traceparent", tp}};
  for (int i = 0; i < 64; ++i)
    h["h" + std::to_string(100 + i)] = std::string(4000, 'v');
  auto out = wire_headers(h);
  size_t bytes = 0;
  for (auto& [k, v] : out)
    bytes += k.size() + v.size();
  CAF_CHECK_LESS_OR_EQUAL(bytes, max_wire_header_bytes);
  CAF_CHECK_EQUAL(out.count("traceparent"), 1u);
  CAF_CHECK_EQUAL(out.count("h100"), 1u); // then by name
  CAF_CHECK_EQUAL(out.count("h163"), 0u);
}

CAF_TEST(headers_from_json takes the string members of an object only) {
  CAF_CHECK(headers_from_json("").empty());
  CAF_CHECK(headers_from_json("[1]").empty());
  CAF_CHECK(headers_from_json("{oops").empty());
  CAF_CHECK(headers_from_json(R"({"a":"1","b":2,"c":null})")
            == (header_map{{"a", "1"}}));
}

CAF_TEST(results carry the traceparent of the job in the body and as a header) {
  send_result r;
  r.delivery_id = 42;
  r.dispatch_id = uuid;
  r.job = "J";
  r.traceparent = tp;
  auto m = result_message("q", r);
  CAF_CHECK_EQUAL(m.headers.at("traceparent"), tp);
  auto back = read_result_message(m.body);
  CAF_REQUIRE_EQUAL(back.results.size(), 1u);
  CAF_CHECK_EQUAL(back.results[0].traceparent, tp);
  // An array answers jobs of many traces: each entry has its own.
  auto other = r;
  other.delivery_id = 43;
  other.traceparent.clear();
  auto batch = result_batch_messages("q", {r, other});
  CAF_REQUIRE_EQUAL(batch.size(), 1u);
  auto both = read_result_message(batch[0].body);
  CAF_REQUIRE_EQUAL(both.results.size(), 2u);
  CAF_CHECK_EQUAL(both.results[0].traceparent, tp);
  CAF_CHECK_EQUAL(both.results[1].traceparent, "");
  CAF_CHECK(result_message("q", other).headers.empty());
}

CAF_TEST(a result traceparent is dropped when broken and refused when no string) {
  const std::string head = R"({"outboxDeliveryId":"42","outboxDispatchId":")" + uuid
                           + R"(","job":"J","outcome":"completed","traceparent":)";
  auto broken = read_result_message(head + R"("00-nope"})");
  CAF_REQUIRE_EQUAL(broken.results.size(), 1u);
  CAF_CHECK_EQUAL(broken.results[0].traceparent, "");
  auto mistyped = read_result_message(head + "1}");
  CAF_CHECK(mistyped.results.empty());
  CAF_REQUIRE_EQUAL(mistyped.refused.size(), 1u);
  CAF_CHECK_EQUAL(mistyped.refused[0], "result message: traceparent must be a string");
}

CAF_TEST(lifecycle events of a delivery take the trace id the pass knows) {
  std::vector<lifecycle_event> events(2);
  events[0].delivery_id = 1;
  events[1].delivery_id = 2;
  add_trace_ids(events, {{1, "0af7651916cd43dd8448eb211c80319c"}});
  CAF_CHECK_EQUAL(events[0].trace_id, "0af7651916cd43dd8448eb211c80319c");
  CAF_CHECK_EQUAL(events[1].trace_id, "");
  CAF_CHECK_EQUAL(stored_event(1, "t", trace_id_of(header_map{{"traceparent", tp}})).trace_id,
                  "0af7651916cd43dd8448eb211c80319c");
}
