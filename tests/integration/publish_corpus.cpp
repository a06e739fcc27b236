// The corpus of publish inputs (tests/corpus/publish_inputs.json, made by
// tests/corpus/make_publish_inputs.py) through both doors: the SQL
// function and the C++ API (db_event_store::add). Each input must end as
// the corpus says: accepted, or refused with OB001 / invalid_event. Then
// every accepted event must route, be claimed and complete, its payload
// readable by RapidJSON as a worker reads it: nothing accepted stops a
// later stage.
#define CAF_SUITE integration.publish_corpus
#include <caf/test/unit_test.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"
#include "core/pg/claim_repository.hpp"
#include "core/pg/result_repository.hpp"
#include "core/pg/routing_repository.hpp"
#include "core/producer/event_store.hpp"
#include "tests/integration/test_services.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

using json = rapidjson::Value;

// A string field: a string, or a list of parts (see the generator).
std::string text_of(const json& v) {
  if (v.IsString())
    return {v.GetString(), v.GetStringLength()};
  std::string out;
  for (auto& part : v.GetArray()) {
    if (part.IsString()) {
      out.append(part.GetString(), part.GetStringLength());
    } else if (part.HasMember("repeat")) {
      std::string s = part["repeat"].GetString();
      for (int64_t i = 0; i < part["times"].GetInt64(); ++i)
        out += s;
    } else {
      std::string hex = part["hex"].GetString();
      for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
  }
  return out;
}

pg_param optional_text(const json& c, const char* field) {
  if (!c.HasMember(field) || c[field].IsNull())
    return std::nullopt;
  return text_of(c[field]);
}

// Escapes a string for a JSON text (the SQL side's headers argument).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

// The headers as the C++ side takes them; nullopt when a value is no
// string (the SQL side alone can express that).
std::optional<std::map<std::string, std::string>> header_map(const json& h) {
  std::map<std::string, std::string> out;
  if (h.HasMember("generate")) {
    auto n = h["generate"].GetInt();
    auto name_bytes = static_cast<size_t>(h["name_bytes"].GetInt());
    for (int i = 0; i < n; ++i) {
      auto number = std::to_string(i);
      std::string name = "h" + std::string(name_bytes - 1 - number.size(), '0') + number;
      out[name] = std::string(static_cast<size_t>(h["value_bytes"].GetInt()), 'v');
    }
    return out;
  }
  for (auto& m : h.GetObject()) {
    if (!m.value.IsString() && !m.value.IsArray())
      return std::nullopt;
    out[std::string{m.name.GetString(), m.name.GetStringLength()}] = text_of(m.value);
  }
  return out;
}

pg_param headers_sql(const json& c) {
  if (!c.HasMember("headers") || c["headers"].IsNull())
    return std::nullopt;
  auto& h = c["headers"];
  if (auto m = h.IsObject() ? header_map(h) : std::nullopt) {
    std::string out = "{";
    for (auto& [k, v] : *m)
      out += (out.size() > 1 ? "," : "") + quoted(k) + ":" + quoted(v);
    return out + "}";
  }
  // A value the C++ side cannot take (no object, or values no strings):
  // written as the corpus has it.
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  h.Accept(w);
  return std::string{sb.GetString()};
}

struct corpus_case {
  std::string name, only;
  bool accepted = false;
  pg_params sql; // the seven arguments as text
  std::optional<event> cpp;
};

std::vector<corpus_case> load_corpus() {
  std::ifstream in{std::string{OUTBOX_SOURCE_DIR} + "/tests/corpus/publish_inputs.json"};
  std::stringstream buf;
  buf << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(buf.str().c_str());
  if (doc.HasParseError() || !doc.IsArray())
    CAF_FAIL("tests/corpus/publish_inputs.json is not a JSON array");
  std::vector<corpus_case> out;
  for (auto& c : doc.GetArray()) {
    corpus_case k;
    k.name = c["name"].GetString();
    k.only = c.HasMember("only") ? c["only"].GetString() : "";
    k.accepted = std::string{c["expected"].GetString()} == "accepted";
    auto type = optional_text(c, "event_type");
    auto payload = optional_text(c, "payload");
    pg_param content = std::string{"application/json"};
    if (c.HasMember("content_type"))
      content = optional_text(c, "content_type");
    pg_param ttl;
    if (c.HasMember("ttl_seconds"))
      ttl = std::to_string(c["ttl_seconds"].GetInt64());
    auto expires = optional_text(c, "expires_at");
    k.sql = {type, payload, optional_text(c, "key"), ttl, headers_sql(c), expires,
             content};
    if (k.only != "sql") {
      event ev;
      ev.event_type = type.value_or("");
      ev.payload = payload.value_or("");
      ev.content_type = content.value_or("");
      ev.key = optional_text(c, "key");
      if (ttl)
        ev.ttl_seconds = c["ttl_seconds"].GetInt64();
      if (expires) {
        if (auto t = parse_timestamp(*expires))
          ev.expires_at = *t;
        else if (c.HasMember("cpp_expires_at"))
          ev.expires_at = std::string{c["cpp_expires_at"].GetString()} == "max"
                            ? time_point::max()
                            : time_point::min();
        else
          CAF_FAIL(k.name << ": expires_at needs cpp_expires_at");
      }
      if (c.HasMember("headers") && !c["headers"].IsNull()) {
        auto m = header_map(c["headers"]);
        if (!m)
          CAF_FAIL(k.name << ": headers the C++ side cannot take need only=sql");
        ev.headers = std::move(*m);
      }
      k.cpp = std::move(ev);
    }
    out.push_back(std::move(k));
  }
  return out;
}

struct fixture : schema_fixture {
  db_event_store store{names};

  // True when accepted; a refusal must be the function's own (OB001).
  bool through_sql(const corpus_case& c) {
    auto r = db.exec("publish",
                     "SELECT " + names.publish_function
                       + "($1, $2, $3, $4::bigint, $5::jsonb, $6::timestamptz, $7)",
                     c.sql);
    if (r)
      return true;
    auto text = context_of(r.error());
    if (text.rfind(names.publish_function + ": ", 0) != 0)
      CAF_FAIL(c.name << ": SQL refused it without OB001: " << render(r.error()));
    return false;
  }

  // True when accepted (and committed); a refusal must be invalid_event or
  // the SQL function's OB001 passed through.
  bool through_cpp(const corpus_case& c) {
    if (auto err = db.begin())
      CAF_FAIL("BEGIN failed: " << render(err));
    auto id = store.add(db.native(), *c.cpp);
    if (id) {
      if (auto err = db.commit())
        CAF_FAIL(c.name << ": commit failed: " << render(err));
      return true;
    }
    db.rollback();
    auto& err = id.error();
    bool ours = err == errc::invalid_event
                || (err == errc::database_error
                    && context_of(err).rfind(names.publish_function + ": ", 0) == 0);
    if (!ours)
      CAF_FAIL(c.name << ": C++ refused it unclearly: " << render(err));
    return false;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(publish_corpus_tests, fixture)

CAF_TEST(every corpus input ends as expected through both doors) {
  auto corpus = load_corpus();
  CAF_REQUIRE_GREATER_OR_EQUAL(corpus.size(), 100u);
  int64_t accepted = 0;
  std::set<std::string> types;
  for (auto& c : corpus) {
    if (c.only != "cpp") {
      auto ok = through_sql(c);
      if (ok != c.accepted)
        CAF_ERROR(c.name << ": the SQL function " << (ok ? "accepted" : "refused") << " it");
      accepted += ok;
    }
    if (c.cpp) {
      if (c.accepted)
        if (!(!validate_event(*c.cpp)))
    CAF_ERROR(c.name << ": validate_event refused it");
      auto ok = through_cpp(c);
      if (ok != c.accepted)
        CAF_ERROR(c.name << ": the C++ API " << (ok ? "accepted" : "refused") << " it");
      accepted += ok;
    }
    if (c.accepted)
      types.insert(c.cpp ? c.cpp->event_type : *c.sql[0]);
  }
  auto stored = must_exec(db, "SELECT count(*) FROM " + names.events).int64(0, 0);
  CAF_CHECK_EQUAL(stored, accepted);
  // Every accepted event goes through every later stage, and a good one
  // published after the corpus as well.
  auto good = publish("t.key", R"({"k":2})", "good");
  types.insert("t.key");
  std::vector<route> routes;
  for (auto& t : types) {
    route r;
    r.event_type = t;
    r.job = "J";
    r.queue = "q";
    r.rules.retry_delays_seconds = {60};
    routes.push_back(r);
  }
  routing_repository router{names, routes};
  int64_t routed = 0;
  for (;;) {
    auto r = router.route_batch(db, 50);
    if (!(r))
    CAF_FAIL("routing failed: " << render(r.error()));
    CAF_CHECK_EQUAL(r->events_quarantined, 0);
    routed += r->events_routed;
    if (r->events_routed == 0)
      break;
  }
  CAF_CHECK_EQUAL(routed, stored + 1);
  claim_repository claims{names};
  result_repository results{names};
  bool good_sent = false;
  for (;;) {
    auto c = claims.claim_batch(db, {"q", 50});
    if (!(c))
    CAF_FAIL("claim failed: " << render(c.error()));
    CAF_CHECK_EQUAL(c->quarantined, 0);
    if (c->jobs.empty() && c->expired == 0)
      break;
    std::vector<send_result> done;
    for (auto& j : c->jobs) {
      good_sent |= j.event_id == good;
      if (j.content_type == "application/json") {
        rapidjson::Document doc; // as a worker reads the payload
        doc.Parse(j.payload.data(), j.payload.size());
        if (!(!doc.HasParseError()))
    CAF_ERROR("event " << j.event_id << ": a worker cannot parse it");
      }
      done.push_back({j.delivery_id, j.dispatch_id, j.job, outcome::completed, "", {}});
    }
    auto a = results.apply_results(db, done);
    CAF_REQUIRE(a);
    CAF_CHECK_EQUAL(a->completed, static_cast<int64_t>(done.size()));
  }
  CAF_CHECK(good_sent);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + names.deliveries
                                  + " WHERE status NOT IN ('completed', 'expired', 'superseded')")
                    .int64(0, 0),
                  0);
  CAF_CHECK_EQUAL(must_exec(db, "SELECT count(*) FROM " + all_deliveries(names)
                                  + " d JOIN " + names.events
                                  + " e ON e.id = d.event_id WHERE d.status = 'completed'"
                                    " AND e.id = " + std::to_string(good))
                    .int64(0, 0),
                  1);
}

CAF_TEST_FIXTURE_SCOPE_END()
