"""The compiled codecs (brokers.engine.speedups) give byte for byte what the pure ones give.

Every twin is compared with its pure function on generated inputs: well-formed frames, records
and batch bodies, values at and past their fields' limits, non-ASCII and control characters, and
the same bytes truncated or with a byte changed. Each pair must return equal results, or raise
the same exception with the same message. The compiled modules are imported directly, so this
runs on both passes of ``make test`` (the second keeps the pure path with GANTRY_PURE_PYTHON=1).
"""

from __future__ import annotations

import importlib
import mmap
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokers.engine import speedups
from brokers.engine.common import batch_body, java_hash, message, message_codec  # noqa: F401 (installs their twins)
from brokers.engine.common.message_id import host_to_bytes
from brokers.engine.remoting import command, header_codec
from brokers.engine.store import index_file
from brokers.engine.store import dispatch_plan, record_check  # noqa: F401 (install their twins)

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _pair(qualified: str):
    module, name = qualified.rsplit(".", 1)
    compiled = importlib.import_module(speedups.TWINS[module])
    return speedups.PURE[qualified], getattr(compiled, name)


def _outcome(fn, *args):
    try:
        result = fn(*args)
        return "ok", list(result) if type(result).__name__ in ("generator", "list_iterator") else result
    except Exception as exc:  # noqa: BLE001 - the point is to compare whatever each side raises
        return "raised", type(exc), str(exc)


def assert_same(qualified: str, *args) -> object:
    pure, compiled = _pair(qualified)
    expected = _outcome(pure, *args)
    assert _outcome(compiled, *args) == expected, (qualified, args)
    return expected


# -- which path runs ----------------------------------------------------------------------------


def test_every_pure_function_has_its_compiled_twin_in_use_unless_switched_off() -> None:
    assert len(speedups.PURE) == 14 and len(speedups.TWINS) == 7
    if speedups.enabled():
        # make test builds the twins: a missing or stale build fails here, not silently slow
        assert speedups.active() and set(speedups.COMPILED) == set(speedups.PURE)
        assert (
            header_codec.encode_binary_header
            is speedups.COMPILED["brokers.engine.remoting.header_codec.encode_binary_header"]
        )
        assert command.encode_frame is speedups.COMPILED["brokers.engine.remoting.header_codec.encode_frame"]
    else:
        assert not speedups.active()
        assert message_codec.decode_record is speedups.PURE["brokers.engine.common.message_codec.decode_record"]


def test_a_build_older_than_its_pyx_or_a_pxd_it_cimports_is_stale(tmp_path) -> None:
    engine = tmp_path / "brokers" / "engine"
    engine.mkdir(parents=True)
    pxd, other_pxd = engine / "_byteorder.pxd", engine / "_unused.pxd"
    pyx, built = engine / "_x_c.pyx", engine / "_x_c.cpython-311-x86_64-linux-gnu.so"
    pyx.write_text("from libc.stdint cimport uint8_t\nfrom brokers.engine._byteorder cimport get32\n")
    for path in (pxd, other_pxd, built):
        path.write_bytes(b"")

    def at(path, t):
        os.utime(path, (t, t))

    for path in (pyx, pxd, other_pxd):
        at(path, 1_000)
    at(built, 2_000)
    assert speedups.newer_sources(built, pyx, root=tmp_path) == []
    at(other_pxd, 3_000)  # a .pxd the twin does not cimport: not its source
    assert speedups.newer_sources(built, pyx, root=tmp_path) == []
    at(pxd, 3_000)
    assert speedups.newer_sources(built, pyx, root=tmp_path) == [pxd]
    at(pyx, 3_000)
    assert speedups.newer_sources(built, pyx, root=tmp_path) == [pyx, pxd]
    pyx.unlink()  # an installed build: no source next to it, nothing to compare with
    assert speedups.newer_sources(built, pyx, root=tmp_path) == []


def test_the_environment_switch_keeps_the_pure_path_in_a_fresh_process() -> None:
    code = (
        "from brokers.engine import speedups; from brokers.engine.common import message_codec as m; "
        "print(speedups.active(), m.decode_record is speedups.PURE['brokers.engine.common.message_codec.decode_record'])"
    )
    env = dict(os.environ, GANTRY_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


# -- frames -------------------------------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8"), max_size=40)  # control characters, quotes, non-ASCII
ANY_TEXT = st.text(max_size=12)  # surrogates included: neither side may accept them differently
INT16 = st.integers(-0x8000, 0x7FFF)
INT32 = st.integers(-0x80000000, 0x7FFFFFFF)
WIDE = st.one_of(INT32, st.integers(-(1 << 70), 1 << 70), st.booleans())
LANGUAGE = st.one_of(st.sampled_from(header_codec.LANGUAGE_CODES), TEXT)
EXT = st.dictionaries(TEXT, st.one_of(TEXT, st.none()), max_size=8)
ODD_EXT = st.dictionaries(
    st.one_of(TEXT, st.integers()), st.one_of(TEXT, st.integers(), st.none(), ANY_TEXT), max_size=4
)


@FAST
@given(
    code=INT16,
    language=LANGUAGE,
    version=INT16,
    opaque=INT32,
    flag=INT32,
    remark=st.one_of(st.none(), TEXT),
    ext=EXT,
    body=st.binary(max_size=64),
    serialize_type=st.sampled_from([0, 1]),
)
def test_frames_are_byte_identical(code, language, version, opaque, flag, remark, ext, body, serialize_type) -> None:
    encoder = "encode_json_header" if serialize_type == 0 else "encode_binary_header"
    status, header = assert_same(
        f"brokers.engine.remoting.header_codec.{encoder}", code, language, version, opaque, flag, remark, ext
    )[:2]
    assert status == "ok"
    _, frame = assert_same("brokers.engine.remoting.header_codec.encode_frame", serialize_type, header, body)
    if serialize_type == 1:
        _, fields = assert_same("brokers.engine.remoting.header_codec.decode_binary_header", header)
        assert fields[0] == code and fields[3:5] == (opaque, flag)
    assert command.RemotingCommand.decode(frame[4:]).body == body


@FAST
@given(
    code=WIDE,
    language=st.one_of(LANGUAGE, st.integers()),
    version=WIDE,
    opaque=WIDE,
    flag=WIDE,
    remark=st.one_of(st.none(), ANY_TEXT, st.integers()),
    ext=ODD_EXT,
)
def test_headers_with_odd_values_give_the_same_bytes_or_the_same_error(
    code, language, version, opaque, flag, remark, ext
) -> None:
    for encoder in ("encode_json_header", "encode_binary_header"):
        assert_same(
            f"brokers.engine.remoting.header_codec.{encoder}", code, language, version, opaque, flag, remark, ext
        )


@FAST
@given(
    ext=EXT,
    remark=st.one_of(st.none(), TEXT),
    cut=st.integers(0, 400),
    at=st.integers(0, 400),
    value=st.integers(0, 255),
)
def test_damaged_binary_headers_decode_the_same_or_fail_the_same(ext, remark, cut, at, value) -> None:
    header = speedups.PURE["brokers.engine.remoting.header_codec.encode_binary_header"](
        310, "PYTHON", 399, 7, 0, remark, ext
    )
    decode = "brokers.engine.remoting.header_codec.decode_binary_header"
    assert_same(decode, header[:cut])
    if at < len(header):
        changed = header[:at] + bytes([value]) + header[at + 1 :]
        assert_same(decode, changed)
        assert_same(decode, bytearray(changed))
    assert_same(decode, header + b"\x00\x01")


def test_long_keys_and_wide_numbers_take_the_pure_error() -> None:
    status, kind, text = assert_same(
        "brokers.engine.remoting.header_codec.encode_binary_header", 1 << 15, "JAVA", 0, 0, 0, None, {}
    )
    assert status == "raised" and "does not fit the binary header" in text
    assert (
        assert_same(
            "brokers.engine.remoting.header_codec.encode_binary_header", 1, "JAVA", 0, 0, 0, None, {"k" * 40000: "v"}
        )[0]
        == "raised"
    )
    assert assert_same("brokers.engine.remoting.header_codec.encode_frame", 0, b"h", bytearray(b"body"))[0] == "ok"


# -- records ------------------------------------------------------------------------------------

HOSTS = st.sampled_from([host_to_bytes(h) for h in ("127.0.0.1:10911", "10.1.2.3:0", "[::1]:8080", "[fe80::1]:65535")])
INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
TOPIC = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=30).map(str.encode)
PROPS = st.dictionaries(
    st.text("abcKEYS_\u00e9", min_size=1, max_size=6), st.text("xyz \u4e2d", min_size=1, max_size=8), max_size=4
).map(lambda d: message_codec.properties_to_string(d).encode())


@FAST
@given(
    topic=TOPIC,
    queue_id=INT32,
    body=st.binary(max_size=200),
    props=PROPS,
    flag=INT32,
    queue_offset=INT64,
    physical=st.integers(0, (1 << 63) - 1),
    sys_flag=st.sampled_from([0, 1, 4, 8, 0x10, 0x30, 0x7FFFFFFF]),
    born_ts=INT64,
    born=HOSTS,
    store_ts=INT64,
    store=HOSTS,
    reconsume=INT32,
    prepared=INT64,
    crc=INT32,
)
def test_records_are_byte_identical_and_decode_the_same(
    topic,
    queue_id,
    body,
    props,
    flag,
    queue_offset,
    physical,
    sys_flag,
    born_ts,
    born,
    store_ts,
    store,
    reconsume,
    prepared,
    crc,
) -> None:
    args = (
        topic,
        queue_id,
        body,
        props,
        flag,
        queue_offset,
        physical,
        sys_flag,
        born_ts,
        born,
        store_ts,
        store,
        reconsume,
        prepared,
        crc,
    )
    status, (tail, size) = assert_same("brokers.engine.common.message_codec.encode_record_tail", *args)
    assert status == "ok" and len(tail) == size - 8
    record = size.to_bytes(4, "big", signed=True) + message_codec.MESSAGE_MAGIC_BYTES + tail
    _, msg = assert_same("brokers.engine.common.message_codec.decode_record", record, 0)
    assert msg.body == body and msg.queue_offset == queue_offset
    assert_same("brokers.engine.common.message_codec.decode_records", record * 3)
    assert_same("brokers.engine.common.message_codec.decode_record", b"pad" + record, 3)


@FAST
@given(
    queue_id=WIDE,
    flag=WIDE,
    queue_offset=st.one_of(INT64, st.integers(1 << 63, 1 << 65)),
    born=st.binary(max_size=24),
    topic=st.binary(max_size=300),
    body=st.one_of(st.binary(max_size=8), st.just(bytearray(b"ab"))),
)
def test_records_with_odd_values_encode_the_same_or_fail_the_same(
    queue_id, flag, queue_offset, born, topic, body
) -> None:
    assert_same(
        "brokers.engine.common.message_codec.encode_record_tail",
        topic,
        queue_id,
        body,
        b"",
        flag,
        queue_offset,
        0,
        0,
        0,
        born,
        0,
        host_to_bytes("127.0.0.1:1"),
        0,
        0,
        0,
    )


@FAST
@given(
    cut=st.integers(0, 300),
    at=st.integers(0, 300),
    value=st.integers(0, 255),
    v6=st.booleans(),
    pos=st.integers(-3, 400),
)
def test_damaged_records_decode_the_same_or_fail_the_same(cut, at, value, v6, pos) -> None:
    record = message_codec.encode_record(
        topic="TopicTest",
        queue_id=3,
        body=b"hello" * 20,
        properties={"TAGS": "a", "UNIQ_KEY": "K1"},
        store_host="[::1]:10911" if v6 else "127.0.0.1:10911",
        physical_offset=99,
    )
    decode = "brokers.engine.common.message_codec.decode_record"
    assert_same(decode, record[:cut], 0)
    if at < len(record):
        changed = record[:at] + bytes([value]) + record[at + 1 :]
        assert_same(decode, changed, 0)
        assert_same("brokers.engine.common.message_codec.decode_records", record + changed)
        assert_same(decode, memoryview(changed), 0)
    assert_same(decode, record + record, pos)
    assert_same("brokers.engine.common.message_codec.decode_records", bytearray(record))


# -- reading records in place (recovery's scans, a slave's replica appender) ---------------------


@FAST
@given(
    cut=st.integers(0, 400),
    at=st.integers(0, 400),
    value=st.integers(0, 255),
    v6=st.booleans(),
    pad=st.integers(0, 40),
    file_from=st.sampled_from([0, 1 << 30, (1 << 62)]),
    check_crc=st.booleans(),
    props=st.dictionaries(
        st.sampled_from(["TAGS", "KEYS", "UNIQ_KEY", "\u00e9"]),
        st.text(st.characters(min_codepoint=1, exclude_categories=("Cs",)), min_size=1, max_size=8),
        max_size=3,
    ),
    topic=st.sampled_from(["TopicTest", "t\u00e9", "%RETRY%g"]),
)
def test_records_checked_in_place_classify_and_parse_the_same(
    cut, at, value, v6, pad, file_from, check_crc, props, topic
) -> None:
    record = message_codec.encode_record(
        topic=topic,
        queue_id=3,
        body=b"hello" * 20,
        properties=props,
        store_host="[::1]:10911" if v6 else "127.0.0.1:10911",
        born_host="[::1]:1" if v6 else "127.0.0.1:1",
        physical_offset=file_from + pad,
    )
    seg = bytes(pad) + record + bytes(16)
    check, parse = (
        "brokers.engine.store.record_check.check_record",
        "brokers.engine.store.record_check.parse_for_dispatch",
    )
    status, result = assert_same(check, seg, pad, file_from, len(seg), check_crc)
    assert status == "ok" and result == (record_check.VALID, len(record), "")
    _, fields = assert_same(parse, seg, pad)
    assert fields[0] == topic and fields[1] == 3
    for size in (len(seg), pad + len(record), pad + len(record) - 1, cut):  # a segment cut anywhere
        assert_same(check, seg, pad, file_from, size, check_crc)
    for buf in (
        seg,
        seg[:cut],
        bytearray(seg[:cut]),
    ):  # a buffer holding the start of a longer segment (a slave's stream)
        assert_same(check, buf, pad, file_from, len(seg) + (1 << 30), check_crc)
    assert_same(parse, seg[:cut], pad)
    if at < len(seg):
        changed = seg[:at] + bytes([value]) + seg[at + 1 :]
        assert_same(check, changed, pad, file_from, len(changed), check_crc)
        assert_same(check, bytearray(changed), pad, file_from, len(changed), check_crc)
        assert_same(parse, changed, pad)
    with mmap.mmap(-1, len(seg)) as mm:
        mm.write(seg)
        assert_same(check, mm, pad, file_from, len(seg), check_crc)
        assert_same(parse, mm, pad)


@pytest.mark.parametrize(
    "args",
    [
        (b"", 0, 0, 0, False),
        (bytes(64), 0, 0, 64, False),
        (bytes(64), 64, 0, 64, False),
        (bytes(64), -1, 0, 64, False),
        (bytes(64), 0, 0, 1 << 70, False),
        (bytes(64), 1 << 70, 0, 64, False),
        ("text", 0, 0, 4, False),
        (bytes(64), 0.5, 0, 64, False),
        (bytes(64), True, 0, 64, False),
    ],
)
def test_odd_arguments_to_the_record_check_fail_or_classify_alike(args) -> None:
    assert_same("brokers.engine.store.record_check.check_record", *args)
    assert_same("brokers.engine.store.record_check.parse_for_dispatch", args[0], args[1])


# -- a slave's dispatch plan (the consume queue units and index keys of replicated records) -------

PLAN = "brokers.engine.store.dispatch_plan.plan_dispatch"
PROP_NAMES = st.sampled_from(["TAGS", "KEYS", "UNIQ_KEY", "DELAY", "WAIT", "", "T\u00e9"])
PROP_VALUES = st.text(st.sampled_from("ab \u00e9\u4e2d\U0001f600\x01"), max_size=6)
RAW_PROPS = st.lists(st.one_of(st.tuples(PROP_NAMES, PROP_VALUES).map("\x01".join), PROP_VALUES), max_size=5).map(
    "\x02".join
)
PLANNED = st.tuples(
    st.sampled_from(["T", "U", "t\u00e9", "SCHEDULE_TOPIC_XXXX"]),
    st.integers(0, 2),
    st.integers(0, 3),
    st.sampled_from([0, 1, 4, 8, 12, 0x30, -1]),
    st.sampled_from([5, 6]),
    st.one_of(RAW_PROPS, st.dictionaries(PROP_NAMES.filter(bool), PROP_VALUES.filter(bool), max_size=3)),
)


def _plan_chunk(specs, base: int) -> tuple[bytes, list[tuple[int, int]]]:
    """Records back to back from ``base``: (topic, queue id, queue offset, sys flag, store time, properties)."""
    chunk, records = b"", []
    for topic, queue_id, queue_offset, sys_flag, store_ts, props in specs:
        v6 = bool(sys_flag & 0x30) and sys_flag != -1
        record = message_codec.encode_record(
            topic=topic,
            queue_id=queue_id,
            body=b"body",
            properties=props,
            queue_offset=queue_offset,
            physical_offset=base + len(chunk),
            sys_flag=sys_flag,
            store_timestamp=store_ts,
            born_host="[::1]:1" if v6 else "127.0.0.1:1",
            store_host="[::1]:2" if v6 else "127.0.0.1:2",
        )
        records.append((len(chunk), len(record)))
        chunk += record
    return chunk, records


@FAST
@given(
    specs=st.lists(PLANNED, min_size=1, max_size=12), base=st.sampled_from([0, 4096, 1 << 40]), cut=st.integers(0, 2000)
)
def test_dispatch_plans_are_identical(specs, base, cut) -> None:
    chunk, records = _plan_chunk(specs, base)
    status, (batches, arrivals) = assert_same(PLAN, chunk, base, records)
    assert status == "ok" and sum(len(b[4]) for b in batches if b[4] is not None) == len(arrivals)
    assert_same(PLAN, bytearray(chunk), base, records)
    assert_same(PLAN, chunk[:cut], base, records)  # records that run past the buffer


def test_dispatch_plans_group_a_batch_and_hash_like_the_put_path() -> None:
    uniq = "AC11000100002A9F0000000000000001"
    specs = [("T", 1, 7 + i, 0, 5, {"UNIQ_KEY": uniq, "KEYS": "k1  k2", "TAGS": "TagA"}) for i in range(3)]
    specs += [("T", 1, 10, 4, 6, {"KEYS": "k3"}), ("T", 2, 0, 0, 6, "TAGS\x01\x02KEYS\x01k4\x02\x01x")]
    chunk, records = _plan_chunk(specs, 4096)
    _, (batches, arrivals) = assert_same(PLAN, chunk, 4096, records)
    tag, key = message_codec.tags_code("TagA"), index_file.key_hash
    first, prepared, other = batches
    assert first[:4] == ("T", 1, 7, 5) and [u[2] for u in first[4]] == [tag] * 3
    assert [h for h, _ in first[5]] == [key("T", uniq), key("T", "k1"), key("T", "k2")] * 3
    assert prepared[4] is None and prepared[5][2] == [key("T", "k3")]  # a prepared transaction: keys only
    assert other[4][0][2] == 0 and other[5] == [(key("T", "k4"), 4096 + records[4][0])]
    assert arrivals[-1] == ("T", 2, 1, 0) and len(arrivals) == 4


@pytest.mark.parametrize(
    "args",
    [
        (b"", 0, []),
        (b"", 0, [(0, 10)]),
        (bytes(64), 0, [(0, 64)]),
        (bytes(64), -1, [(0, 64)]),
        (bytes(64), 0, [(70, 1)]),
        (bytes(64), 0, [(-1, 1)]),
        (bytes(64), 0, [(1 << 70, 1)]),
        (bytes(64), 0.5, [(0, 1)]),
        ("text", 0, [(0, 1)]),
        (bytes(64), 0, [(0,)]),
        (bytes(64), 0, ((0, 64),)),
        (bytes(64), 1 << 64, [(0, 64)]),
    ],
)
def test_odd_arguments_to_the_dispatch_plan_fail_alike(args) -> None:
    assert_same(PLAN, *args)


# -- batch bodies -------------------------------------------------------------------------------

ENTRIES = st.lists(st.tuples(INT32, st.binary(max_size=60), st.text(max_size=20)), max_size=6)


@FAST
@given(entries=ENTRIES, cut=st.integers(0, 600), at=st.integers(0, 600), value=st.integers(0, 255))
def test_batch_bodies_are_byte_identical_and_split_the_same(entries, cut, at, value) -> None:
    parts = [
        assert_same("brokers.engine.common.batch_body.encode_batch_entry", flag, body, props)
        for flag, body, props in entries
    ]
    good = [part[1] for part in parts if part[0] == "ok"]  # lone surrogates in the text: both refuse
    data = b"".join(good)
    split = "brokers.engine.common.batch_body.iter_batch_body"
    status, result = assert_same(split, data)
    assert status == "ok" and len(result) == len(good)
    assert_same(split, data[:cut])
    if at < len(data):
        assert_same(split, data[:at] + bytes([value]) + data[at + 1 :])
    assert_same(split, memoryview(data))


@pytest.mark.parametrize(
    "args",
    [
        (1 << 31, b"x", ""),
        (True, b"x", ""),
        (0, bytearray(b"x"), ""),
        (0, b"x", "p" * 40000),
        (0, b"x", "\ud800"),
        (0, b"x", 5),
    ],
)
def test_batch_entries_with_odd_values_encode_the_same_or_fail_the_same(args) -> None:
    assert_same("brokers.engine.common.batch_body.encode_batch_entry", *args)


# -- index and tag hashes, properties strings ---------------------------------------------------

# any code point, surrogates and characters above U+FFFF included (Java hashes their UTF-16 units)
HASHED = st.text(st.characters(), max_size=300)


@FAST
@given(
    h=st.one_of(st.integers(0, 0xFFFFFFFF), st.integers(-(1 << 40), 1 << 40), st.booleans()),
    text=HASHED,
    cut=st.integers(0, 300),
)
def test_java_hashes_are_identical(h, text, cut) -> None:
    status, *rest = assert_same("brokers.engine.common.java_hash.java_hash_extend", h, text)
    if status == "ok":  # a hash continued over a cached prefix is the hash of the whole (index keys rely on it)
        head = assert_same("brokers.engine.common.java_hash.java_hash_extend", h, text[:cut])[1]
        assert assert_same("brokers.engine.common.java_hash.java_hash_extend", head, text[cut:])[1] == rest[0]


def test_java_hashes_match_java_and_refuse_odd_input_alike() -> None:
    assert java_hash.java_string_hash("TopicTest#KEY1") == -1656969516  # String.hashCode() in Java
    assert java_hash.java_string_hash("\U0001f600") == 1772899  # "😀".hashCode(): its surrogate pair
    for args in ((0, "x" * 1000), (0, "\ud83d"), (0, b"bytes"), (0, None), (1 << 32, "a"), (-1, "a"), (1.5, "a")):
        assert_same("brokers.engine.common.java_hash.java_hash_extend", *args)


PROPERTY_TEXT = st.text(st.sampled_from("\x01\x02ab\u00e9\u20ac\U0001f600"), max_size=40)


@FAST
@given(text=st.one_of(PROPERTY_TEXT, HASHED))
def test_properties_strings_decode_the_same(text) -> None:
    assert_same("brokers.engine.common.message.string_to_properties", text)


def test_properties_decode_well_formed_and_tolerate_damage_alike() -> None:
    status, props = assert_same(
        "brokers.engine.common.message.string_to_properties",
        message.properties_to_string({"UNIQ_KEY": "AC1F", "TAGS": "a\x01b", "KEYS": "k1 k2"}),
    )
    assert props == {"UNIQ_KEY": "AC1F", "TAGS": "a\x01b", "KEYS": "k1 k2"}
    for text in ("", "\x02\x02", "a\x01", "\x01b", "a\x01b\x02\x02c\x01d\x02", "a\x01b\x02a\x01c", None, b"a\x01b"):
        assert_same("brokers.engine.common.message.string_to_properties", text)
