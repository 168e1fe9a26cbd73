"""Delivering an alert: a webhook POST (JSON a chat tool accepts) and e-mail through Django's mail settings.

The webhook body carries ``text`` (what Slack and Mattermost incoming webhooks show) beside the
structured fields (``rule``, ``kind``, ``target``, ``state``, ``value``, ``threshold``, ``message``,
``at``). A request has a short timeout, follows no redirect (a 3xx is a failure) and is tried at most
``ATTEMPTS`` times; every outcome is recorded on the event, never raised.

Outbound requests are a server-side request forgery risk: a URL must be http or https, and its host
must not resolve to a loopback, private, link-local, multicast or reserved address unless
``settings.GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE`` is true (a chat server inside the network; the tests
turn it on for their server on 127.0.0.1). The host is resolved again at each send and the request
goes to the address that was checked (no second lookup to rebind).
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
import ssl
import time
from typing import Any
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import send_mail

from console.errors import InvalidInput

TIMEOUT_S = 3.0
ATTEMPTS = 2
RETRY_PAUSE_S = 0.5
MAX_URL = 2000


@dataclass(frozen=True)
class Delivery:
    channel: str  # webhook, email
    to: str
    ok: bool
    detail: str  # "HTTP 200", the error
    attempts: int = 1


@dataclass(frozen=True)
class Notice:
    """What is sent: the rule, the condition and its state, and the name-server set (tier) it watches."""

    rule: str
    kind: str
    target: str
    state: str
    value: float | None
    threshold: float
    message: str
    at: str
    namesrv_set: str = "default"

    @property
    def tag(self) -> str:
        """``[Gantry]`` for the default tier, ``[Gantry staging]`` for an added set: a reader knows which cluster."""
        return "[Gantry]" if self.namesrv_set == "default" else f"[Gantry {self.namesrv_set}]"

    @property
    def text(self) -> str:
        mark = ":red_circle:" if self.state == "firing" else ":white_check_mark:"
        return f"{mark} {self.tag} {self.rule} {self.state}: {self.message}"


def _allow_private() -> bool:
    return bool(getattr(settings, "GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE", False))


def _checked_address(host: str, port: int) -> str:
    """The address ``host`` resolves to, refused when it is not public (unless allowed); ValueError."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValueError(f"the host {host} does not resolve ({exc})") from None
    addrs = [str(info[4][0]) for info in infos]  # IPv4 and IPv6 give the host as a str
    if not _allow_private():
        for addr in addrs:
            ip = ipaddress.ip_address(addr.split("%")[0])
            if not ip.is_global or ip.is_multicast:
                raise ValueError(
                    f"the host {host} resolves to {addr}, a loopback, private or reserved address; "
                    "an administrator may allow them (GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE)"
                )
    return addrs[0]


def webhook_url_check(url: str, *, field: str = "webhook_url") -> str:
    """The URL, refused with InvalidInput(field) unless http(s) with a host that resolves to an allowed address."""
    url = url.strip()
    if not url:
        return ""
    if len(url) > MAX_URL:
        raise InvalidInput(field, f"must be at most {MAX_URL} characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidInput(field, f"is not a valid URL ({exc}).") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(field, "must be an http:// or https:// URL with a host.")
    if parts.username or parts.password:
        raise InvalidInput(field, "must not carry a user name or password.")
    try:
        _checked_address(parts.hostname, port or (443 if parts.scheme == "https" else 80))
    except ValueError as exc:
        raise InvalidInput(field, str(exc) + ".") from None
    return url


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to a checked address, the certificate checked against the URL's host name."""

    def __init__(self, host: str, addr: str, *, context: ssl.SSLContext, **kwargs: Any) -> None:
        super().__init__(host, context=context, **kwargs)
        self._addr = addr
        self._ssl_context = context

    def connect(self) -> None:
        sock = socket.create_connection((self._addr, self.port), self.timeout)
        self.sock = self._ssl_context.wrap_socket(sock, server_hostname=self.host)


def _post_once(url: str, body: bytes) -> str:
    """POST ``body``; "HTTP <status>" on a 2xx, ValueError/OSError otherwise."""
    parts = urlsplit(url)
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    hostname = parts.hostname or ""
    addr = _checked_address(hostname, port)
    if https:
        conn: http.client.HTTPConnection = _PinnedHTTPSConnection(
            hostname, addr, port=port, timeout=TIMEOUT_S, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(addr, port, timeout=TIMEOUT_S)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = hostname + (f":{parts.port}" if parts.port else "")
    try:
        conn.request(
            "POST",
            path,
            body=body,
            headers={"Host": host, "Content-Type": "application/json", "User-Agent": "Gantry-alerts/1"},
        )
        response = conn.getresponse()
        response.read(4096)
    finally:
        conn.close()
    if not 200 <= response.status < 300:
        raise ValueError(
            f"HTTP {response.status}" + (" (redirects are not followed)" if 300 <= response.status < 400 else "")
        )
    return f"HTTP {response.status}"


def post_webhook(url: str, notice: Notice) -> Delivery:
    body = json.dumps({"text": notice.text, **asdict(notice)}).encode()
    detail = ""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return Delivery("webhook", url, True, _post_once(url, body), attempt)
        except (OSError, ValueError, http.client.HTTPException) as exc:
            detail = str(exc) or type(exc).__name__
            if attempt < ATTEMPTS:
                time.sleep(RETRY_PAUSE_S)
    return Delivery("webhook", url, False, detail, ATTEMPTS)


def send_email(addresses: list[str], notice: Notice) -> Delivery:
    to = ", ".join(addresses)
    try:
        send_mail(
            subject=f"{notice.tag} {notice.rule} {notice.state}: {notice.target or notice.kind}",
            message=f"{notice.message}\n\nrule {notice.rule} ({notice.kind}) of name-server set {notice.namesrv_set}, {notice.state} at {notice.at}",
            from_email=None,
            recipient_list=addresses,
            fail_silently=False,
        )
    except Exception as exc:  # noqa: BLE001 - any mail backend error is recorded on the event, never raised in the scan
        return Delivery("email", to, False, f"{type(exc).__name__}: {exc}")
    return Delivery("email", to, True, "sent")


def deliver(notice: Notice, *, webhook_url: str, emails: list[str]) -> list[Delivery]:
    out = []
    if webhook_url:
        out.append(post_webhook(webhook_url, notice))
    if emails:
        out.append(send_email(list(emails), notice))
    return out
