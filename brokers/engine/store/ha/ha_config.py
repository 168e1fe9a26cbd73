"""HAConfig: a broker's role in its group and the replication settings (RocketMQ's names).

Defaults are RocketMQ 4.9's ``MessageStoreConfig`` values, except ``transfer_batch_size``: 256 KiB
rather than 32 KiB, so a producer's batch (32 x 1 KiB is just over 32 KiB) goes out as one frame,
one send and one slave report (measured in docs/benchmarks.md, "Broker groups"). ``broker_role`` is ``ASYNC_MASTER``
(answer sends at once, replicate behind), ``SYNC_MASTER`` (answer a send once a slave has it:
synchronous double write) or ``SLAVE`` (copy the master's commit log, refuse sends).
"""

from __future__ import annotations

from dataclasses import dataclass

from brokers.engine.remoting.tls import TlsConfig

ASYNC_MASTER = "ASYNC_MASTER"
SYNC_MASTER = "SYNC_MASTER"
SLAVE = "SLAVE"
BROKER_ROLES = (ASYNC_MASTER, SYNC_MASTER, SLAVE)
MASTER_ROLES = frozenset({ASYNC_MASTER, SYNC_MASTER})

# The largest frame body a slave accepts; a master's haTransferBatchSize must not exceed it.
MAX_TRANSFER_BATCH_SIZE = 16 << 20


def split_host_port(addr: str, what: str) -> tuple[str, int]:
    """``host:port`` -> (host, port); ValueError naming ``what`` when malformed."""
    host, sep, port = addr.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what} {addr!r} is not host:port")
    return host, int(port)


@dataclass(frozen=True, slots=True)
class HAConfig:
    broker_role: str = ASYNC_MASTER
    listen_host: str = "127.0.0.1"
    listen_port: int = 0  # haListenPort; 0 = ephemeral (tests); the broker passes its port + 1
    master_address: str | None = None  # haMasterAddress; None = learned from the name servers
    sync_timeout_ms: int = 5000  # syncFlushTimeout: a SYNC_MASTER's wait for a slave's ack
    heartbeat_interval_ms: int = 5000  # haSendHeartbeatInterval
    transfer_batch_size: int = 256 * 1024  # haTransferBatchSize (RocketMQ: 32 KiB, see above)
    slave_fallbehind_max: int = 256 << 20  # haSlaveFallbehindMax
    housekeeping_interval_ms: int = 20_000  # haHousekeepingInterval: silence before a reconnect
    connect_timeout_ms: int = 3000
    reconnect_interval_ms: int = 1000  # the slave's pause between connection attempts
    access_message_in_memory_max_ratio: int = 40  # accessMessageInMemoryMaxRatio (percent of RAM)
    tls: TlsConfig | None = None  # the HA port serves per tls.mode; a slave connects with TLS when tls.outgoing

    def __post_init__(self) -> None:
        if self.broker_role not in BROKER_ROLES:
            raise ValueError(f"broker_role must be one of {', '.join(BROKER_ROLES)}, got {self.broker_role!r}")
        if not 0 <= self.listen_port <= 65535:
            raise ValueError(f"ha_listen_port {self.listen_port} is outside 0..65535")
        if self.master_address:
            split_host_port(self.master_address, "ha_master_address")
        for name in (
            "sync_timeout_ms",
            "heartbeat_interval_ms",
            "housekeeping_interval_ms",
            "connect_timeout_ms",
            "reconnect_interval_ms",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if not 0 < self.transfer_batch_size <= MAX_TRANSFER_BATCH_SIZE:
            raise ValueError(f"ha_transfer_batch_size must be within 1..{MAX_TRANSFER_BATCH_SIZE}")
        if self.slave_fallbehind_max <= 0:
            raise ValueError("ha_slave_fallbehind_max must be positive")
        if not 0 < self.access_message_in_memory_max_ratio <= 100:
            raise ValueError("access_message_in_memory_max_ratio must be within 1..100")

    @property
    def is_master(self) -> bool:
        return self.broker_role in MASTER_ROLES
