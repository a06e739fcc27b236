// The command-line base of the outbox binaries: CAF's own config and CLI
// options, plus "--opt value" for users who write it that way (CAF 0.17.6
// alone accepts only "--opt=value" for long options).
#pragma once

#include <string>

#include <caf/actor_system_config.hpp>

namespace outbox {

class cli_config : public caf::actor_system_config {
public:
  /// Parses argv (rewriting "--opt value" to "--opt=value" for non-flag
  /// options of ours). Returns an error text, empty on success.
  std::string parse_args(int argc, char** argv);

protected:
  caf::config_option_set& options() { return custom_options_; }
};

} // namespace outbox
