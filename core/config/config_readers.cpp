// The value readers: each JSON value read into its typed destination or its
// problem reported, the key tables walked, and the environment's overrides.
#include "core/config/config_readers.hpp"

#include <algorithm>
#include <set>

#include "core/config/config_keys.hpp"

namespace outbox {
namespace config_detail {

namespace {

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

} // namespace

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

} // namespace config_detail
} // namespace outbox
