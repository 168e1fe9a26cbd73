"""The admin plan of GANTRY_PROMOTE_SLAVE (10004): its ext fields, the contract's JSON answer read into a
PromotionResult, a refusal, and REQUEST_CODE_NOT_SUPPORTED turned into a clear error (no network: the
plan is driven by hand with real RemotingCommand answers)."""

from __future__ import annotations

import json

import pytest

from brokers.engine.client.admin_promotion import (
    PromotionNotSupported,
    parse_promotion_result,
    promote_slave,
    promotion_ext,
    promotion_result_from_json,
)
from brokers.engine.client.errors import MQBrokerError
from brokers.engine.client.plan import Reply
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

REQUEST = RemotingCommand.request(RequestCode.GANTRY_PROMOTE_SLAVE, {})  # what the answers below answer
CONTRACT_PLAN = {  # the promotion contract's answer to a dry run, every field (docs/broker-group-promotion.md)
    "brokerName": "broker-a",
    "brokerId": 1,
    "fromRole": "SLAVE",
    "toRole": "SYNC_MASTER",
    "dryRun": True,
    "promoted": False,
    "epoch": 2,
    "newEpoch": 3,
    "maxPhyOffset": 5000,
    "knownMasterMaxOffset": 6234,
    "ackedOffset": 6234,
    "missingAckedBytes": 1234,
    "missingBytes": 1234,
    "masterReachable": False,
    "wouldLose": "1,234 acknowledged bytes (commit-log offsets 5000..6234)",
    "refused": "promotion of broker-a id 1 refused: it lacks 1,234 acknowledged bytes; pass force to promote anyway",
}


def drive(plan, command: RemotingCommand):
    """Run the plan's one call with ``command`` as the broker's answer."""
    call = next(plan)
    assert call.code == RequestCode.GANTRY_PROMOTE_SLAVE and call.addr == "127.0.0.1:10915"
    try:
        plan.send(Reply("127.0.0.1:10915", command))
    except StopIteration as done:
        return call, done.value
    raise AssertionError("the plan asked for more than one call")


def test_ext_fields_are_the_contracts_strings() -> None:
    assert promotion_ext("broker-a", 1, force=True, dry_run=True, role="ASYNC_MASTER") == {
        "brokerName": "broker-a",
        "brokerId": "1",
        "force": "true",
        "dryRun": "true",
        "role": "ASYNC_MASTER",
    }
    assert "role" not in promotion_ext("broker-a", 2)
    with pytest.raises(ValueError, match="not a slave's"):
        promotion_ext("broker-a", 0)
    with pytest.raises(ValueError, match="role must be one of"):
        promotion_ext("broker-a", 1, role="SLAVE")


def test_the_contracts_json_answer_is_read_whole() -> None:
    result = parse_promotion_result(json.dumps(CONTRACT_PLAN).encode())
    assert (result.broker_name, result.broker_id, result.from_role, result.to_role) == (
        "broker-a",
        1,
        "SLAVE",
        "SYNC_MASTER",
    )
    assert result.dry_run and not result.promoted and (result.epoch, result.new_epoch) == (2, 3)
    assert (result.max_phy_offset, result.known_master_max_offset, result.acked_offset) == (5000, 6234, 6234)
    assert (result.missing_acked_bytes, result.missing_bytes, result.master_reachable) == (1234, 1234, False)
    assert result.refused.startswith("promotion of broker-a id 1 refused") and "5000..6234" in result.would_lose
    assert (
        result.to_json() == {**CONTRACT_PLAN, "registeredWith": []}
        and promotion_result_from_json(result.to_json()) == result
    )
    sparse = parse_promotion_result(b'{"brokerName": "broker-a", "promoted": "true", "registeredWith": ["x"]}')
    assert sparse.promoted and sparse.epoch == 0 and sparse.refused == ""  # missing fields default
    assert sparse.registered_with == ("x",)


def test_the_plan_sends_one_call_and_reads_the_answer() -> None:
    answer = REQUEST.response(ResponseCode.SUCCESS, body=json.dumps(CONTRACT_PLAN).encode())
    call, result = drive(promote_slave("127.0.0.1:10915", "broker-a", 1, dry_run=True), answer)
    assert call.ext_fields["dryRun"] == "true" and call.ext_fields["force"] == "false" and call.timeout_s >= 15
    assert result.new_epoch == 3


def test_a_refusal_and_an_unknown_request_are_errors_that_say_so() -> None:
    refused = REQUEST.response(ResponseCode.SYSTEM_ERROR, remark="broker-a id 0 is not a slave (role SYNC_MASTER)")
    with pytest.raises(MQBrokerError) as caught:
        drive(promote_slave("127.0.0.1:10915", "broker-a", 1), refused)
    assert caught.value.code == ResponseCode.SYSTEM_ERROR and "is not a slave" in str(caught.value)
    unknown = REQUEST.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, remark=" request type 10004 not supported")
    with pytest.raises(PromotionNotSupported, match="127.0.0.1:10915 does not support promotion") as caught:
        drive(promote_slave("127.0.0.1:10915", "broker-a", 1), unknown)
    assert "restarting it with brokerId 0" in str(caught.value)
