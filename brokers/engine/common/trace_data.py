"""Message trace records in RocketMQ 4.x's wire format (its TraceDataEncoder, TraceContext, TraceBean).

A trace message is an ordinary message on the trace topic (``RMQ_SYS_TRACE_TOPIC`` unless a client
names another). Its body is UTF-8 text: records, each ended by FIELD_SPLITOR ``\\x02``, their fields
joined by CONTENT_SPLITOR ``\\x01``. Its KEYS (space-joined) are the traced messages' ids and their
own keys, so the broker's key index finds every record about a message by its id.

Field order per record type (Java writes a missing string as ``null``)::

    Pub        type ts region group topic msgId tags keys storeHost bodyLength costMs msgType offsetMsgId success [clientHost]
    SubBefore  type ts region group requestId msgId retryTimes keys
    SubAfter   type requestId msgId costMs success keys [contextCode [ts [group]]]
    EndTransaction type ts region group topic msgId tags keys storeHost msgType transactionId state fromCheck

Older clients write shorter Pub (13 fields: no offsetMsgId) and SubAfter (6) records; both decode.
:func:`decode_trace_data` never raises: a record it cannot read is skipped and counted in
:attr:`TraceDecodeResult.skipped`. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CONTENT_SPLITOR",
    "FIELD_SPLITOR",
    "TRACE_TYPES",
    "MESSAGE_TYPES",
    "CONSUME_RETURN_TYPES",
    "TraceRecord",
    "TraceDecodeResult",
    "encode_record",
    "encode_records",
    "trace_keys",
    "decode_trace_data",
]

CONTENT_SPLITOR = "\x01"
FIELD_SPLITOR = "\x02"
TRACE_TYPES = ("Pub", "SubBefore", "SubAfter", "EndTransaction")
# org.apache.rocketmq.common.message.MessageType, by ordinal
MESSAGE_TYPES = ("Normal_Msg", "Trans_Msg_Half", "Trans_msg_Commit", "Delay_Msg")
# org.apache.rocketmq.client.consumer.listener.ConsumeReturnType, by ordinal (SubAfter's contextCode)
CONSUME_RETURN_TYPES = ("SUCCESS", "TIME_OUT", "EXCEPTION", "RETURNNULL", "FAILED")
MAX_FIELD_CHARS = 4096  # a decoded field longer than this is cut (a record comes from any client)


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One trace record (a TraceContext with its one TraceBean); fields a type lacks stay empty/None."""

    trace_type: str
    msg_id: str
    timestamp_ms: int | None = None
    region_id: str = ""
    group: str = ""
    topic: str = ""
    tags: str = ""
    keys: str = ""
    store_host: str = ""
    body_length: int | None = None
    cost_ms: int | None = None
    msg_type: int | None = None
    offset_msg_id: str = ""
    success: bool | None = None
    client_host: str = ""
    request_id: str = ""
    retry_times: int | None = None
    context_code: int | None = None
    transaction_id: str = ""
    transaction_state: str = ""
    from_transaction_check: bool | None = None

    @property
    def msg_type_name(self) -> str:
        return (
            MESSAGE_TYPES[self.msg_type]
            if self.msg_type is not None and 0 <= self.msg_type < len(MESSAGE_TYPES)
            else ""
        )

    @property
    def context_name(self) -> str:
        code = self.context_code
        return CONSUME_RETURN_TYPES[code] if code is not None and 0 <= code < len(CONSUME_RETURN_TYPES) else ""


@dataclass(frozen=True, slots=True)
class TraceDecodeResult:
    records: tuple[TraceRecord, ...]
    skipped: int  # records of an unknown type or with unreadable fields


def _s(value: object) -> str:
    """A field as Java's StringBuilder.append writes it (None -> 'null', booleans lower-case);
    the splitters are taken out of strings so one field never breaks the record."""
    if value is None or value == "":
        return "null" if value is None else ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).replace(CONTENT_SPLITOR, " ").replace(FIELD_SPLITOR, " ")


def encode_record(r: TraceRecord) -> str:
    """The record's text, FIELD_SPLITOR included (what TraceDataEncoder.encoderFromContextBean writes)."""
    t = r.trace_type
    if t == "Pub":
        fields = [
            t,
            r.timestamp_ms,
            r.region_id,
            r.group,
            r.topic,
            r.msg_id,
            r.tags or None,
            r.keys or None,
            r.store_host,
            r.body_length,
            r.cost_ms,
            r.msg_type or 0,
            r.offset_msg_id or None,
            bool(r.success),
        ]
    elif t == "SubBefore":
        fields = [t, r.timestamp_ms, r.region_id, r.group, r.request_id, r.msg_id, r.retry_times or 0, r.keys or None]
    elif t == "SubAfter":
        fields = [
            t,
            r.request_id,
            r.msg_id,
            r.cost_ms or 0,
            bool(r.success),
            r.keys or None,
            r.context_code or 0,
            r.timestamp_ms,
            r.group,
        ]
    elif t == "EndTransaction":
        fields = [
            t,
            r.timestamp_ms,
            r.region_id,
            r.group,
            r.topic,
            r.msg_id,
            r.tags or None,
            r.keys or None,
            r.store_host,
            r.msg_type or 0,
            r.transaction_id or None,
            r.transaction_state or "UNKNOW",
            bool(r.from_transaction_check),
        ]
    else:
        raise ValueError(f"trace_type must be one of {', '.join(TRACE_TYPES)}, got {t!r}")
    return CONTENT_SPLITOR.join(_s(f) for f in fields) + FIELD_SPLITOR


def encode_records(records: Iterable[TraceRecord]) -> str:
    return "".join(encode_record(r) for r in records)


def trace_keys(records: Iterable[TraceRecord]) -> list[str]:
    """The KEYS of a trace message carrying ``records``: each message id, then each of its keys (once, in order)."""
    seen: dict[str, None] = {}
    for r in records:
        for key in [r.msg_id, *(r.keys or "").split(" ")]:
            if key and key != "null":
                seen.setdefault(key, None)
    return list(seen)


def _text(value: str) -> str:
    value = value[:MAX_FIELD_CHARS]
    return "" if value == "null" else value


def _int(value: str) -> int:
    if len(value) > 20:
        raise ValueError("number too long")
    return int(value)


def _bool(value: str) -> bool:
    return value.strip().lower() == "true"  # Java's Boolean.parseBoolean


def _pub(f: list[str]) -> TraceRecord:
    n = len(f)
    offset_msg_id, success, client_host = "", _bool(f[12]) if n >= 13 else None, ""
    if n >= 14:
        offset_msg_id, success = _text(f[12]), _bool(f[13])
    if n >= 15:
        client_host = _text(f[14])
    return TraceRecord(
        "Pub",
        _text(f[5]),
        _int(f[1]),
        _text(f[2]),
        _text(f[3]),
        _text(f[4]),
        _text(f[6]),
        _text(f[7]),
        _text(f[8]),
        _int(f[9]),
        _int(f[10]),
        _int(f[11]),
        offset_msg_id,
        success,
        client_host,
    )


def _sub_before(f: list[str]) -> TraceRecord:
    return TraceRecord(
        "SubBefore",
        _text(f[5]),
        _int(f[1]),
        _text(f[2]),
        _text(f[3]),
        keys=_text(f[7]),
        request_id=_text(f[4]),
        retry_times=_int(f[6]),
    )


def _sub_after(f: list[str]) -> TraceRecord:
    n = len(f)
    return TraceRecord(
        "SubAfter",
        _text(f[2]),
        _int(f[7]) if n >= 8 else None,
        group=_text(f[8]) if n >= 9 else "",
        keys=_text(f[5]),
        cost_ms=_int(f[3]),
        success=_bool(f[4]),
        request_id=_text(f[1]),
        context_code=_int(f[6]) if n >= 7 else None,
    )


def _end_transaction(f: list[str]) -> TraceRecord:
    return TraceRecord(
        "EndTransaction",
        _text(f[5]),
        _int(f[1]),
        _text(f[2]),
        _text(f[3]),
        _text(f[4]),
        _text(f[6]),
        _text(f[7]),
        _text(f[8]),
        msg_type=_int(f[9]),
        transaction_id=_text(f[10]),
        transaction_state=_text(f[11]),
        from_transaction_check=_bool(f[12]),
    )


_DECODERS = {
    "Pub": (12, _pub),
    "SubBefore": (8, _sub_before),
    "SubAfter": (6, _sub_after),
    "EndTransaction": (13, _end_transaction),
}


def decode_trace_data(text: str | bytes) -> TraceDecodeResult:
    """Every record of a trace message's body; unreadable records are skipped (counted), never raised."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    records: list[TraceRecord] = []
    skipped = 0
    for chunk in text.split(FIELD_SPLITOR):
        if not chunk.strip():
            continue
        fields = chunk.split(CONTENT_SPLITOR)
        kind = _DECODERS.get(fields[0].strip())
        if kind is None or len(fields) < kind[0]:
            skipped += 1
            continue
        try:
            records.append(kind[1](fields))
        except (ValueError, IndexError):
            skipped += 1
    return TraceDecodeResult(tuple(records), skipped)
