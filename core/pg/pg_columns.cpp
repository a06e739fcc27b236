#include "core/pg/pg_columns.hpp"

#include "core/base/errors.hpp"
#include "core/pg/pg_connection.hpp"

namespace outbox {

column_finder::column_finder(const pg_rows& rows, const char* statement)
  : rows_(rows), statement_(statement) {
}

int column_finder::operator()(const char* name) {
  auto i = rows_.column(name);
  if (i < 0 && !error_)
    error_ = make_error(errc::database_error, std::string{statement_}
                                                + ": no column " + name);
  return i;
}

} // namespace outbox
