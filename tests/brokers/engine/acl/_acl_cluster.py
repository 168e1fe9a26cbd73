"""An ACL-enabled embedded cluster (name server + broker-a on loopback, one plain_acl.yml) and a
raw-socket caller: requests written as frames on a plain TCP socket, nothing of Gantry's clients."""

from __future__ import annotations

import hashlib
import os
import socket
import struct
from pathlib import Path

from brokers.engine.acl import AclClientHook
from brokers.engine.remoting.client import split_addr
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.client._cluster import EmbeddedCluster

ADMIN = ("gantry-admin", "admin-secret-1")  # the first admin account: the broker signs with it
DEMO = ("demo-user", "demo-secret-1")  # PUB|SUB on every topic, SUB on every group
PUB_ONLY = ("pub-only", "pub-secret-1")
SUB_ONLY = ("sub-only", "sub-secret-1")


def acl_text(demo_secret: str = DEMO[1]) -> str:
    return f"""\
accounts:
  - accessKey: {ADMIN[0]}
    secretKey: {ADMIN[1]}
    admin: true
  - accessKey: {DEMO[0]}
    secretKey: {demo_secret}
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
  - accessKey: {PUB_ONLY[0]}
    secretKey: {PUB_ONLY[1]}
    defaultTopicPerm: PUB
    defaultGroupPerm: SUB
  - accessKey: {SUB_ONLY[0]}
    secretKey: {SUB_ONLY[1]}
    defaultTopicPerm: SUB
    defaultGroupPerm: SUB
"""


def write_acl(path: Path, text: str) -> Path:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)  # a whole new file at once: the reloader never reads half of it
    return path


def start_acl_cluster(root: Path, acl_file: Path) -> EmbeddedCluster:
    return EmbeddedCluster(
        root, broker_names=("broker-a",), namesrv_options={"acl_file": str(acl_file)}, acl_file=str(acl_file)
    ).start()


def hook(account: tuple[str, str]) -> AclClientHook:
    return AclClientHook(*account)


def tree_digest(*roots: Path) -> dict[str, str]:
    """SHA-256 of every file under ``roots`` (store files and config files)."""
    digests = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


class RawConnection:
    """One plain socket to a server; ``call`` writes a frame and reads the answer (None for oneway)."""

    def __init__(self, addr: str, timeout_s: float = 10.0) -> None:
        host, port = split_addr(addr)
        self.sock = socket.create_connection((host, port), timeout_s)

    def call(self, request: RemotingCommand) -> RemotingCommand | None:
        if request.is_oneway:
            self.sock.sendall(request.encode())
            return None
        return self.call_frame(request.encode())

    def call_frame(self, frame: bytes) -> RemotingCommand:
        """Write ``frame`` (an encoded request, byte for byte as captured) and read its answer."""
        self.sock.sendall(frame)
        (total,) = struct.unpack(">i", self._read(4))
        response = RemotingCommand.decode(self._read(total))
        assert response.is_response and response.opaque == RemotingCommand.decode_frame(frame).opaque
        return response

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("server closed the connection")
            data += chunk
        return data

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
