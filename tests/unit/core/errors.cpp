#define CAF_SUITE core.errors
#include <caf/test/unit_test.hpp>

#include <set>

#include "core/errors.hpp"

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
