#include "cli/tls_flags.hpp"

#include <caf/make_config_option.hpp>

#include "core/base/errors.hpp"
#include "core/base/small_file.hpp"

namespace outbox {

namespace {

// The first line of the file: a passphrase stays out of argv (ps shows it)
// and out of the environment of child processes.
// A FIFO or /dev/zero is refused rather than read without end.
caf::expected<std::string> read_passphrase(const std::string& path) {
  auto line = read_secret_file(path, 4096);
  if (!line)
    return make_error(errc::config_invalid, "--tls-key-passphrase-file: cannot read "
                                              + path + ": " + context_of(line.error()));
  return line;
}

} // namespace

void add_tls_flags(caf::config_option_adder& group, tls_flags& flags) {
  group
    .add(flags.certificate, "tls-cert",
         "PEM certificate (chain) of this node: mutual TLS between nodes")
    .add(flags.key, "tls-key", "PEM private key of --tls-cert")
    .add(flags.ca_file, "tls-ca",
         "PEM bundle of the CA(s) every node's certificate must be signed by")
    .add(flags.passphrase_file, "tls-key-passphrase-file",
         "file whose first line is the passphrase of --tls-key");
}

caf::expected<std::optional<node_tls>> read_tls_flags(const tls_flags& flags) {
  bool any = !flags.certificate.empty() || !flags.key.empty()
             || !flags.ca_file.empty() || !flags.passphrase_file.empty();
  if (!any)
    return std::optional<node_tls>{};
  if (flags.certificate.empty() || flags.key.empty() || flags.ca_file.empty())
    return make_error(errc::config_invalid,
                      "TLS takes --tls-cert, --tls-key and --tls-ca together "
                      "(without all three it would check no peer)");
  node_tls out{flags.certificate, flags.key, flags.ca_file, {}};
  if (!flags.passphrase_file.empty()) {
    auto pass = read_passphrase(flags.passphrase_file);
    if (!pass)
      return pass.error();
    out.passphrase = std::move(*pass);
  }
  return std::optional<node_tls>{std::move(out)};
}

} // namespace outbox
