"""AclRefused: a request the ACL turns away, with the remark its NO_PERMISSION answer carries."""

from __future__ import annotations

from brokers.engine.remoting.codes import ResponseCode


class AclRefused(Exception):
    """Raised by the validator; the server answers ``NO_PERMISSION`` (16) with ``remark`` and runs nothing.

    The remark names what was refused ("no permission to PUB on topic T for accessKey K",
    "signature mismatch for accessKey K", "unknown accessKey K", ...) and never a secret.
    """

    code = ResponseCode.NO_PERMISSION

    def __init__(self, remark: str) -> None:
        super().__init__(remark)
        self.remark = remark
