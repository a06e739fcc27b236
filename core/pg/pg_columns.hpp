// Finds a result's columns by name, so that rows are read by what a column
// is rather than by where a statement happened to put it.
#pragma once

#include <string>

#include <caf/error.hpp>

namespace outbox {

class pg_rows;

/// Looks up columns of one result; a name the result lacks is our SQL's
/// bug, reported once as an error instead of a read out of range.
class column_finder {
public:
  column_finder(const pg_rows& rows, const char* statement);

  /// The index of `name`; -1 (and error() set) when there is none.
  int operator()(const char* name);

  /// errc::database_error naming the statement and the first missing
  /// column, or none.
  const caf::error& error() const { return error_; }

private:
  const pg_rows& rows_;
  const char* statement_;
  caf::error error_;
};

} // namespace outbox
