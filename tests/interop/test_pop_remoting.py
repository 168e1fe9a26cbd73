"""Apache's 5.5.0 remoting client pops through a Gantry broker: ``MQClientAPIImpl.popMessageAsync``,
``ackMessageAsync`` and ``changeInvisibleTimeAsync`` (``java/PopRemoting.java``), the calls Apache's proxy
makes in local mode for the gRPC ReceiveMessage, AckMessage and ChangeInvisibleDuration. The handles are
those the client builds from the broker's answer (``processPopResponse``): acks with them succeed, an acked
or renewed one answers NO_EXIST, and what was not acked comes again with reconsume times 1."""

from __future__ import annotations

import asyncio
import os
import pathlib

from tests.brokers.engine.broker.conftest import Cluster, run
from tests.interop._mqadmin import JVM_OPTIONS

PROGRAM = pathlib.Path(__file__).parent / "java" / "PopRemoting.java"
TOPIC = "PopRemotingTopic"
MESSAGES = 12
INVISIBLE_MS = 2_000


def test_apache_remoting_client_pops_acks_and_renews(interop_classpaths, tmp_path):
    async def scenario() -> str:
        async with Cluster(tmp_path / "cluster", ("broker-a",)) as c:
            assert (await c.create_topic(TOPIC, read=2, write=2)).code == 0
            for i in range(MESSAGES):
                assert (await c.send(TOPIC, f"p{i}".encode(), queue_id=i % 2)).code == 0
            home = tmp_path / "home"
            home.mkdir()
            proc = await asyncio.create_subprocess_exec(
                "java",
                *JVM_OPTIONS,
                f"-Duser.home={home}",
                "-cp",
                interop_classpaths["client5"],
                str(PROGRAM),
                c.addr(),
                "broker-a",
                TOPIC,
                "pop-java",
                str(MESSAGES),
                str(INVISIBLE_MS),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=home,
                env={**os.environ},
            )
            out, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, f"--- stdout\n{out.decode()}\n--- stderr\n{err.decode()[-4000:]}"
            return out.decode()

    out = run(scenario(), timeout=180)
    lines = [line.split() for line in out.splitlines() if line.strip()]
    popped = sorted((int(q), int(o), int(r)) for kind, q, o, r in (x for x in lines if x[0] == "POP"))
    assert popped == sorted((q, o, 0) for q in range(2) for o in range(MESSAGES // 2))
    acks = [x for x in lines if x[0] == "ACK"]
    assert len(acks) == MESSAGES - 4 and all(x[3] == "OK" for x in acks)  # offsets 0 and 3 of each queue not acked
    steps = {x[0]: x[1] for x in lines if len(x) == 2}
    assert steps == {
        "ACK_AGAIN": "NO_EXIST",
        "CHANGE": "OK",
        "ACK_REPOP": "OK",
        "ACK_CHANGED": "OK",
        "ACK_OLD": "NO_EXIST",
    }
    repop = sorted((int(q), int(o), int(r)) for kind, q, o, r in (x for x in lines if x[0] == "REPOP"))
    assert len(repop) == 3 and all(r == 1 for _, _, r in repop)  # the fourth was renewed for 60 s
    assert {(q, o) for q, o, _ in repop} < {(q, o) for q in range(2) for o in (0, 3)}
