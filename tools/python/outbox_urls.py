"""Where the Python tools take their server URLs from, so that no password
shows in the process list: the environment (OUTBOX_AMQP_URL,
OUTBOX_DATABASE_URL, as the C++ binaries read them) or a file named on the
command line. A URL given on the command line itself is refused when it
carries a password (anyone on the machine can read it with ps)."""
import os
import re
import sys
from urllib.parse import parse_qs, urlsplit

_KEYWORD_PASSWORD = re.compile(r"(^|\s)password\s*=")


def has_password(url):
    """True for amqp://user:pw@..., postgresql://user:pw@...,
    ...?password=... and libpq's key=value form with password=..."""
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
