#define CAF_SUITE core.errors
#include <caf/test/unit_test.hpp>

#include <set>

#include "core/base/errors.hpp"
#include "core/pg/pg_connection.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

CAF_TEST(every error code has its own name) {
  std::set<std::string> names;
  auto last = static_cast<int>(errc::drain_refused);
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
  struct {
    const char* sqlstate;
    bool data_error;
  } cases[] = {
    {"54000", true}, {"0A000", true}, {"22003", true}, {"22P02", true},
    {"23505", true}, {"XX001", true}, {"XX002", true},
    // Not the row's fault: the connection, locks, resources, our own SQL.
    {"08006", false}, {"40001", false}, {"40P01", false}, {"53100", false},
    {"57014", false}, {"42601", false}, {"XX000", false},
  };
  for (auto& c : cases)
    OUTBOX_CHECK_CASE_EQUAL(c.sqlstate, is_data_error(failed(c.sqlstate)), c.data_error);
  auto lost = make_error(errc::database_unavailable,
                         "route_batch: the database connection was lost");
  CAF_CHECK_EQUAL(sqlstate_of(lost), "");
  CAF_CHECK(!is_data_error(lost));
  // The outbox's own errors carry their message instead of a SQLSTATE.
  CAF_CHECK(!is_data_error(make_error(errc::database_error,
                                      "outbox_publish: key: must have at most 1024 bytes")));
}
