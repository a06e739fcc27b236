// Reads a claim's rows by kind: its columns found by name once per
// result, each row decoded into the claim_result.
#include "core/pg/claim_rows.hpp"

#include <algorithm>
#include <string>

#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"
#include "core/domain/event_headers.hpp"
#include "core/pg/delivery_sql.hpp"
#include "core/pg/pg_columns.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {
namespace claim_detail {

namespace {

/// What a row of the claim reports (its `kind` column).
enum class claim_row { send, expired, next_ready, cursor, room };

std::optional<claim_row> parse_claim_row(const std::string& kind) {
  if (kind == "send") return claim_row::send;
  if (kind == "expired") return claim_row::expired;
  if (kind == "next_ready") return claim_row::next_ready;
  if (kind == "cursor") return claim_row::cursor;
  if (kind == "room") return claim_row::room;
  return std::nullopt;
}

// The claim's columns, looked up by name once per result.
struct claim_columns {
  int kind, id, event_id, job, queue, dispatch_id, event_type, payload,
    content_type, headers, attempts, retry_delays, repeat_last_delay,
    expires_us, now_us, next_ready_us, room, cursor_available_at, event_age_us,
    timeout_seconds, in_flight, cohort_left, paused_us, replayed, start_by_us;

  static caf::expected<claim_columns> of(const pg_rows& rows,
                                         const char* statement) {
    column_finder col{rows, statement};
    claim_columns c{col("kind"), col("id"), col("event_id"), col("job"),
                    col("queue"), col("dispatch_id"), col("event_type"),
                    col("payload"), col("content_type"), col("headers"),
                    col("attempts"), col("retry_delays"),
                    col("repeat_last_delay"), col("expires_us"),
                    col("now_us"), col("next_ready_us"), col("room"),
                    col("cursor_available_at"), col("event_age_us"),
                    col("timeout_seconds"), col("in_flight"),
                    col("cohort_left"), col("paused_us"), col("replayed"),
                    col("start_by_us")};
    if (col.error())
      return col.error();
    return c;
  }
};

job_to_send read_send(const pg_rows& rows, int i, const claim_columns& c) {
  job_to_send j;
  j.delivery_id = rows.int64(i, c.id);
  j.event_id = rows.int64(i, c.event_id);
  j.job = rows.text(i, c.job);
  j.queue = rows.text(i, c.queue);
  j.dispatch_id = rows.text(i, c.dispatch_id);
  j.event_type = rows.text(i, c.event_type);
  j.payload = rows.text(i, c.payload);
  j.content_type = rows.text(i, c.content_type);
  j.headers = headers_from_json(rows.text(i, c.headers));
  j.attempts = static_cast<int32_t>(rows.int64(i, c.attempts));
  j.replayed = rows.text(i, c.replayed) == "t";
  j.start_by = optional_micros(rows, i, c.start_by_us);
  j.event_age_seconds = static_cast<double>(rows.int64(i, c.event_age_us)) / 1e6;
  delivery_rules rules;
  rules.retry_delays_seconds = parse_pg_int_array(rows.text(i, c.retry_delays));
  rules.repeat_last_delay = rows.text(i, c.repeat_last_delay) == "t";
  rules.delivery_timeout_seconds = static_cast<int32_t>(rows.int64(i, c.timeout_seconds));
  auto now = from_unix_micros(rows.int64(i, c.now_us));
  auto expires_at = optional_micros(rows, i, c.expires_us);
  j.last_attempt = is_last_attempt(rules, j.attempts, now, expires_at);
  j.expiration_ms = message_lifetime_ms(rules, now, expires_at);
  return j;
}

delivery_transition read_expired(const pg_rows& rows, int i,
                                 const claim_columns& c) {
  return {rows.int64(i, c.event_id), rows.int64(i, c.id), rows.text(i, c.job),
          rows.text(i, c.queue), delivery_status::expired,
          static_cast<int32_t>(rows.int64(i, c.attempts)), std::nullopt, std::nullopt, {}};
}

// The room row's pause of the queue (claim_sql.hpp room_sql).
void read_pause(const pg_rows& rows, int i, const claim_columns& c,
                claim_result& out) {
  out.paused = !rows.is_null(i, c.paused_us);
  out.pause_ends_in_seconds.reset();
  if (out.paused && rows.int64(i, c.paused_us) >= 0)
    out.pause_ends_in_seconds = rows.int64(i, c.paused_us) / 1e6;
}

} // namespace

// Reads a claim's rows into `out`.
caf::expected<claim_rows> read_claim(const pg_rows& rows, claim_result& out,
                                     const char* statement) {
  auto c = claim_columns::of(rows, statement);
  if (!c)
    return c.error();
  claim_rows got;
  for (int i = 0; i < rows.size(); ++i) {
    auto kind = parse_claim_row(rows.text(i, c->kind));
    if (!kind)
      return make_error(errc::database_error,
                        std::string{statement} + ": unknown row kind");
    switch (*kind) {
      case claim_row::send:
        ++got.taken;
        out.jobs.push_back(read_send(rows, i, *c));
        break;
      case claim_row::expired:
        ++got.taken;
        ++out.expired;
        out.transitions.push_back(read_expired(rows, i, *c));
        break;
      case claim_row::next_ready:
        out.next_ready_seconds.reset();
        if (!rows.is_null(i, c->next_ready_us))
          out.next_ready_seconds
            = std::max(0.0, rows.int64(i, c->next_ready_us) / 1e6);
        break;
      case claim_row::cursor:
        got.last = claim_cursor{rows.text(i, c->cursor_available_at),
                                rows.int64(i, c->id)};
        break;
      case claim_row::room:
        out.room = rows.int64(i, c->room);
        out.window = window_sample{
          rows.int64(i, c->now_us), rows.int64(i, c->in_flight),
          rows.int64(i, c->cohort_left),
          rows.is_null(i, c->timeout_seconds)
            ? 0.0
            : static_cast<double>(rows.int64(i, c->timeout_seconds))};
        read_pause(rows, i, *c, out);
        break;
    }
  }
  return got;
}

} // namespace claim_detail
} // namespace outbox
