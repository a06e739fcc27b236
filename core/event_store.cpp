#include "core/event_store.hpp"

#include <libpq-fe.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"
#include "core/json_parse.hpp"
#include "core/lifecycle_log.hpp"
#include "core/pg_connection.hpp"
#include "core/timestamp.hpp"

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

caf::error validate_event(const event& ev) {
  if (ev.event_type.empty() || ev.event_type.size() > 255)
    return make_error(errc::invalid_event,
                      "event_type: must have 1 to 255 bytes");
  if (!valid_utf8(ev.event_type))
    return make_error(errc::invalid_event, "event_type: is not valid UTF-8");
  if (ev.content_type.empty())
    return make_error(errc::invalid_event, "content_type: must not be empty");
  if (!valid_utf8(ev.payload))
    return make_error(errc::invalid_event, "payload: is not valid UTF-8");
  if (ev.content_type == "application/json") {
    rapidjson::Document doc;
    if (auto why = parse_json(ev.payload, payload_json_limits, doc))
      return make_error(errc::invalid_event, "payload: " + *why);
  }
  if (ev.key && (ev.key->empty() || !valid_utf8(*ev.key)))
    return make_error(errc::invalid_event,
                      "key: must be non-empty valid UTF-8 when given");
  for (auto& [name, value] : ev.headers)
    if (name.empty() || !valid_utf8(name) || !valid_utf8(value))
      return make_error(errc::invalid_event,
                        "headers: names must be non-empty and names and "
                        "values valid UTF-8");
  if (ev.ttl_seconds && *ev.ttl_seconds < 0)
    return make_error(errc::invalid_event,
                      "ttl_seconds = " + std::to_string(*ev.ttl_seconds)
                        + ": must be >= 0 (0: never expires)");
  return caf::none;
}

db_event_store::db_event_store(schema_names names)
  : names_(std::move(names)),
    insert_sql_("SELECT " + names_.publish_function
                + "($1, $2, $3, $4::bigint, $5::jsonb, $6::timestamptz, $7)") {
}

caf::expected<int64_t> db_event_store::add(pg_conn* native, const event& ev) {
  auto conn = pg_connection::borrow(native);
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
  auto rows = conn.exec("add_event", insert_sql_, params);
  if (!rows)
    return rows.error(); // the failed statement already failed the transaction
  auto id = rows->int64(0, 0);
  auto stored = stored_event(id, ev.event_type);
  log_lifecycle("producer", stored);
  if (observer_)
    observer_(stored);
  return id;
}

} // namespace outbox
