"""RocketMQ 4.x trace data: the exact text of each record type, both ways, and input no client wrote."""

from __future__ import annotations

import pytest

from brokers.engine.common.trace_data import (
    CONTENT_SPLITOR as C,
    FIELD_SPLITOR as F,
    TraceRecord,
    decode_trace_data,
    encode_record,
    encode_records,
    trace_keys,
)

MSG_ID = "7F00000100002A9F0000000000000001"
OFFSET_ID = "7F00000100002A9F00000000000004D2"
# As RocketMQ 4.9's TraceDataEncoder writes them (a Java client's trace message body)
JAVA_PUB = (
    C.join(
        [
            "Pub",
            "1700000000000",
            "DefaultRegion",
            "order-producer",
            "Orders",
            MSG_ID,
            "TagA",
            "order-1",
            "127.0.0.1:10911",
            "12",
            "3",
            "0",
            OFFSET_ID,
            "true",
        ]
    )
    + F
)
JAVA_SUB_BEFORE = (
    C.join(["SubBefore", "1700000000100", "DefaultRegion", "order-consumer", "REQ1", MSG_ID, "0", "order-1"]) + F
)
JAVA_SUB_AFTER = (
    C.join(["SubAfter", "REQ1", MSG_ID, "7", "true", "order-1", "0", "1700000000107", "order-consumer"]) + F
)


def test_java_records_decode_field_by_field() -> None:
    result = decode_trace_data((JAVA_PUB + JAVA_SUB_BEFORE + JAVA_SUB_AFTER).encode())
    assert result.skipped == 0
    pub, before, after = result.records
    assert (pub.trace_type, pub.timestamp_ms, pub.region_id, pub.group, pub.topic, pub.msg_id, pub.tags, pub.keys) == (
        "Pub",
        1700000000000,
        "DefaultRegion",
        "order-producer",
        "Orders",
        MSG_ID,
        "TagA",
        "order-1",
    )
    assert (pub.store_host, pub.body_length, pub.cost_ms, pub.msg_type_name, pub.offset_msg_id, pub.success) == (
        "127.0.0.1:10911",
        12,
        3,
        "Normal_Msg",
        OFFSET_ID,
        True,
    )
    assert (before.group, before.request_id, before.msg_id, before.retry_times, before.keys) == (
        "order-consumer",
        "REQ1",
        MSG_ID,
        0,
        "order-1",
    )
    assert (after.request_id, after.cost_ms, after.success, after.context_name, after.timestamp_ms, after.group) == (
        "REQ1",
        7,
        True,
        "SUCCESS",
        1700000000107,
        "order-consumer",
    )


def test_encoding_gives_back_javas_text() -> None:
    decoded = decode_trace_data(JAVA_PUB + JAVA_SUB_BEFORE + JAVA_SUB_AFTER).records
    assert encode_records(decoded) == JAVA_PUB + JAVA_SUB_BEFORE + JAVA_SUB_AFTER


def test_missing_strings_are_written_null_as_java_does_and_read_back_empty() -> None:
    record = TraceRecord("Pub", MSG_ID, 1, "DefaultRegion", "g", "T", "", "", "127.0.0.1:10911", 0, 0, 0, "", True)
    text = encode_record(record)
    assert text.split(C)[6:8] == ["null", "null"] and text.split(C)[12] == "null"
    assert decode_trace_data(text).records[0] == record


def test_older_and_newer_record_lengths() -> None:
    old_pub = C.join(JAVA_PUB.rstrip(F).split(C)[:12] + ["true"])  # 13 fields: no offsetMsgId
    five_pub = JAVA_PUB.rstrip(F) + C + "10.0.0.7"  # 15 fields: clientHost
    old_after = C.join(["SubAfter", "REQ1", MSG_ID, "7", "false", "order-1"])  # 6 fields
    pub13, pub15, after6 = decode_trace_data(F.join([old_pub, five_pub, old_after])).records
    assert pub13.success is True and pub13.offset_msg_id == ""
    assert pub15.client_host == "10.0.0.7" and pub15.offset_msg_id == OFFSET_ID
    assert after6.success is False and after6.context_code is None and after6.timestamp_ms is None


def test_trace_keys_are_each_id_then_its_keys_once() -> None:
    a = TraceRecord("Pub", "ID1", keys="k1 k2")
    b = TraceRecord("SubAfter", "ID1", keys="k2")
    assert trace_keys([a, b, TraceRecord("SubBefore", "ID2", keys="null")]) == ["ID1", "k1", "k2", "ID2"]


def test_splitters_inside_a_field_do_not_break_the_record() -> None:
    record = TraceRecord("SubBefore", MSG_ID, 5, group="g", keys="a\x01b\x02c", request_id="R", retry_times=2)
    (back,) = decode_trace_data(encode_record(record)).records
    assert back.keys == "a b c" and back.retry_times == 2


@pytest.mark.parametrize(
    "body",
    [
        "",
        "\x02\x02",
        "garbage",
        "Pub",
        "Pub\x01notanumber\x01r\x01g\x01t\x01id\x01\x01\x01h\x011\x011\x010\x02",
        "SubBefore\x01" + "9" * 400 + "\x01r\x01g\x01req\x01id\x010\x01k\x02",
        "SubAfter\x01req\x01id\x02",
        "Unknown\x01a\x01b\x02",
        b"\xff\xfe\x00Pub\x01\x02",
        "EndTransaction\x01x\x02",
        "SubAfter\x01r\x01i\x01NaN\x01true\x01k\x02",
    ],
)
def test_malformed_input_is_skipped_never_raised(body) -> None:
    result = decode_trace_data(body)
    assert result.records == ()


def test_a_bad_record_costs_only_itself() -> None:
    result = decode_trace_data("junk\x01x" + F + JAVA_SUB_BEFORE + "Pub\x01bad" + F)
    assert [r.trace_type for r in result.records] == ["SubBefore"] and result.skipped == 2


def test_unknown_trace_type_is_refused_when_encoding() -> None:
    with pytest.raises(ValueError, match="trace_type"):
        encode_record(TraceRecord("Nope", MSG_ID))
