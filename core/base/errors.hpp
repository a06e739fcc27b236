// The outbox error codes: every expected failure in core/ is one of these,
// carried in a caf::error with one safe, human-readable context string.
#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace outbox {

enum class errc : uint8_t {
  /// Not an error (CAF reserves code 0).
  none = 0,
  /// The configuration file could not be read or is not valid JSON.
  config_unreadable,
  /// The configuration breaks one or more rules; the context lists them all.
  config_invalid,
  /// An event (type, payload, key, TTL, headers) breaks a rule.
  invalid_event,
  /// A value could not be serialized (NaN, infinity, invalid UTF-8, ...).
  serialize_failed,
  /// A payload could not be read back into its type.
  deserialize_failed,
  /// The producer API was called outside an open transaction.
  not_in_transaction,
  /// The caller's transaction already failed; it must be rolled back.
  transaction_aborted,
  /// The database could not be reached or the connection broke.
  database_unavailable,
  /// A statement failed; the context names the statement and SQLSTATE.
  database_error,
  /// The applied schema does not match the configured names or version.
  schema_mismatch,
  /// A URL (database or AMQP) could not be parsed.
  invalid_url,
  /// The broker could not be reached or the connection broke.
  broker_unavailable,
  /// The broker refused an operation (channel or connection closed).
  broker_error,
  /// Waiting for the broker timed out.
  broker_timeout,
  /// A directly published message was nacked, returned (no queue) or not
  /// confirmed in time.
  publish_failed,
  /// An operator's drain of a node was refused: no node of that name is up
  /// in the status view, or its agent did not say yes.
  drain_refused,
};

/// Returns the enumerator's name, e.g. "config_invalid".
std::string to_string(errc x);

/// Makes an outbox error with a safe context text.
caf::error make_error(errc code, std::string context);

/// Renders any error as text without an actor system: outbox errors as
/// "config_invalid: <context>", others through caf::to_string.
std::string render(const caf::error& err);

/// Returns the context text of an outbox error (empty for other errors).
std::string context_of(const caf::error& err);

/// The renderer to register with add_error_category(atom("outbox"), ...).
std::string render_outbox_error(uint8_t code, caf::atom_value category,
                                const caf::message& context);

} // namespace outbox

CAF_ERROR_CODE_ENUM(outbox::errc, "outbox")
