#include "core/config/config.hpp"

#include <fnmatch.h>

#include <cstdlib>
#include <set>

#include <rapidjson/document.h>

#include "core/amqp/amqp_client.hpp"
#include "core/base/errors.hpp"
#include "core/base/small_file.hpp"
#include "core/config/config_checks.hpp"
#include "core/config/config_databases.hpp"
#include "core/config/config_keys.hpp"
#include "core/config/config_readers.hpp"
#include "core/json/json_parse.hpp"

namespace outbox {

// The readers, key tables and checks parse_config puts together.
using config_detail::check_amqp_url;
using config_detail::read_database;
using config_detail::read_databases;
using config_detail::check_database_url;
using config_detail::check_distinct_names;
using config_detail::json;
using config_detail::override_from_env;
using config_detail::problems;
using config_detail::read_enabled_override;
using config_detail::read_top_level;

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

namespace config_detail {

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

} // namespace config_detail

namespace config_detail {

void read_database(const json& obj, env_lookup env, bool env_database_url,
                   problems& errs, config& cfg) {
  read_top_level(obj, errs, cfg);
  check_distinct_names(cfg.names, errs);
  read_url_file(obj, "databaseUrl", "databaseUrlFile", cfg.database_url_file,
                errs, cfg.database_url);
  read_url_file(obj, "amqpUrl", "amqpUrlFile", cfg.amqp_url_file, errs,
                cfg.amqp_url);
  const char* db_source
    = cfg.database_url_file.empty() ? "databaseUrl" : "databaseUrlFile";
  if (env_database_url)
    db_source = override_from_env(env, "OUTBOX_DATABASE_URL", db_source,
                                  cfg.database_url);
  auto amqp_source = override_from_env(
    env, "OUTBOX_AMQP_URL",
    cfg.amqp_url_file.empty() ? "amqpUrl" : "amqpUrlFile", cfg.amqp_url);
  read_enabled_override(env, errs, cfg);
  check_database_url(cfg.database_url, db_source, errs);
  check_amqp_url(cfg.amqp_url, amqp_source, errs);
}

} // namespace config_detail

const config* cluster_config::find(const std::string& name) const {
  for (auto& db : databases)
    if (db.database == name)
      return &db;
  return nullptr;
}

caf::expected<cluster_config> parse_cluster_config(const std::string& text,
                                                   env_lookup env) {
  rapidjson::Document doc;
  if (auto why = parse_json(text, config_json_limits, doc))
    return make_error(errc::config_unreadable, *why);
  if (!doc.IsObject())
    return make_error(errc::config_unreadable, "the top level must be an object");
  cluster_config out;
  problems errs;
  if (doc.HasMember("databases")) {
    out.named = true;
    read_databases(doc, env, errs, out.databases);
  } else {
    out.databases.emplace_back();
    read_database(doc, env, true, errs, out.databases.back());
  }
  if (!errs.empty())
    return make_error(errc::config_invalid, errs.text());
  return out;
}

caf::expected<cluster_config> load_cluster_config(const std::string& path,
                                                  env_lookup env) {
  auto text = read_small_file(path, config_json_limits.max_bytes);
  if (!text)
    return make_error(errc::config_unreadable,
                      "cannot open config file \"" + path + "\": "
                        + context_of(text.error()));
  return parse_cluster_config(*text, env);
}

namespace {

caf::expected<config> only_database(caf::expected<cluster_config> all) {
  if (!all)
    return std::move(all.error());
  if (all->databases.size() != 1)
    return make_error(errc::config_invalid,
                      "databases: this program serves one database and the "
                      "config names "
                        + std::to_string(all->databases.size()));
  return std::move(all->databases.front());
}

} // namespace

caf::expected<config> parse_config(const std::string& text, env_lookup env) {
  return only_database(parse_cluster_config(text, env));
}

caf::expected<config> load_config(const std::string& path, env_lookup env) {
  return only_database(load_cluster_config(path, env));
}

} // namespace outbox
