#include "tools/cli_config.hpp"

namespace outbox {

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
    return render(err);
  return {};
}

} // namespace outbox
