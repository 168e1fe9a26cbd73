"""get_message with a message_filter (the SQL92 hook): properties read from the commit log, whatever the
record's size or host kind; refused records skipped and counted like tag mismatches."""

from __future__ import annotations

from dataclasses import replace

import pytest

from brokers.engine.common.message_codec import (
    BORNHOST_V6_FLAG,
    RECORD_HEAD_MAX,
    STOREHOSTADDRESS_V6_FLAG,
    RecordFormatError,
    decode_records,
    decode_tail_properties,
    encode_record,
    tags_code,
    topic_position,
)
from brokers.engine.filter.selector_cache import compile_expression
from brokers.engine.store import GetMessageStatus
from tests.brokers.engine.store._support import inner


def _bodies(result) -> list[bytes]:
    return [m.body for m in decode_records(b"".join(result.records))]


def test_the_filter_sees_each_records_properties_and_skips_the_refused(open_store):
    store = open_store(commitlog_file_size=1 << 20)
    for i in range(8):
        body = bytes([97 + i]) * (9000 if i % 3 == 0 else 10)  # large ones are read by their properties first
        assert store.put_message_sync(
            inner(body=body, tags="even" if i % 2 == 0 else "odd", properties={"i": str(i)})
        ).ok
    seen: list[dict[str, str]] = []

    def wanted(props: dict[str, str]) -> bool:
        seen.append(props)
        return int(props["i"]) in (0, 3, 5)

    r = store.get_message("g", "TopicTest", 0, 0, 32, message_filter=wanted)
    assert r.status is GetMessageStatus.FOUND and r.next_begin_offset == 8
    assert _bodies(r) == [b"a" * 9000, b"d" * 9000, b"f" * 10]
    assert [p["i"] for p in seen] == [str(i) for i in range(8)] and seen[1]["TAGS"] == "odd"


def test_tags_first_then_properties_and_nothing_matching_is_no_matched_message(open_store):
    store = open_store()
    for i in range(6):
        assert store.put_message_sync(inner(body=b"m%d" % i, tags="A" if i < 3 else "B", properties={"i": str(i)})).ok
    selector = compile_expression("SQL92", "i >= 2")
    r = store.get_message("g", "TopicTest", 0, 0, 32, {tags_code("A")}, message_filter=selector.matches)
    assert _bodies(r) == [b"m2"]
    r = store.get_message("g", "TopicTest", 0, 0, 2, message_filter=selector.matches)
    assert _bodies(r) == [b"m2", b"m3"] and r.next_begin_offset == 4  # stops at max_msg_nums like the tag path
    none = store.get_message("g", "TopicTest", 0, 0, 32, message_filter=compile_expression("SQL92", "i > 100").matches)
    assert none.status is GetMessageStatus.NO_MATCHED_MESSAGE and none.next_begin_offset == 6 and none.records == []


def test_ipv6_hosts_shift_the_properties_and_are_read_right(open_store):
    store = open_store()
    assert store.put_message_sync(replace(inner(body=b"v6", properties={"k": "v"}), born_host="[::1]:51000")).ok
    r = store.get_message("g", "TopicTest", 0, 0, 1, message_filter=compile_expression("SQL92", "k = 'v'").matches)
    assert _bodies(r) == [b"v6"] and decode_records(r.records[0])[0].born_host.startswith("[")


@pytest.mark.parametrize(
    "sys_flag", [0, BORNHOST_V6_FLAG, STOREHOSTADDRESS_V6_FLAG, BORNHOST_V6_FLAG | STOREHOSTADDRESS_V6_FLAG]
)
def test_topic_position_and_tail_properties_of_a_record(sys_flag: int) -> None:
    hosts = {
        "born_host": "[::1]:1" if sys_flag & BORNHOST_V6_FLAG else "10.0.0.1:1",
        "store_host": "[::2]:2" if sys_flag & STOREHOSTADDRESS_V6_FLAG else "10.0.0.2:2",
    }
    record = encode_record(
        topic="T", queue_id=0, body=b"body", properties={"a": "1", "TAGS": "t"}, sys_flag=sys_flag, **hosts
    )
    at = topic_position(record[:RECORD_HEAD_MAX])
    assert record[at : at + 2] == b"\x01T"
    assert decode_tail_properties(record[at:]) == {"a": "1", "TAGS": "t"}


def test_a_broken_record_is_a_record_format_error() -> None:
    record = encode_record(topic="T", queue_id=0, body=b"body", properties={"a": "1"})
    at = topic_position(record)
    for broken_head in (record[:40], record[:86]):
        with pytest.raises(RecordFormatError):
            topic_position(broken_head)
    for broken_tail in (b"", record[at : at + 2], record[at:-1], record[at : at + 4] + b"\xff\xfe"):
        with pytest.raises(RecordFormatError):
            decode_tail_properties(broken_tail)
