"""Stepping a gateway plan by hand in a test: a plan does no I/O, the test answers each Fanout."""

from __future__ import annotations

from brokers.engine.client.plan import Fanout, Reply
from brokers.engine.common import json_compat
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand


def reply(addr: str, code: int = ResponseCode.SUCCESS, body: object = None) -> Reply:
    raw = json_compat.dumps(body).encode() if body is not None else b""
    return Reply(addr, RemotingCommand(code=code, body=raw, remark=None if code == 0 else "nope"))


def run(plan, answer):
    """Step ``plan``, answering each Fanout with ``answer(call)``; return (result, the codes asked)."""
    asked, value = [], None
    try:
        while True:
            step = plan.send(value)
            assert isinstance(step, Fanout)
            asked.append([c.code for c in step.calls])
            value = [answer(c) for c in step.calls]
    except StopIteration as stop:
        return stop.value, asked
