// The keys of the config file's nested objects and top level, read through
// their tables (config_keys.cpp).
#pragma once

#include <string>

#include "core/config/config_readers.hpp"

namespace outbox {
namespace config_detail {

// What read_value reads the kinds `routes` (event type -> list of routes)
// and `retention` (`retentionHours`) with.
void read_routes(const json& v, const std::string& path,
                 const routes_target& t, problems& errs);
void read_retention(const json& v, const std::string& path, problems& errs,
                    retention_policy& out);

// Reads the top level's keys into `cfg`.
void read_top_level(const json& doc, problems& errs, config& cfg);

} // namespace config_detail
} // namespace outbox
