#include "core/producer/event_store.hpp"

#include <libpq-fe.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"
#include "core/domain/event_headers.hpp"
#include "core/domain/event_limits.hpp"
#include "core/domain/lifecycle_log.hpp"
#include "core/domain/trace_context.hpp"
#include "core/json/json_parse.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

namespace {

bool valid_utf8(const std::string& s) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>,
                    rapidjson::UTF8<>, rapidjson::CrtAllocator,
                    rapidjson::kWriteValidateEncodingFlag>
    w(sb);
  return w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// The headers as a JSON object, NULL when there are none. Runs after
// validate_event, so every name and value is valid UTF-8.
pg_param headers_json(const event& ev) {
  if (ev.headers.empty())
    return std::nullopt;
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartObject();
  for (auto& [k, v] : ev.headers) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  }
  w.EndObject();
  return std::string{sb.GetString()};
}

// Puts the caller's transaction into the failed state with a safe message,
// so that a caller who ignores our error cannot commit half a change.
void fail_transaction(pg_connection& conn) {
  conn.exec_script("reject_event",
                   "DO $$ BEGIN RAISE EXCEPTION 'outbox: event rejected'"
                   " USING ERRCODE = 'OB002'; END $$");
}

} // namespace

event_store::~event_store() {
  // nop
}

namespace {

caf::error invalid(std::string what) {
  return make_error(errc::invalid_event, std::move(what));
}

bool blank(const std::string& s) {
  return s.find_first_not_of(' ') == std::string::npos;
}

bool has_nul(const std::string& s) {
  return s.find('\0') != std::string::npos;
}

int64_t unix_seconds(time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch())
    .count();
}

// The rules around the payload's JSON parse (see core/domain/event_limits.hpp;
// schema/008_publish_limits.sql checks the same).
caf::error check_type_key_ttl(const event& ev) {
  using namespace limits;
  if (blank(ev.event_type) || ev.event_type.size() > max_event_type_bytes)
    return invalid("event_type: must have 1 to 255 bytes, not all blank");
  if (!valid_utf8(ev.event_type))
    return invalid("event_type: is not valid UTF-8");
  if (has_control_chars(ev.event_type))
    return invalid("event_type: must not contain control characters");
  if (blank(ev.content_type))
    return invalid("content_type: must not be empty");
  if (has_nul(ev.content_type) || !valid_utf8(ev.content_type))
    return invalid("content_type: must be valid UTF-8 without NUL");
  if (ev.key) {
    if (ev.key->empty() || !valid_utf8(*ev.key))
      return invalid("key: must be non-empty valid UTF-8 when given");
    if (ev.key->size() > max_key_bytes)
      return invalid("key: must have at most 1024 bytes");
    if (has_control_chars(*ev.key))
      return invalid("key: must not contain control characters");
  }
  if (ev.ttl_seconds && *ev.ttl_seconds < 0)
    return invalid("ttl_seconds = " + std::to_string(*ev.ttl_seconds)
                   + ": must be >= 0 (0: never expires)");
  if (ev.ttl_seconds && *ev.ttl_seconds > max_ttl_seconds)
    return invalid("ttl_seconds: must be at most 3153600000 (100 years)");
  if (ev.expires_at
      && (unix_seconds(*ev.expires_at) < min_expires_at_unix
          || unix_seconds(*ev.expires_at) >= end_expires_at_unix))
    return invalid("expires_at: must be from 1970-01-01 to before 2200-01-01");
  return caf::none;
}

caf::error check_headers(const event& ev) {
  using namespace limits;
  if (ev.headers.size() > max_headers)
    return invalid("headers: at most 64");
  for (auto& [name, value] : ev.headers) {
    if (name.empty() || !valid_utf8(name) || !valid_utf8(value))
      return invalid("headers: names must be non-empty and names and "
                     "values valid UTF-8");
    if (name.size() > max_header_name_bytes)
      return invalid("headers: names must have 1 to 128 bytes");
    if (value.size() > max_header_value_bytes)
      return invalid("headers: values must be strings of at most 4096 bytes");
    if (has_nul(name) || has_nul(value))
      return invalid("headers: names and values must not contain NUL");
  }
  // Reserved names and the trace context (schema/010_trace_context.sql).
  if (auto why = header_problem(ev.headers))
    return invalid(std::move(*why));
  return caf::none;
}

} // namespace

caf::error validate_event(const event& ev) {
  if (auto err = check_type_key_ttl(ev))
    return err;
  if (ev.payload.size() > limits::max_payload_bytes)
    return invalid("payload: must have at most 8388608 bytes (8 MiB)");
  if (!valid_utf8(ev.payload))
    return make_error(errc::invalid_event, "payload: is not valid UTF-8");
  // libpq passes text as C strings: a NUL would cut the payload short.
  if (has_nul(ev.payload))
    return invalid("payload: must not contain NUL bytes");
  if (ev.content_type == "application/json") {
    // Before the parse, which recurses per nesting level.
    if (auto problem = limits::json_text_problem(ev.payload))
      return invalid(std::move(*problem));
    rapidjson::Document doc;
    if (auto why = parse_json(ev.payload, payload_json_limits, doc))
      return make_error(errc::invalid_event, "payload: " + *why);
  }
  return check_headers(ev);
}

// What the publish function inserts (schema/008_publish_limits.sql): the
// expiry is the earlier of the one given and now + TTL. The events table's
// header check (schema/010_trace_context.sql) runs as for the function.
std::string db_event_store::insert_sql(const schema_names& names) {
  return "INSERT INTO " + names.events
         + " (event_type, payload, key, expires_at, headers, content_type)"
           " VALUES ($1, $2, $3, CASE WHEN $4::bigint > 0"
           " THEN LEAST($6::timestamptz, now() + make_interval(secs => $4::bigint))"
           " ELSE $6::timestamptz END, $5::jsonb, $7) RETURNING id";
}

db_event_store::db_event_store(schema_names names, insert_statement how)
  : names_(std::move(names)), how_(how), insert_sql_(insert_sql(names_)) {
}

caf::expected<int64_t> db_event_store::add(pg_conn* native, const event& ev) {
  bool prepared = how_ == insert_statement::prepared;
  auto conn = pg_connection::borrow(native, prepared);
  if (conn.in_failed_transaction())
    return make_error(errc::transaction_aborted,
                      "the transaction already failed: roll it back");
  if (!conn.in_transaction())
    return make_error(errc::not_in_transaction,
                      "add() needs an open transaction (BEGIN first); nothing "
                      "was written");
  if (auto invalid = validate_event(ev)) {
    fail_transaction(conn);
    return invalid;
  }
  pg_params params{ev.event_type,
                   ev.payload,
                   ev.key,
                   ev.ttl_seconds ? pg_param{std::to_string(*ev.ttl_seconds)}
                                  : std::nullopt,
                   headers_json(ev),
                   ev.expires_at ? pg_param{format_timestamp(*ev.expires_at)}
                                 : std::nullopt,
                   ev.content_type};
  auto rows = prepared ? conn.exec_prepared("add_event", insert_sql_, params)
                      : conn.exec("add_event", insert_sql_, params);
  if (!rows)
    return rows.error(); // the failed statement already failed the transaction
  auto id = rows->int64(0, 0);
  auto stored = stored_event(id, ev.event_type, trace_id_of(ev.headers));
  log_lifecycle("producer", stored);
  if (observer_)
    observer_(stored);
  return id;
}

} // namespace outbox
