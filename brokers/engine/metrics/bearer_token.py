"""The metrics port's bearer token: where it comes from, what it may look like, and the WSGI guard.

A name server's or broker's ``/metrics`` bound beyond loopback needs a token; a scrape then carries
``Authorization: Bearer <token>`` (Prometheus's ``authorization: {credentials_file: ...}``) and any
other request is answered ``401 Unauthorized``. The token comes from one of (never two):

- ``--metrics-token-file PATH``: the file's text, surrounding whitespace dropped (the preferred
  way: the token stays out of ``ps`` and shell history);
- ``--metrics-token TOKEN``, whose default is the ``GANTRY_METRICS_TOKEN`` environment variable.

A token is at least :data:`MIN_TOKEN_LENGTH` visible ASCII characters (``!`` to ``~``: what an HTTP
header carries unchanged). The comparison hashes both sides first, so it takes the same time
whatever the sent value's length or its first differing byte.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["MIN_TOKEN_LENGTH", "TOKEN_ENV", "MetricsTokenError", "bearer_guard", "check_token", "read_token_file"]

TOKEN_ENV = "GANTRY_METRICS_TOKEN"
# 16 characters: short enough for a hand-made secret, long enough that guessing over HTTP is hopeless
# (`openssl rand -hex 32` gives 64).
MIN_TOKEN_LENGTH = 16
MAX_TOKEN_FILE_BYTES = 4096  # a token file is one line; anything bigger is the wrong file

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_UNAUTHORIZED = b"401 Unauthorized: send Authorization: Bearer <the metrics token>\n"


class MetricsTokenError(ValueError):
    """A token that cannot be used; the message names the flag it came from."""


def check_token(token: str, source: str) -> str:
    """``token`` when it is usable, else MetricsTokenError naming ``source`` (a flag or variable)."""
    if len(token) < MIN_TOKEN_LENGTH:
        raise MetricsTokenError(
            f"{source}: the metrics token must be at least {MIN_TOKEN_LENGTH} characters (it has {len(token)})"
        )
    if not all("!" <= ch <= "~" for ch in token):
        raise MetricsTokenError(f"{source}: the metrics token may hold only visible ASCII characters (no spaces)")
    return token


def read_token_file(path: str) -> str:
    """The token in ``path`` (whitespace around it dropped); MetricsTokenError naming the flag."""
    source = f"--metrics-token-file {path}"
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TOKEN_FILE_BYTES + 1)
    except OSError as exc:
        raise MetricsTokenError(f"{source}: cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_TOKEN_FILE_BYTES:
        raise MetricsTokenError(f"{source}: over {MAX_TOKEN_FILE_BYTES} bytes, not a token file")
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise MetricsTokenError(f"{source}: the metrics token may hold only visible ASCII characters") from None
    return check_token(text, source)


def bearer_guard(app: WsgiApp, token: str) -> WsgiApp:
    """``app`` behind ``Authorization: Bearer <token>``: anything else is answered 401, ``app`` untouched."""
    expected = hashlib.sha256(token.encode("ascii")).digest()

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        scheme, _, credentials = environ.get("HTTP_AUTHORIZATION", "").strip().partition(" ")
        # WSGI hands header values over as latin-1 text: encoding back gives the bytes as sent.
        sent = hashlib.sha256(credentials.strip().encode("latin-1", "replace")).digest()
        if hmac.compare_digest(sent, expected) and scheme.lower() == "bearer":
            return app(environ, start_response)
        start_response(
            "401 Unauthorized",
            [
                ("Content-Type", "text/plain; charset=utf-8"),
                ("WWW-Authenticate", 'Bearer realm="metrics"'),
                ("Content-Length", str(len(_UNAUTHORIZED))),
            ],
        )
        return [_UNAUTHORIZED]

    return guarded
