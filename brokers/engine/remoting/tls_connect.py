"""open_connection: a client connection, plain or TLS per a :class:`TlsConfig`, with clear TLS errors.

Used by the remoting client (every Gantry client, the brokers' calls to name servers and masters)
and the slave's HA client. The SSL context of a TlsConfig is built once per process (the files are
read at the first connection; rotating them needs a restart, as in RocketMQ). A failed handshake
raises :class:`TlsHandshakeError` (an ``OSError``, so callers that retry on connection errors keep
doing so) naming the peer and the reason: an untrusted certificate and the CA to check, a name
that is not in the certificate, or a peer that closed the handshake (a server with TLS disabled,
or one that wants a client certificate).
"""

from __future__ import annotations

import asyncio
import functools
import ssl

from brokers.engine.remoting.tls import TlsConfig

__all__ = ["TlsHandshakeError", "client_context", "open_connection"]


class TlsHandshakeError(ConnectionError):
    """The TLS handshake with a server failed; the message says why and what to check."""


@functools.lru_cache(maxsize=16)
def client_context(tls: TlsConfig) -> ssl.SSLContext | None:
    """The (cached) context of ``tls``'s outgoing connections; None when they are plain."""
    return tls.client_context()


async def open_connection(
    host: str, port: int, tls: TlsConfig | None, timeout_s: float
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to ``host:port`` within ``timeout_s`` (handshake included); TimeoutError, OSError."""
    context = client_context(tls) if tls is not None else None
    if context is None:
        return await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    assert tls is not None
    hostname = tls.server_hostname or host
    try:
        return await asyncio.wait_for(
            asyncio.open_connection(
                host, port, ssl=context, server_hostname=hostname, ssl_handshake_timeout=max(timeout_s, 0.001)
            ),
            timeout_s,
        )
    except ssl.SSLCertVerificationError as exc:
        raise TlsHandshakeError(
            f"TLS: the certificate of {host}:{port} failed verification ({exc.verify_message or exc.reason}); "
            f"check that the CA file ({tls.ca_file or 'the system CAs'}) signed it and that it names {hostname}"
        ) from None
    except ssl.SSLError as exc:
        raise TlsHandshakeError(
            f"TLS handshake with {host}:{port} failed: {exc.reason or exc} "
            "(does the server speak TLS, and does it want a client certificate?)"
        ) from None
    except ConnectionResetError as exc:
        raise TlsHandshakeError(
            f"TLS handshake with {host}:{port} failed: the server closed the connection ({exc}); "
            "does it speak TLS (--tls-mode), and does it want a client certificate?"
        ) from None
