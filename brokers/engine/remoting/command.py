"""RemotingCommand: one request or response of the RocketMQ 4.x remoting protocol, and its frame.

Frame layout (all integers big-endian)::

    offset  size          field
    0       4             total length = 4 + header length + body length (excludes itself)
    4       4             high byte: serialize type (0 JSON, 1 ROCKETMQ binary); low 24 bits: header length
    8       header len    header
    8+hl    rest          body (opaque bytes)

JSON header (type 0): ``{"code","extFields","flag","language","opaque","remark",
"serializeTypeCurrentRPC","version"}``; keys are read in any order, unknown keys ignored, and
extFields values coerced to strings (non-Java clients send numbers and booleans there).

ROCKETMQ binary header (type 1)::

    short code | byte language | short version | int opaque | int flag |
    int remarkLen, remark (0 = null) | int extLen, then entries [short keyLen][key][int valLen][val]

A reply uses the serialize type of the request it answers; requests we originate use JSON.
"""
from __future__ import annotations

import itertools
import json
import re
import struct
from dataclasses import dataclass, field

from brokers.engine.common.constants import LANGUAGE, MAX_FRAME_SIZE, MQ_VERSION
from brokers.engine.remoting.errors import RemotingCommandError, RemotingProtocolError, RemotingTooLargeError

FLAG_RESPONSE = 0x1  # bit 0: the command is a response
FLAG_ONEWAY = 0x2  # bit 1: the request expects no response

SERIALIZE_JSON = 0
SERIALIZE_ROCKETMQ = 1
_SERIALIZE_NAMES = {SERIALIZE_JSON: "JSON", SERIALIZE_ROCKETMQ: "ROCKETMQ"}

# LanguageCode enum in declaration order: the binary header carries the index.
LANGUAGE_CODES = ("JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER", "HTTP", "GO", "PHP", "OMS", "RUST")
_LANGUAGE_INDEX = {name: i for i, name in enumerate(LANGUAGE_CODES)}

LENGTH_PREFIX = struct.Struct(">i")  # total length
HEADER_WORD = struct.Struct(">i")  # serialize type << 24 | header length
FRAME_PREFIX = struct.Struct(">ii")  # both words together
_BINARY_FIXED = struct.Struct(">hbhii")  # code, language, version, opaque, flag
assert LENGTH_PREFIX.size == 4 and FRAME_PREFIX.size == 8 and _BINARY_FIXED.size == 13
_HEADER_LENGTH_MASK = 0xFFFFFF  # header length is 24 bits

_opaque_sequence = itertools.count(1)  # next() on a count is atomic under the GIL


def next_opaque() -> int:
    """Return a fresh request id: a process-wide sequence, wrapped into the positive int32 range."""
    return next(_opaque_sequence) & 0x7FFFFFFF


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


def _int_field(header: dict, name: str, default: int | None) -> int:
    value = header.get(name, default)
    if value is None:
        raise RemotingProtocolError(f"header field {name!r} is missing")
    if isinstance(value, bool):
        return int(value)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RemotingProtocolError(f"header field {name!r} is not an integer: {value!r}") from None


_OPAQUE_RE = re.compile(rb'"opaque"\s*:\s*"?(-?\d+)')
_FLAG_RE = re.compile(rb'"flag"\s*:\s*"?(-?\d+)')


def salvage_ids(header: bytes, serialize_type: int) -> tuple[int | None, int]:
    """Recover (opaque, flag) from a header that failed to decode, so the error can be answered."""
    if serialize_type == SERIALIZE_ROCKETMQ and len(header) >= _BINARY_FIXED.size:
        _, _, _, opaque, flag = _BINARY_FIXED.unpack_from(header)
        return opaque, flag
    match = _OPAQUE_RE.search(header)
    flag = _FLAG_RE.search(header)
    return (int(match.group(1)) if match else None), (int(flag.group(1)) if flag else 0)


@dataclass
class RemotingCommand:
    """One request or response; ``ext_fields`` values are always strings."""

    code: int
    language: str = LANGUAGE
    version: int = MQ_VERSION
    opaque: int = 0
    flag: int = 0
    remark: str | None = None
    ext_fields: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    serialize_type: int = SERIALIZE_JSON

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def request(cls, code: int, ext_fields: dict[str, object] | None = None, body: bytes = b"", *, oneway: bool = False) -> RemotingCommand:
        """Build a request with a fresh opaque; ext field values are stringified like Java's."""
        cmd = cls(code=int(code), opaque=next_opaque(), ext_fields=coerce_ext_fields(ext_fields), body=body)
        if oneway:
            cmd.mark_oneway()
        return cmd

    def response(self, code: int, remark: str | None = None, ext_fields: dict[str, object] | None = None, body: bytes = b"") -> RemotingCommand:
        """Build the response to this request: same opaque and serialize type, RESPONSE flag set."""
        return RemotingCommand(
            code=int(code),
            opaque=self.opaque,
            flag=FLAG_RESPONSE,
            remark=remark,
            ext_fields=coerce_ext_fields(ext_fields),
            body=body,
            serialize_type=self.serialize_type,
        )

    # -- flags --------------------------------------------------------------------------------

    @property
    def is_response(self) -> bool:
        return bool(self.flag & FLAG_RESPONSE)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & FLAG_ONEWAY)

    def mark_oneway(self) -> RemotingCommand:
        self.flag |= FLAG_ONEWAY
        return self

    def mark_response(self) -> RemotingCommand:
        self.flag |= FLAG_RESPONSE
        return self

    # -- custom header access -----------------------------------------------------------------

    def ext(self, name: str, default: str | None = None) -> str | None:
        return self.ext_fields.get(name, default)

    def require_str(self, name: str) -> str:
        """Return a required ext field, raising RemotingCommandError naming it when missing."""
        value = self.ext_fields.get(name)
        if value is None or value == "":
            raise RemotingCommandError(f"the custom field <{name}> is missing", name)
        return value

    def require_int(self, name: str) -> int:
        return self._parse_int(name, self.require_str(name))

    def get_int(self, name: str, default: int | None = None) -> int | None:
        value = self.ext_fields.get(name)
        return default if value is None or value == "" else self._parse_int(name, value)

    def get_bool(self, name: str, default: bool = False) -> bool:
        """Parse like Java's Boolean.parseBoolean: case-insensitive "true", anything else false."""
        value = self.ext_fields.get(name)
        return default if value is None else value.strip().lower() == "true"

    @staticmethod
    def _parse_int(name: str, value: str) -> int:
        try:
            return int(value.strip())
        except ValueError:
            raise RemotingCommandError(f"the custom field <{name}> is not an integer: {value!r}", name) from None

    # -- encoding -----------------------------------------------------------------------------

    def encode_header(self) -> bytes:
        if self.serialize_type == SERIALIZE_ROCKETMQ:
            return self._encode_binary_header()
        if self.serialize_type != SERIALIZE_JSON:
            raise RemotingProtocolError(f"unknown serialize type {self.serialize_type}")
        header: dict[str, object] = {"code": self.code}
        if self.ext_fields:
            header["extFields"] = {str(k): v for k, v in self.ext_fields.items() if v is not None}
        header["flag"] = self.flag
        header["language"] = self.language
        header["opaque"] = self.opaque
        if self.remark is not None:
            header["remark"] = self.remark
        header["serializeTypeCurrentRPC"] = "JSON"
        header["version"] = self.version
        return json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    def _encode_binary_header(self) -> bytes:
        try:
            parts = [_BINARY_FIXED.pack(self.code, _LANGUAGE_INDEX.get(self.language, _LANGUAGE_INDEX["OTHER"]), self.version, self.opaque, self.flag)]
        except struct.error as exc:
            raise RemotingProtocolError(f"command does not fit the binary header: {exc}") from None
        remark = self.remark.encode("utf-8") if self.remark else b""
        parts.append(struct.pack(">i", len(remark)) + remark)
        entries = bytearray()
        for key, value in self.ext_fields.items():
            if value is None:
                continue
            k, v = str(key).encode("utf-8"), str(value).encode("utf-8")
            entries += struct.pack(">h", len(k)) + k + struct.pack(">i", len(v)) + v
        parts.append(struct.pack(">i", len(entries)) + bytes(entries))
        return b"".join(parts)

    def encode(self, max_frame_size: int | None = None) -> bytes:
        """Return the whole frame, total-length prefix included.

        Raises RemotingTooLargeError when the frame would exceed ``max_frame_size``.
        """
        header = self.encode_header()
        if len(header) > _HEADER_LENGTH_MASK:
            raise RemotingTooLargeError(len(header), _HEADER_LENGTH_MASK, opaque=self.opaque)
        total = 4 + len(header) + len(self.body)
        if max_frame_size is not None and total > max_frame_size:
            raise RemotingTooLargeError(total, max_frame_size, opaque=self.opaque, flag=self.flag)
        return FRAME_PREFIX.pack(total, (self.serialize_type << 24) | len(header)) + header + self.body

    # -- decoding -----------------------------------------------------------------------------

    @classmethod
    def decode(cls, data: bytes) -> RemotingCommand:
        """Decode a frame without its total-length prefix (header word, header, body)."""
        if len(data) < 4:
            raise RemotingProtocolError(f"frame of {len(data)} bytes is shorter than its header word", fatal=True)
        (word,) = HEADER_WORD.unpack_from(data)
        serialize_type = (word >> 24) & 0xFF
        header_length = word & _HEADER_LENGTH_MASK
        if header_length > len(data) - 4:
            raise RemotingProtocolError(
                f"header length {header_length} exceeds the frame's {len(data) - 4} remaining bytes", fatal=True
            )
        header = data[4 : 4 + header_length]
        body = bytes(data[4 + header_length :])
        return cls.decode_header(serialize_type, header, body)

    @classmethod
    def decode_frame(cls, frame: bytes) -> RemotingCommand:
        """Decode a whole frame, total-length prefix included."""
        if len(frame) < 4:
            raise RemotingProtocolError("frame shorter than its length prefix", fatal=True)
        (total,) = LENGTH_PREFIX.unpack_from(frame)
        if total != len(frame) - 4:
            raise RemotingProtocolError(f"length prefix {total} does not match {len(frame) - 4} bytes", fatal=True)
        return cls.decode(frame[4:])

    @classmethod
    def decode_header(cls, serialize_type: int, header: bytes, body: bytes = b"") -> RemotingCommand:
        """Decode a header of the given serialize type; the body is attached unchanged."""
        try:
            if serialize_type == SERIALIZE_JSON:
                cmd = cls._decode_json_header(header)
            elif serialize_type == SERIALIZE_ROCKETMQ:
                cmd = cls._decode_binary_header(header)
            else:
                raise RemotingProtocolError(f"unknown serialize type {serialize_type}")
        except RemotingProtocolError as exc:
            opaque, flag = salvage_ids(header, serialize_type)
            exc.opaque, exc.flag = opaque, flag
            raise
        cmd.body = body
        cmd.serialize_type = serialize_type
        return cmd

    @classmethod
    def _decode_json_header(cls, header: bytes) -> RemotingCommand:
        try:
            obj = json.loads(header.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise RemotingProtocolError(f"malformed JSON header: {exc}") from None
        if not isinstance(obj, dict):
            raise RemotingProtocolError("malformed JSON header: not an object")
        ext = obj.get("extFields")
        if ext is not None and not isinstance(ext, dict):
            raise RemotingProtocolError("malformed JSON header: extFields is not an object")
        language = obj.get("language", "JAVA")
        if isinstance(language, int) and 0 <= language < len(LANGUAGE_CODES):
            language = LANGUAGE_CODES[language]
        remark = obj.get("remark")
        return cls(
            code=_int_field(obj, "code", None),
            language=str(language),
            version=_int_field(obj, "version", 0),
            opaque=_int_field(obj, "opaque", 0),
            flag=_int_field(obj, "flag", 0),
            remark=None if remark is None else str(remark),
            ext_fields=coerce_ext_fields(ext),
        )

    @classmethod
    def _decode_binary_header(cls, header: bytes) -> RemotingCommand:
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
        return cls(code=code, language=name, version=version, opaque=opaque, flag=flag, remark=remark, ext_fields=ext)

    def __repr__(self) -> str:
        kind = "response" if self.is_response else ("oneway" if self.is_oneway else "request")
        return (
            f"RemotingCommand({kind} code={self.code} opaque={self.opaque} flag={self.flag} "
            f"remark={self.remark!r} ext={self.ext_fields!r} body={len(self.body)}B "
            f"{_SERIALIZE_NAMES.get(self.serialize_type, self.serialize_type)})"
        )


def _read_utf8(view: memoryview, pos: int, length: int, what: str) -> str:
    if length < 0 or pos + length > len(view):
        raise RemotingProtocolError(f"binary header {what} length {length} overruns the header")
    try:
        return bytes(view[pos : pos + length]).decode("utf-8")
    except UnicodeDecodeError:
        raise RemotingProtocolError(f"binary header {what} is not UTF-8") from None


def coerce_ext_fields(ext: dict[str, object] | None) -> dict[str, str]:
    """Return ext fields as a str -> str map: ints as decimals, bools as true/false, nulls dropped."""
    if not ext:
        return {}
    out: dict[str, str] = {}
    for key, value in ext.items():
        text = _ext_value(value)
        if text is not None:
            out[str(key)] = text
    return out


def check_frame_length(total: int, max_frame_size: int = MAX_FRAME_SIZE) -> None:
    """Validate a total-length prefix: at least the header word, at most the frame limit."""
    if total < 4:
        raise RemotingProtocolError(f"frame length {total} is shorter than the header word", fatal=True)
    if total > max_frame_size:
        raise RemotingTooLargeError(total, max_frame_size)
