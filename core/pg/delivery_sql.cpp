#include "core/pg/delivery_sql.hpp"

#include "core/base/errors.hpp"
#include "core/base/timestamp.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

void fill_slot(std::string& sql, const std::string& slot, const std::string& with) {
  if (auto p = sql.find(slot); p != std::string::npos)
    sql.replace(p, slot.size(), with);
}

std::string unix_micros(const std::string& column) {
  return "CASE WHEN " + column + " = 'infinity' THEN 9223372036854775807"
         " WHEN " + column + " = '-infinity' THEN '-9223372036854775808'::bigint"
         " ELSE (extract(epoch FROM " + column + ") * 1000000)::bigint END";
}

std::optional<time_point> optional_micros(const pg_rows& rows, int row, int col) {
  if (rows.is_null(row, col))
    return std::nullopt;
  return from_unix_micros(rows.int64(row, col));
}

caf::expected<delivery_status> read_status(const pg_rows& rows, int row,
                                           int col, const char* statement) {
  if (auto s = parse_delivery_status(rows.text(row, col)))
    return *s;
  return make_error(errc::database_error,
                    std::string{statement} + ": unknown delivery status");
}

} // namespace outbox
