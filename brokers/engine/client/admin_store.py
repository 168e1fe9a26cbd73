"""Store maintenance on a broker, as plans: DELETE_EXPIRED_COMMITLOG (329) and
CLEAN_EXPIRED_CONSUMEQUEUE (306), mqadmin's ``deleteExpiredCommitLog`` and ``cleanExpiredCQ``.

Both go to one broker address and carry no header fields. A Gantry broker runs a clean pass
before it answers and says in a JSON body what the pass deleted (``broker/processors/store_admin.py``);
an Apache RocketMQ broker answers SUCCESS with no body (its pass runs later), read as a
:class:`StoreCleanResult` whose figures are None.
"""

from __future__ import annotations

from dataclasses import dataclass

from brokers.engine.client.admin_bodies import load_object
from brokers.engine.client.admin_errors import broker_error
from brokers.engine.client.plan import Call, Plan
from brokers.engine.remoting.codes import RequestCode, ResponseCode

__all__ = ["StoreCleanResult", "clean_expired_consume_queue", "delete_expired_commit_log", "parse_store_clean_result"]

CLEAN_TIMEOUT_S = 30.0  # a pass deletes up to deleteFileBatchMax segments and walks every queue: more than 3 s


@dataclass(frozen=True, slots=True)
class StoreCleanResult:
    """What one broker's clean pass deleted (None: the broker did not say)."""

    addr: str
    deleted_commit_log_files: int | None = None
    deleted_consume_queue_files: int | None = None
    deleted_index_files: int | None = None
    min_offset_before: int | None = None
    min_offset_after: int | None = None
    disk_ratio: float | None = None
    errors: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for an operator."""
        if self.deleted_commit_log_files is None:
            return f"{self.addr}: accepted (the broker runs the pass on its own schedule)"
        line = (
            f"{self.addr}: deleted {self.deleted_commit_log_files} commit log segment(s), "
            f"{self.deleted_consume_queue_files} consume queue file(s), {self.deleted_index_files} index file(s); "
            f"commitLogMinOffset {self.min_offset_before} -> {self.min_offset_after}"
        )
        if self.disk_ratio is not None:
            line += f"; disk {self.disk_ratio:.2%} used"
        return line + "".join(f"; error: {e}" for e in self.errors)


def _opt_int(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse_store_clean_result(addr: str, body: bytes) -> StoreCleanResult:
    """Read a clean answer's body (empty for an Apache broker)."""
    data = load_object(body)
    if not data:
        return StoreCleanResult(addr)
    ratio = data.get("diskRatio")
    return StoreCleanResult(
        addr,
        _opt_int(data.get("deletedCommitLogFiles")),
        _opt_int(data.get("deletedConsumeQueueFiles")),
        _opt_int(data.get("deletedIndexFiles")),
        _opt_int(data.get("commitLogMinOffsetBefore")),
        _opt_int(data.get("commitLogMinOffsetAfter")),
        float(ratio) if isinstance(ratio, (int, float)) else None,
        tuple(str(e) for e in data.get("errors") or ()),
    )


def _clean(code: int, addr: str, timeout_s: float) -> Plan[StoreCleanResult]:
    reply = yield Call(code, {}, addr=addr, timeout_s=timeout_s)
    if reply.code != ResponseCode.SUCCESS:
        raise broker_error(reply.code, reply.remark, request_code=code, addr=reply.addr or addr)
    return parse_store_clean_result(reply.addr or addr, reply.body)


def delete_expired_commit_log(addr: str, *, timeout_s: float = CLEAN_TIMEOUT_S) -> Plan[StoreCleanResult]:
    """Delete expired commit log segments on the broker at ``addr`` now (and on its next passes)."""
    return _clean(RequestCode.DELETE_EXPIRED_COMMITLOG, addr, timeout_s)


def clean_expired_consume_queue(addr: str, *, timeout_s: float = CLEAN_TIMEOUT_S) -> Plan[StoreCleanResult]:
    """Delete consume queue and index files whose records are gone, on the broker at ``addr``."""
    return _clean(RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, addr, timeout_s)
