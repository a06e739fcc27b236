#include "core/config/config.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <variant>

#include <libpq-fe.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/amqp/amqp_client.hpp"
#include "core/amqp/amqp_url_list.hpp"
#include "core/base/errors.hpp"
#include "core/base/small_file.hpp"
#include "core/base/text.hpp"
#include "core/json/json_parse.hpp"

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

// The wording of an integer's range, from its limits.
std::string integer_rule(int64_t lo, int64_t hi) {
  if (hi == INT32_MAX)
    return lo == 1 ? "must be a positive integer"
                   : "must be an integer >= " + std::to_string(lo);
  return "must be an integer from " + std::to_string(lo) + " to "
         + std::to_string(hi);
}

bool read_int(const json& v, const std::string& path, int64_t lo, int64_t hi,
              problems& errs, int64_t& out) {
  if (!v.IsInt64() || v.GetInt64() < lo || v.GetInt64() > hi) {
    errs.add(path, v, integer_rule(lo, hi));
    return false;
  }
  out = v.GetInt64();
  return true;
}

void read_flag(const json& v, const std::string& path, problems& errs,
               bool& out) {
  if (v.IsBool())
    out = v.GetBool();
  else
    errs.add(path, v, "must be true or false");
}

void read_string(const json& v, const std::string& path, problems& errs,
                 std::string& out) {
  if (!v.IsString() || v.GetStringLength() == 0) {
    errs.add(path, v, "must be a non-empty string");
    return;
  }
  out.assign(v.GetString(), v.GetStringLength());
}

// A URL may hold a password: a bad one is never echoed.
void read_secret(const json& v, const std::string& path, problems& errs,
                 std::string& out) {
  if (v.IsString() && v.GetStringLength() > 0)
    out.assign(v.GetString(), v.GetStringLength());
  else
    errs.add(path, "must be a non-empty string");
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
  std::string name;
  read_string(v, path, errs, name);
  if (name.empty())
    return;
  if (auto rule = check_queue_name(name); !rule.empty())
    errs.add(path, v, rule);
  else
    out = std::move(name);
}

void read_delays(const json& v, const std::string& path, problems& errs,
                 std::vector<int32_t>& out) {
  if (!v.IsArray()) {
    errs.add(path, v, "must be a list of positive integers");
    return;
  }
  out.clear();
  int64_t n = 0;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
    if (read_int(v[i], path + "[" + std::to_string(i) + "]", 1, INT32_MAX,
                 errs, n))
      out.push_back(static_cast<int32_t>(n));
}

void read_merge(const json& v, const std::string& path, problems& errs,
                merge_mode& out) {
  auto mode = v.IsString() ? parse_merge_mode(v.GetString()) : std::nullopt;
  if (mode)
    out = *mode;
  else
    errs.add(path, v, "must be one of \"replace\", \"json-merge\", \"none\"");
}

void read_ordering(const json& v, const std::string& path, problems& errs,
                   key_ordering& out) {
  auto x = v.IsString() ? parse_key_ordering(v.GetString()) : std::nullopt;
  if (x)
    out = *x;
  else
    errs.add(path, v, "must be \"none\" or \"key\"");
}

void read_on_failure(const json& v, const std::string& path, problems& errs,
                     failure_policy& out) {
  auto x = v.IsString() ? parse_failure_policy(v.GetString()) : std::nullopt;
  if (x)
    out = *x;
  else
    errs.add(path, v, "must be \"continue\" or \"block\"");
}

void read_queue_type(const json& v, const std::string& path, problems& errs,
                     queue_type& out) {
  auto type = v.IsString() ? parse_queue_type(v.GetString()) : std::nullopt;
  if (type)
    out = *type;
  else
    errs.add(path, v, "must be \"classic\" or \"quorum\"");
}

// `except`: glob patterns (fnmatch: `*`, `?`, `[...]`) of event types
// published straight to RabbitMQ instead of through the outbox.
void read_direct_patterns(const json& v, const std::string& path,
                          problems& errs, std::vector<std::string>& out) {
  if (!v.IsArray()) {
    errs.add(path, v, "must be an array of event type patterns");
    return;
  }
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    auto at = path + "[" + std::to_string(i) + "]";
    auto& p = v[i];
    if (!p.IsString() || p.GetStringLength() == 0 || p.GetStringLength() > 255)
      errs.add(at, p, "must be a pattern of 1 to 255 bytes, e.g. \"metrics.*\"");
    else
      out.emplace_back(p.GetString(), p.GetStringLength());
  }
}

// A retention window: hours, fractional allowed (tests use windows of
// seconds); 0 keeps that status forever.
void read_hours(const json& v, const std::string& path, problems& errs,
                double& out) {
  if (!v.IsNumber() || v.GetDouble() < 0 || v.GetDouble() > max_retention_hours) {
    errs.add(path, v,
             "must be a number of hours from 0 (keep forever) to 876000, "
             "e.g. 6 or 0.5");
    return;
  }
  out = v.GetDouble();
}

// What a key holds: decides how its value is read and what a bad one is
// told.
enum class key_kind {
  secret,     // a non-empty string never echoed (URLs)
  identifier, // a table or function name
  job,        // an AMQP short string
  queue,      // a job queue (room for ".results", not amq.*)
  integer,    // in [lo, hi]
  flag,       // true or false
  delays,     // a list of positive integers
  merge,      // a merge mode
  queue_type, // classic or quorum
  ordering,   // none or key
  on_failure, // continue or block
  patterns,   // `except`
  routes,     // event type -> list of routes
  hours,      // a number of hours, fractional allowed, 0 = forever
  retention,  // `retentionHours`: false, or hours per final status
};

// The routes, and the top-level ttlSeconds and queueType for those without
// their own (read before them: they come first in the table); every routed
// queue's type goes to `types`.
struct routes_target {
  std::vector<route>* routes;
  const int64_t* default_ttl;
  const queue_type* default_type;
  std::map<std::string, queue_type>* types;
};

// Where a key's value goes.
using destination
  = std::variant<std::string*, int32_t*, int64_t*, bool*, std::vector<int32_t>*,
                 merge_mode*, queue_type*, key_ordering*, failure_policy*,
                 std::vector<std::string>*, routes_target, double*,
                 retention_policy*>;

// One key of a JSON object: its name, kind, destination and limits. A
// table of these drives reading, the unknown-key refusal and the wording.
struct key_spec {
  const char* name;
  key_kind kind;
  destination out;
  int64_t lo = 0, hi = 0; // integer only
  bool required = false;
};

using key_table = std::vector<key_spec>;

void read_routes(const json& v, const std::string& path,
                 const routes_target& t, problems& errs);
void read_retention(const json& v, const std::string& path, problems& errs,
                    retention_policy& out);

template <class T>
T& target(const key_spec& k) {
  return *std::get<T*>(k.out);
}

void read_integer(const json& v, const std::string& path, const key_spec& k,
                  problems& errs) {
  int64_t n = 0;
  if (!read_int(v, path, k.lo, k.hi, errs, n))
    return;
  if (auto out = std::get_if<int32_t*>(&k.out))
    **out = static_cast<int32_t>(n); // hi fits in int32_t for these
  else
    target<int64_t>(k) = n;
}

void read_value(const json& v, const std::string& path, const key_spec& k,
                problems& errs) {
  switch (k.kind) {
    case key_kind::secret:
      return read_secret(v, path, errs, target<std::string>(k));
    case key_kind::identifier:
      return read_identifier(v, path, errs, target<std::string>(k));
    case key_kind::job:
      return read_amqp_name(v, path, 255, errs, target<std::string>(k));
    case key_kind::queue:
      return read_queue(v, path, errs, target<std::string>(k));
    case key_kind::integer:
      return read_integer(v, path, k, errs);
    case key_kind::flag:
      return read_flag(v, path, errs, target<bool>(k));
    case key_kind::delays:
      return read_delays(v, path, errs, target<std::vector<int32_t>>(k));
    case key_kind::merge:
      return read_merge(v, path, errs, target<merge_mode>(k));
    case key_kind::patterns:
      return read_direct_patterns(v, path, errs,
                                  target<std::vector<std::string>>(k));
    case key_kind::queue_type:
      return read_queue_type(v, path, errs, target<queue_type>(k));
    case key_kind::ordering:
      return read_ordering(v, path, errs, target<key_ordering>(k));
    case key_kind::on_failure:
      return read_on_failure(v, path, errs, target<failure_policy>(k));
    case key_kind::routes:
      return read_routes(v, path, std::get<routes_target>(k.out), errs);
    case key_kind::hours:
      return read_hours(v, path, errs, target<double>(k));
    case key_kind::retention:
      return read_retention(v, path, errs, target<retention_policy>(k));
  }
}

// Reports keys outside the table and keys given twice (RapidJSON keeps
// both).
void check_keys(const json& obj, const std::string& path,
                const key_table& keys, problems& errs) {
  std::set<std::string> seen;
  for (auto& m : obj.GetObject()) {
    std::string key{m.name.GetString(), m.name.GetStringLength()};
    auto at = path.empty() ? key : path + "." + key;
    if (!seen.insert(key).second)
      errs.add(at, "given more than once");
    if (std::none_of(keys.begin(), keys.end(),
                     [&](const key_spec& k) { return key == k.name; }))
      errs.add(at, "unknown key");
  }
}

// Reads every key of the table that `obj` has, in the table's order.
void read_keys(const json& obj, const std::string& path, const key_table& keys,
               problems& errs) {
  check_keys(obj, path, keys, errs);
  for (auto& k : keys) {
    auto at = path.empty() ? std::string{k.name} : path + "." + k.name;
    if (auto it = obj.FindMember(k.name); it != obj.MemberEnd())
      read_value(it->value, at, k, errs);
    else if (k.required)
      errs.add(at, "is required");
  }
}

// `type` receives the route's queueType (a queue's, kept apart from the
// route's delivery rules).
key_table route_keys(route& r, queue_type& type) {
  auto& rules = r.rules;
  return {
    {"job", key_kind::job, &r.job, 0, 0, true},
    {"queue", key_kind::queue, &r.queue, 0, 0, true},
    {"retryDelaysSeconds", key_kind::delays, &rules.retry_delays_seconds},
    {"repeatLastDelay", key_kind::flag, &rules.repeat_last_delay},
    {"deliveryTimeoutSeconds", key_kind::integer,
     &rules.delivery_timeout_seconds, 1, INT32_MAX},
    {"ttlSeconds", key_kind::integer, &rules.ttl_seconds, 0, INT32_MAX},
    {"merge", key_kind::merge, &rules.merge},
    {"queueType", key_kind::queue_type, &type},
    {"ordering", key_kind::ordering, &rules.ordering},
    {"onFailure", key_kind::on_failure, &rules.on_failure},
  };
}

key_table retention_keys(retention_policy& r) {
  return {
    {"completed", key_kind::hours, &r.completed_hours},
    {"superseded", key_kind::hours, &r.superseded_hours},
    {"failed", key_kind::hours, &r.failed_hours},
    {"expired", key_kind::hours, &r.expired_hours},
  };
}

// `retentionHours`: false keeps every delivery (outboxctl prune is left);
// an object sets the window of each final status it names, the others
// keep their defaults.
void read_retention(const json& v, const std::string& path, problems& errs,
                    retention_policy& out) {
  if (v.IsBool() && !v.GetBool()) {
    out.enabled = false;
    return;
  }
  if (!v.IsObject()) {
    errs.add(path, v,
             "must be an object of hours per final status (completed, "
             "superseded, failed, expired), or false to keep every delivery");
    return;
  }
  out.enabled = true;
  read_keys(v, path, retention_keys(out), errs);
}

// `ttl` receives the top-level ttlSeconds, which `routes` read (and
// queueType, c.default_queue_type).
key_table top_level_keys(config& c, int64_t& ttl) {
  auto& n = c.names;
  return {
    {"databaseUrl", key_kind::secret, &c.database_url},
    {"amqpUrl", key_kind::secret, &c.amqp_url},
    {"databaseUrlFile", key_kind::secret, &c.database_url_file},
    {"amqpUrlFile", key_kind::secret, &c.amqp_url_file},
    {"eventsTableName", key_kind::identifier, &n.events},
    {"deliveriesTableName", key_kind::identifier, &n.deliveries},
    {"migrationsTableName", key_kind::identifier, &n.migrations},
    {"publishFunctionName", key_kind::identifier, &n.publish_function},
    {"batchSize", key_kind::integer, &c.batch_size, 1, 10000},
    {"maxInFlight", key_kind::integer, &c.max_in_flight, 1, 100000},
    {"deliverImmediately", key_kind::flag, &c.deliver_immediately},
    {"routerLingerMs", key_kind::integer, &c.router_linger_ms, 0, 1000},
    {"routerLingerMinEvents", key_kind::integer, &c.router_linger_min_events,
     1, 10000},
    {"enabled", key_kind::flag, &c.enabled},
    {"except", key_kind::patterns, &c.direct_patterns},
    {"ttlSeconds", key_kind::integer, &ttl, 0, INT32_MAX},
    {"queueType", key_kind::queue_type, &c.default_queue_type},
    {"retentionHours", key_kind::retention, &c.retention},
    {"routes", key_kind::routes,
     routes_target{&c.routes, &ttl, &c.default_queue_type, &c.queue_types}, 0, 0,
     true},
  };
}

// A queue has one type: a route that gives its queue another type than an
// earlier route of that queue (its own queueType, or the default) is wrong.
void record_queue_type(const route& r, queue_type type, const std::string& path,
                       problems& errs, std::map<std::string, queue_type>& types) {
  if (r.queue.empty())
    return;
  auto [it, fresh] = types.emplace(r.queue, type);
  if (!fresh && it->second != type)
    errs.add(path, std::string{"gives queue \""} + r.queue + "\" the type \""
                     + to_string(type) + "\", an earlier route of it \""
                     + to_string(it->second)
                     + "\" (a queue has one type: give every route of it the "
                       "same queueType)");
}

// The deliveries of one job on one queue wait for each other by key or do
// not: an unordered route's deliveries would neither wait nor hold, and
// its coalescing would supersede ordered ones.
void check_orderings(const std::vector<route>& routes, const std::string& path,
                     problems& errs) {
  std::map<std::pair<std::string, std::string>, key_ordering> seen;
  for (auto& r : routes) {
    auto [it, fresh] = seen.emplace(std::make_pair(r.job, r.queue),
                                    r.rules.ordering);
    if (!fresh && it->second != r.rules.ordering) {
      errs.add(path, "job \"" + r.job + "\" on queue \"" + r.queue
                       + "\" is ordered by key on one route and not on another "
                         "(give every route of a job and queue the same "
                         "\"ordering\")");
      it->second = r.rules.ordering; // once per pair is enough
    }
  }
}

void read_route(const json& obj, const std::string& event_type,
                const std::string& path, const routes_target& t, problems& errs) {
  if (!obj.IsObject()) {
    errs.add(path, obj, "must be an object");
    return;
  }
  route r;
  r.event_type = event_type;
  r.rules.ttl_seconds = *t.default_ttl; // the route's own ttlSeconds wins
  auto type = *t.default_type;          // and its own queueType
  read_keys(obj, path, route_keys(r, type), errs);
  if (r.rules.on_failure == failure_policy::block_key
      && r.rules.ordering != key_ordering::key)
    errs.add(path + ".onFailure",
             "\"block\" needs \"ordering\": \"key\" (without ordering no "
             "delivery waits for another)");
  auto& out = *t.routes;
  for (auto& other : out)
    if (other.event_type == event_type && other.job == r.job
        && other.queue == r.queue && !r.job.empty())
      errs.add(path, "repeats job \"" + r.job + "\" on queue \"" + r.queue
                       + "\" of an earlier route of this event type");
  record_queue_type(r, type, path, errs, *t.types);
  out.push_back(std::move(r));
}

void read_routes(const json& v, const std::string& path,
                 const routes_target& t, problems& errs) {
  if (!v.IsObject()) {
    errs.add(path, v, "must be an object of event type -> list of routes");
    return;
  }
  std::set<std::string> seen;
  for (auto& m : v.GetObject()) {
    std::string type{m.name.GetString(), m.name.GetStringLength()};
    auto at = path + quoted(type);
    if (type.empty())
      errs.add(at, "an event type must not be empty");
    else if (auto rule = check_amqp_name(type, 255); !rule.empty())
      errs.add(at, "an event type " + rule);
    if (!seen.insert(type).second) {
      errs.add(at, "given more than once (list all its routes in one entry)");
      continue;
    }
    if (!m.value.IsArray() || m.value.Empty()) {
      errs.add(at, m.value, "must be a non-empty list of routes");
      continue;
    }
    for (rapidjson::SizeType i = 0; i < m.value.Size(); ++i)
      read_route(m.value[i], type, at + "[" + std::to_string(i) + "]", t, errs);
  }
  check_orderings(*t.routes, path, errs);
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
  if (auto urls = split_amqp_urls(url); !urls)
    errs.add(source, context_of(urls.error()));
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
  int64_t default_ttl = 0;
  read_keys(doc, "", top_level_keys(cfg, default_ttl), errs);
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

queue_type config::queue_type_of(const std::string& queue) const {
  auto it = queue_types.find(queue);
  return it == queue_types.end() ? default_queue_type : it->second;
}

std::vector<std::string> config::queues() const {
  std::set<std::string> qs;
  for (auto& r : routes)
    qs.insert(r.queue);
  return {qs.begin(), qs.end()};
}

// A URL with a password belongs in a file only its service can read, not in
// the config every node and operator shares: `<key>File` names that file
// (its first line is the URL). Never both.
void read_url_file(const json& doc, const char* key, const char* file_key,
                   const std::string& path, problems& errs, std::string& url) {
  if (path.empty())
    return;
  if (doc.HasMember(key)) {
    errs.add(file_key, std::string{"give "} + key + " or " + file_key + ", not both");
    return;
  }
  auto text = read_secret_file(path);
  if (!text) {
    errs.add(file_key, "cannot read \"" + path + "\": " + context_of(text.error()));
    return;
  }
  url = std::move(*text);
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
  read_url_file(doc, "databaseUrl", "databaseUrlFile", cfg.database_url_file,
                errs, cfg.database_url);
  read_url_file(doc, "amqpUrl", "amqpUrlFile", cfg.amqp_url_file, errs,
                cfg.amqp_url);
  auto db_source = override_from_env(
    env, "OUTBOX_DATABASE_URL",
    cfg.database_url_file.empty() ? "databaseUrl" : "databaseUrlFile",
    cfg.database_url);
  auto amqp_source = override_from_env(
    env, "OUTBOX_AMQP_URL",
    cfg.amqp_url_file.empty() ? "amqpUrl" : "amqpUrlFile", cfg.amqp_url);
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
