"""The broker URL as pika connection parameters, with TLS for amqps:// the
way the C++ side reads it: the query's cacertfile, certfile and keyfile
(RabbitMQ's URI spec names, file paths only) become an ssl.SSLContext that
verifies the broker's certificate and host name. pika itself would refuse
those names, so they are taken out of the URL first. Errors name the file,
never the URL (it holds a password) or OpenSSL's text."""
import os
import ssl
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pika

from outbox_urls import split_amqp_urls

TLS_KEYS = ("cacertfile", "certfile", "keyfile")


class TlsSetupError(Exception):
    """A TLS setting that cannot work: retrying will not help."""


def _readable(what, path):
    if not os.access(path, os.R_OK):
        raise TlsSetupError(f"cannot read the {what} {path}")


def tls_context(files):
    """A client context: peer and host name verification stay on."""
    ca = files.get("cacertfile")
    if ca:
        _readable("CA file (cacertfile)", ca)
    try:
        # Without a cacertfile: the system's CA bundle.
        context = ssl.create_default_context(cafile=ca or None)
    except ssl.SSLError:
        raise TlsSetupError(f"the CA file (cacertfile) {ca} holds no PEM certificate") from None
    cert, key = files.get("certfile"), files.get("keyfile")
    if bool(cert) != bool(key):
        raise TlsSetupError("give certfile and keyfile both or neither")
    if cert:
        _readable("client certificate (certfile)", cert)
        _readable("client key (keyfile)", key)
        try:
            context.load_cert_chain(cert, key)
        except ssl.SSLError:
            raise TlsSetupError(f"the client certificate {cert} and key {key} cannot be "
                                "used (not PEM, or the key does not match)") from None
    return context


def amqp_parameters(url):
    """pika.URLParameters for `url`; raises TlsSetupError or ValueError
    (without quoting the URL)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    files = {k: v for k, v in query if k in TLS_KEYS}
    if files and parts.scheme != "amqps":
        raise TlsSetupError("cacertfile, certfile and keyfile need an amqps:// URL")
    rest = urlencode([(k, v) for k, v in query if k not in TLS_KEYS])
    params = pika.URLParameters(urlunsplit(parts._replace(query=rest)))
    if parts.scheme == "amqps":
        params.ssl_options = pika.SSLOptions(tls_context(files),
                                             server_hostname=parts.hostname)
    return params


def amqp_parameters_list(text):
    """pika parameters for every broker of a list (one URL is a list of
    one), in its order: pika.BlockingConnection tries them in turn and takes
    the first that answers. Raises as amqp_parameters."""
    return [amqp_parameters(url) for url in split_amqp_urls(text)]


def tls_failure(error):
    """What went wrong in a TLS handshake inside a pika connection error,
    as a word for the log, or None: pika wraps the ssl error in its own."""
    seen, todo = set(), [error]
    while todo:
        e = todo.pop()
        if id(e) in seen or not isinstance(e, BaseException):
            continue
        seen.add(id(e))
        if isinstance(e, ssl.SSLCertVerificationError):
            # 62: X509_V_ERR_HOSTNAME_MISMATCH
            return "hostname_mismatch" if e.verify_code == 62 else "certificate_not_trusted"
        if isinstance(e, ssl.SSLError):
            return "tls_handshake_failed"
        todo.extend(e.args)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return None
