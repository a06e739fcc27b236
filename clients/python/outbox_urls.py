"""Where the Python tools take their server URLs from, so that no password
shows in the process list: the environment (OUTBOX_AMQP_URL,
OUTBOX_DATABASE_URL, as the C++ binaries read them) or a file named on the
command line. A URL given on the command line itself is refused when it
carries a password (anyone on the machine can read it with ps).

The broker URL may be a list, the nodes of one cluster, as the C++ side
reads it (core/amqp/amqp_url_list.hpp): "URL[,URL...]", blanks around an
entry ignored, a comma inside a URL written %2C."""
import os
import re
import sys
from urllib.parse import parse_qs, urlsplit

_KEYWORD_PASSWORD = re.compile(r"(^|\s)password\s*=")
# As the C++ side: a cluster has a handful of nodes.
MAX_AMQP_URLS = 16


class BrokerListError(ValueError):
    """A broker list that is not one; its text is safe to show."""


def split_amqp_urls(text):
    """The entries of a broker list; BrokerListError naming the entry by its
    position, never quoting it (it may hold a password)."""
    urls = [u.strip(" \t") for u in text.split(",")]
    if len(urls) > MAX_AMQP_URLS:
        raise BrokerListError(f"the broker list names {len(urls)} brokers; it holds "
                         f"at most {MAX_AMQP_URLS}")
    for i, url in enumerate(urls):
        if not url:
            raise BrokerListError(f"broker {i + 1} of {len(urls)} of the list is empty "
                             "(write a comma inside a URL as %2C)")
    return urls


def has_password(url):
    """True for amqp://user:pw@..., postgresql://user:pw@...,
    ...?password=... and libpq's key=value form with password=...; for a
    broker list, when any of its URLs has one."""
    pieces = url.split(",")
    if len(pieces) > 1 and any("://" in p and has_password(p.strip()) for p in pieces):
        return True
    if "://" in url:
        try:
            parts = urlsplit(url)
            return bool(parts.password) or "password" in parse_qs(parts.query)
        except ValueError:
            return True  # unreadable: assume the worst
    return bool(_KEYWORD_PASSWORD.search(url))


def _refuse(message):
    print(message, file=sys.stderr)
    sys.exit(2)  # as argparse does for bad arguments


def resolve_url(program, flag, value, path, env_name):
    """The URL from `--flag` (refused with a password), the file `path`
    (--flag-file) or the environment variable `env_name`, in that order.
    Exits with status 2 and a message that never quotes the URL."""
    if value is not None and path is not None:
        _refuse(f"{program}: give --{flag} or --{flag}-file, not both")
    if value is not None:
        if has_password(value):
            _refuse(f"{program}: --{flag} carries a password, which every user "
                     f"can read in the process list; put the URL in {env_name} "
                     f"or in a file given as --{flag}-file PATH")
        return value
    if path is not None:
        try:
            with open(path, encoding="utf-8") as f:
                url = f.read().strip()
        except (OSError, UnicodeDecodeError) as e:
            _refuse(f"{program}: cannot read --{flag}-file ({type(e).__name__})")
        if not url:
            _refuse(f"{program}: --{flag}-file is empty")
        return url
    url = os.environ.get(env_name, "").strip()
    if not url:
        _refuse(f"{program}: no URL: set {env_name}, or give --{flag}-file PATH")
    return url
