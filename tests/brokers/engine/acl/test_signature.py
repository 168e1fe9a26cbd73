"""The request signature: RocketMQ's content rule, HmacSHA1 + Base64, constant-time verification."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

import pytest

from brokers.engine.acl.client_hook import AclClientHook
from brokers.engine.acl.signature import (
    GANTRY_NONCE,
    GANTRY_TIMESTAMP,
    SIGNATURE,
    calculate_signature,
    combine_request_content,
    sign,
    verify,
)
from brokers.engine.common.clock import ManualClock
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand

FIELDS = {"topic": "TopicTest", "AccessKey": "RocketMQ", "OnsChannel": "ALIYUN"}
BODY = b"hello"
# Computed apart from our code: printf 'RocketMQALIYUNTopicTesthello' | openssl dgst -sha1 -hmac 12345678 -binary | base64
EXPECTED = "v2Z0qaszqhx2kHiKv9bhajWgSGc="


def test_known_input_gives_the_independently_computed_signature() -> None:
    assert sign("12345678", FIELDS, BODY) == EXPECTED


def test_signature_is_hmac_sha1_over_values_sorted_by_key_then_body() -> None:
    # keys sort as Java's TreeMap does: AccessKey < OnsChannel < topic (upper case first)
    content = "RocketMQ" + "ALIYUN" + "TopicTest"
    digest = hmac.new(b"12345678", content.encode("utf-8") + BODY, hashlib.sha1).digest()
    assert sign("12345678", FIELDS, BODY) == base64.b64encode(digest).decode()


def test_rocketmq_signer_test_input() -> None:
    # RocketMQ's AclSignerTest signs "RocketMQ" with "12345678"; value from openssl, as above
    digest = hmac.new(b"12345678", b"RocketMQ", hashlib.sha1).digest()
    assert base64.b64encode(digest).decode() == "IUc8rrO/0gDch8CjObLQsW2rsiA="
    assert sign("12345678", {"AccessKey": "RocketMQ"}, b"") == "IUc8rrO/0gDch8CjObLQsW2rsiA="


def test_streamed_signature_equals_the_signature_of_the_combined_content() -> None:
    for body in (b"", None, BODY, bytes(range(256)) * 100):
        assert sign("12345678", FIELDS, body) == calculate_signature(combine_request_content(FIELDS, body), "12345678")


def test_signature_and_unique_key_query_are_not_signed() -> None:
    with_extras = dict(FIELDS, Signature="anything", _UNIQUE_KEY_QUERY="true")
    assert combine_request_content(with_extras, BODY) == combine_request_content(FIELDS, BODY)
    assert sign("12345678", with_extras, BODY) == EXPECTED


def test_content_orders_keys_by_utf16_code_units_like_java() -> None:
    fields = {"b": "2", "B": "1", "_x": "3", "\U0001f600": "5", "\uff5e": "6"}
    # Java: "B"(0x42) < "_x"(0x5f) < "b"(0x62) < "\ud83d\ude00"(0xd83d) < "\uff5e"
    assert combine_request_content(fields, b"!") == "13256".encode("utf-8") + b"!"


def test_values_are_utf8() -> None:
    assert combine_request_content({"k": "é"}, None) == "é".encode("utf-8")


@pytest.mark.parametrize(
    "fields, body",
    [
        (FIELDS, b"hellp"),  # one flipped body byte
        (FIELDS, b""),
        (dict(FIELDS, topic="TopicTesu"), BODY),
        (dict(FIELDS, extra="x"), BODY),
    ],
)
def test_any_change_fails_verification(fields: dict[str, str], body: bytes) -> None:
    assert verify("12345678", FIELDS, BODY, EXPECTED)
    assert not verify("12345678", fields, body, EXPECTED)


@pytest.mark.parametrize("signature", [None, "", EXPECTED[:-1], EXPECTED.lower(), "ÿ" * 28])
def test_verify_refuses_missing_or_wrong_signatures(signature: str | None) -> None:
    assert not verify("12345678", FIELDS, BODY, signature)


def test_a_wrong_secret_fails() -> None:
    assert not verify("12345679", FIELDS, BODY, EXPECTED)


def test_client_hook_adds_access_key_channel_and_signature() -> None:
    hook = AclClientHook("RocketMQ", "12345678", replay_protection=False)  # exactly RocketMQ 4.x's signing
    request = RemotingCommand.request(RequestCode.SEND_MESSAGE, {"topic": "TopicTest"}, BODY)
    assert hook.sign_request(request) is request
    assert request.ext_fields["AccessKey"] == "RocketMQ"
    assert request.ext_fields["OnsChannel"] == "ALIYUN"
    assert request.ext_fields["Signature"] == EXPECTED
    assert verify("12345678", request.ext_fields, request.body, request.ext_fields["Signature"])


def test_client_hook_signs_a_timestamp_and_a_new_nonce_as_ext_fields() -> None:
    clock = ManualClock(1_700_000_000_123)
    hook = AclClientHook("RocketMQ", "12345678", clock=clock)
    request = hook.sign_request(RemotingCommand.request(RequestCode.SEND_MESSAGE, {"topic": "TopicTest"}, BODY))
    fields = request.ext_fields
    assert fields[GANTRY_TIMESTAMP] == "1700000000123"
    assert re.fullmatch(r"[0-9a-f]{32}", fields[GANTRY_NONCE])
    # RocketMQ's rule, applied apart from our code: values sorted by key (AccessKey < GantryNonce <
    # GantryTimestamp < OnsChannel < topic), then the body
    content = "RocketMQ" + fields[GANTRY_NONCE] + "1700000000123" + "ALIYUN" + "TopicTest"
    digest = hmac.new(b"12345678", content.encode("utf-8") + BODY, hashlib.sha1).digest()
    assert fields[SIGNATURE] == base64.b64encode(digest).decode()
    first_nonce = fields[GANTRY_NONCE]
    clock.advance(1)
    hook.sign_request(request)  # a resend is signed again: a new nonce and timestamp
    assert fields[GANTRY_NONCE] != first_nonce and fields[GANTRY_TIMESTAMP] == "1700000001123"
    assert verify("12345678", fields, BODY, fields[SIGNATURE])
    AclClientHook("RocketMQ", "12345678", replay_protection=False).sign_request(request)
    assert GANTRY_NONCE not in fields and GANTRY_TIMESTAMP not in fields and fields[SIGNATURE] == EXPECTED


def test_client_hook_resigns_after_a_change_and_can_leave_the_channel_out() -> None:
    hook = AclClientHook("RocketMQ", "12345678", ons_channel=None, security_token="tok")
    request = RemotingCommand.request(RequestCode.PULL_MESSAGE, {"topic": "T", "consumerGroup": "G"})
    hook.sign_request(request)
    assert "OnsChannel" not in request.ext_fields and request.ext_fields["SecurityToken"] == "tok"
    request.ext_fields["queueId"] = "3"
    assert not verify("12345678", request.ext_fields, request.body, request.ext_fields["Signature"])
    hook.sign_request(request)
    assert verify("12345678", request.ext_fields, request.body, request.ext_fields["Signature"])


def test_signed_request_survives_encoding_round_trips() -> None:
    request = AclClientHook("RocketMQ", "12345678").sign_request(
        RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, {"a": "G", "b": "T", "e": 1, "j": False}, b"\x00\xff body")
    )
    decoded = RemotingCommand.decode_frame(request.encode())
    assert verify("12345678", decoded.ext_fields, decoded.body, decoded.ext_fields["Signature"])


def test_hook_repr_hides_the_secret() -> None:
    assert "12345678" not in repr(AclClientHook("RocketMQ", "12345678"))


@pytest.mark.parametrize(
    "secret", ["1234567", "k" * 64, "k" * 65, "long-secret-" * 20, "sécret-ключ-秘密", "\U0001f511" * 17]
)
@pytest.mark.parametrize("body", [b"", b"x", bytes(range(256)) * 300])
def test_the_precomputed_key_schedule_gives_hmac_sha1_for_every_key_length(secret: str, body: bytes) -> None:
    # keys longer than SHA-1's 64-byte block are hashed first (RFC 2104); the content is signed as one
    content = combine_request_content(FIELDS, body)
    expected = base64.b64encode(hmac.new(secret.encode("utf-8"), content, hashlib.sha1).digest()).decode()
    assert sign(secret, FIELDS, body) == expected == calculate_signature(content, secret)
    assert verify(secret, FIELDS, body, expected)


def test_the_remembered_key_order_serves_new_values_and_any_arrival_order() -> None:
    # the sort is remembered per sequence of keys; each request's own values are signed
    first = {"b": "one", "AccessKey": "ak", "a": "x"}
    second = {"b": "two", "AccessKey": "ak", "a": "x"}
    reordered = {"a": "x", "AccessKey": "ak", "b": "one"}
    assert combine_request_content(first) == b"akxone"
    assert combine_request_content(second) == b"akxtwo"
    assert combine_request_content(reordered) == b"akxone"
    assert sign("12345678", first) == sign("12345678", reordered) != sign("12345678", second)
    assert combine_request_content({"only": "v"}) == b"v" and combine_request_content({SIGNATURE: "s"}) == b""
