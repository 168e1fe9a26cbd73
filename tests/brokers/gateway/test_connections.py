"""The connections plan of brokers.gateway.connections, stepped by hand (a plan does no I/O): one
GANTRY_GET_ALL_CONSUMER_CONNECTIONS per broker, per-group calls to brokers without the extension."""

from __future__ import annotations

from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.gateway.connections import consumer_connections_plan
from tests.brokers.gateway._plans import reply, run


def _conn(cid: str) -> dict:
    return {"clientAddr": f"10.0.0.1:{len(cid)}", "clientId": cid, "language": "JAVA", "version": 413}


def test_connections_one_extension_call_per_broker() -> None:
    gantry = {
        "brokerAddr": "a:1",
        "groups": [
            {
                "group": "G1",
                "connectionSet": [_conn("c1")],
                "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                "consumeType": "CONSUME_PASSIVELY",
                "messageModel": "BROADCASTING",
                "subscriptionTable": {},
            },
            {
                "group": "NotShown",
                "connectionSet": [_conn("c9")],
                "consumeType": "CONSUME_ACTIVELY",
                "messageModel": "CLUSTERING",
                "subscriptionTable": {},
            },
        ],
    }
    result, asked = run(
        consumer_connections_plan(["G1", "G2"], ["a:1", "b:2"]),
        lambda c: reply(c.addr, body=dict(gantry, brokerAddr=c.addr)),
    )
    assert asked == [[RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS] * 2]
    assert set(result) == {"G1", "G2"} and not result["G2"].online
    g1 = result["G1"]
    assert [c.client_id for c in g1.connections] == ["c1"] and g1.broker_addrs == {"c1": ("a:1", "b:2")}
    assert g1.message_model == "BROADCASTING" and g1.consume_type == "CONSUME_PASSIVELY" and g1.errors == ()


def test_connections_fall_back_per_group_on_a_broker_without_the_extension() -> None:
    one = {
        "connectionSet": [_conn("c2")],
        "consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET",
        "consumeType": "CONSUME_ACTIVELY",
        "messageModel": "CLUSTERING",
        "subscriptionTable": {},
    }

    def answer(call):
        if call.code == RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS:
            return reply(
                call.addr,
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED if call.addr == "apache:9" else ResponseCode.SYSTEM_ERROR,
            )
        if call.ext_fields["consumerGroup"] == "G2":
            return reply(call.addr, ResponseCode.CONSUMER_NOT_ONLINE)
        return reply(call.addr, body=one)

    result, asked = run(consumer_connections_plan(["G1", "G2"], ["apache:9", "down:1"]), answer)
    assert asked == [
        [RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS] * 2,
        [RequestCode.GET_CONSUMER_CONNECTION_LIST] * 2,
    ]
    assert [c.client_id for c in result["G1"].connections] == ["c2"] and result["G1"].broker_addrs == {
        "c2": ("apache:9",)
    }
    assert result["G1"].consume_type == "CONSUME_ACTIVELY" and not result["G2"].online
    assert all(len(result[g].errors) == 1 and result[g].errors[0].startswith("down:1:") for g in ("G1", "G2"))
