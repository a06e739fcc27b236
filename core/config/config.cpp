#include "core/config/config.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <libpq-fe.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/amqp/amqp_client.hpp"
#include "core/base/errors.hpp"
#include "core/json/json_parse.hpp"
#include "core/base/small_file.hpp"
#include "core/base/text.hpp"

namespace outbox {

namespace {

using json = rapidjson::Value;

// Collects every problem with its path, so that one run reports them all.
class problems {
public:
  void add(const std::string& path, const std::string& rule) {
    lines_.push_back(path + ": " + rule);
  }
  void add(const std::string& path, const json& value,
           const std::string& rule) {
    lines_.push_back(path + " = " + show(value) + ": " + rule);
  }
  bool empty() const { return lines_.empty(); }
  std::string text() const { return join(lines_, "\n"); }

private:
  // Shows a (never secret) value as JSON, cut to keep lines readable.
  static std::string show(const json& value) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    value.Accept(w);
    std::string s = sb.GetString();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
  }
  std::vector<std::string> lines_;
};

// The key as it would be written in JSON, so that a control character in
// it cannot garble the message.
std::string quoted(const std::string& key) {
  std::string out = "[\"";
  for (char c : key) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += {'\\', c};
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"]";
}

// Reports keys outside `allowed` and keys given twice (RapidJSON keeps both).
void check_keys(const json& obj, const std::string& path,
                std::initializer_list<const char*> allowed, problems& errs) {
  std::set<std::string> seen;
  for (auto& m : obj.GetObject()) {
    std::string key{m.name.GetString(), m.name.GetStringLength()};
    auto prefix = path.empty() ? key : path + "." + key;
    if (!seen.insert(key).second)
      errs.add(prefix, "given more than once");
    if (std::none_of(allowed.begin(), allowed.end(),
                     [&](const char* k) { return key == k; }))
      errs.add(prefix, "unknown key");
  }
}

bool read_int(const json& v, const std::string& path, int64_t lo, int64_t hi,
              const char* rule, problems& errs, int64_t& out) {
  if (!v.IsInt64() || v.GetInt64() < lo || v.GetInt64() > hi) {
    errs.add(path, v, rule);
    return false;
  }
  out = v.GetInt64();
  return true;
}

void read_string(const json& v, const std::string& path, problems& errs,
                 std::string& out) {
  if (!v.IsString() || v.GetStringLength() == 0) {
    errs.add(path, v, "must be a non-empty string");
    return;
  }
  out.assign(v.GetString(), v.GetStringLength());
}

void read_identifier(const json& v, const std::string& path, problems& errs,
                     std::string& out) {
  std::string name;
  read_string(v, path, errs, name);
  if (name.empty())
    return;
  if (auto rule = check_identifier(name); !rule.empty())
    errs.add(path, v, rule);
  else
    out = name;
}

// Names that travel as AMQP short strings (the job in the message's type,
// the queue as its routing key) must be ones the broker and every worker
// take: at most 255 bytes, valid UTF-8, no control characters.
void read_amqp_name(const json& v, const std::string& path, size_t max_bytes,
                    problems& errs, std::string& out) {
  std::string name;
  read_string(v, path, errs, name);
  if (name.empty())
    return;
  if (auto rule = check_amqp_name(name, max_bytes); !rule.empty())
    errs.add(path, v, rule);
  else
    out = std::move(name);
}

void read_queue(const json& v, const std::string& path, problems& errs,
                std::string& out) {
  // The results queue appends ".results" to the 255 bytes AMQP allows.
  read_amqp_name(v, path, 247, errs, out);
  if (out.rfind("amq.", 0) == 0) {
    errs.add(path, v, "must not start with \"amq.\" (reserved by RabbitMQ)");
    out.clear();
  }
}

void read_rules(const json& obj, const std::string& path, problems& errs,
                delivery_rules& rules) {
  int64_t n = 0;
  if (auto it = obj.FindMember("retryDelaysSeconds"); it != obj.MemberEnd()) {
    auto p = path + ".retryDelaysSeconds";
    if (!it->value.IsArray()) {
      errs.add(p, it->value, "must be a list of positive integers");
    } else {
      rules.retry_delays_seconds.clear();
      for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i)
        if (read_int(it->value[i], p + "[" + std::to_string(i) + "]", 1,
                     INT32_MAX, "must be a positive integer", errs, n))
          rules.retry_delays_seconds.push_back(static_cast<int32_t>(n));
    }
  }
  if (auto it = obj.FindMember("repeatLastDelay"); it != obj.MemberEnd()) {
    if (it->value.IsBool())
      rules.repeat_last_delay = it->value.GetBool();
    else
      errs.add(path + ".repeatLastDelay", it->value, "must be true or false");
  }
  if (auto it = obj.FindMember("deliveryTimeoutSeconds");
      it != obj.MemberEnd()
      && read_int(it->value, path + ".deliveryTimeoutSeconds", 1, INT32_MAX,
                  "must be a positive integer", errs, n))
    rules.delivery_timeout_seconds = static_cast<int32_t>(n);
  if (auto it = obj.FindMember("ttlSeconds");
      it != obj.MemberEnd()
      && read_int(it->value, path + ".ttlSeconds", 0, INT32_MAX,
                  "must be an integer >= 0", errs, n))
    rules.ttl_seconds = n;
  if (auto it = obj.FindMember("merge"); it != obj.MemberEnd()) {
    auto mode = it->value.IsString()
                  ? parse_merge_mode(it->value.GetString())
                  : std::nullopt;
    if (mode)
      rules.merge = *mode;
    else
      errs.add(path + ".merge", it->value,
               "must be one of \"replace\", \"json-merge\", \"none\"");
  }
}

void read_route(const json& obj, const std::string& event_type,
                const std::string& path, int64_t default_ttl, problems& errs,
                std::vector<route>& out) {
  if (!obj.IsObject()) {
    errs.add(path, obj, "must be an object");
    return;
  }
  check_keys(obj, path,
             {"job", "queue", "retryDelaysSeconds", "repeatLastDelay",
              "deliveryTimeoutSeconds", "ttlSeconds", "merge"},
             errs);
  route r;
  r.event_type = event_type;
  r.rules.ttl_seconds = default_ttl; // the route's own ttlSeconds wins
  for (auto key : {"job", "queue"})
    if (!obj.HasMember(key))
      errs.add(path + "." + key, "is required");
  if (obj.HasMember("job"))
    read_amqp_name(obj["job"], path + ".job", 255, errs, r.job);
  if (obj.HasMember("queue"))
    read_queue(obj["queue"], path + ".queue", errs, r.queue);
  read_rules(obj, path, errs, r.rules);
  for (auto& other : out)
    if (other.event_type == event_type && other.job == r.job
        && other.queue == r.queue && !r.job.empty())
      errs.add(path, "repeats job \"" + r.job + "\" on queue \"" + r.queue
                       + "\" of an earlier route of this event type");
  out.push_back(std::move(r));
}

void read_routes(const json& v, int64_t default_ttl, problems& errs,
                 std::vector<route>& out) {
  if (!v.IsObject()) {
    errs.add("routes", v, "must be an object of event type -> list of routes");
    return;
  }
  std::set<std::string> seen;
  for (auto& m : v.GetObject()) {
    std::string type{m.name.GetString(), m.name.GetStringLength()};
    auto path = "routes" + quoted(type);
    if (type.empty())
      errs.add(path, "an event type must not be empty");
    else if (auto rule = check_amqp_name(type, 255); !rule.empty())
      errs.add(path, "an event type " + rule);
    if (!seen.insert(type).second) {
      errs.add(path, "given more than once (list all its routes in one entry)");
      continue;
    }
    if (!m.value.IsArray() || m.value.Empty()) {
      errs.add(path, m.value, "must be a non-empty list of routes");
      continue;
    }
    for (rapidjson::SizeType i = 0; i < m.value.Size(); ++i)
      read_route(m.value[i], type, path + "[" + std::to_string(i) + "]",
                 default_ttl, errs, out);
  }
}

// Checks the URL's syntax without echoing it: it may hold a password.
void check_database_url(const std::string& url, const char* source,
                        problems& errs) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (opts == nullptr)
    errs.add(source, "is not a valid libpq connection URI or key=value string");
  PQconninfoFree(opts);
  PQfreemem(err);
}

void check_amqp_url(const std::string& url, const char* source,
                    problems& errs) {
  if (auto parts = parse_amqp_url(url); !parts)
    errs.add(source, context_of(parts.error()));
}

// Lets the environment override a URL; returns where the value came from.
const char* override_from_env(env_lookup env, const char* var,
                              const char* key, std::string& value) {
  auto from_env = env(var);
  if (from_env.empty())
    return key;
  value = std::move(from_env);
  return var;
}

// `except`: glob patterns (fnmatch: `*`, `?`, `[...]`) of event types
// published straight to RabbitMQ instead of through the outbox.
void read_direct_patterns(const json& v, problems& errs,
                          std::vector<std::string>& out) {
  if (!v.IsArray()) {
    errs.add("except", v, "must be an array of event type patterns");
    return;
  }
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    auto path = "except[" + std::to_string(i) + "]";
    auto& p = v[i];
    if (!p.IsString() || p.GetStringLength() == 0 || p.GetStringLength() > 255)
      errs.add(path, p, "must be a pattern of 1 to 255 bytes, e.g. \"metrics.*\"");
    else
      out.emplace_back(p.GetString(), p.GetStringLength());
  }
}

// OUTBOX_ENABLED=false turns the outbox off for every event type (tests,
// or an emergency), whatever the file says.
void read_enabled_override(env_lookup env, problems& errs, config& cfg) {
  auto v = env("OUTBOX_ENABLED");
  if (v.empty())
    return;
  if (v == "true" || v == "1")
    cfg.enabled = true;
  else if (v == "false" || v == "0")
    cfg.enabled = false;
  else
    errs.add("OUTBOX_ENABLED", "must be true, false, 1 or 0");
}

void read_top_level(const json& doc, problems& errs, config& cfg) {
  check_keys(doc, "",
             {"databaseUrl", "amqpUrl", "eventsTableName",
              "deliveriesTableName", "migrationsTableName",
              "publishFunctionName", "batchSize", "maxInFlight", "ttlSeconds",
              "deliverImmediately", "routerLingerMs",
              "routerLingerMinEvents", "enabled", "except", "routes"},
             errs);
  for (auto [key, out] :
       {std::pair{"databaseUrl", &cfg.database_url},
        std::pair{"amqpUrl", &cfg.amqp_url}}) {
    if (auto it = doc.FindMember(key); it != doc.MemberEnd()) {
      if (it->value.IsString() && it->value.GetStringLength() > 0)
        out->assign(it->value.GetString(), it->value.GetStringLength());
      else
        errs.add(key, "must be a non-empty string");
    }
  }
  for (auto [key, out] :
       {std::pair{"eventsTableName", &cfg.names.events},
        std::pair{"deliveriesTableName", &cfg.names.deliveries},
        std::pair{"migrationsTableName", &cfg.names.migrations},
        std::pair{"publishFunctionName", &cfg.names.publish_function}})
    if (auto it = doc.FindMember(key); it != doc.MemberEnd())
      read_identifier(it->value, key, errs, *out);
  int64_t n = 0;
  if (auto it = doc.FindMember("batchSize");
      it != doc.MemberEnd()
      && read_int(it->value, "batchSize", 1, 10000,
                  "must be an integer from 1 to 10000", errs, n))
    cfg.batch_size = static_cast<int32_t>(n);
  if (auto it = doc.FindMember("maxInFlight");
      it != doc.MemberEnd()
      && read_int(it->value, "maxInFlight", 1, 100000,
                  "must be an integer from 1 to 100000", errs, n))
    cfg.max_in_flight = static_cast<int32_t>(n);
  if (auto it = doc.FindMember("deliverImmediately"); it != doc.MemberEnd()) {
    if (it->value.IsBool())
      cfg.deliver_immediately = it->value.GetBool();
    else
      errs.add("deliverImmediately", it->value, "must be true or false");
  }
  if (auto it = doc.FindMember("routerLingerMs");
      it != doc.MemberEnd()
      && read_int(it->value, "routerLingerMs", 0, 1000,
                  "must be an integer from 0 to 1000", errs, n))
    cfg.router_linger_ms = static_cast<int32_t>(n);
  if (auto it = doc.FindMember("routerLingerMinEvents");
      it != doc.MemberEnd()
      && read_int(it->value, "routerLingerMinEvents", 1, 10000,
                  "must be an integer from 1 to 10000", errs, n))
    cfg.router_linger_min_events = static_cast<int32_t>(n);
  if (auto it = doc.FindMember("enabled"); it != doc.MemberEnd()) {
    if (it->value.IsBool())
      cfg.enabled = it->value.GetBool();
    else
      errs.add("enabled", it->value, "must be true or false");
  }
  if (auto it = doc.FindMember("except"); it != doc.MemberEnd())
    read_direct_patterns(it->value, errs, cfg.direct_patterns);
  int64_t default_ttl = 0;
  if (auto it = doc.FindMember("ttlSeconds");
      it != doc.MemberEnd()
      && read_int(it->value, "ttlSeconds", 0, INT32_MAX,
                  "must be an integer >= 0", errs, n))
    default_ttl = n;
  if (auto it = doc.FindMember("routes"); it != doc.MemberEnd())
    read_routes(it->value, default_ttl, errs, cfg.routes);
  else
    errs.add("routes", "is required");
}

void check_distinct_names(const schema_names& n, problems& errs) {
  std::set<std::string> tables{n.events, n.deliveries, n.migrations};
  if (tables.size() != 3)
    errs.add("eventsTableName/deliveriesTableName/migrationsTableName",
             "must be three different names");
}

} // namespace

std::string process_env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<route> config::routes_for(const std::string& event_type) const {
  std::vector<route> out;
  for (auto& r : routes)
    if (r.event_type == event_type)
      out.push_back(r);
  return out;
}

bool config::publishes_directly(const std::string& event_type) const {
  if (!enabled)
    return true;
  for (auto& p : direct_patterns)
    if (fnmatch(p.c_str(), event_type.c_str(), 0) == 0)
      return true;
  return false;
}

std::vector<std::string> config::queues() const {
  std::set<std::string> qs;
  for (auto& r : routes)
    qs.insert(r.queue);
  return {qs.begin(), qs.end()};
}

caf::expected<config> parse_config(const std::string& text, env_lookup env) {
  rapidjson::Document doc;
  if (auto why = parse_json(text, config_json_limits, doc))
    return make_error(errc::config_unreadable, *why);
  if (!doc.IsObject())
    return make_error(errc::config_unreadable, "the top level must be an object");
  config cfg;
  problems errs;
  read_top_level(doc, errs, cfg);
  check_distinct_names(cfg.names, errs);
  auto db_source = override_from_env(env, "OUTBOX_DATABASE_URL",
                                     "databaseUrl", cfg.database_url);
  auto amqp_source = override_from_env(env, "OUTBOX_AMQP_URL", "amqpUrl",
                                       cfg.amqp_url);
  read_enabled_override(env, errs, cfg);
  check_database_url(cfg.database_url, db_source, errs);
  check_amqp_url(cfg.amqp_url, amqp_source, errs);
  if (!errs.empty())
    return make_error(errc::config_invalid, errs.text());
  return cfg;
}

caf::expected<config> load_config(const std::string& path, env_lookup env) {
  auto text = read_small_file(path, config_json_limits.max_bytes);
  if (!text)
    return make_error(errc::config_unreadable,
                      "cannot open config file \"" + path + "\": "
                        + context_of(text.error()));
  return parse_config(*text, env);
}

} // namespace outbox
