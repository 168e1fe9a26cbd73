"""The commit log record layout, offset message ids, batch bodies and Java hashes."""

from __future__ import annotations

import struct

import pytest

from brokers.engine.common.message import Message, tag_hash
from brokers.engine.common.message_codec import (
    BLANK_MAGIC_CODE,
    BORNHOST_V6_FLAG,
    MESSAGE_MAGIC_CODE,
    STOREHOSTADDRESS_V6_FLAG,
    BatchEntry,
    RecordFormatError,
    body_crc,
    bytes_to_host,
    create_offset_msg_id,
    decode_batch_body,
    decode_record,
    decode_records,
    encode_batch_body,
    encode_record,
    host_to_bytes,
    iter_record_spans,
    java_hash_extend,
    java_string_hash,
    parse_offset_msg_id,
    record_size,
    tags_code,
    write_blank_marker,
)


def test_body_crc_reference_examples():
    assert body_crc(b"hello") == 907060870
    assert body_crc(b"1") == 64810935  # raw 0x83DCEFB7 with the top bit cleared


def test_offset_msg_id_reference_example():
    assert create_offset_msg_id("192.168.1.10:10911", 123456) == "C0A8010A00002A9F000000000001E240"
    assert parse_offset_msg_id("C0A8010A00002A9F000000000001E240") == ("192.168.1.10:10911", 123456)
    assert parse_offset_msg_id("c0a8010a00002a9f000000000001e240") == ("192.168.1.10:10911", 123456)


def test_offset_msg_id_ipv6_is_56_hex_characters():
    msg_id = create_offset_msg_id("[2001:db8::1]:10911", 77)
    assert len(msg_id) == 56 and msg_id == msg_id.upper()
    assert parse_offset_msg_id(msg_id) == ("[2001:db8::1]:10911", 77)
    with pytest.raises(ValueError):
        parse_offset_msg_id("C0A8")
    with pytest.raises(ValueError):
        parse_offset_msg_id("Z" * 32)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("TagA", 2598919),
        ("TagB", 2598920),
        ("payment", -786681338),
        ("null", 3392903),
        ("TopicTest#KEY1", -1656969516),
        ("", 0),
    ],
)
def test_java_string_hash_reference_examples(text, expected):
    assert java_string_hash(text) == expected


@pytest.mark.parametrize("text", ["é漢字x" * 50, "a" * 1000, "b" * 256, "c" * 257, "😀 emoji", "x"])
def test_java_string_hash_agrees_with_the_reference_loop(text):
    assert java_string_hash(text) == tag_hash(text)
    assert java_hash_extend(java_hash_extend(0, text[:3]), text[3:]) == java_string_hash(text) & 0xFFFFFFFF


def test_tags_code_is_sign_extended_and_zero_without_tag():
    assert tags_code("payment") == -786681338
    assert struct.pack(">q", tags_code("payment")) == bytes.fromhex("FFFFFFFFD11C3206")
    assert tags_code(None) == 0 and tags_code("") == 0


def test_host_encoding():
    assert host_to_bytes("192.168.1.10:10911") == bytes([192, 168, 1, 10, 0, 0, 0x2A, 0x9F])
    assert host_to_bytes("/127.0.0.1:1") == bytes([127, 0, 0, 1, 0, 0, 0, 1])
    assert len(host_to_bytes("[::1]:5")) == 20
    assert host_to_bytes("::1:5") == host_to_bytes("[::1]:5")
    assert host_to_bytes("::ffff:10.0.0.5:99") == host_to_bytes("10.0.0.5:99")  # mapped -> IPv4
    assert bytes_to_host(host_to_bytes("10.0.0.5:99")) == "10.0.0.5:99"
    assert bytes_to_host(host_to_bytes("[2001:db8::7]:1")) == "[2001:db8::7]:1"
    for bad in ("localhost:10911", "10.0.0.1", "10.0.0.1:99999", "10.0.0.1:x"):
        with pytest.raises(ValueError):
            host_to_bytes(bad)


def test_record_layout_matches_the_reference_offsets():
    record = encode_record(
        topic="T1",
        queue_id=3,
        body=b"hello",
        properties={"TAGS": "TagA"},
        flag=7,
        queue_offset=11,
        physical_offset=4096,
        sys_flag=0,
        born_timestamp=1000,
        born_host="10.0.0.5:51000",
        store_timestamp=2000,
        store_host="192.168.1.10:10911",
        reconsume_times=2,
        prepared_transaction_offset=9,
    )
    props = b"TAGS\x01TagA"
    assert len(record) == 91 + 5 + 2 + len(props) == record_size(5, 2, len(props))
    size, magic, crc, qid, flag, qoff, phys, sysflag, born_ts = struct.unpack_from(">iIiiiqqiq", record)
    assert (size, magic, crc, qid, flag, qoff, phys, sysflag, born_ts) == (
        len(record),
        MESSAGE_MAGIC_CODE,
        907060870,
        3,
        7,
        11,
        4096,
        0,
        1000,
    )
    assert record[48:56] == host_to_bytes("10.0.0.5:51000")
    assert struct.unpack_from(">q", record, 56)[0] == 2000
    assert record[64:72] == host_to_bytes("192.168.1.10:10911")
    assert struct.unpack_from(">iqi", record, 72) == (2, 9, 5)
    assert record[88:93] == b"hello"
    assert record[93] == 2 and record[94:96] == b"T1"
    assert struct.unpack_from(">h", record, 96)[0] == len(props) and record[98:] == props
    assert struct.unpack_from(">i", record, 4)[0] == -626843481  # the Java int of the magic code


def test_decode_record_round_trip_sets_msg_id_and_store_size():
    record = encode_record(
        topic="TopicTest",
        queue_id=1,
        body=b"\x00\x01body",
        properties={"KEYS": "k1 k2"},
        queue_offset=5,
        physical_offset=123456,
        born_timestamp=1,
        born_host="10.0.0.5:1",
        store_timestamp=2,
        store_host="192.168.1.10:10911",
        reconsume_times=3,
    )
    msg = decode_record(record)
    assert msg.topic == "TopicTest" and msg.body == b"\x00\x01body" and msg.queue_id == 1
    assert msg.queue_offset == 5 and msg.commit_log_offset == 123456
    assert msg.properties == {"KEYS": "k1 k2"} and msg.keys == "k1 k2"
    assert msg.born_host == "10.0.0.5:1" and msg.store_host == "192.168.1.10:10911"
    assert msg.reconsume_times == 3 and msg.store_timestamp == 2
    assert msg.msg_id == "C0A8010A00002A9F000000000001E240"
    assert msg.store_size == len(record) and msg.body_crc == body_crc(b"\x00\x01body")


def test_ipv6_hosts_set_the_sysflag_bits_and_shift_fields():
    record = encode_record(topic="T", queue_id=0, body=b"x", born_host="[::1]:5", store_host="[2001:db8::1]:10911")
    assert len(record) == 91 + 1 + 1 + 24
    msg = decode_record(record)
    assert msg.sys_flag & BORNHOST_V6_FLAG and msg.sys_flag & STOREHOSTADDRESS_V6_FLAG
    assert msg.born_host == "[::1]:5" and msg.store_host == "[2001:db8::1]:10911"
    assert len(msg.msg_id) == 56
    # an IPv4-mapped peer is stored in the 4-byte form a non-Java client can read
    mapped = decode_record(encode_record(topic="T", queue_id=0, body=b"x", born_host="::ffff:10.0.0.5:99"))
    assert mapped.sys_flag & BORNHOST_V6_FLAG == 0 and mapped.born_host == "10.0.0.5:99"


def test_decode_records_reads_a_pull_body():
    records = [
        encode_record(topic="T", queue_id=0, body=b"m%d" % i, queue_offset=i, physical_offset=i * 100) for i in range(5)
    ]
    body = b"".join(records)
    assert [m.body for m in decode_records(body)] == [b"m%d" % i for i in range(5)]
    assert [size for _pos, size in iter_record_spans(body)] == [len(r) for r in records]
    assert decode_records(b"") == []


def test_decode_rejects_what_is_not_a_record():
    record = encode_record(topic="T", queue_id=0, body=b"abc")
    with pytest.raises(RecordFormatError):
        decode_record(record[:-1])
    with pytest.raises(RecordFormatError):
        decode_record(b"\x00" * 100)
    blank = bytearray(16)
    write_blank_marker(blank, 0, 16)
    assert struct.unpack(">iI", blank[:8]) == (16, BLANK_MAGIC_CODE)
    with pytest.raises(RecordFormatError):
        decode_record(bytes(blank) + bytes(100))
    broken = bytearray(record)
    struct.pack_into(">i", broken, 84, 2)  # body length no longer adds up
    with pytest.raises(RecordFormatError):
        decode_record(bytes(broken))


def test_encode_record_refuses_oversized_topic_and_properties():
    with pytest.raises(ValueError):
        encode_record(topic="T" * 128, queue_id=0, body=b"x")
    with pytest.raises(ValueError):
        encode_record(topic="T", queue_id=0, body=b"x", properties={"K": "v" * 40000})


def test_batch_body_round_trip_and_layout():
    messages = [
        Message("T", b"one", tags="TagA", keys=["k1", "k2"], properties={"UNIQ_KEY": "U1"}, flag=1),
        Message("T", b"", properties={"a": "b"}),
    ]
    data = encode_batch_body(messages)
    size, magic, crc, flag, body_len = struct.unpack_from(">iiiii", data)
    assert (magic, crc, flag, body_len) == (0, 0, 1, 3) and data[20:23] == b"one"
    entries = decode_batch_body(data)
    assert entries[0] == BatchEntry(1, b"one", {"UNIQ_KEY": "U1", "TAGS": "TagA", "KEYS": "k1 k2"})
    assert entries[1] == BatchEntry(0, b"", {"a": "b"})
    assert decode_batch_body(encode_batch_body(entries)) == entries
    with pytest.raises(RecordFormatError):
        decode_batch_body(data[:-1])
