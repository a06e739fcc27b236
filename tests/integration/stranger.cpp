#include "tests/integration/stranger.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tests/integration/child_process.hpp"
#include "tests/integration/http_node.hpp"

namespace outbox::testing {

void bare_connect(uint16_t port) {
  if (auto fd = open_loopback_connection(port); fd >= 0)
    ::close(fd);
}

void send_and_leave(uint16_t port, const std::string& bytes) {
  auto fd = open_loopback_connection(port);
  if (fd < 0)
    return;
  (void) ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  ::close(fd);
}

bool tls_attempt(uint16_t port, const std::string& cert, const std::string& key) {
  auto fd = open_loopback_connection(port);
  if (fd < 0)
    return false;
  timeval tv{10, 0}; // a server that never answers ends the attempt
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  auto* ctx = SSL_CTX_new(TLS_client_method());
  bool done = false;
  if (ctx != nullptr) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    bool loaded = cert.empty()
                  || (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) == 1
                      && SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) == 1);
    if (auto* ssl = loaded ? SSL_new(ctx) : nullptr) {
      SSL_set_fd(ssl, fd);
      // With TLS 1.3 the client's part ends before the server has checked
      // its certificate: a read tells whether the server kept the session.
      if (SSL_connect(ssl) == 1) {
        char byte;
        done = SSL_read(ssl, &byte, 1) > 0;
      }
      SSL_free(ssl);
    }
    SSL_CTX_free(ctx);
  }
  ERR_clear_error();
  ::close(fd);
  return done;
}

std::string huge_basp_header() {
  std::string h(32, '\0');
  h[0] = 0x01;                       // operation: client_handshake
  h[4] = 0x7f;                       // payload_len = 0x7fffffff
  h[5] = h[6] = h[7] = '\xff';
  h[15] = 0x01;                      // operation_data
  return h;
}

namespace {

// The body of /metrics ("" when the node did not answer).
std::string metrics_text(const metrics_endpoint& at) {
  if (at.cert.empty()) {
    auto [status, text] = http_get(at.port, "/metrics");
    return status == 200 ? text : "";
  }
  httplib::SSLClient c{"127.0.0.1", at.port, at.cert, at.key};
  c.enable_server_certificate_verification(false); // read, not tested, here
  c.set_connection_timeout(2);
  c.set_read_timeout(5);
  auto res = c.Get("/metrics");
  return res && res->status == 200 ? res->body : "";
}

} // namespace

std::map<std::string, double> refused_by_reason(const metrics_endpoint& at) {
  std::map<std::string, double> out;
  auto text = metrics_text(at);
  std::istringstream lines{text};
  const std::string family = "outbox_cluster_refused_connections_total{reason=\"";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(family, 0) != 0)
      continue;
    auto end = line.find('"', family.size());
    auto space = line.rfind(' ');
    if (end == std::string::npos || space == std::string::npos)
      continue;
    out[line.substr(family.size(), end - family.size())] = std::stod(line.substr(space + 1));
  }
  return out;
}

double half_open(const metrics_endpoint& at) {
  auto text = metrics_text(at);
  const std::string sample = "\noutbox_cluster_half_open_connections ";
  auto where = text.find(sample);
  if (where == std::string::npos)
    return -1;
  return std::stod(text.substr(where + sample.size()));
}

} // namespace outbox::testing
