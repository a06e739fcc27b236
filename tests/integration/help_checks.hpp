// What --help and --version of an installed program must show: the verbs
// or roles, examples, no option of the framework underneath, the version
// and schema version; and its manual page, which must name the same verbs
// and every option --help lists (the two are written by hand, so the test
// keeps them in step).
#pragma once

#include <regex>
#include <set>
#include <string>
#include <vector>

#include <caf/test/unit_test.hpp>

#include "core/pg/migrations.hpp"
#include "tests/integration/child_process.hpp"

namespace outbox::testing {

/// The long options (`--name`) a text mentions.
inline std::set<std::string> long_options_in(const std::string& text) {
  std::set<std::string> out;
  std::regex flag{R"(--[a-z][a-z-]*)"};
  for (auto it = std::sregex_iterator{text.begin(), text.end(), flag};
       it != std::sregex_iterator{}; ++it)
    out.insert(it->str());
  return out;
}

inline void check_help_and_version(const std::string& program,
                                   const std::string& path,
                                   const std::vector<std::string>& words,
                                   const std::string& man_page) {
  for (auto flag : {"--help", "-h"}) {
    auto [rc, out] = run_command(path + " " + flag);
    CAF_CHECK_EQUAL(rc, 0);
    CAF_CHECK_EQUAL(out.rfind("usage: " + program, 0), 0u);
    CAF_CHECK_NOT_EQUAL(out.find("\nexamples:\n"), std::string::npos);
    for (auto& w : words)
      if (out.find(w) == std::string::npos)
        CAF_FAIL(program << " --help does not name " << w);
    for (auto internal : {"config-file", "dump-config", "long-help",
                          "caf-application", "scheduler.", "middleman.",
                          "work-stealing", "logger."})
      if (out.find(internal) != std::string::npos)
        CAF_FAIL(program << " --help shows the framework's " << internal);
    // The manual page names the same verbs or roles and every option.
    auto man = read_file(man_page);
    CAF_REQUIRE(!man.empty());
    for (auto& w : words)
      if (man.find(w) == std::string::npos)
        CAF_FAIL(man_page << " does not name " << w);
    for (auto& opt : long_options_in(out)) {
      // troff writes a dash as \-.
      auto escaped = std::regex_replace(opt, std::regex{"-"}, "\\-");
      if (man.find(escaped) == std::string::npos)
        CAF_FAIL(man_page << " does not describe " << opt);
    }
  }
  auto [rc, out] = run_command(path + " --version");
  CAF_CHECK_EQUAL(rc, 0);
  CAF_CHECK_EQUAL(out, program + " " + OUTBOX_VERSION + " (schema version "
                         + std::to_string(migrations().back().version) + ")\n");
}

} // namespace outbox::testing
