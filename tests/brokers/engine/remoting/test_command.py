"""RemotingCommand encoding and decoding, checked against the reference frame bytes."""

from __future__ import annotations

import json
import threading

import pytest

from brokers.engine import speedups
from brokers.engine.remoting import command
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import (
    FLAG_ONEWAY,
    FLAG_RESPONSE,
    SERIALIZE_JSON,
    SERIALIZE_ROCKETMQ,
    RemotingCommand,
    coerce_ext_fields,
    encode_binary_header,
    next_opaque,
)
from brokers.engine.remoting.errors import RemotingCommandError, RemotingProtocolError, RemotingTooLargeError

REF_JSON_HEADER = (
    b'{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":7,'
    b'"serializeTypeCurrentRPC":"JSON","version":409}'
)
REF_BINARY_HEADER = bytes.fromhex(
    "0069 00 0199 00000007 00000000 00000000 00000014 0005 746f706963 00000009 546f70696354657374".replace(" ", "")
)


def route_request(serialize_type: int = SERIALIZE_JSON) -> RemotingCommand:
    return RemotingCommand(
        code=RequestCode.GET_ROUTEINFO_BY_TOPIC,
        language="JAVA",
        opaque=7,
        ext_fields={"topic": "TopicTest"},
        serialize_type=serialize_type,
    )


def frame(header: bytes, body: bytes = b"", serialize_type: int = 0) -> bytes:
    return (
        (4 + len(header) + len(body)).to_bytes(4, "big")
        + ((serialize_type << 24) | len(header)).to_bytes(4, "big")
        + header
        + body
    )


def test_json_frame_matches_reference_example():
    data = route_request().encode()
    assert len(data) == 139
    assert data[:8] == bytes.fromhex("00000087 00000083".replace(" ", ""))
    assert data[8:] == REF_JSON_HEADER


def test_binary_frame_matches_reference_example():
    data = route_request(SERIALIZE_ROCKETMQ).encode()
    assert data[:8] == bytes.fromhex("0000002d01000029")
    assert data[8:] == REF_BINARY_HEADER
    assert len(REF_BINARY_HEADER) == 41


def test_decode_reference_binary_frame():
    cmd = RemotingCommand.decode_frame(bytes.fromhex("0000002d01000029") + REF_BINARY_HEADER)
    assert (cmd.code, cmd.language, cmd.version, cmd.opaque, cmd.flag) == (105, "JAVA", 409, 7, 0)
    assert cmd.remark is None
    assert cmd.ext_fields == {"topic": "TopicTest"}
    assert cmd.serialize_type == SERIALIZE_ROCKETMQ


def test_decode_reference_json_frame():
    cmd = RemotingCommand.decode_frame(frame(REF_JSON_HEADER))
    assert (cmd.code, cmd.language, cmd.version, cmd.opaque, cmd.flag) == (105, "JAVA", 409, 7, 0)
    assert cmd.ext_fields == {"topic": "TopicTest"}


def test_json_header_any_key_order_coerced_values_unknown_keys():
    header = json.dumps(
        {
            "version": 121,
            "opaque": 3,
            "extFields": {
                "queueId": 0,
                "k": False,
                "sysFlag": 6,
                "subVersion": 1700000000000,
                "x": None,
                "t": "T",
                "f": 2.0,
            },
            "weird": [1, 2],
            "language": "JAVA",
            "code": 11,
            "flag": 0,
        }
    ).encode()
    cmd = RemotingCommand.decode_frame(frame(header, b"body"))
    assert cmd.code == 11 and cmd.opaque == 3 and cmd.version == 121
    assert cmd.ext_fields == {
        "queueId": "0",
        "k": "false",
        "sysFlag": "6",
        "subVersion": "1700000000000",
        "t": "T",
        "f": "2",
    }
    assert cmd.body == b"body"


def test_request_coerces_ext_fields_and_gets_fresh_opaque():
    a = RemotingCommand.request(RequestCode.PULL_MESSAGE, {"queueId": 3, "commitOffset": True, "skip": None})
    b = RemotingCommand.request(RequestCode.PULL_MESSAGE)
    assert a.ext_fields == {"queueId": "3", "commitOffset": "true"}
    assert a.opaque != b.opaque and a.opaque > 0
    assert not a.is_response and not a.is_oneway
    assert RemotingCommand.request(40, oneway=True).flag == FLAG_ONEWAY


def test_response_keeps_opaque_and_serialize_type():
    request = route_request(SERIALIZE_ROCKETMQ)
    response = request.response(ResponseCode.TOPIC_NOT_EXIST, "no route", {"a": 1}, b"x")
    assert response.opaque == 7 and response.flag == FLAG_RESPONSE and response.is_response
    assert response.serialize_type == SERIALIZE_ROCKETMQ
    assert response.ext_fields == {"a": "1"} and response.remark == "no route" and response.body == b"x"


@pytest.mark.parametrize("serialize_type", [SERIALIZE_JSON, SERIALIZE_ROCKETMQ])
def test_round_trip(serialize_type):
    cmd = RemotingCommand(
        code=310,
        opaque=123456,
        flag=FLAG_ONEWAY,
        remark="héllo",
        ext_fields={"a": "1", "b": "ü"},
        body=b"\x00\x01payload",
        serialize_type=serialize_type,
    )
    back = RemotingCommand.decode_frame(cmd.encode())
    assert back == cmd


def test_binary_empty_value_decodes_as_absent():
    header = encode_binary_header(1, "JAVA", 0, 5, 0, None, {"empty": "", "full": "v"})
    assert RemotingCommand.decode_header(SERIALIZE_ROCKETMQ, header).ext_fields == {"full": "v"}


@pytest.mark.parametrize("ext, code", [({"globalWhiteAddrs": "", "full": "v"}, 1), ({"a": "1"}, 40000)])
def test_a_command_the_binary_header_cannot_carry_goes_as_json_and_arrives_whole(ext, code):
    # clearing a list is sent as an empty value; a binary header would read it back as absent
    cmd = RemotingCommand(code=code, opaque=9, ext_fields=ext, serialize_type=SERIALIZE_ROCKETMQ)
    data = cmd.encode()
    assert data[4] == SERIALIZE_JSON  # the header word's serialize type
    back = RemotingCommand.decode_frame(data)
    assert back.ext_fields == ext and back.code == code and back.serialize_type == SERIALIZE_JSON
    reply = RemotingCommand(code=310, opaque=9, serialize_type=SERIALIZE_ROCKETMQ).response(0, ext_fields={"x": ""})
    assert RemotingCommand.decode_frame(reply.encode()).ext_fields == {"x": ""}
    assert (
        RemotingCommand.decode_frame(
            RemotingCommand(
                code=code if code < 0x8000 else 1, ext_fields={"a": "1"}, serialize_type=SERIALIZE_ROCKETMQ
            ).encode()
        ).serialize_type
        == SERIALIZE_ROCKETMQ
    )


def test_requests_go_binary_on_the_compiled_path_json_on_the_pure_one_and_the_environment_chooses(monkeypatch):
    assert command.REQUEST_SERIALIZE_TYPE == (SERIALIZE_ROCKETMQ if speedups.active() else SERIALIZE_JSON)
    assert (
        RemotingCommand.request(RequestCode.SEND_MESSAGE, {"topic": "T"}).serialize_type
        == command.REQUEST_SERIALIZE_TYPE
    )
    monkeypatch.setenv("GANTRY_SERIALIZE_TYPE", "json")
    assert command.request_serialize_type() == SERIALIZE_JSON
    monkeypatch.setenv("GANTRY_SERIALIZE_TYPE", "ROCKETMQ")
    assert command.request_serialize_type() == SERIALIZE_ROCKETMQ


def test_json_response_header_omits_null_remark():
    header = json.loads(route_request().response(0).encode_header())
    assert "remark" not in header and "extFields" not in header
    assert header["flag"] == 1 and header["version"] == 409 and header["language"] == "PYTHON"


def test_malformed_json_header_salvages_opaque():
    with pytest.raises(RemotingProtocolError) as info:
        RemotingCommand.decode_frame(frame(b'{"code":105,"opaque":42,"flag":0,"extFields":{'))
    assert info.value.opaque == 42 and not info.value.fatal


def test_json_header_without_code_is_rejected():
    with pytest.raises(RemotingProtocolError, match="code"):
        RemotingCommand.decode_frame(frame(b'{"opaque":1}'))


def test_header_length_beyond_frame_is_fatal():
    data = (10).to_bytes(4, "big") + (50).to_bytes(4, "big") + b"{}xxxx"
    with pytest.raises(RemotingProtocolError) as info:
        RemotingCommand.decode_frame(data)
    assert info.value.fatal


def test_truncated_binary_header():
    with pytest.raises(RemotingProtocolError):
        RemotingCommand.decode_frame(frame(REF_BINARY_HEADER[:30], serialize_type=1))


def test_unknown_serialize_type():
    with pytest.raises(RemotingProtocolError, match="serialize type"):
        RemotingCommand.decode_frame(frame(REF_JSON_HEADER, serialize_type=7))


def test_encode_refuses_frames_over_the_limit():
    cmd = RemotingCommand(code=10, body=b"x" * 2000)
    with pytest.raises(RemotingTooLargeError) as info:
        cmd.encode(max_frame_size=1024)
    assert info.value.size > 2000 and info.value.limit == 1024
    assert len(cmd.encode(max_frame_size=4096)) > 2000


def test_header_accessors():
    cmd = RemotingCommand(code=103, ext_fields={"brokerId": "0", "compressed": "TRUE", "bad": "x1", "blank": ""})
    assert cmd.require_int("brokerId") == 0
    assert cmd.get_bool("compressed") is True and cmd.get_bool("missing") is False
    assert cmd.get_int("missing", 5) == 5 and cmd.get_int("blank", 7) == 7
    with pytest.raises(RemotingCommandError, match="brokerName"):
        cmd.require_str("brokerName")
    with pytest.raises(RemotingCommandError, match="bad"):
        cmd.require_int("bad")


def test_coerce_ext_fields_nested_values_become_json():
    assert coerce_ext_fields({"m": {"a": 1}, "l": [1, 2]}) == {"m": '{"a":1}', "l": "[1,2]"}


def test_opaques_unique_across_threads():
    seen: list[int] = []
    lock = threading.Lock()

    def grab():
        mine = [next_opaque() for _ in range(2000)]
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == len(seen) == 16000


def test_expect_code_and_response_error():
    from brokers.engine.remoting.errors import ResponseError, expect_code

    ok = RemotingCommand(code=0)
    assert expect_code(ok) is ok
    assert expect_code(RemotingCommand(code=22), 0, 22).code == 22
    with pytest.raises(ResponseError) as info:
        expect_code(RemotingCommand(code=17, remark="no route"), addr="h:1", request_code=105)
    assert info.value.code == 17 and info.value.remark == "no route"
    assert str(info.value) == "response code 17 (TOPIC_NOT_EXIST) to request 105 from h:1: no route"
