#include "core/amqp/amqp_socket.hpp"

#include <unistd.h>

#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>

#include "core/base/errors.hpp"

namespace outbox {

namespace {

// rabbitmq-c loads no default CA locations: without a cacertfile we name
// Debian's bundle, so that a broker with a public certificate just works.
constexpr const char* system_ca_bundle = "/etc/ssl/certs/ca-certificates.crt";

std::string where(const amqp_url_parts& url) {
  return url.host + ":" + std::to_string(url.port);
}

caf::error tls_error(std::string text) {
  return make_error(errc::broker_unavailable, std::move(text));
}

// Checked before rabbitmq-c sees the file, so that "missing or unreadable"
// and "not a certificate" are told apart.
caf::error check_readable(const std::string& what, const std::string& path) {
  if (::access(path.c_str(), R_OK) != 0)
    return tls_error("cannot read the " + what + " " + path);
  return caf::none;
}

caf::error configure_tls(amqp_socket_t* sock, const amqp_url_parts& url) {
  auto ca = url.cacertfile.empty() ? std::string{system_ca_bundle} : url.cacertfile;
  if (auto err = check_readable("CA file (cacertfile)", ca))
    return err;
  if (amqp_ssl_socket_set_cacert(sock, ca.c_str()) != AMQP_STATUS_OK)
    return tls_error("the CA file (cacertfile) " + ca + " holds no PEM certificate");
  if (!url.certfile.empty()) {
    if (auto err = check_readable("client certificate (certfile)", url.certfile))
      return err;
    if (auto err = check_readable("client key (keyfile)", url.keyfile))
      return err;
    if (amqp_ssl_socket_set_key(sock, url.certfile.c_str(), url.keyfile.c_str())
        != AMQP_STATUS_OK)
      return tls_error("the client certificate " + url.certfile + " and key "
                       + url.keyfile
                       + " cannot be used (not PEM, or the key does not match)");
  }
  amqp_ssl_socket_set_verify_peer(sock, 1);
  amqp_ssl_socket_set_verify_hostname(sock, 1);
  // TLS 1.2 is the oldest version RabbitMQ still offers by default.
  amqp_ssl_socket_set_ssl_versions(sock, AMQP_TLSv1_2, AMQP_TLSvLATEST);
  return caf::none;
}

// Maps rabbitmq-c's status of a failed open to our wording.
caf::error open_failed(int status, const amqp_url_parts& url) {
  switch (status) {
    case AMQP_STATUS_SSL_PEER_VERIFY_FAILED:
      return tls_error("the broker at " + where(url)
                       + " sent a certificate that no trusted CA signed (check cacertfile)");
    case AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED:
      return tls_error("the broker's certificate at " + where(url)
                       + " does not name the host " + url.host
                       + " (rabbitmq-c matches DNS names only, not IP addresses)");
    case AMQP_STATUS_SSL_CONNECTION_FAILED:
    case AMQP_STATUS_SSL_ERROR:
      return tls_error("the TLS handshake with the broker at " + where(url)
                       + " failed (not a TLS port, an untrusted certificate, or a "
                         "client certificate it refused)");
    default:
      return make_error(errc::broker_unavailable,
                        "cannot connect to the broker at " + where(url));
  }
}

} // namespace

caf::error open_amqp_socket(amqp_connection_state_t conn,
                            const amqp_url_parts& url, timeval timeout) {
  auto* sock = url.tls ? amqp_ssl_socket_new(conn) : amqp_tcp_socket_new(conn);
  if (sock == nullptr)
    return make_error(errc::broker_unavailable,
                      "cannot create a socket for the broker at " + where(url));
  if (url.tls)
    if (auto err = configure_tls(sock, url))
      return err;
  int status = amqp_socket_open_noblock(sock, url.host.c_str(), url.port, &timeout);
  if (status != AMQP_STATUS_OK)
    return open_failed(status, url);
  return caf::none;
}

} // namespace outbox
