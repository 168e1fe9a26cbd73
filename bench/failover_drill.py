"""Broker-group failover drills with real processes: promotion of a slave when its master is lost.

Name server, master and slaves are processes of the engine's cluster harness (a ProcessCluster,
each broker generation started by the drill) on loopback ports with real store directories; this process runs 4 producers and the operator.

* ``failover`` (drills 1 and 2): a group (SYNC_MASTER or ASYNC_MASTER) + one slave under 4
  producers; each cycle SIGKILLs the master **and deletes its store directory**, promotes the
  slave through GANTRY_PROMOTE_SLAVE (a dry run first; forced only when the plan says the
  candidate lacks bytes an ASYNC_MASTER had), keeps producing to the new master and starts a
  fresh slave for it. A producer retries a message (same id) until the answer is SEND_OK, so
  a message answered SLAVE_NOT_AVAILABLE/FLUSH_SLAVE_TIMEOUT or lost in flight may be stored
  twice. At the end everything is drained from the last master and counted: acknowledged
  messages lost, duplicates, stored but never acknowledged; for ASYNC_MASTER each loss is
  checked against the replication lag measured before the kill.
* ``stale`` (drill 5): after a promotion, the old master is restarted on its store as
  master; it must answer no send SEND_OK, rejoin as a slave, and log what it truncated.

    .venv/bin/python bench/failover_drill.py [--role SYNC_MASTER|ASYNC_MASTER|both] [--cycles 20]
                                             [--cycle-seconds 2] [--stale]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from processes import ClusterSpec, ProcessCluster  # noqa: E402

from brokers.engine.cluster import BrokerSpec  # noqa: E402
from brokers.engine.store.config import ASYNC_FLUSH  # noqa: E402

from brokers.engine.client.admin_promotion import PromotionRefusedError, promote_slave_async  # noqa: E402
from brokers.engine.common.message import properties_to_string  # noqa: E402
from brokers.engine.common.message_codec import decode_records  # noqa: E402
from brokers.engine.remoting.client import RemotingClient  # noqa: E402
from brokers.engine.remoting.codes import RequestCode, ResponseCode  # noqa: E402
from brokers.engine.remoting.command import RemotingCommand  # noqa: E402

NAME = "drill-a"
TOPIC = "DrillTopic"
QUEUES = 4
PRODUCERS = 4
NOT_STORED_OK = (ResponseCode.SLAVE_NOT_AVAILABLE, ResponseCode.FLUSH_SLAVE_TIMEOUT, ResponseCode.FLUSH_DISK_TIMEOUT)


@dataclass
class Broker:
    """One broker process of the drill's ProcessCluster: its key there, ports and store."""

    key: str
    port: int
    ha_port: int
    store: Path

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass
class DrillResult:
    role: str
    cycles: int
    acked: int = 0
    lost: int = 0
    duplicates: int = 0
    stored_unacked: int = 0
    seen: int = 0
    statuses: Counter = field(default_factory=Counter)
    forced: int = 0
    plans: list[dict] = field(default_factory=list)
    max_lag_bytes: int = 0
    max_lag_ms: int = 0
    lost_outside_lag: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        text = (
            f"{self.role}: {self.cycles} cycles in {self.seconds:.1f} s; {self.acked} acknowledged, {self.seen} "
            f"distinct stored, LOST {self.lost} acknowledged, {self.duplicates} duplicates, {self.stored_unacked} "
            f"stored but never acknowledged; forced promotions {self.forced}; answers {dict(self.statuses)}"
        )
        if self.role == "ASYNC_MASTER":
            text += (
                f"; replication lag before the kills at most {self.max_lag_bytes} bytes / {self.max_lag_ms} ms; "
                f"losses acknowledged outside that lag window: {self.lost_outside_lag}"
            )
        return text


class Drill:
    def __init__(self, tmp: Path, role: str, log=print) -> None:
        self.tmp, self.role, self.log = tmp, role, log
        self.client = RemotingClient(name="drill")
        self.namesrv = ""
        spec = ClusterSpec(
            str(tmp),
            groups=(),  # the drill starts each broker itself: its generations change roles
            store_overrides={"flush_disk_type": ASYNC_FLUSH, "commitlog_file_size": 4 << 20},
            broker_overrides={"register_interval_s": 5.0},
        )
        self.cluster = ProcessCluster(spec, log_dir=tmp)
        self.master: Broker | None = None
        self.slave: Broker | None = None
        self.generation = itertools.count()
        self.acked_at: dict[int, float] = {}
        self.stop_producing = asyncio.Event()

    # --- processes ---------------------------------------------------------------------------

    async def start_namesrv(self) -> None:
        await asyncio.to_thread(self.cluster.start)
        self.namesrv = self.cluster.namesrv_addr

    async def start_broker(
        self,
        broker_id: int,
        role: str,
        master_ha: str | None = None,
        store: Path | None = None,
        port: int | None = None,
        ha_port: int | None = None,
    ) -> Broker:
        """The drill's next broker generation (``broker-<n>``, a store of its own unless ``store``)."""
        key = f"broker-{next(self.generation)}"
        member = BrokerSpec(key=key, broker_name=NAME, broker_id=broker_id, role=role)
        overrides: dict = {"ha_master_address": master_ha} if master_ha else {}
        if store is not None:
            overrides["store"] = {"store_dir": str(store)}
        started = await asyncio.to_thread(
            self.cluster.start_broker, key, member=member, port=port, ha_port=ha_port, **overrides
        )
        store_dir = store or Path(self.cluster.spec.store_dir(member))
        return Broker(key, started.port, int(started.ha_addr.rpartition(":")[2]), store_dir)

    def text(self, broker: Broker) -> str:
        log = self.cluster.brokers[broker.key].log
        return log.read_text(errors="replace") if log.exists() else ""

    async def call(self, addr: str, code: int, ext: dict | None = None, body: bytes = b"", timeout: float = 5.0):
        return await self.client.invoke(addr, RemotingCommand.request(code, ext, body), timeout)

    async def create_topic(self, addr: str) -> None:
        ext = {
            "topic": TOPIC,
            "defaultTopic": "TBW102",
            "readQueueNums": QUEUES,
            "writeQueueNums": QUEUES,
            "perm": 6,
            "topicFilterType": "SINGLE_TAG",
            "topicSysFlag": 0,
            "order": False,
        }
        response = await self.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, ext)
        assert response.code == 0, response

    async def wait_slave_ready(self, slave: Broker, timeout_s: float = 30.0) -> None:
        """Until the slave holds the topic (config sync) and is connected to its master's HA port."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            topics = await self.call(slave.addr, RequestCode.GET_ALL_TOPIC_CONFIG)
            info = await self.runtime_info(slave.addr)
            if TOPIC.encode() in topics.body and info.get("haConnectionState") == "CONNECTED":
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"slave {slave.addr} not ready:\n{self.text(slave)[-3000:]}")

    async def runtime_info(self, addr: str) -> dict:
        response = await self.call(addr, RequestCode.GET_BROKER_RUNTIME_INFO)
        return json.loads(response.body).get("table", {}) if response.code == 0 else {}

    # --- producing ---------------------------------------------------------------------------

    def send_request(self, msg_id: int) -> RemotingCommand:
        body = f"{msg_id}|".encode() + b"x" * (100 + msg_id % 400)
        fields = {
            "a": "drill-producers",
            "b": TOPIC,
            "c": "TBW102",
            "d": QUEUES,
            "e": msg_id % QUEUES,
            "f": 0,
            "g": int(time.time() * 1000),
            "h": 0,
            "i": properties_to_string({"KEYS": f"k{msg_id}"}),
            "j": 0,
            "k": False,
        }
        return RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, fields, body)

    async def producer(self, ids, result: DrillResult) -> None:
        while not self.stop_producing.is_set():
            msg_id = next(ids)
            while not self.stop_producing.is_set():  # retry the same message until SEND_OK
                addr = self.master.addr
                try:
                    response = await self.client.invoke(addr, self.send_request(msg_id), 3.0)
                    code = response.code
                except Exception as exc:
                    code = type(exc).__name__
                result.statuses[code if isinstance(code, str) else ResponseCode(code).name] += 1
                if code == ResponseCode.SUCCESS:
                    self.acked_at[msg_id] = time.monotonic()
                    break
                await asyncio.sleep(0.02)

    async def sample_lag(self, result: DrillResult, samples: list) -> None:
        while not self.stop_producing.is_set():
            try:
                info = await self.runtime_info(self.master.addr)
                lag_b, lag_ms = int(info.get("haReplicationLagBytes", "-1")), int(info.get("haReplicationLagMs", "-1"))
                if lag_b >= 0:
                    samples.append((time.monotonic(), lag_b, lag_ms))
            except Exception:
                pass
            await asyncio.sleep(0.05)

    # --- the operator -----------------------------------------------------------------------

    async def promote(self, slave: Broker, result: DrillResult, timeout_s: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout_s
        while True:
            plan = await promote_slave_async(slave.addr, NAME, 1, dry_run=True)
            if not plan.master_reachable or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)  # the slave has not yet seen its master's connection drop
        force = bool(plan.refused) and not plan.master_reachable and self.role == "ASYNC_MASTER"
        try:
            done = await promote_slave_async(slave.addr, NAME, 1, force=force)
        except PromotionRefusedError as exc:
            raise AssertionError(f"promotion refused: {exc}; plan {plan}") from None
        result.forced += force
        result.plans.append(
            {
                "missingBytes": plan.missing_bytes,
                "missingAckedBytes": plan.missing_acked_bytes,
                "newEpoch": done.new_epoch,
                "forced": force,
            }
        )
        self.log(
            f"  promoted {slave.addr} to {done.to_role} epoch {done.new_epoch} "
            f"(missing {plan.missing_bytes} bytes, {plan.missing_acked_bytes} acknowledged; forced={force})"
        )
        return done.to_json()

    async def setup_group(self) -> None:
        await self.start_namesrv()
        self.master = await self.start_broker(0, self.role)
        await self.create_topic(self.master.addr)
        self.slave = await self.start_broker(1, "SLAVE", f"127.0.0.1:{self.master.ha_port}")
        await self.wait_slave_ready(self.slave)

    async def cycle(self, result: DrillResult, cycle_s: float, samples: list, delete_store: bool = True) -> Broker:
        """Produce, kill the master (and its store), promote the slave, start a fresh slave."""
        await asyncio.sleep(cycle_s)
        await self.wait_caught_up()
        old, slave = self.master, self.slave
        recent = [s for s in samples if s[0] > time.monotonic() - 1.0]
        if recent:
            result.max_lag_bytes = max(result.max_lag_bytes, max(s[1] for s in recent))
            result.max_lag_ms = max(result.max_lag_ms, max(s[2] for s in recent))
        kill_at = time.monotonic()
        await asyncio.to_thread(self.cluster.kill_broker, old.key)
        if delete_store:
            shutil.rmtree(old.store)
        await self.promote(slave, result)
        self.master = slave
        self._kills.append(kill_at)
        self.slave = await self.start_broker(1, "SLAVE", f"127.0.0.1:{slave.ha_port}")
        await self.wait_slave_ready(self.slave)
        return old

    async def wait_caught_up(self, max_lag: int = 1 << 20, timeout_s: float = 30.0) -> None:
        """Until the fresh slave is within ``max_lag`` bytes of the master (it copies the whole
        history first); an operator would not lose a master mid-catch-up on purpose either."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            info = await self.runtime_info(self.master.addr)
            if 0 <= int(info.get("haReplicationLagBytes", "-1")) < max_lag:
                return
            await asyncio.sleep(0.1)
        self.log(f"  the slave is still more than {max_lag} bytes behind after {timeout_s:.0f} s; killing anyway")

    async def drain(self) -> Counter:
        seen: Counter = Counter()
        for q in range(QUEUES):
            offset = 0
            while True:
                ext = {
                    "consumerGroup": "drill-drain",
                    "topic": TOPIC,
                    "queueId": q,
                    "queueOffset": offset,
                    "maxMsgNums": 256,
                    "sysFlag": 0x4,
                    "commitOffset": 0,
                    "suspendTimeoutMillis": 0,
                    "subVersion": 0,
                    "subscription": "*",
                    "expressionType": "TAG",
                }
                response = await self.call(self.master.addr, RequestCode.PULL_MESSAGE, ext, timeout=10.0)
                if response.code != ResponseCode.SUCCESS:
                    break
                for m in decode_records(response.body):
                    seen[int(m.body.split(b"|", 1)[0])] += 1
                offset = int(response.ext("nextBeginOffset"))
        return seen

    async def run_failover(self, cycles: int, cycle_s: float) -> DrillResult:
        result = DrillResult(self.role, cycles)
        started = time.monotonic()
        self._kills: list[float] = []
        samples: list = []
        await self.setup_group()
        ids = itertools.count()
        tasks = [asyncio.create_task(self.producer(ids, result)) for _ in range(PRODUCERS)]
        tasks.append(asyncio.create_task(self.sample_lag(result, samples)))
        try:
            for n in range(cycles):
                self.log(f"cycle {n + 1}/{cycles}")
                await self.cycle(result, cycle_s, samples)
            await asyncio.sleep(cycle_s)
        finally:
            self.stop_producing.set()
            await asyncio.gather(*tasks, return_exceptions=True)
        seen = await self.drain()
        acked = set(self.acked_at)
        lost = acked - set(seen)
        result.acked, result.seen, result.lost = len(acked), len(seen), len(lost)
        result.duplicates = sum(c - 1 for c in seen.values())
        result.stored_unacked = len(set(seen) - acked)
        window = result.max_lag_ms / 1000.0 + 0.5  # the lag, plus the sampling period and the kill's latency
        # an answer read just after the kill was still sent before it: allow 1 s after the kill
        result.lost_outside_lag = sum(
            1 for i in lost if not any(-1.0 <= k - self.acked_at[i] <= window for k in self._kills)
        )
        result.seconds = time.monotonic() - started
        return result

    async def run_stale(self) -> dict:
        """Drill 5: the old master, restarted on its store after a promotion, takes no send."""
        result = DrillResult(self.role, 1)
        self._kills = []
        await self.setup_group()
        ids = itertools.count(1_000_000)
        for _ in range(50):
            assert (await self.client.invoke(self.master.addr, self.send_request(next(ids)), 5.0)).code in (0, 11, 12)
        self.cluster.signal_broker(
            self.slave.key, signal.SIGSTOP
        )  # the slave stalls: the next sends are the old master's alone
        tail = [(await self.client.invoke(self.master.addr, self.send_request(next(ids)), 5.0)).code for _ in range(20)]
        old, slave = self.master, self.slave
        await asyncio.to_thread(self.cluster.kill_broker, old.key)
        # SIGKILL reaches a stopped process: it dies without reading the tail the master already
        # wrote into its socket (a SIGCONT first would let it append some or all of it, a race).
        await asyncio.to_thread(self.cluster.kill_broker, slave.key)
        self.slave = await self.start_broker(
            1, "SLAVE", f"127.0.0.1:{old.ha_port}", store=slave.store, port=slave.port, ha_port=slave.ha_port
        )
        await self.promote(self.slave, result)
        self.master = self.slave
        for _ in range(30):
            assert (await self.client.invoke(self.master.addr, self.send_request(next(ids)), 5.0)).code in (0, 11)
        accepted, answers = 0, Counter()
        await asyncio.to_thread(self.cluster.restart_broker, old.key)  # its store, ports and role again
        for _ in range(100):  # hammer it right after its start: not one SEND_OK
            try:
                code = (await self.client.invoke(old.addr, self.send_request(next(ids)), 2.0)).code
            except Exception as exc:
                code = type(exc).__name__
            answers[str(code)] += 1
            accepted += code == ResponseCode.SUCCESS
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "TRUNCATED" not in self.text(old):
            await asyncio.sleep(0.1)
        info = await self.runtime_info(old.addr)
        lines = [
            line for line in self.text(old).splitlines() if any(w in line for w in ("FENCED", "rejoins", "TRUNCATED"))
        ]
        return {
            "accepted": accepted,
            "answers": dict(answers),
            "tail_answers": dict(Counter(tail)),
            "role_after": info.get("brokerRole"),
            "epoch_after": info.get("groupEpoch"),
            "log": lines,
        }

    async def close(self) -> None:
        await self.client.close()
        for key in list(self.cluster.brokers):
            self.cluster.signal_broker(key, signal.SIGCONT)
            self.cluster.kill_broker(key)
        self.cluster.stop()


async def failover(tmp: Path, role: str, cycles: int, cycle_s: float, log=print) -> DrillResult:
    drill = Drill(tmp, role, log)
    try:
        return await drill.run_failover(cycles, cycle_s)
    finally:
        await drill.close()


async def stale_master(tmp: Path, role: str = "ASYNC_MASTER", log=print) -> dict:
    drill = Drill(tmp, role, log)
    try:
        return await drill.run_stale()
    finally:
        await drill.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--role", default="both", choices=("SYNC_MASTER", "ASYNC_MASTER", "both"))
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--cycle-seconds", type=float, default=2.0)
    parser.add_argument("--stale", action="store_true", help="also run the stale-master drill (drill 5)")
    args = parser.parse_args()
    roles = ("SYNC_MASTER", "ASYNC_MASTER") if args.role == "both" else (args.role,)
    ok = True
    for role in roles:
        tmp = Path(tempfile.mkdtemp(prefix="drill-"))
        try:
            result = asyncio.run(failover(tmp, role, args.cycles, args.cycle_seconds))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(result.summary(), flush=True)
        ok = ok and (result.lost == 0 if role == "SYNC_MASTER" else result.lost_outside_lag == 0)
    if args.stale:
        tmp = Path(tempfile.mkdtemp(prefix="drill-stale-"))
        try:
            outcome = asyncio.run(stale_master(tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(json.dumps(outcome, indent=1), flush=True)
        ok = ok and outcome["accepted"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
