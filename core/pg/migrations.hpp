// The numbered schema migrations (schema/NNN_name.sql, embedded at build
// time) and the code that applies them once, under the configured names.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/domain/schema_names.hpp"

namespace outbox {

class pg_connection;

struct migration {
  int version;
  const char* name;
  const char* sql; ///< with {{events}}, {{deliveries}}, {{publish_function}}
};

/// Returns every migration in version order.
const std::vector<migration>& migrations();

/// Returns the SQL of `m` with the names filled in. The names must pass
/// check_identifier (the config guarantees it; asserted here).
std::string render_migration(const migration& m, const schema_names& names);

/// Applies the migrations not yet recorded in `names.migrations`, all in one
/// transaction under an advisory lock, and returns how many ran (0: already
/// up to date). errc::schema_mismatch when the record names other tables or
/// function: renaming is the application's own migration. `up_to` stops
/// after that version (tests of an upgrade build the older schema so).
caf::expected<int> migrate(pg_connection& conn, const schema_names& names,
                           int up_to = std::numeric_limits<int>::max());

/// Checks that every migration is applied under these names; for daemons at
/// start. errc::schema_mismatch says what is missing or different.
caf::error check_schema(pg_connection& conn, const schema_names& names);

/// Drops every object the migrations made under these names (tests only).
caf::error drop_schema(pg_connection& conn, const schema_names& names);

} // namespace outbox
