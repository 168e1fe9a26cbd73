"""TlsConfig: one process's TLS settings (RocketMQ's ``TlsSystemConfig``), and its SSL contexts.

RocketMQ's three server modes (``tls.server.mode``):

- ``disabled``: plain TCP only, as before TLS existed (a TLS ClientHello is closed with a log line);
- ``permissive``: TLS and plain TCP on one port: the server peeks at the first byte of each
  connection (``0x16``, a TLS handshake record, is never the first byte of a remoting frame's
  length below 352 MiB) and wraps only those connections (``tls_listener.py``);
- ``enforcing``: TLS only; a plain connection is closed at once with a (rate-limited) log line.

Settings, RocketMQ's names in comments: ``cert_file`` / ``key_file`` (``tls.server.certPath`` /
``keyPath``; a client presents the same pair when the server asks for it, ``tls.client.certPath``),
``ca_file`` (``tls.server.trustCertPath`` and ``tls.client.trustCertPath``: the CA that signed the
peer's certificate; None: the system's CAs), ``client_auth`` (``tls.server.need.client.auth``:
none / optional / require), ``verify_server`` (a client checks the server's chain and name;
RocketMQ's ``tls.test.mode.enable=true`` skips that, so its default is off — Gantry's is on) and
``server_hostname`` (the name a client checks the server's certificate against; None: the host of
the address it connects to, an IP address for brokers, so their certificates carry IP SANs).

Outgoing connections (``outgoing``, RocketMQ's ``tls.enable`` for a broker's ``BrokerOuterAPI``):
a process speaks TLS to other servers when ``client_enable`` says so, by default when its own
mode is ``enforcing`` (RocketMQ's rule: ``tls.enable`` defaults to ``tls.server.mode == enforcing``).
A client-only TlsConfig (``TlsConfig.client(ca_file=...)``) has ``client_enable=True``.
"""

from __future__ import annotations

import argparse
import os
import ssl
from dataclasses import dataclass

__all__ = [
    "CLIENT_AUTH_MODES",
    "DISABLED",
    "ENFORCING",
    "PERMISSIVE",
    "TLS_MODES",
    "TlsConfig",
    "TlsConfigError",
    "add_tls_arguments",
    "tls_config_from_args",
    "tls_config_from_settings",
]

DISABLED = "disabled"
PERMISSIVE = "permissive"
ENFORCING = "enforcing"
TLS_MODES = (DISABLED, PERMISSIVE, ENFORCING)
CLIENT_AUTH_MODES = ("none", "optional", "require")
HANDSHAKE_TIMEOUT_S = 10.0  # first byte + handshake of a new connection; a silent peer is closed after it


class TlsConfigError(ValueError):
    """A TLS setting is missing, malformed or names a file that cannot be loaded; the message says which."""


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """How this process serves (``mode``) and connects (``outgoing``); see the module docstring."""

    mode: str = DISABLED  # tls.server.mode
    cert_file: str | None = None  # tls.server.certPath (PEM chain); also the client's certificate
    key_file: str | None = None  # tls.server.keyPath (PEM, unencrypted)
    ca_file: str | None = None  # tls.server.trustCertPath / tls.client.trustCertPath; None: system CAs
    client_auth: str = "none"  # tls.server.need.client.auth: none | optional | require
    verify_server: bool = True  # a client checks the server's chain and name (tls.test.mode.enable=false)
    server_hostname: str | None = None  # the name checked in the server's certificate; None: the address's host
    client_enable: bool | None = None  # tls.enable: outgoing connections speak TLS; None: mode == enforcing
    handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.mode not in TLS_MODES:
            raise TlsConfigError(f"tls mode must be one of {', '.join(TLS_MODES)}, got {self.mode!r}")
        if self.client_auth not in CLIENT_AUTH_MODES:
            raise TlsConfigError(
                f"tls client auth must be one of {', '.join(CLIENT_AUTH_MODES)}, got {self.client_auth!r}"
            )
        if bool(self.cert_file) != bool(self.key_file):
            raise TlsConfigError("give both a TLS certificate (--tls-cert) and its key (--tls-key), or neither")
        if self.serves_tls and not self.cert_file:
            raise TlsConfigError(f"tls mode {self.mode} needs a certificate and key (--tls-cert, --tls-key)")
        if self.serves_tls and self.client_auth != "none" and not self.ca_file:
            raise TlsConfigError(
                f"tls client auth {self.client_auth} needs the CA of the clients' certificates (--tls-ca)"
            )
        for label, path in (("certificate", self.cert_file), ("key", self.key_file), ("CA", self.ca_file)):
            if path and not os.path.isfile(path):
                raise TlsConfigError(f"TLS {label} file {path} does not exist")
        if not self.handshake_timeout_s > 0:
            raise TlsConfigError("tls handshake timeout must be positive")

    @classmethod
    def client(
        cls,
        *,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        verify_server: bool = True,
        server_hostname: str | None = None,
    ) -> TlsConfig:
        """A client's settings: connect with TLS, trusting ``ca_file`` (and presenting a certificate if given)."""
        return cls(
            cert_file=cert_file,
            key_file=key_file,
            ca_file=ca_file,
            verify_server=verify_server,
            server_hostname=server_hostname,
            client_enable=True,
        )

    @property
    def serves_tls(self) -> bool:
        """The server accepts TLS connections (permissive or enforcing)."""
        return self.mode != DISABLED

    @property
    def serves_plain(self) -> bool:
        """The server accepts plain connections (disabled or permissive)."""
        return self.mode != ENFORCING

    @property
    def outgoing(self) -> bool:
        """Connections this process opens speak TLS."""
        return self.mode == ENFORCING if self.client_enable is None else self.client_enable

    def server_context(self) -> ssl.SSLContext | None:
        """The context wrapping accepted connections; None when the mode is disabled."""
        if not self.serves_tls:
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        self._load_chain(ctx)
        if self.client_auth != "none":
            self._load_ca(ctx)
            ctx.verify_mode = ssl.CERT_REQUIRED if self.client_auth == "require" else ssl.CERT_OPTIONAL
        return ctx

    def client_context(self) -> ssl.SSLContext | None:
        """The context of outgoing connections; None when they are plain."""
        if not self.outgoing:
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        if self.verify_server:
            self._load_ca(ctx)
        else:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            self._load_chain(ctx)
        return ctx

    def _load_chain(self, ctx: ssl.SSLContext) -> None:
        try:
            ctx.load_cert_chain(self.cert_file, self.key_file)  # type: ignore[arg-type]
        except (OSError, ssl.SSLError) as exc:
            raise TlsConfigError(
                f"cannot load TLS certificate {self.cert_file} with key {self.key_file}: {exc}"
            ) from None

    def _load_ca(self, ctx: ssl.SSLContext) -> None:
        try:
            if self.ca_file:
                ctx.load_verify_locations(cafile=self.ca_file)
            else:
                ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
        except (OSError, ssl.SSLError) as exc:
            raise TlsConfigError(f"cannot load TLS CA file {self.ca_file}: {exc}") from None

    def check(self) -> TlsConfig:
        """Build the contexts once so a bad file fails at start, not at the first connection."""
        self.server_context()
        self.client_context()
        return self


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """The TLS flags of ``broker``, ``namesrv`` and ``run_cluster``."""
    parser.add_argument(
        "--tls-mode",
        choices=TLS_MODES,
        default=DISABLED,
        help="disabled (plain TCP, default), permissive (TLS and plain on one port), enforcing (TLS only)",
    )
    parser.add_argument(
        "--tls-cert", default=None, metavar="PEM", help="server certificate chain (also shown to servers that ask)"
    )
    parser.add_argument("--tls-key", default=None, metavar="PEM", help="private key of --tls-cert (unencrypted)")
    parser.add_argument(
        "--tls-ca",
        default=None,
        metavar="PEM",
        help="CA that signed the peers' certificates (clients' for --tls-client-auth, servers' for outgoing TLS)",
    )
    parser.add_argument(
        "--tls-client-auth",
        choices=CLIENT_AUTH_MODES,
        default="none",
        help="ask connecting clients for a certificate signed by --tls-ca (default none)",
    )
    parser.add_argument(
        "--tls-outgoing",
        choices=("auto", "on", "off"),
        default="auto",
        help="TLS on connections to name servers and masters (default auto: on in enforcing mode)",
    )


def tls_config_from_args(args: argparse.Namespace) -> TlsConfig | None:
    """The TlsConfig of parsed TLS flags; None when TLS is off both ways. TlsConfigError on bad values."""
    outgoing = {"auto": None, "on": True, "off": False}[getattr(args, "tls_outgoing", "auto")]
    if args.tls_mode == DISABLED and not outgoing:
        return None

    def absolute(value: str | None) -> str | None:
        return os.path.abspath(value) if value else None

    return TlsConfig(
        mode=args.tls_mode,
        cert_file=absolute(args.tls_cert),
        key_file=absolute(args.tls_key),
        ca_file=absolute(args.tls_ca),
        client_auth=args.tls_client_auth,
        client_enable=outgoing,
    ).check()


def tls_config_from_settings(
    enable: object,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    verify_server: object = True,
    server_hostname: str | None = None,
) -> TlsConfig | None:
    """A client's TlsConfig from settings values (strings from the environment accepted); None when off."""
    if not _truthy(enable):
        return None
    return TlsConfig.client(
        ca_file=ca_file or None,
        cert_file=cert_file or None,
        key_file=key_file or None,
        verify_server=_truthy(verify_server),
        server_hostname=server_hostname or None,
    )


def _truthy(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)
