// Reads a file the operator names (a config, a secret) whole, refusing
// what could hang or exhaust the reader: anything but a regular file (a
// device such as /dev/zero, a FIFO that never ends) and files over a size.
#pragma once

#include <cstddef>
#include <string>

#include <caf/expected.hpp>

namespace outbox {

/// The file's bytes; errc::config_unreadable with a reason ("is not a
/// regular file", "is larger than N bytes", "cannot be opened: ...").
caf::expected<std::string> read_small_file(const std::string& path,
                                           size_t max_bytes);

/// The first line of such a file, without its line end: how a secret (a
/// URL with its password, a key passphrase) is kept out of argv and the
/// config. Errors as read_small_file.
caf::expected<std::string> read_secret_file(const std::string& path,
                                            size_t max_bytes = 64 * 1024);

} // namespace outbox
