"""The codecs' compiled twins against their pure functions (brokers/engine/speedups.py), per call.

Each function of :data:`brokers.engine.speedups.PURE` is timed both ways on the inputs a 1 KB send
makes: a SEND_MESSAGE_V2 request header of 12 ext fields, its response header, the commit log
record, a batch body of 32 entries. Best of 3 repeats of 20,000 calls; one process, so the ratio
column is the figure to read.

    .venv/bin/python tools/build_speedups.py && .venv/bin/python bench/codec_bench.py
"""

from __future__ import annotations

import importlib
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from brokers.engine import speedups  # noqa: E402
from brokers.engine.common.batch_body import BatchEntry, encode_batch_body  # noqa: E402
from brokers.engine.common.message_codec import encode_record, host_to_bytes, java_hash_extend  # noqa: E402
from brokers.engine.remoting import header_codec  # noqa: E402
from brokers.engine.store import dispatch_plan, record_check  # noqa: E402,F401 (install their twins)


def cases() -> dict[str, tuple]:
    props = "UNIQ_KEY\x01AC110002000018B4AAC2\x02WAIT\x01true\x02TAGS\x01TagA"
    ext = {
        "a": "userbench-producer",
        "b": "TopicTest",
        "c": "TBW102",
        "d": "4",
        "e": "1",
        "f": "0",
        "g": "1732000000000",
        "h": "0",
        "i": props,
        "j": "0",
        "k": "false",
        "m": "false",
    }
    body = b"x" * 1024
    binary = speedups.PURE["brokers.engine.remoting.header_codec.encode_binary_header"](
        310, "PYTHON", 399, 7, 0, None, ext
    )
    record = encode_record(topic="TopicTest", queue_id=3, body=body, properties=props)
    batch = encode_batch_body([BatchEntry(0, body, {"UNIQ_KEY": f"K{i}", "TAGS": "a"}) for i in range(32)])
    host = host_to_bytes("127.0.0.1:10911")
    header = header_codec.encode_json_header(310, "PYTHON", 399, 7, 0, None, ext)
    chunk = b"".join(
        encode_record(
            topic="TopicTest", queue_id=3, body=body, queue_offset=i, physical_offset=i * len(record), properties=props
        )
        for i in range(32)
    )
    return {
        "brokers.engine.remoting.header_codec.encode_json_header": (310, "PYTHON", 399, 7, 0, None, ext),
        "brokers.engine.remoting.header_codec.encode_binary_header": (310, "PYTHON", 399, 7, 0, None, ext),
        "brokers.engine.remoting.header_codec.decode_binary_header": (binary,),
        "brokers.engine.remoting.header_codec.encode_frame": (0, header, body),
        "brokers.engine.common.message_codec.encode_record_tail": (
            b"TopicTest",
            3,
            body,
            props.encode(),
            0,
            1,
            2,
            0,
            1732000000000,
            host,
            1732000000001,
            host,
            0,
            0,
            5,
        ),
        "brokers.engine.common.message_codec.decode_record": (record, 0),
        "brokers.engine.common.message_codec.decode_records": (record * 32,),
        "brokers.engine.common.batch_body.encode_batch_entry": (0, body, props),
        "brokers.engine.common.batch_body.iter_batch_body": (batch,),
        "brokers.engine.common.java_hash.java_hash_extend": (java_hash_extend(0, "TopicTest#"), "AC110002000018B4AAC2"),
        "brokers.engine.common.message.string_to_properties": (props,),
        "brokers.engine.store.record_check.check_record": (record, 0, 0, len(record), False),
        "brokers.engine.store.record_check.parse_for_dispatch": (record, 0),
        "brokers.engine.store.dispatch_plan.plan_dispatch": (
            chunk,
            0,
            [(i * len(record), len(record)) for i in range(32)],
        ),
    }


def per_call_us(fn, args: tuple, n: int = 20_000) -> float:
    run = (lambda: list(fn(*args))) if fn.__name__ == "iter_batch_body" else (lambda: fn(*args))
    return min(timeit.repeat(run, number=n, repeat=3)) / n * 1e6


def main() -> int:
    print("| function | input | pure µs | compiled µs | pure / compiled |")
    print("| --- | --- | ---: | ---: | ---: |")
    notes = {
        "decode_records": "32 records",
        "iter_batch_body": "32 entries",
        "decode_binary_header": "12 ext fields",
        "encode_json_header": "12 ext fields",
        "encode_binary_header": "12 ext fields",
        "encode_frame": "1 KB body",
        "java_hash_extend": "an index key",
        "string_to_properties": "3 properties",
        "check_record": "1 KB, no CRC",
        "parse_for_dispatch": "1 KB",
        "plan_dispatch": "32 records of a batch",
    }
    for qualified, args in cases().items():
        module, name = qualified.rsplit(".", 1)
        compiled = getattr(importlib.import_module(speedups.TWINS[module]), name)
        pure_us, compiled_us = per_call_us(speedups.PURE[qualified], args), per_call_us(compiled, args)
        print(
            f"| `{name}` | {notes.get(name, '1 KB')} | {pure_us:.2f} | {compiled_us:.2f} | {pure_us / compiled_us:.1f}× |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
