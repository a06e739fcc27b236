#include "tools/cli_config.hpp"

#include <caf/config_value.hpp>
#include <caf/pec.hpp>

#include "core/errors.hpp"

namespace outbox {

namespace {

// CAF reports a bad flag as, e.g., parser_error(not_an_option, ({"argument"
// = "--bogus"})): say it in words, naming the argument.
std::string describe_parse_error(const caf::error& err) {
  if (err.category() != caf::atom("parser"))
    return render(err);
  std::string arg;
  if (err.context().match_elements<caf::config_value::dictionary>()) {
    auto& dict = err.context().get_as<caf::config_value::dictionary>(0);
    if (auto i = dict.find("argument"); i != dict.end())
      if (auto str = caf::get_if<std::string>(&i->second))
        arg = *str;
  }
  if (arg.empty())
    return render(err);
  switch (static_cast<caf::pec>(err.code())) {
    case caf::pec::not_an_option:
      return arg + ": no such option (see --help)";
    case caf::pec::missing_argument:
      return arg + ": needs a value";
    default:
      return arg + ": not a valid value for this option";
  }
}

} // namespace

std::string cli_config::parse_args(int argc, char** argv) {
  // CAF stops at the first positional argument (verbs such as "migrate"),
  // so options go first and positionals after them.
  string_list opts, positionals;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() < 2 || a[0] != '-') {
      positionals.push_back(std::move(a));
      continue;
    }
    const caf::config_option* opt = nullptr;
    if (a.compare(0, 2, "--") == 0 && a.find('=') == std::string::npos)
      opt = custom_options_.cli_long_name_lookup(a.substr(2));
    else if (a.size() == 2 && a[1] != '-')
      opt = custom_options_.cli_short_name_lookup(a[1]);
    if (opt != nullptr && !opt->is_flag() && i + 1 < argc) {
      if (a.compare(0, 2, "--") == 0)
        opts.push_back(a + "=" + argv[++i]);
      else
        opts.push_back(a + argv[++i]);
      continue;
    }
    opts.push_back(std::move(a));
  }
  opts.insert(opts.end(), positionals.begin(), positionals.end());
  if (auto err = parse(std::move(opts)))
    return describe_parse_error(err);
  return {};
}

} // namespace outbox
