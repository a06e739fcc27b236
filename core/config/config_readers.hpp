// The machinery of reading the config's JSON: the problems found, and the
// tables of keys (name, kind, destination, limits) that drive the readers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/text.hpp"
#include "core/config/config.hpp"

namespace outbox {
namespace config_detail {

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
  /// A line as another reader wrote it (`databases` moves a database's
  /// lines under its own path).
  void add_line(std::string line) { lines_.push_back(std::move(line)); }
  bool empty() const { return lines_.empty(); }
  const std::vector<std::string>& lines() const { return lines_; }
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

// Reads every key of the table that `obj` has, in the table's order.
void read_keys(const json& obj, const std::string& path, const key_table& keys,
               problems& errs);

// Lets the environment override a URL; returns where the value came from.
const char* override_from_env(env_lookup env, const char* var,
                              const char* key, std::string& value);

// OUTBOX_ENABLED=false turns the outbox off for every event type (tests,
// or an emergency), whatever the file says.
void read_enabled_override(env_lookup env, problems& errs, config& cfg);

} // namespace config_detail
} // namespace outbox
