#include "cluster_port/tls_refusal.hpp"

#include <openssl/err.h>
#include <openssl/x509.h>

namespace outbox::cluster_port {

namespace {

// A verification of the peer's certificate that failed: the chain ends
// at a CA this node does not trust, or the certificate itself is wrong.
refusal verify_failure(SSL* ssl) {
  switch (SSL_get_verify_result(ssl)) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_UNTRUSTED:
      return refusal::unknown_ca;
    default:
      return refusal::bad_certificate;
  }
}

} // namespace

std::optional<refusal> tls_refusal(SSL* ssl, int ret) {
  if (ret == 1)
    return std::nullopt;
  switch (SSL_get_error(ssl, ret)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      return std::nullopt;
    case SSL_ERROR_SYSCALL:
    case SSL_ERROR_ZERO_RETURN:
      return refusal::closed_early;
    case SSL_ERROR_SSL:
      break;
    default:
      return refusal::protocol_garbage;
  }
  switch (ERR_GET_REASON(ERR_peek_error())) {
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return refusal::no_certificate;
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
      return verify_failure(ssl);
    // The peer refused this node's certificate: a node of another CA.
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
      return refusal::unknown_ca;
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
      return refusal::bad_certificate;
    case SSL_R_UNEXPECTED_EOF_WHILE_READING:
      return refusal::closed_early;
    default:
      return refusal::protocol_garbage;
  }
}

} // namespace outbox::cluster_port
