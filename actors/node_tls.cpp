#include "actors/node_tls.hpp"

#include <memory>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>

#include "core/base/errors.hpp"

namespace outbox {

namespace {

using ctx_ptr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;

// OpenSSL asks for the key's passphrase through a callback.
int passphrase_cb(char* buf, int size, int, void* user) {
  auto& text = *static_cast<const std::string*>(user);
  if (size <= 0 || text.size() >= static_cast<size_t>(size))
    return 0;
  text.copy(buf, text.size());
  return static_cast<int>(text.size());
}

std::string subject_cn(X509* cert) {
  char cn[256] = {};
  auto len = X509_NAME_get_text_by_NID(X509_get_subject_name(cert),
                                       NID_commonName, cn, sizeof(cn));
  return len > 0 ? std::string(cn, static_cast<size_t>(len)) : std::string{};
}

// Only the file is named: OpenSSL's own message can quote what it read.
caf::error bad_file(const char* what, const std::string& path) {
  return make_error(errc::config_invalid,
                    std::string{"TLS: cannot load "} + what + " " + path);
}

} // namespace

caf::expected<std::string> check_node_tls(const node_tls& tls) {
  ctx_ptr ctx{SSL_CTX_new(TLS_method()), &SSL_CTX_free};
  if (!ctx)
    return make_error(errc::config_invalid, "TLS: cannot make an OpenSSL context");
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.certificate.c_str()) != 1)
    return bad_file("the certificate", tls.certificate);
  SSL_CTX_set_default_passwd_cb(ctx.get(), passphrase_cb);
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(),
                                         const_cast<std::string*>(&tls.passphrase));
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key.c_str(), SSL_FILETYPE_PEM) != 1)
    return make_error(errc::config_invalid,
                      "TLS: cannot load the key " + tls.key + " (not a PEM "
                        "key, not the key of " + tls.certificate
                        + ", or a wrong passphrase)");
  if (SSL_CTX_check_private_key(ctx.get()) != 1)
    return make_error(errc::config_invalid,
                      "TLS: the key " + tls.key + " is not the key of "
                        + tls.certificate);
  if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr) != 1)
    return bad_file("the CA bundle", tls.ca_file);
  auto cn = subject_cn(SSL_CTX_get0_certificate(ctx.get()));
  if (cn.empty())
    return make_error(errc::config_invalid,
                      "TLS: the certificate " + tls.certificate
                        + " has no subject CN (a node's identity)");
  return cn;
}

void use_node_tls(caf::actor_system_config& cfg, const node_tls& tls) {
  // With any of these set, caf_openssl requires and verifies a certificate
  // on both sides; with none it would fall back to anonymous ciphers.
  cfg.openssl_certificate = tls.certificate;
  cfg.openssl_key = tls.key;
  cfg.openssl_passphrase = tls.passphrase;
  cfg.openssl_cafile = tls.ca_file;
  cfg.load<caf::openssl::manager>();
}

caf::io::middleman_actor node_middleman(caf::actor_system& sys) {
  if (sys.has_openssl_manager())
    return sys.openssl_manager().actor_handle();
  return sys.middleman().actor_handle();
}

caf::expected<uint16_t> publish_status_actor(caf::actor_system& sys,
                                       const status_actor& status,
                                       const host_port& where) {
  if (sys.has_openssl_manager())
    return caf::openssl::publish(status, where.port, where.host.c_str(), true);
  return sys.middleman().publish(status, where.port, where.host.c_str(), true);
}

} // namespace outbox
