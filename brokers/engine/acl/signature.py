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
ONE_SHOT_MAX_BODY = 64 * 1024  # bodies up to this size are signed in one hmac.digest call (a copy); larger ones in two steps


def _java_order(key: str) -> bytes:
    """Sort key matching Java's String.compareTo (UTF-16 code units), also for keys outside the BMP."""
    return key.encode("utf-16-be", "surrogatepass")


def _signed_keys(ext_fields: Mapping[str, str]) -> list[str]:
    """The signed keys in Java's order. Code point order is the same as UTF-16 order below U+10000, so
    plain ``sorted`` serves keys that are all ASCII (``isascii`` is O(1)): every key any client sends."""
    if "".join(ext_fields).isascii():
        keys = sorted(ext_fields)
    else:
        keys = sorted(ext_fields, key=_java_order)
    return [key for key in keys if key not in _UNSIGNED_FIELDS]


def _signed_values(ext_fields: Mapping[str, str]) -> bytes:
    keys = _signed_keys(ext_fields)
    try:
        return "".join([ext_fields[key] for key in keys]).encode("utf-8")  # the common case: every value a str
    except TypeError:
        return "".join("" if ext_fields[key] is None else str(ext_fields[key]) for key in keys).encode("utf-8")


def combine_request_content(ext_fields: Mapping[str, str], body: bytes | None = None) -> bytes:
    """The bytes a signature covers: sorted ext field values (minus Signature, _UNIQUE_KEY_QUERY), then the body."""
    return _signed_values(ext_fields) + (body or b"")


def calculate_signature(content: bytes, secret_key: str) -> str:
    """Base64(HmacSHA1(secret_key, content)): RocketMQ's ``AclSigner.calSignature``."""
    digest = hmac.new(secret_key.encode("utf-8"), content, hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def sign(secret_key: str, ext_fields: Mapping[str, str], body: bytes | None = None) -> str:
    """The signature of a request with these ext fields and body (any Signature already in them is ignored).

    Same value as ``calculate_signature(combine_request_content(...))``; a body over ONE_SHOT_MAX_BODY is
    not copied.
    """
    key, values = secret_key.encode("utf-8"), _signed_values(ext_fields)
    if not body:
        digest = hmac.digest(key, values, "sha1")
    elif len(body) <= ONE_SHOT_MAX_BODY:  # one C call; copying a small body costs less than an HMAC object
        digest = hmac.digest(key, values + body, "sha1")
    else:
        mac = hmac.new(key, values, hashlib.sha1)
        mac.update(body)
        digest = mac.digest()
    return base64.b64encode(digest).decode("ascii")


def verify(secret_key: str, ext_fields: Mapping[str, str], body: bytes | None, signature: str | None) -> bool:
    """Whether ``signature`` is this request's, compared in constant time."""
    if not signature:
        return False
    expected = sign(secret_key, ext_fields, body)
    return hmac.compare_digest(expected.encode("ascii"), signature.encode("utf-8", "replace"))
