"""The properties string a producer puts on the wire: the direct path for messages without
properties of their own gives exactly what the general path (the properties dict) gives."""

from __future__ import annotations

import pytest

from brokers.engine.client.producer_plans import ProducerPlans
from brokers.engine.common.message import Message, properties_to_string, string_to_properties

MESSAGES = [
    Message("T", b"x"),
    Message("T", b"x", tags="TagA"),
    Message("T", b"x", keys="k1 k2"),
    Message("T", b"x", tags="TagA", keys=["k1", "k2"]),
    Message("T", b"x", tags="", keys=""),
    Message("T", b"x", keys=[""]),  # joins to "": no KEYS item
    Message("T", b"x", keys=["", ""]),  # joins to " ": kept, as the dict path keeps it
    Message("T", b"x", tags="\u00e9t\u00e9", keys="cl\u00e9"),
    Message("T", b"x", tags="TagA", properties={"a": "1"}),
    Message("T", b"x", properties={"UNIQ_KEY": "GIVEN", "WAIT": "false", "TAGS": "old"}, tags="new"),
]


def _general(msg: Message, uniq: str, wait: bool) -> str:
    props = msg.all_properties()
    props.setdefault("UNIQ_KEY", uniq)
    if wait:
        props.setdefault("WAIT", "true")
    return properties_to_string(props)


@pytest.mark.parametrize("wait", [False, True])
@pytest.mark.parametrize("msg", MESSAGES)
def test_wire_properties_equal_the_dict_path(msg, wait) -> None:
    plans = ProducerPlans(("127.0.0.1:9876",), "g")
    text, uniq = plans.wire_properties(msg, wait=wait)
    assert text == _general(msg, uniq, wait)
    props = string_to_properties(text)
    assert props["UNIQ_KEY"] == uniq and (msg.properties.get("UNIQ_KEY") or len(uniq) == 32)
    assert props.get("TAGS") == (msg.tags or msg.properties.get("TAGS"))
    assert ("WAIT" in props) == (wait or "WAIT" in msg.properties)


def test_each_message_gets_its_own_id_and_a_batch_lists_them_in_order() -> None:
    plans = ProducerPlans(("127.0.0.1:9876",), "g")
    out = plans.prepare_batch(
        [Message("T", b"a", tags="x"), Message("T", b"b"), Message("T", b"c", properties={"k": "v"})]
    )
    ids = out.msg_id.split(",")
    assert len(set(ids)) == 3 and all(i.encode() in out.body for i in ids)
    single = plans.prepare(Message("T", b"d", keys="k"))
    assert string_to_properties(single.properties) == {"KEYS": "k", "UNIQ_KEY": single.msg_id, "WAIT": "true"}
