#pragma once

#include <cstdint>

namespace outbox {

/// A TCP port on 127.0.0.1 that nothing was bound to a moment ago (0 if none
/// could be found), for a child's listener. It is picked below the kernel's
/// range for outgoing connections (ip_local_port_range): a port in that range
/// can become the local end of any client's connection before the child
/// binds it, or while a test has the child stopped. tools/lib/free_port.sh
/// picks the same way for the test servers.
uint16_t free_loopback_port();

} // namespace outbox
