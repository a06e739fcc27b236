// Checks for tests that loop over a table of cases. CAF 0.17 prints a
// failed check, and its values, only from verbosity 4 on (ctest runs at
// 3), so a failure in a loop would not say which case failed: these check
// as CAF_CHECK/CAF_CHECK_EQUAL do and, on failure, also print the case's
// name and the values at the error level.
#pragma once

#include <caf/test/unit_test.hpp>

#define OUTBOX_CHECK_CASE(name, ...)                                           \
  do {                                                                         \
    bool ok___ = static_cast<bool>(__VA_ARGS__);                               \
    ::caf::test::detail::check(::caf::test::engine::current_test(), __FILE__, \
                               __LINE__, #__VA_ARGS__, false, ok___);          \
    ::caf::test::engine::last_check_file(__FILE__);                            \
    ::caf::test::engine::last_check_line(__LINE__);                            \
    if (!ok___)                                                                \
      CAF_TEST_PRINT_ERROR("case «" << (name) << "»: " << #__VA_ARGS__        \
                                    << " is false");                           \
  } while (false)

#define OUTBOX_CHECK_CASE_EQUAL(name, x, y)                                    \
  do {                                                                         \
    auto&& x___ = (x);                                                         \
    auto&& y___ = (y);                                                         \
    bool ok___ = x___ == y___;                                                 \
    ::caf::test::detail::check(::caf::test::engine::current_test(), __FILE__, \
                               __LINE__, #x " == " #y, false, ok___, x___,     \
                               y___);                                          \
    ::caf::test::engine::last_check_file(__FILE__);                            \
    ::caf::test::engine::last_check_line(__LINE__);                            \
    if (!ok___)                                                                \
      CAF_TEST_PRINT_ERROR("case «" << (name) << "»: «" << x___ << "» != «"   \
                                    << y___ << "»");                           \
  } while (false)
