"""A header's code, version, opaque and flag are Java ints: wider values are refused, never echoed.

A JSON header can carry any number; a Java peer reads these four fields into ints and cannot decode
an answer whose opaque is wider. The binary header bounds them by its layout; the JSON header is
held to the same range on decode (a malformed header: SYSTEM_ERROR, the connection serves on) and
on encode (RemotingProtocolError, as the binary encoder's). Runs on the compiled path and, under
GANTRY_PURE_PYTHON=1, on the pure one.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from brokers.engine.remoting import header_codec
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingProtocolError
from brokers.engine.remoting.server import RemotingServer

ECHO = 1001
RANGE = "outside a Java int's range [-2147483648, 2147483647]"


def frame(header: bytes) -> bytes:
    return (4 + len(header)).to_bytes(4, "big") + len(header).to_bytes(4, "big") + header


def header(**fields: object) -> bytes:
    base: dict[str, object] = {"code": ECHO, "opaque": 5, "flag": 0, "language": "JAVA", "version": 409}
    return json.dumps(base | fields).encode()


async def read_frame(reader: asyncio.StreamReader) -> RemotingCommand:
    prefix = await asyncio.wait_for(reader.readexactly(4), 5)
    return RemotingCommand.decode(await asyncio.wait_for(reader.readexactly(int.from_bytes(prefix, "big")), 5))


@pytest.mark.parametrize(
    ("fields", "named", "answered_to"),
    [
        ({"opaque": 1 << 32}, "'opaque' is 4294967296", 0),
        ({"opaque": 0x80000000}, "'opaque' is 2147483648", 0),
        ({"opaque": -0x80000001}, "'opaque' is -2147483649", 0),
        ({"opaque": "99999999999999999999"}, "'opaque' is 99999999999999999999", 0),
        ({"opaque": 17, "code": 1 << 40}, "'code' is 1099511627776", 17),
        ({"opaque": 18, "version": -(1 << 31) - 1}, "'version' is -2147483649", 18),
        ({"opaque": 19, "flag": 1 << 31}, "'flag' is 2147483648", 19),
    ],
)
def test_a_json_header_with_a_field_wider_than_a_java_int_is_answered_system_error(fields, named, answered_to):
    async def scenario():
        server = RemotingServer(name="ranges")

        async def echo(ctx, request):
            return request.response(ResponseCode.SUCCESS)

        server.register_processor(ECHO, echo)
        await server.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(frame(header(**fields)))
            writer.write(frame(header(opaque=0x7FFFFFFF)))  # the widest opaque a Java peer reads: served
            await writer.drain()
            refused = await read_frame(reader)
            served = await read_frame(reader)
            writer.close()
            return refused, served
        finally:
            await server.stop()

    refused, served = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert refused.code == ResponseCode.SYSTEM_ERROR and refused.opaque == answered_to and refused.is_response
    assert refused.remark == f"malformed JSON header: header field {named}, {RANGE}"
    assert (served.code, served.opaque) == (ResponseCode.SUCCESS, 0x7FFFFFFF)


def test_the_range_ends_decode_and_one_past_them_does_not():
    for value in (-0x80000000, 0x7FFFFFFF):
        fields = header_codec.decode_json_header(header(code=value, version=value, opaque=value, flag=value))
        assert (fields[0], fields[2], fields[3], fields[4]) == (value, value, value, value)
    for name in ("code", "version", "opaque", "flag"):
        with pytest.raises(RemotingProtocolError, match=f"header field '{name}' is 2147483648"):
            header_codec.decode_json_header(header(**{name: 0x80000000}))


def test_an_unsalvageable_opaque_is_not_salvaged():
    assert header_codec.salvage_ids(b'{"opaque":4294967296,"flag":1,', 0) == (None, 1)
    assert header_codec.salvage_ids(b'{"opaque":"' + b"9" * 5000 + b'","flag":8589934592', 0) == (None, 0)
    assert header_codec.salvage_ids(b'{"opaque":-2147483648,"flag":2147483647', 0) == (-0x80000000, 0x7FFFFFFF)


@pytest.mark.parametrize("field", range(4))
def test_encoding_a_json_header_refuses_a_field_wider_than_a_java_int(field):
    values = [10, 409, 7, 0]
    values[field] = 1 << 31
    code, version, opaque, flag = values
    name = ("code", "version", "opaque", "flag")[field]
    with pytest.raises(RemotingProtocolError, match=f"does not fit the JSON header: header field '{name}'"):
        header_codec.encode_json_header(code, "JAVA", version, opaque, flag, None, {})
    command = RemotingCommand(code=code, version=version, opaque=opaque, flag=flag)
    with pytest.raises(RemotingProtocolError):
        command.encode()
