"""A message's trace: the records RocketMQ-style clients wrote about it to the trace topic.

Clients with message trace on (Gantry's ``trace_enabled=True``, RocketMQ's ``enableMsgTrace``) send
trace messages to ``RMQ_SYS_TRACE_TOPIC`` (or a topic they name) keyed by the traced messages' ids and
keys. So the trace of a message is a key-index query of the trace topic for its id (QUERY_MESSAGE on
every broker of the topic, as the message search does), each found body decoded
(brokers.engine.common.trace_data), and the records about that message kept: the Pub (who sent it,
when, where it was stored) and per consumer group the SubBefore/SubAfter pairs (which client got it,
the result and the cost). The client host is the trace message's born host, as rocketmq-dashboard
shows it. A record no client could have meant (an unknown type, a bad number) is skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from brokers.engine.common.constants import RMQ_SYS_TRACE_TOPIC
from brokers.engine.common.message_id import parse_offset_msg_id
from brokers.engine.common.trace_data import TraceRecord, decode_trace_data
from brokers.gateway.cluster import broker_names_by_addr
from brokers.gateway.errors import RemotingError
from brokers.gateway.message_keys import MAX_TIMESTAMP, query_message_by_key
from console.errors import InvalidInput, ServiceError
from topics import selectors
from topics.messages import selectors as message_selectors

MAX_TRACE_MESSAGES = 64  # trace messages read per broker (QUERY_MESSAGE's cap)
MAX_ID_CHARS = 128


def utc(ms: int | None) -> datetime | None:
    """A record's millisecond timestamp as an aware UTC datetime (None when missing or absurd)."""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc) if ms else None
    except (OverflowError, OSError, ValueError):
        return None


@dataclass(frozen=True)
class TraceEvent:
    """One record about the message, with where its trace message came from."""

    record: TraceRecord
    client_host: str  # the record's own clientHost (5.x clients), else the trace message's born host
    trace_store_timestamp: int
    broker_name: str = ""  # the broker at the record's store host, when it is a member of this cluster

    @property
    def at(self) -> datetime | None:
        return utc(self.record.timestamp_ms)


@dataclass(frozen=True)
class ConsumeAttempt:
    """One delivery to a consumer client: its SubBefore and SubAfter (either may be missing yet)."""

    group: str
    request_id: str
    client_host: str
    before: TraceRecord | None
    after: TraceRecord | None

    @property
    def began(self) -> datetime | None:
        return utc(self.before.timestamp_ms) if self.before else None

    @property
    def ended(self) -> datetime | None:
        return utc(self.after.timestamp_ms) if self.after else None

    @property
    def status(self) -> str:
        if self.after is None:
            return "consuming (no result yet)"
        return "success" if self.after.success else f"failed ({self.after.context_name or 'FAILED'})"


@dataclass(frozen=True)
class MessageTrace:
    msg_id: str
    trace_topic: str
    pubs: tuple[TraceEvent, ...]
    consumes: tuple[ConsumeAttempt, ...]
    others: tuple[TraceEvent, ...]  # EndTransaction records
    trace_messages: int  # trace messages read
    skipped_records: int  # records that did not decode

    @property
    def found(self) -> bool:
        return bool(self.pubs or self.consumes or self.others)

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(sorted({c.group for c in self.consumes}))


def _checked_id(msg_id: str) -> str:
    msg_id = (msg_id or "").strip()
    if not msg_id:
        raise InvalidInput("msg_id", "the message id (or key) is empty.")
    if len(msg_id) > MAX_ID_CHARS or any(c.isspace() or not c.isprintable() for c in msg_id):
        raise InvalidInput(
            "msg_id", f"a message id or key is at most {MAX_ID_CHARS} printable characters without spaces."
        )
    return msg_id


def _about(record: TraceRecord, wanted: str) -> bool:
    return wanted in (record.msg_id, record.offset_msg_id) or wanted in record.keys.split(" ")


def _pair(subs: list[TraceEvent]) -> tuple[ConsumeAttempt, ...]:
    """SubBefore and SubAfter records joined by (request id, message id); in time order."""
    attempts: dict[tuple[str, str], dict] = {}
    for ev in subs:
        r = ev.record
        slot = attempts.setdefault(
            (r.request_id, r.msg_id), {"group": r.group, "host": ev.client_host, "before": None, "after": None}
        )
        slot["before" if r.trace_type == "SubBefore" else "after"] = r
        if r.trace_type == "SubBefore":
            slot["group"], slot["host"] = r.group or slot["group"], ev.client_host
    out = [ConsumeAttempt(s["group"], rid, s["host"], s["before"], s["after"]) for (rid, _), s in attempts.items()]
    return tuple(sorted(out, key=lambda a: (a.group, (a.before or a.after).timestamp_ms or 0)))  # type: ignore[union-attr]


def _uniq_key_of_offset_id(msg_id: str) -> str | None:
    """The UNIQ_KEY of the stored message with this offset message id (None when it is none, or not here)."""
    try:
        parse_offset_msg_id(msg_id)
        view = message_selectors.message_detail(msg_id=msg_id)
    except (ValueError, ServiceError, RemotingError):
        return None
    return view.uniq_key if view.uniq_key and view.uniq_key != msg_id else None


def message_trace(*, msg_id: str, trace_topic: str = RMQ_SYS_TRACE_TOPIC) -> MessageTrace:
    """The trace of the message with this id (UNIQ_KEY, or an offset id of a message stored here) or key;
    NotFound for an unknown trace topic."""
    wanted = _checked_id(msg_id)
    topic = (trace_topic or RMQ_SYS_TRACE_TOPIC).strip()
    try:
        selectors.topic_route_data(topic)  # NotFound for a trace topic the name servers do not route
    except InvalidInput as exc:
        raise InvalidInput("trace_topic", exc.fields.get("name", ["not a topic name."])[0]) from None
    found = query_message_by_key(topic, wanted, MAX_TRACE_MESSAGES, 0, MAX_TIMESTAMP)
    uniq_key = _uniq_key_of_offset_id(wanted) if not found else None
    if uniq_key:  # an offset message id: traces are keyed by the client-made id the message carries
        wanted = uniq_key
        found = query_message_by_key(topic, wanted, MAX_TRACE_MESSAGES, 0, MAX_TIMESTAMP)
    pubs: list[TraceEvent] = []
    subs: list[TraceEvent] = []
    others: list[TraceEvent] = []
    skipped = 0
    seen: set[TraceRecord] = set()
    names = broker_names_by_addr(selectors.cluster_info()) if found else {}
    for msg in found:
        decoded = decode_trace_data(bytes(msg.body))
        skipped += decoded.skipped
        for record in decoded.records:
            if not _about(record, wanted) or record in seen:  # a broker group's slave may answer the same record
                continue
            seen.add(record)
            ev = TraceEvent(
                record,
                record.client_host or msg.born_host.rsplit(":", 1)[0],
                msg.store_timestamp,
                names.get(record.store_host, ""),
            )
            {"Pub": pubs, "SubBefore": subs, "SubAfter": subs}.get(record.trace_type, others).append(ev)
    pubs.sort(key=lambda e: e.record.timestamp_ms or 0)
    return MessageTrace(wanted, topic, tuple(pubs), _pair(subs), tuple(others), len(found), skipped)
