// outboxctl's operator verbs over the database: failed, expired, retry,
// forget, prune, quarantined, discard, blocked, skip (tools/outboxctl/key_verbs.hpp). Each returns the process exit code: 0 done, 1 the database
// refused or some ids could not be handled, 2 bad arguments.
#pragma once

#include <string>

#include "core/config/config.hpp"
#include "tools/outboxctl/admin_args.hpp"

namespace outbox {

int run_admin_verb(const std::string& verb, const admin_args& args,
                   const config& cfg);

/// True for the verbs run_admin_verb knows.
bool is_admin_verb(const std::string& verb);

} // namespace outbox
