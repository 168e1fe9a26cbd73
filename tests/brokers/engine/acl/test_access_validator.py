"""AclValidator: signed, unsigned and tampered requests; PUB/SUB/DENY; admin; white addresses."""

from __future__ import annotations

import json

import pytest

from brokers.engine.acl.access_validator import AclValidator
from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.client_hook import AclClientHook
from brokers.engine.acl.plain_acl_config import parse_plain_acl_text
from brokers.engine.remoting.codes import RequestCode as C
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand

ACL = """
globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: pub-only
    secretKey: pub-secret
    defaultTopicPerm: PUB
    defaultGroupPerm: DENY
  - accessKey: sub-only
    secretKey: sub-secret
    defaultTopicPerm: SUB
    defaultGroupPerm: SUB
  - accessKey: mixed-1
    secretKey: mixed-secret
    whiteRemoteAddress: 192.168.1.{5,6}
    defaultTopicPerm: SUB
    defaultGroupPerm: SUB
    topicPerms: [orders=PUB|SUB, secret=DENY]
    groupPerms: [locked=DENY, writers=PUB]
  - accessKey: admin-all
    secretKey: admin-secret
    admin: true
  - accessKey: admin-limited
    secretKey: admin-secret
    admin: true
    defaultTopicPerm: DENY
    topicPerms: [audit=PUB]
"""
SECRETS = {
    "pub-only": "pub-secret",
    "sub-only": "sub-secret",
    "mixed-1": "mixed-secret",
    "admin-all": "admin-secret",
    "admin-limited": "admin-secret",
}
PEER = ("203.0.113.9", 50123)

VALIDATOR = AclValidator(parse_plain_acl_text(ACL))


def _signed(account: str, code: int, ext: dict[str, str], body: object = b"") -> RemotingCommand:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = RemotingCommand.request(code, ext, raw)
    return AclClientHook(account, SECRETS[account]).sign_request(request)


def _send(account: str, topic: str, body: bytes = b"payload") -> RemotingCommand:
    return _signed(account, C.SEND_MESSAGE_V2, {"a": "producers", "b": topic, "c": "TBW102", "d": "4"}, body)


def _pull(account: str, topic: str, group: str) -> RemotingCommand:
    return _signed(
        account, C.PULL_MESSAGE, {"consumerGroup": group, "topic": topic, "queueId": "0", "queueOffset": "0"}
    )


def _refusal(request: RemotingCommand, peer: object = PEER) -> str:
    with pytest.raises(AclRefused) as caught:
        VALIDATOR.validate(request, peer)
    assert caught.value.code == ResponseCode.NO_PERMISSION
    return caught.value.remark


def test_a_correctly_signed_request_passes() -> None:
    VALIDATOR.validate(_send("pub-only", "orders"), PEER)
    VALIDATOR.validate(_pull("sub-only", "orders", "readers"), "203.0.113.9:50123")


def test_an_unsigned_request_is_refused() -> None:
    request = RemotingCommand.request(C.SEND_MESSAGE_V2, {"a": "p", "b": "orders"}, b"x")
    assert _refusal(request) == f"request code {int(C.SEND_MESSAGE_V2)} is not signed (no AccessKey) and the ACL is on"


def test_one_flipped_body_byte_is_refused() -> None:
    request = _send("pub-only", "orders", b"payload")
    request.body = b"paylobd"
    assert _refusal(request) == "signature mismatch for accessKey pub-only"


def test_a_changed_header_or_a_missing_signature_is_refused() -> None:
    request = _send("pub-only", "orders")
    request.ext_fields["b"] = "other"
    assert _refusal(request) == "signature mismatch for accessKey pub-only"
    request = _send("pub-only", "orders")
    del request.ext_fields["Signature"]
    assert _refusal(request) == "signature mismatch for accessKey pub-only"


def test_a_stale_or_unknown_access_key_is_refused() -> None:
    request = RemotingCommand.request(C.SEND_MESSAGE_V2, {"a": "p", "b": "orders"}, b"x")
    AclClientHook("gone-account", "whatever-secret").sign_request(request)
    assert _refusal(request) == "unknown accessKey gone-account"


def test_a_wrong_secret_is_refused() -> None:
    request = AclClientHook("pub-only", "not-the-secret").sign_request(
        RemotingCommand.request(C.SEND_MESSAGE_V2, {"a": "p", "b": "orders"}, b"x")
    )
    assert _refusal(request) == "signature mismatch for accessKey pub-only"


def test_sub_only_cannot_publish() -> None:
    assert _refusal(_send("sub-only", "orders")) == "no permission to PUB on topic orders for accessKey sub-only"


def test_pub_only_cannot_subscribe() -> None:
    assert (
        _refusal(_pull("pub-only", "orders", "readers"))
        == "no permission to SUB on topic orders for accessKey pub-only"
    )


def test_pub_only_cannot_join_a_group_even_on_a_subscribable_topic() -> None:
    heartbeat = {"clientID": "c", "consumerDataSet": [{"groupName": "readers", "subscriptionDataSet": []}]}
    assert (
        _refusal(_signed("pub-only", C.HEART_BEAT, {}, heartbeat))
        == "no permission to SUB on group readers for accessKey pub-only"
    )


def test_a_non_admin_cannot_create_topics() -> None:
    request = _signed(
        "mixed-1", C.UPDATE_AND_CREATE_TOPIC, {"topic": "new", "readQueueNums": "4", "writeQueueNums": "4", "perm": "6"}
    )
    assert (
        _refusal(request)
        == "request code 17 (UPDATE_AND_CREATE_TOPIC) needs an admin account; accessKey mixed-1 is not admin"
    )


@pytest.mark.parametrize("code", [C.INVOKE_BROKER_TO_RESET_OFFSET, C.GANTRY_PROMOTE_SLAVE, C.GET_BROKER_CONFIG, 4242])
def test_non_admins_are_refused_the_admin_codes(code: int) -> None:
    assert "needs an admin account" in _refusal(_signed("sub-only", code, {"topic": "orders", "group": "readers"}))


def test_entries_win_over_defaults() -> None:
    VALIDATOR.validate(_send("mixed-1", "orders"), PEER)  # entry PUB|SUB, default SUB
    assert _refusal(_send("mixed-1", "other")) == "no permission to PUB on topic other for accessKey mixed-1"
    assert (
        _refusal(_pull("mixed-1", "secret", "readers")) == "no permission to SUB on topic secret for accessKey mixed-1"
    )
    assert (
        _refusal(_pull("mixed-1", "orders", "locked")) == "no permission to SUB on group locked for accessKey mixed-1"
    )
    assert (
        _refusal(_pull("mixed-1", "orders", "writers")) == "no permission to SUB on group writers for accessKey mixed-1"
    )
    VALIDATOR.validate(_pull("mixed-1", "orders", "readers"), PEER)


def test_a_send_to_a_retry_topic_needs_sub_on_that_group() -> None:
    VALIDATOR.validate(_send("sub-only", "%RETRY%readers"), PEER)
    assert (
        _refusal(_send("pub-only", "%RETRY%readers")) == "no permission to SUB on group readers for accessKey pub-only"
    )


def test_trace_topic_needs_only_a_signature() -> None:
    VALIDATOR.validate(_send("sub-only", "RMQ_SYS_TRACE_TOPIC"), PEER)


def test_an_admin_without_entries_passes_every_check() -> None:
    VALIDATOR.validate(_send("admin-all", "anything"), PEER)
    VALIDATOR.validate(_pull("admin-all", "anything", "any-group"), PEER)
    VALIDATOR.validate(_signed("admin-all", C.UPDATE_AND_CREATE_TOPIC, {"topic": "new"}), PEER)
    VALIDATOR.validate(_signed("admin-all", C.HEART_BEAT, {}, b"not even json"), PEER)


def test_an_admin_with_entries_is_checked_like_anyone_on_resources() -> None:
    VALIDATOR.validate(_signed("admin-limited", C.DELETE_TOPIC_IN_BROKER, {"topic": "x"}), PEER)
    VALIDATOR.validate(_send("admin-limited", "audit"), PEER)
    assert (
        _refusal(_send("admin-limited", "orders")) == "no permission to PUB on topic orders for accessKey admin-limited"
    )


def test_signature_only_codes_pass_for_any_account() -> None:
    VALIDATOR.validate(_signed("pub-only", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "secret"}), PEER)


def test_a_global_white_address_passes_unsigned() -> None:
    unsigned = RemotingCommand.request(C.UPDATE_AND_CREATE_TOPIC, {"topic": "new"})
    VALIDATOR.validate(unsigned, ("10.10.103.7", 4000))
    VALIDATOR.validate(unsigned, "[::ffff:10.10.103.7]:4000")
    assert "is not signed" in _refusal(unsigned, ("10.10.104.7", 4000))


def test_an_account_white_address_passes_without_a_signature() -> None:
    request = RemotingCommand.request(C.SEND_MESSAGE_V2, {"a": "p", "b": "other", "AccessKey": "mixed-1"}, b"x")
    VALIDATOR.validate(request, ("192.168.1.5", 4000))
    assert _refusal(request, ("192.168.1.7", 4000)) == "signature mismatch for accessKey mixed-1"


def test_refusals_never_show_a_secret() -> None:
    for request in (_send("sub-only", "orders"), _pull("pub-only", "orders", "g")):
        remark = _refusal(request)
        assert not any(secret in remark for secret in SECRETS.values())


def test_the_validator_reads_its_source_each_time() -> None:
    class Source:
        config = parse_plain_acl_text(ACL)

    validator = AclValidator(Source)
    validator.validate(_send("pub-only", "orders"), PEER)
    Source.config = parse_plain_acl_text("accounts:\n  - accessKey: someone\n    secretKey: someone-secret\n")
    with pytest.raises(AclRefused, match="unknown accessKey pub-only"):
        validator.validate(_send("pub-only", "orders"), PEER)
