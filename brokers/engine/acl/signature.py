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

Gantry's own signers add ``GantryTimestamp`` (ms since the epoch) and ``GantryNonce`` (128 random bits,
32 hex digits) before signing: ext fields like any other, so the signature covers them, here and in
Apache's brokers, which sign every ext field but the two above (4.9 ``PlainAccessValidator.parse``,
5.x ``PlainAccessResource.parse`` and ``DefaultAuthenticationContextBuilder``) and ignore fields
they do not know. What a server does with them: :mod:`.replay_cache`.
"""

from __future__ import annotations

import hashlib
import hmac
from binascii import b2a_base64
from collections.abc import Callable, Mapping
from functools import lru_cache
from operator import itemgetter
from typing import NamedTuple, cast

ACCESS_KEY = "AccessKey"
SECRET_KEY = "SecretKey"
SIGNATURE = "Signature"
SECURITY_TOKEN = "SecurityToken"
ONS_CHANNEL = "OnsChannel"
UNIQUE_KEY_QUERY = "_UNIQUE_KEY_QUERY"  # MixAll.UNIQUE_MSG_QUERY_FLAG
GANTRY_TIMESTAMP = "GantryTimestamp"  # Gantry's signers: when the request was signed, ms since the epoch
GANTRY_NONCE = "GantryNonce"  # Gantry's signers: 128 random bits as 32 lowercase hex digits, new per signing

_UNSIGNED_FIELDS = frozenset({SIGNATURE, UNIQUE_KEY_QUERY})
_HMAC_BLOCK = 64  # SHA-1's block size: RFC 2104 pads (or first hashes) the key to it
_IPAD = bytes(x ^ 0x36 for x in range(256))  # translate tables: key XOR 0x36, key XOR 0x5C
_OPAD = bytes(x ^ 0x5C for x in range(256))


def _java_order(key: str) -> bytes:
    """Sort key matching Java's String.compareTo (UTF-16 code units), also for keys outside the BMP."""
    return key.encode("utf-16-be", "surrogatepass")


def _signed_keys(ext_fields: Mapping[str, object]) -> list[str]:
    """The signed keys in Java's order. Code point order is the same as UTF-16 order below U+10000, so
    plain ``sorted`` serves keys that are all ASCII (``isascii`` is O(1)): every key any client sends."""
    keys = sorted(ext_fields.keys() - _UNSIGNED_FIELDS)
    if not "".join(keys).isascii():
        keys.sort(key=_java_order)
    return keys


def _signed_values(ext_fields: Mapping[str, str]) -> bytes:
    """The signed ext-field values in Java's key order, concatenated, as UTF-8."""
    shape = tuple(ext_fields)
    order = _signed_orders.get(shape)
    if order is None:
        order = _signed_order(shape)
    try:  # the common case, every value a str: one join in C, no Python frame per field
        return "".join(order.values_of(ext_fields)).encode("utf-8")
    except TypeError:
        return "".join("" if ext_fields[key] is None else str(ext_fields[key]) for key in order.keys).encode("utf-8")


class _SignedOrder(NamedTuple):
    """The signed keys of one sequence of ext-field keys, in Java's order, and a getter of their values."""

    keys: list[str]
    values_of: Callable[[Mapping[str, str]], tuple[str, ...]]


_SIGNED_ORDER_LIMIT = 256  # key sequences remembered; a client sends a handful (one per request type)
_signed_orders: dict[tuple[str, ...], _SignedOrder] = {}


def _no_values(ext_fields: Mapping[str, str]) -> tuple[str, ...]:
    return ()


def _signed_order(shape: tuple[str, ...]) -> _SignedOrder:
    """Sort the signed keys of ``shape`` (the ext-field keys as they came) and remember the order.

    Requests of one type carry the same keys in the same order every time, so the sort and the
    getter are made once per key sequence and only the values are read per request.
    """
    keys = _signed_keys(dict.fromkeys(shape))
    getter: Callable[[Mapping[str, str]], tuple[str, ...]]
    if not keys:
        getter = _no_values
    elif len(keys) == 1:
        (only,) = keys

        def getter(ext_fields: Mapping[str, str]) -> tuple[str, ...]:  # itemgetter of one key gives no tuple
            return (ext_fields[only],)
    else:
        getter = cast(Callable[[Mapping[str, str]], tuple[str, ...]], itemgetter(*keys))  # 2+ keys: a tuple, one C call
    order = _SignedOrder(keys, getter)
    if len(_signed_orders) >= _SIGNED_ORDER_LIMIT:
        _signed_orders.clear()
    _signed_orders[shape] = order
    return order


def combine_request_content(ext_fields: Mapping[str, str], body: bytes | None = None) -> bytes:
    """The bytes a signature covers: sorted ext field values (minus Signature, _UNIQUE_KEY_QUERY), then the body."""
    return _signed_values(ext_fields) + (body or b"")


class SigningKey:
    """HmacSHA1 keyed by one secret, its key schedule done once (RFC 2104).

    HMAC(K, m) = H((K ^ opad) || H((K ^ ipad) || m)): the two hash states after their first block depend
    on the key alone, so they are computed here and copied per request; a request then costs two state
    copies and the hashing of its content, not a key setup (what ``hmac.digest`` redoes per call).
    """

    __slots__ = ("_inner", "_outer")

    def __init__(self, secret_key: str) -> None:
        key = secret_key.encode("utf-8")
        if len(key) > _HMAC_BLOCK:
            key = hashlib.sha1(key).digest()
        key = key.ljust(_HMAC_BLOCK, b"\0")
        self._inner = hashlib.sha1(key.translate(_IPAD))
        self._outer = hashlib.sha1(key.translate(_OPAD))

    def __repr__(self) -> str:
        return "<SigningKey>"  # never the key

    def digest(self, values: bytes, body: bytes | None = None) -> bytes:
        """HmacSHA1 of ``values`` followed by ``body`` (the body is not copied)."""
        inner = self._inner.copy()
        inner.update(values)
        if body:
            inner.update(body)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()

    def signature(self, ext_fields: Mapping[str, str], body: bytes | None = None) -> str:
        """Base64 of the request's HmacSHA1, as the ``Signature`` field carries it.

        :meth:`digest` written out: this runs for every request a client sends and every request a
        broker with the ACL checks.
        """
        values = _signed_values(ext_fields)
        inner = self._inner.copy()
        inner.update(values)
        if body:
            inner.update(body)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return b2a_base64(outer.digest(), newline=False).decode("ascii")


@lru_cache(maxsize=1024)
def signing_key(secret_key: str) -> SigningKey:
    """The key schedule of ``secret_key``, made once per secret (a bounded cache: accounts are few)."""
    return SigningKey(secret_key)


def calculate_signature(content: bytes, secret_key: str) -> str:
    """Base64(HmacSHA1(secret_key, content)): RocketMQ's ``AclSigner.calSignature``."""
    return b2a_base64(signing_key(secret_key).digest(content), newline=False).decode("ascii")


def sign(secret_key: str, ext_fields: Mapping[str, str], body: bytes | None = None) -> str:
    """The signature of a request with these ext fields and body (any Signature already in them is ignored).

    Same value as ``calculate_signature(combine_request_content(...))``, without copying the body.
    """
    return signing_key(secret_key).signature(ext_fields, body)


def verify(secret_key: str, ext_fields: Mapping[str, str], body: bytes | None, signature: str | None) -> bool:
    """Whether ``signature`` is this request's, compared in constant time."""
    if not signature:
        return False
    expected = signing_key(secret_key).signature(ext_fields, body)
    return hmac.compare_digest(expected.encode("ascii"), signature.encode("utf-8", "replace"))
