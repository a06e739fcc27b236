#define CAF_SUITE core.errors
#include <caf/test/unit_test.hpp>

#include <set>

#include "core/base/errors.hpp"
#include "core/pg/pg_connection.hpp"

using namespace outbox;

CAF_TEST(every error code has its own name) {
  std::set<std::string> names;
  auto last = static_cast<int>(errc::publish_failed);
  for (int i = 0; i <= last; ++i) {
    auto name = to_string(static_cast<errc>(i));
    CAF_CHECK_NOT_EQUAL(name, "unknown_outbox_error");
    CAF_CHECK(names.insert(name).second);
  }
  CAF_CHECK_EQUAL(to_string(static_cast<errc>(last + 1)), "unknown_outbox_error");
}

CAF_TEST(errors render with their context) {
  auto err = make_error(errc::invalid_event, "key: must not be empty");
  CAF_CHECK(err == errc::invalid_event);
  CAF_CHECK_EQUAL(render(err), "invalid_event: key: must not be empty");
  CAF_CHECK_EQUAL(context_of(err), "key: must not be empty");
}

CAF_TEST(data errors are told apart by their sqlstate) {
  auto failed = [](const char* state) {
    return make_error(errc::database_error,
                      std::string{"route_batch failed (SQLSTATE "} + state + ")");
  };
  CAF_CHECK_EQUAL(sqlstate_of(failed("54000")), "54000");
  for (auto s : {"54000", "0A000", "22003", "22P02", "23505", "XX001", "XX002"})
    CAF_CHECK(is_data_error(failed(s)));
  // Not the row's fault: the connection, locks, resources, our own SQL.
  for (auto s : {"08006", "40001", "40P01", "53100", "57014", "42601", "XX000"})
    CAF_CHECK(!is_data_error(failed(s)));
  auto lost = make_error(errc::database_unavailable,
                         "route_batch: the database connection was lost");
  CAF_CHECK_EQUAL(sqlstate_of(lost), "");
  CAF_CHECK(!is_data_error(lost));
  // The outbox's own errors carry their message instead of a SQLSTATE.
  CAF_CHECK(!is_data_error(make_error(errc::database_error,
                                      "outbox_publish: key: must have at most 1024 bytes")));
}
