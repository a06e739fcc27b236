// The command-line base of the outbox binaries: CAF's own config and CLI
// options, plus "--opt value" for users who write it that way (CAF 0.17.6
// alone accepts only "--opt=value" for long options). --help and --version
// are the programs' own: CAF's help would list its internal options.
#pragma once

#include <map>
#include <string>

#include <caf/actor_system_config.hpp>

namespace outbox {

/// "outboxctl 0.1.0 (schema version 14)": the project's version and the
/// newest schema migration this build applies.
std::string version_text(const std::string& program);

class cli_config : public caf::actor_system_config {
public:
  /// Parses argv (rewriting "--opt value" to "--opt=value" for non-flag
  /// options of ours). Returns an error text, empty on success.
  std::string parse_args(int argc, char** argv);

  /// Set by parse_args when -h, -?, --help or --version was given (nothing
  /// else is then parsed): the program prints its help or version, exits 0.
  bool help_requested = false;
  bool version_requested = false;

  /// The program's own options, a line each ("  -c, --config FILE  ..."),
  /// without CAF's; `metavars` names the value of each option that takes
  /// one (long name -> "FILE"; "VALUE" when not listed).
  std::string options_text(const std::map<std::string, std::string>& metavars) const;

  /// When --help or --version was given: prints `help` (or the version
  /// line) to stdout and returns true; the program then exits 0.
  bool answered_help(const std::string& program, const std::string& help) const;

protected:
  caf::config_option_set& options() { return custom_options_; }
};

} // namespace outbox
