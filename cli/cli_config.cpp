#include "cli/cli_config.hpp"

#include <caf/config_value.hpp>
#include <caf/pec.hpp>

#include <iostream>
#include <set>
#include <sstream>

#include "core/base/errors.hpp"
#include "core/pg/migrations.hpp"
#include "cli/caf_option_rules.hpp"

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

// The long name an argument sets ("--sleep=5" and "--sleep" give "sleep",
// "-c" gives "config"), or "" for a short option that is not ours.
std::string option_name(const caf::config_option_set& own,
                        const std::string& arg) {
  if (arg.compare(0, 2, "--") == 0) {
    auto name = arg.substr(2, arg.find('=') - 2);
    return name;
  }
  if (auto opt = own.cli_short_name_lookup(arg[1]))
    return std::string{opt->long_name().data(), opt->long_name().size()};
  return {};
}

bool is_help(const std::string& arg) {
  return arg == "--help" || arg == "-h" || arg == "-?" || arg == "--long-help";
}

// CAF's own options in the "global" group, not the program's.
bool is_caf_global(const std::string& name) {
  return name == "help" || name == "long-help" || name == "config-file"
         || name == "dump-config";
}

// Options are ours, help, or the CAF options the binaries pass through
// (cli/caf_option_rules); each at most once (CAF would silently keep the
// last of two).
std::string check_option_names(const caf::config_option_set& own,
                               const std::vector<std::string>& opts) {
  std::set<std::string> seen;
  for (auto& a : opts) {
    if (a.size() < 2 || a[0] != '-')
      continue;
    auto name = option_name(own, a);
    if (name.empty())
      return a.substr(0, 2) + ": no such option (see --help)";
    // CAF's own global options read a file of CAF settings (any file, even
    // /dev/zero) or print every setting, passphrases included.
    if (name == "config-file" || name == "dump-config")
      return "--" + name + ": not supported by this program";
    bool ours = own.cli_long_name_lookup(name) != nullptr && !is_caf_global(name);
    if (!ours && !is_passed_caf_option(name))
      return "--" + name + ": no such option (see --help)";
    if (!seen.insert(name).second)
      return "--" + name + ": given more than once";
  }
  return {};
}

} // namespace

std::string cli_config::parse_args(int argc, char** argv) {
  // CAF stops at the first positional argument (verbs such as "migrate"),
  // so options go first and positionals after them.
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    help_requested = help_requested || is_help(a);
    version_requested = version_requested || a == "--version";
  }
  if (help_requested || version_requested)
    return {};
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
  if (auto problem = check_option_names(custom_options_, opts); !problem.empty())
    return problem;
  opts.insert(opts.end(), positionals.begin(), positionals.end());
  // No CAF config file: CAF would read caf-application.ini from the working
  // directory, whatever it holds.
  std::istringstream no_ini;
  if (auto err = parse(std::move(opts), no_ini))
    return describe_parse_error(err);
  return check_caf_options(content);
}

std::string version_text(const std::string& program) {
  return program + " " + OUTBOX_VERSION + " (schema version "
         + std::to_string(migrations().back().version) + ")";
}

bool cli_config::answered_help(const std::string& program,
                               const std::string& help) const {
  if (version_requested && !help_requested)
    std::cout << version_text(program) << "\n";
  else if (help_requested)
    std::cout << help;
  return help_requested || version_requested;
}

std::string
cli_config::options_text(const std::map<std::string, std::string>& metavars) const {
  std::string out;
  for (auto& opt : custom_options_) {
    std::string name{opt.long_name().data(), opt.long_name().size()};
    if (opt.category() != "global" || is_caf_global(name))
      continue;
    std::string line = "  ";
    for (auto c : opt.short_names())
      line += std::string{"-"} + c + ", ";
    line += "--" + name;
    if (!opt.is_flag()) {
      auto m = metavars.find(name);
      line += " " + (m == metavars.end() ? std::string{"VALUE"} : m->second);
    }
    // Descriptions start in one column and wrap at 80; a long flag gets a
    // line of its own.
    constexpr size_t column = 32, width = 80;
    const std::string indent(column, ' ');
    line += line.size() < column ? std::string(column - line.size(), ' ')
                                 : "\n" + indent;
    std::istringstream words{std::string{opt.description().data(),
                                         opt.description().size()}};
    size_t used = column;
    bool first = true;
    for (std::string w; words >> w; first = false) {
      if (!first && used + 1 + w.size() > width) {
        line += "\n" + indent;
        used = column;
      } else if (!first) {
        line += ' ';
        ++used;
      }
      line += w;
      used += w.size();
    }
    out += line + "\n";
  }
  return out;
}

} // namespace outbox
