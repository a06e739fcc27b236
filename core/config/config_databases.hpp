// The config file's `databases` object: one database's settings read from
// a JSON object, and the object of many read into one config each, the top
// level's keys their defaults.
#pragma once

#include <vector>

#include "core/config/config_readers.hpp"

namespace outbox {
namespace config_detail {

/// Reads one database's keys (the top level of a file without
/// `databases`, or an entry over its defaults) into `cfg`: the keys, the
/// URL files, the environment's overrides and the checks across keys.
/// OUTBOX_DATABASE_URL counts only when `env_database_url`.
void read_database(const json& obj, env_lookup env, bool env_database_url,
                   problems& errs, config& cfg);

/// Reads `doc["databases"]` (the caller found it) into one config per
/// entry, sorted by name, each with its name set.
void read_databases(const json& doc, env_lookup env, problems& errs,
                    std::vector<config>& out);

/// "" for a valid database name, else the rule it breaks.
std::string check_database_name(const std::string& name);

} // namespace config_detail
} // namespace outbox
