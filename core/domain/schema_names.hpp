// The names of the database objects one outbox owns. Tables, the migration
// record, the publish function and the NOTIFY channel are all configurable so
// that several outboxes (and tests) can share one database.
#pragma once

#include <string>

namespace outbox {

struct schema_names {
  std::string events = "outbox_events";
  std::string deliveries = "outbox_deliveries";
  std::string migrations = "outbox_migrations";
  std::string publish_function = "outbox_publish";
  /// What this outbox's dispatch ids start with (core/domain/dispatch_tag.hpp):
  /// its database's tag in a config of several databases, "" (random ids)
  /// otherwise. Fills {{new_dispatch_id}}.
  std::string dispatch_tag;

  /// The NOTIFY channel of event inserts: the events table's name.
  const std::string& notify_channel() const { return events; }

  /// The NOTIFY channel of new deliveries (core/domain/ready_notice.hpp): the
  /// deliveries table's name and "_ready", within PostgreSQL's 63 bytes.
  std::string ready_channel() const { return deliveries + "_ready"; }

  /// Returns a copy whose every name starts with `prefix` (tests).
  schema_names with_prefix(const std::string& prefix) const;
};

/// The longest accepted name: derived objects append up to 15 characters and
/// PostgreSQL cuts identifiers at 63.
constexpr size_t max_identifier_length = 48;

/// Returns `sql` with {{events}}, {{deliveries}}, {{migrations}} and
/// {{publish_function}} replaced by these names, and {{new_dispatch_id}}
/// by the SQL of a new dispatch id. Identifiers cannot be
/// statement parameters; the names are validated identifiers instead.
std::string fill_names(std::string sql, const schema_names& names);

/// Returns an empty string when `name` is a valid lower-case SQL identifier
/// ([a-z_][a-z0-9_]*, at most max_identifier_length), otherwise the rule it
/// breaks.
std::string check_identifier(const std::string& name);

} // namespace outbox
