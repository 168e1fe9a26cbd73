"""The two serializations of a RemotingCommand header: JSON (type 0) and ROCKETMQ binary (type 1).

JSON header: ``{"code","extFields","flag","language","opaque","remark","serializeTypeCurrentRPC",
"version"}``; keys are read in any order, unknown keys ignored, and extFields values coerced to
strings (non-Java clients send numbers and booleans there). ``code``, ``version``, ``opaque`` and
``flag`` are Java ints (``RemotingCommand``'s fields): a value outside [-2**31, 2**31 - 1] is a
malformed header on the way in and a RemotingProtocolError on the way out, as the binary header's
``struct`` refuses a number that does not fit its field. A Java peer could not decode the answer.

ROCKETMQ binary header (all integers big-endian)::

    short code | byte language | short version | int opaque | int flag |
    int remarkLen, remark (0 = null) | int extLen, then entries [short keyLen][key][int valLen][val]

Every request and response goes through here twice (encode on one side, decode on the other),
so the common JSON case is written out: the header is formatted directly rather than built as a
dict for ``json.dumps``, and decoded with one shared ``json.JSONDecoder``. A header decodes to
the tuple ``(code, language, version, opaque, flag, remark, ext_fields)``, the first seven
fields of :class:`~brokers.engine.remoting.command.RemotingCommand`.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Mapping
from typing import Any, TypeGuard, overload

from brokers.engine import speedups
from brokers.engine.remoting.errors import RemotingProtocolError

__all__ = [
    "LANGUAGE_CODES",
    "SERIALIZE_JSON",
    "SERIALIZE_ROCKETMQ",
    "HeaderFields",
    "coerce_ext_fields",
    "decode_binary_header",
    "decode_json_header",
    "encode_binary_header",
    "encode_frame",
    "encode_json_header",
    "salvage_ids",
]

SERIALIZE_JSON = 0
SERIALIZE_ROCKETMQ = 1

# LanguageCode enum in declaration order: the binary header carries the index.
LANGUAGE_CODES = (
    "JAVA",
    "CPP",
    "DOTNET",
    "PYTHON",
    "DELPHI",
    "ERLANG",
    "RUBY",
    "OTHER",
    "HTTP",
    "GO",
    "PHP",
    "OMS",
    "RUST",
)
_LANGUAGE_INDEX = {name: i for i, name in enumerate(LANGUAGE_CODES)}

_FRAME_PREFIX = struct.Struct(">ii")  # total length, serialize type << 24 | header length
_BINARY_FIXED = struct.Struct(">hbhii")  # code, language, version, opaque, flag
assert _BINARY_FIXED.size == 13

# code, version, opaque and flag are Java ints in RemotingCommand: a JSON header carries any of
# them in this range (the binary header narrows code and version to a short by its layout).
JAVA_INT_MIN, JAVA_INT_MAX = -0x80000000, 0x7FFFFFFF
_INT_FIELDS = ("code", "version", "opaque", "flag")

# One encoder/decoder for every header: json.dumps with options builds a new encoder per call.
_json_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_json_decode = json.JSONDecoder().decode
_json_string = json.encoder.encode_basestring  # a str as a JSON string literal (ensure_ascii=False)

HeaderFields = tuple[
    int, str, int, int, int, "str | None", dict[str, str]
]  # code, language, version, opaque, flag, remark, ext


# -- JSON -------------------------------------------------------------------------------------


def encode_json_header(
    code: int, language: str, version: int, opaque: int, flag: int, remark: str | None, ext: dict[str, str]
) -> bytes:
    """The JSON header, byte for byte what ``json.dumps(header, separators=(",", ":"), ensure_ascii=False)`` makes.

    RemotingProtocolError when code, version, opaque or flag is an int that does not fit a Java int.
    """
    for name, value in zip(_INT_FIELDS, (code, version, opaque, flag)):
        if isinstance(value, int) and not JAVA_INT_MIN <= value <= JAVA_INT_MAX:
            raise RemotingProtocolError(f"command does not fit the JSON header: {_out_of_range(name, value)}")
    if type(code) is int and type(flag) is int and type(opaque) is int and type(version) is int:
        # The common case, written out without building the dict (strings are escaped by json's
        # own encode_basestring, in C, which refuses anything but a str).
        try:
            parts = [f'{{"code":{code},']
            if ext:
                parts.append(
                    '"extFields":{' + ",".join([f"{_json_string(k)}:{_json_string(v)}" for k, v in ext.items()]) + "},"
                )
            parts.append(f'"flag":{flag},"language":{_json_string(language)},"opaque":{opaque},')
            if remark is not None:
                parts.append(f'"remark":{_json_string(remark)},')
            parts.append(f'"serializeTypeCurrentRPC":"JSON","version":{version}}}')
            return "".join(parts).encode("utf-8")
        except TypeError:  # a key or value that is not a string: let json convert it
            pass
    header: dict[str, object] = {"code": code}
    if ext:
        header["extFields"] = {str(k): v for k, v in ext.items() if v is not None}
    header["flag"] = flag
    header["language"] = language
    header["opaque"] = opaque
    if remark is not None:
        header["remark"] = remark
    header["serializeTypeCurrentRPC"] = "JSON"
    header["version"] = version
    return _json_encode(header).encode("utf-8")


def decode_json_header(header: bytes) -> HeaderFields:
    """Decode a JSON header; RemotingProtocolError when it is not one."""
    try:
        obj = _json_decode(header.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RemotingProtocolError(f"malformed JSON header: {exc}") from None
    except RecursionError:  # servers refuse deep headers before decoding; clients land here
        raise RemotingProtocolError("malformed JSON header: nested too deep") from None
    if not isinstance(obj, dict):
        raise RemotingProtocolError("malformed JSON header: not an object")
    ext = obj.get("extFields")
    if ext is not None and not isinstance(ext, dict):
        raise RemotingProtocolError("malformed JSON header: extFields is not an object")
    language = obj.get("language", "JAVA")
    if isinstance(language, int) and 0 <= language < len(LANGUAGE_CODES):
        language = LANGUAGE_CODES[language]
    remark = obj.get("remark")
    return (
        _int_field(obj, "code", None),
        language if type(language) is str else str(language),
        _int_field(obj, "version", 0),
        _int_field(obj, "opaque", 0),
        _int_field(obj, "flag", 0),
        None if remark is None else str(remark),
        ext if ext and _all_strings(ext) else coerce_ext_fields(ext),  # a fresh dict either way
    )


def _int_field(header: dict[str, Any], name: str, default: int | None) -> int:
    value = header.get(name, default)
    if type(value) is not int:
        if value is None:
            raise RemotingProtocolError(f"header field {name!r} is missing")
        try:
            value = int(value)
        except (TypeError, ValueError, OverflowError):  # OverflowError: 1e999 is an infinite float
            raise RemotingProtocolError(f"header field {name!r} is not an integer: {value!r}") from None
    if not JAVA_INT_MIN <= value <= JAVA_INT_MAX:
        raise RemotingProtocolError(f"malformed JSON header: {_out_of_range(name, value)}")
    return value


def _out_of_range(name: str, value: int) -> str:
    shown = str(value) if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
    return f"header field {name!r} is {shown}, outside a Java int's range [{JAVA_INT_MIN}, {JAVA_INT_MAX}]"


# -- ROCKETMQ binary --------------------------------------------------------------------------


def encode_binary_header(
    code: int, language: str, version: int, opaque: int, flag: int, remark: str | None, ext: dict[str, str]
) -> bytes:
    """The ROCKETMQ binary header; RemotingProtocolError when a number does not fit its field."""
    try:
        parts = [
            _BINARY_FIXED.pack(code, _LANGUAGE_INDEX.get(language, _LANGUAGE_INDEX["OTHER"]), version, opaque, flag)
        ]
    except struct.error as exc:
        raise RemotingProtocolError(f"command does not fit the binary header: {exc}") from None
    remark_b = remark.encode("utf-8") if remark else b""
    parts.append(struct.pack(">i", len(remark_b)) + remark_b)
    entries = bytearray()
    for key, value in ext.items():
        if value is None:
            continue
        k, v = str(key).encode("utf-8"), str(value).encode("utf-8")
        entries += struct.pack(">h", len(k)) + k + struct.pack(">i", len(v)) + v
    parts.append(struct.pack(">i", len(entries)) + bytes(entries))
    return b"".join(parts)


def decode_binary_header(header: bytes) -> HeaderFields:
    """Decode a ROCKETMQ binary header; RemotingProtocolError when it is truncated or malformed."""
    view = memoryview(header)
    try:
        code, lang, version, opaque, flag = _BINARY_FIXED.unpack_from(view)
        pos = _BINARY_FIXED.size
        (remark_len,) = struct.unpack_from(">i", view, pos)
        pos += 4
        remark = _read_utf8(view, pos, remark_len, "remark") if remark_len else None
        pos += max(remark_len, 0)
        (ext_len,) = struct.unpack_from(">i", view, pos)
        pos += 4
        if ext_len < 0 or pos + ext_len > len(view):
            raise RemotingProtocolError(f"binary header extFields length {ext_len} overruns the header")
        ext: dict[str, str] = {}
        end = pos + ext_len
        while pos < end:
            (key_len,) = struct.unpack_from(">h", view, pos)
            pos += 2
            key = _read_utf8(view, pos, key_len, "extFields key")
            pos += key_len
            (val_len,) = struct.unpack_from(">i", view, pos)
            pos += 4
            value = _read_utf8(view, pos, val_len, "extFields value")
            pos += val_len
            if pos > end:
                raise RemotingProtocolError("binary header extFields entry overruns its block")
            if val_len:  # length 0 decodes as null, which Java drops
                ext[key] = value
    except struct.error:
        raise RemotingProtocolError("binary header is truncated") from None
    name = LANGUAGE_CODES[lang] if 0 <= lang < len(LANGUAGE_CODES) else "OTHER"
    return code, name, version, opaque, flag, remark, ext


def _read_utf8(view: memoryview, pos: int, length: int, what: str) -> str:
    if length < 0 or pos + length > len(view):
        raise RemotingProtocolError(f"binary header {what} length {length} overruns the header")
    try:
        return bytes(view[pos : pos + length]).decode("utf-8")
    except UnicodeDecodeError:
        raise RemotingProtocolError(f"binary header {what} is not UTF-8") from None


# -- the frame --------------------------------------------------------------------------------


def encode_frame(serialize_type: int, header: bytes, body: bytes) -> bytes:
    """The whole frame: total length (excluding itself), header word, header, body."""
    return _FRAME_PREFIX.pack(4 + len(header) + len(body), (serialize_type << 24) | len(header)) + header + body


# -- both -------------------------------------------------------------------------------------

_OPAQUE_RE = re.compile(rb'"opaque"\s*:\s*"?(-?\d+)')
_FLAG_RE = re.compile(rb'"flag"\s*:\s*"?(-?\d+)')


def salvage_ids(header: bytes, serialize_type: int) -> tuple[int | None, int]:
    """Recover (opaque, flag) from a header that failed to decode, so the error can be answered.

    A number that does not fit a Java int is not salvaged (opaque None, flag 0): an answer must
    carry ids its peer can read.
    """
    if serialize_type == SERIALIZE_ROCKETMQ and len(header) >= _BINARY_FIXED.size:
        _, _, _, opaque, flag = _BINARY_FIXED.unpack_from(header)
        return opaque, flag
    opaque = _salvaged_int(_OPAQUE_RE.search(header))
    flag = _salvaged_int(_FLAG_RE.search(header))
    return opaque, (0 if flag is None else flag)


def _salvaged_int(match: re.Match[bytes] | None) -> int | None:
    if match is None or len(match.group(1)) > 11:  # "-2147483648" is 11 characters
        return None
    value = int(match.group(1))
    return value if JAVA_INT_MIN <= value <= JAVA_INT_MAX else None


def coerce_ext_fields(ext: Mapping[str, object] | None) -> dict[str, str]:
    """Return ext fields as a str -> str map: ints as decimals, bools as true/false, nulls dropped.

    Always a new dict; one whose keys and values are all strings already is copied as it is.
    """
    if not ext:
        return {}
    if _all_strings(ext):
        return dict(ext)
    out: dict[str, str] = {}
    for key, value in ext.items():
        text = _ext_value(value)
        if text is not None:
            out[str(key)] = text
    return out


_STR_ONLY = frozenset({str})


@overload
def _all_strings(ext: dict[str, object]) -> TypeGuard[dict[str, str]]: ...
@overload
def _all_strings(ext: Mapping[str, object]) -> TypeGuard[Mapping[str, str]]: ...
def _all_strings(ext: Mapping[str, object]) -> bool:
    """Whether every key and value is exactly a str (checked in C, no Python loop)."""
    return _STR_ONLY.issuperset(map(type, ext.values())) and _STR_ONLY.issuperset(map(type, ext))


def _ext_value(value: object) -> str | None:
    """Coerce one JSON extFields value to the string Java's fastjson would have made of it."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e18 else repr(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# The compiled twins (brokers.engine.speedups), when built and not switched off.
speedups.install(
    globals(),
    "brokers.engine.remoting._header_codec_c",
    ("encode_json_header", "encode_binary_header", "decode_binary_header", "encode_frame"),
)
