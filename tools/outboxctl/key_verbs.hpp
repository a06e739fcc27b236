// outboxctl's verbs on the keys of ordered routes: blocked (the keys that
// wait for an operator) and skip (let a key go past its head). Each
// returns the process exit code, as run_admin_verb does.
#pragma once

#include "core/domain/schema_names.hpp"
#include "tools/outboxctl/admin_args.hpp"

namespace outbox {

class pg_connection;

int blocked_verb(pg_connection& db, const schema_names& names,
                 const admin_args& a);

int skip_verb(pg_connection& db, const schema_names& names, const admin_args& a);

} // namespace outbox
