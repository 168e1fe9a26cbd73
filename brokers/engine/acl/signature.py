"""The request signature of RocketMQ's plain ACL: what is signed, how, and its constant-time check.

Content signed (``AclUtils.combineRequestContent``)::

    values of every ext field except Signature and _UNIQUE_KEY_QUERY,
    in the order of their keys (Java's TreeMap: by UTF-16 code unit), concatenated, as UTF-8
    + the body bytes

Keys are not part of the content, only their order. ``AccessKey`` (and ``SecurityToken`` and the C++
and ONS clients' ``OnsChannel`` when present) are ext fields like any other, so they are signed too.

``Signature`` = Base64(HmacSHA1(key = secretKey as UTF-8, content)), standard alphabet with padding.

The client signs every ext field it sends; the broker leaves ``_UNIQUE_KEY_QUERY`` out because the Java
client adds that flag after signing (``QUERY_MESSAGE`` by unique key).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

ACCESS_KEY = "AccessKey"
SECRET_KEY = "SecretKey"
SIGNATURE = "Signature"
SECURITY_TOKEN = "SecurityToken"
ONS_CHANNEL = "OnsChannel"
UNIQUE_KEY_QUERY = "_UNIQUE_KEY_QUERY"  # MixAll.UNIQUE_MSG_QUERY_FLAG

_UNSIGNED_FIELDS = frozenset({SIGNATURE, UNIQUE_KEY_QUERY})


def _java_order(key: str) -> bytes:
    """Sort key matching Java's String.compareTo (UTF-16 code units), also for keys outside the BMP."""
    return key.encode("utf-16-be", "surrogatepass")


def _signed_values(ext_fields: Mapping[str, str]) -> bytes:
    return "".join(
        "" if ext_fields[key] is None else str(ext_fields[key])
        for key in sorted(ext_fields, key=_java_order)
        if key not in _UNSIGNED_FIELDS
    ).encode("utf-8")


def combine_request_content(ext_fields: Mapping[str, str], body: bytes | None = None) -> bytes:
    """The bytes a signature covers: sorted ext field values (minus Signature, _UNIQUE_KEY_QUERY), then the body."""
    return _signed_values(ext_fields) + (body or b"")


def calculate_signature(content: bytes, secret_key: str) -> str:
    """Base64(HmacSHA1(secret_key, content)): RocketMQ's ``AclSigner.calSignature``."""
    digest = hmac.new(secret_key.encode("utf-8"), content, hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def sign(secret_key: str, ext_fields: Mapping[str, str], body: bytes | None = None) -> str:
    """The signature of a request with these ext fields and body (any Signature already in them is ignored).

    Same value as ``calculate_signature(combine_request_content(...))``, without copying the body.
    """
    mac = hmac.new(secret_key.encode("utf-8"), _signed_values(ext_fields), hashlib.sha1)
    if body:
        mac.update(body)
    return base64.b64encode(mac.digest()).decode("ascii")


def verify(secret_key: str, ext_fields: Mapping[str, str], body: bytes | None, signature: str | None) -> bool:
    """Whether ``signature`` is this request's, compared in constant time."""
    if not signature:
        return False
    expected = sign(secret_key, ext_fields, body)
    return hmac.compare_digest(expected.encode("ascii"), signature.encode("utf-8", "replace"))
