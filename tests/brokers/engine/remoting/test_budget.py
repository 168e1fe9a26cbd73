"""Connections that have not authenticated cannot exhaust a server: a receive budget for their frames,
a deadline for their first request, and caps that evict them instead of locking out new clients.

A real RemotingServer on loopback, raw sockets as the hostile peers, RemotingClient as the client
that must keep working. Behaviour is asserted (closed, answered, within the budget), never a duration.
"""

from __future__ import annotations

import asyncio
import json
import struct

from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.limits import ConnectionLimits
from brokers.engine.remoting.server import RemotingServer
from tests.fixtures.waiting import eventually

ECHO = 1001
MIB = 1 << 20


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class RefuseUnsigned:
    """A guard letting through only requests that carry ``AccessKey`` (an ACL stand-in for the remoting layer)."""

    def refusal(self, request: RemotingCommand, remote_addr: str) -> str | None:
        return None if request.ext("AccessKey") else "unsigned"


async def serve(guard=None, **limits) -> RemotingServer:
    server = RemotingServer(name="budget", limits=ConnectionLimits(**limits), guard=guard)
    server.register_processor(ECHO, lambda ctx, req: _echo(req))
    await server.start()
    return server


async def _echo(request: RemotingCommand) -> RemotingCommand:
    return request.response(ResponseCode.SUCCESS, body=request.body)


async def closed_by_peer(reader: asyncio.StreamReader, within_s: float) -> bool:
    try:
        while True:
            if not await asyncio.wait_for(reader.read(65536), within_s):
                return True
    except TimeoutError:
        return False
    except (ConnectionError, OSError):
        return True


def partial_frame(declared: int, sent: int) -> bytes:
    header = json.dumps({"code": ECHO, "opaque": 1, "flag": 0, "language": "JAVA", "version": 0}).encode()
    return struct.pack(">ii", declared, len(header)) + header + b"x" * (sent - len(header))


def echo_frame(opaque: int = 1) -> bytes:
    header = json.dumps(
        {"code": ECHO, "opaque": opaque, "flag": 0, "language": "JAVA", "version": 0, "extFields": {"AccessKey": "ak"}}
    ).encode()
    return struct.pack(">ii", 4 + len(header), len(header)) + header


def test_stalled_partial_frames_stay_within_the_unauthenticated_budget_and_clients_keep_working():
    async def scenario():
        server = await serve(max_unauthenticated_bytes=4 * MIB, max_buffered_bytes=64 * MIB, first_frame_deadline_s=3.0)
        client = RemotingClient()
        try:
            assert (await client.invoke(server.address, RemotingCommand.request(ECHO))).code == 0
            attackers = []
            for _ in range(10):  # each declares a 1 MiB frame, sends 100 KiB of it and stalls
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(partial_frame(MIB, 100 * 1024))
                await writer.drain()
                attackers.append((reader, writer))
            await eventually(lambda: server.budget.waiting == 6)  # 4 x 1 MiB fit the 4 MiB budget; 6 wait unread
            assert server.budget.unauthenticated <= 4 * MIB
            assert not any(await asyncio.gather(*(closed_by_peer(r, 0.2) for r, _ in attackers)))
            newcomer = RemotingClient()  # a small first request displaces a stalled holder at once
            try:
                assert (await newcomer.invoke(server.address, RemotingCommand.request(ECHO), 3)).code == 0
            finally:
                await newcomer.close()
            big = await client.invoke(server.address, RemotingCommand.request(ECHO, body=b"y" * (2 * MIB)), 10)
            assert big.code == 0 and len(big.body) == 2 * MIB  # an authenticated client is not held to it
            closed = await asyncio.gather(*(closed_by_peer(r, 5.0) for r, _ in attackers))
            assert all(closed), closed  # holders and waiters alike, at the first-request deadline
            assert server.budget.waiting == 0 and server.budget.unauthenticated == 0
            for _, w in attackers:
                w.close()
        finally:
            await client.close()
            await server.stop()

    run(scenario())


def test_a_frame_that_waits_for_room_is_read_once_a_holder_finishes():
    async def scenario():
        server = await serve(max_unauthenticated_bytes=2 * MIB, max_buffered_bytes=64 * MIB)
        try:
            holder_r, holder_w = await asyncio.open_connection("127.0.0.1", server.port)
            holder_w.write(partial_frame(MIB, 64 * 1024))  # half the unauthenticated budget, stalled
            await holder_w.drain()
            await eventually(lambda: server.budget.unauthenticated == MIB)
            waiter = RemotingClient()
            call = asyncio.ensure_future(
                waiter.invoke(server.address, RemotingCommand.request(ECHO, body=b"w" * (3 * MIB // 2)), 10)
            )
            await eventually(lambda: server.budget.waiting == 1)  # the holder holds less than it needs: not closed
            assert not call.done() and not await closed_by_peer(holder_r, 0.2)
            holder_w.write(b"x" * (MIB - 4 - 64 * 1024))  # the holder's frame completes: its room is freed
            await holder_w.drain()
            reply = await call
            assert reply.code == 0 and reply.body == b"w" * (3 * MIB // 2)
            assert server.budget.waiting == 0
            await waiter.close()
            holder_w.close()
        finally:
            await server.stop()

    run(scenario())


def test_a_frame_past_the_whole_budget_closes_the_largest_unauthenticated_holder_first():
    async def scenario():
        server = await serve(max_unauthenticated_bytes=8 * MIB, max_buffered_bytes=6 * MIB)
        client = RemotingClient()
        try:
            assert (await client.invoke(server.address, RemotingCommand.request(ECHO))).code == 0
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(partial_frame(5 * MIB, 64 * 1024))  # reserves 5 of the 6 MiB
            await writer.drain()
            await eventually(lambda: server.budget.unauthenticated == 5 * MIB)
            big = await client.invoke(server.address, RemotingCommand.request(ECHO, body=b"z" * (3 * MIB)), 10)
            assert big.code == 0  # it needed 3 MiB: the unauthenticated holder of 5 was closed for it
            assert await closed_by_peer(reader, 2.0)
            assert server.budget.closed_for_budget >= 1
            writer.close()
        finally:
            await client.close()
            await server.stop()

    run(scenario())


def test_a_connection_that_never_authenticates_is_closed_at_the_first_frame_deadline():
    async def scenario():
        server = await serve(first_frame_deadline_s=0.5, guard=RefuseUnsigned(), defer_accept_s=0)
        try:
            silent_r, silent_w = await asyncio.open_connection("127.0.0.1", server.port)
            refused_r, refused_w = await asyncio.open_connection("127.0.0.1", server.port)
            unsigned = json.dumps({"code": ECHO, "opaque": 7, "flag": 0, "language": "JAVA", "version": 0}).encode()
            refused_w.write(struct.pack(">ii", 4 + len(unsigned), len(unsigned)) + unsigned)  # answered NO_PERMISSION
            signed_r, signed_w = await asyncio.open_connection("127.0.0.1", server.port)
            signed_w.write(echo_frame())
            assert await closed_by_peer(silent_r, 5.0)
            assert await closed_by_peer(refused_r, 5.0)  # a refused request does not authenticate
            assert not await closed_by_peer(signed_r, 1.5)  # its request passed the guard: it stays
            for w in (silent_w, refused_w, signed_w):
                w.close()
        finally:
            await server.stop()

    run(scenario())


async def answered(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, opaque: int, within_s: float) -> bool:
    """Send an echo request on a raw connection; whether its answer came within ``within_s``."""
    writer.write(echo_frame(opaque=opaque))
    try:
        (size,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), within_s))
    except TimeoutError:
        return False
    return RemotingCommand.decode(await reader.readexactly(size)).opaque == opaque


def test_the_per_address_cap_counts_only_unauthenticated_connections_and_never_locks_out_a_new_client():
    # defer_accept_s=0: silent sockets reach the server at once (as they do past the kernel's deferral)
    async def scenario():
        server = await serve(max_connections_per_address=5, defer_accept_s=0, first_frame_deadline_s=2.0)
        clients = [RemotingClient() for _ in range(5)]
        try:
            for client in clients:  # five authenticated clients from 127.0.0.1
                assert (await client.invoke(server.address, RemotingCommand.request(ECHO))).code == 0
            idle = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(20)]  # and 20 silent sockets
            await asyncio.sleep(0)
            newcomer = RemotingClient()
            assert (await newcomer.invoke(server.address, RemotingCommand.request(ECHO))).code == 0
            await newcomer.close()
            assert server.unauthenticated_count <= 5
            # the oldest made room: set aside, open but unread, until their first-request deadline
            assert not await answered(*idle[0], opaque=1, within_s=0.5)
            assert await answered(*idle[-1], opaque=2, within_s=5.0)  # one of the newest, still read
            for client in clients:  # none of the authenticated ones counted or was closed
                assert (await client.invoke(server.address, RemotingCommand.request(ECHO))).code == 0
            assert all(await asyncio.gather(*(closed_by_peer(r, 6.0) for r, _ in idle[:15])))  # at the deadline
            assert not await closed_by_peer(idle[-1][0], 0.5)  # its request authenticated it
            for _, w in idle:
                w.close()
        finally:
            for client in clients:
                await client.close()
            await server.stop()

    run(scenario())


def test_a_flood_past_the_cap_gets_no_loop_of_accept_and_close():
    """A peer that reopens every socket the server closes: at its address's cap the oldest are set aside
    unread, not closed, so the peer gets about one new connection per socket and first-request deadline."""

    async def scenario():
        server = await serve(max_connections_per_address=10, defer_accept_s=0, first_frame_deadline_s=2.0)
        opened = 0

        async def hold(stop: float) -> None:
            nonlocal opened
            while asyncio.get_running_loop().time() < stop:
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                opened += 1
                writer.write(b"\x00")  # one byte of a frame: past any deferral
                await closed_by_peer(reader, stop - asyncio.get_running_loop().time())
                writer.close()

        try:
            stop = asyncio.get_running_loop().time() + 3.0
            await asyncio.gather(*(hold(stop) for _ in range(40)))
            # 40 sockets for 3 s against a 2 s deadline: each closed at most once by the deadline, so
            # about 80 connects; closing the oldest at the cap instead let them reconnect thousands of times
            assert opened <= 40 * 3, opened
            client = RemotingClient()
            assert (await client.invoke(server.address, RemotingCommand.request(ECHO))).code == 0
            await client.close()
        finally:
            await server.stop()

    run(scenario())


def test_silent_sockets_stay_in_the_kernel_until_they_speak():
    """With TCP_DEFER_ACCEPT (the default), a socket that has sent nothing is not the server's to
    accept, count or evict; it is handed over, and answered, as soon as it speaks."""

    async def scenario():
        server = await serve(max_connections_per_address=5)
        try:
            silent = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(20)]
            newcomer = RemotingClient()
            assert (await newcomer.invoke(server.address, RemotingCommand.request(ECHO))).code == 0
            await asyncio.sleep(0.3)
            assert len(server.channels) == 1 and server.unauthenticated_count == 0  # the newcomer alone
            assert not any(await asyncio.gather(*(closed_by_peer(r, 0.5) for r, _ in silent)))  # none evicted
            reader, writer = silent[0]
            writer.write(echo_frame(opaque=9))
            (size,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 5))
            answer = RemotingCommand.decode(await reader.readexactly(size))
            assert answer.opaque == 9 and answer.code == 0 and len(server.channels) == 2
            await newcomer.close()
            for _, w in silent:
                w.close()
        finally:
            await server.stop()

    run(scenario())


def unsigned_frame(opaque: int) -> bytes:
    header = json.dumps({"code": ECHO, "opaque": opaque, "flag": 0, "language": "JAVA", "version": 0}).encode()
    return struct.pack(">ii", 4 + len(header), len(header)) + header


async def answers_within(reader: asyncio.StreamReader, seconds: float, most: int = 1 << 30) -> list[RemotingCommand]:
    """The answers read within ``seconds`` (or the first ``most`` of them, as soon as they are there)."""
    got: list[RemotingCommand] = []
    stop = asyncio.get_running_loop().time() + seconds
    try:
        while len(got) < most and (left := stop - asyncio.get_running_loop().time()) > 0:
            (size,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), left))
            got.append(RemotingCommand.decode(await reader.readexactly(size)))
    except TimeoutError:
        pass
    return got


def test_refused_requests_of_a_connection_not_authenticated_are_read_ever_more_slowly():
    """A peer repeating requests the guard refuses (unsigned here; a replay is refused the same way) gets a
    few answered, then one per second at most; a signed client, and a connection that authenticated
    before one of its requests was refused, are answered at their own pace."""

    async def scenario():
        server = await serve(guard=RefuseUnsigned())
        try:
            refused_r, refused_w = await asyncio.open_connection("127.0.0.1", server.port)
            refused_w.write(b"".join(unsigned_frame(i) for i in range(50)))
            signed_r, signed_w = await asyncio.open_connection("127.0.0.1", server.port)
            signed_w.write(b"".join(echo_frame(opaque=i) for i in range(50)))
            signed = await answers_within(signed_r, 2.0, most=50)
            assert [a.code for a in signed] == [0] * 50  # the signed peer's 50, all answered
            signed_w.write(b"".join(unsigned_frame(100 + i) for i in range(20)))  # refused, but established
            assert len(await answers_within(signed_r, 1.0, most=20)) == 20
            refused = await answers_within(refused_r, 2.0)  # from about when its 50 were sent
            assert all(a.code == ResponseCode.NO_PERMISSION for a in refused)
            # held 10, 20, 40 ... 640 ms after each refusal, then 1 s: 8 answers in 2 s (50 unheld)
            assert 5 <= len(refused) <= 10, len(refused)
            for w in (refused_w, signed_w):
                w.close()
        finally:
            await server.stop()

    run(scenario())
