// Part of outboxd (and outboxctl): a workaround for CAF 0.17.6's TLS
// transport, which never clears OpenSSL's per-thread error queue.
//
// Every TLS connection of a node runs on the middleman's one thread. A
// handshake that fails (a stranger: a bare connect, no certificate, another
// CA) or a peer that closes without close_notify (CAF never sends one, so
// every client that leaves) leaves its error in that thread's queue. The
// next SSL_read of a member's connection that merely runs out of data then
// gets SSL_ERROR_SSL from SSL_get_error instead of SSL_ERROR_WANT_READ,
// and CAF closes the member's connection: it dropped off the cluster once
// per stranger (docs/operations.md "TLS between nodes"). CAF's newer
// networking library fixed the same by clearing the queue before every
// call; 0.17.6 has no setting for it.
//
// The four calls below interpose on the ones libcaf_openssl makes: the
// linker exports an executable's definition of a symbol that a shared
// library it links uses, and the dynamic linker finds the executable's
// first. Each clears the queue, so that SSL_get_error after it sees this
// call's errors only, then calls OpenSSL's own. libpq and rabbitmq-c go
// through them too; both clear the queue before their calls anyway.


#include <openssl/err.h>
#include <openssl/ssl.h>

#include "cluster_port/guard.hpp"
#include "cluster_port/next_definition.hpp"
#include "cluster_port/tls_refusal.hpp"

using outbox::cluster_port::next_definition;

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static auto next = next_definition<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return next(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static auto next = next_definition<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return next(ssl, buf, num);
}

// Also reports each accepted handshake's end to the cluster port's guard
// (cluster_port/guard.hpp): done, or refused and why.
int SSL_accept(SSL* ssl) {
  static auto next = next_definition<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  auto ret = next(ssl);
  if (ret == 1)
    outbox::cluster_port::on_tls_done(SSL_get_fd(ssl));
  else if (auto why = outbox::cluster_port::tls_refusal(ssl, ret))
    outbox::cluster_port::on_tls_failed(SSL_get_fd(ssl), *why);
  return ret;
}

int SSL_connect(SSL* ssl) {
  static auto next = next_definition<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return next(ssl);
}

} // extern "C"
