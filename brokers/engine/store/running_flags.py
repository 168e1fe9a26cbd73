"""RunningFlags: whether the store takes puts (RocketMQ's ``RunningFlags``, reduced to two facts).

The store sets ``running`` when ``open()`` has finished and clears it at ``close()``; the put
path records ``healthy_error`` when a record reached the commit log but its consume queue unit or
index entry could not be written. From then on puts are refused (their queue offsets would
diverge from the queue); the next ``open()`` re-dispatches from the commit log and starts healthy.
"""
from __future__ import annotations


class RunningFlags:
    """Shared by the store and its put path; read and written under the commit log lock."""

    def __init__(self) -> None:
        self.running = False
        self.healthy_error: str | None = None

    @property
    def writeable(self) -> bool:
        """True when a put may go ahead: open and no dispatch failure since."""
        return self.running and self.healthy_error is None

    def make_unhealthy(self, why: str) -> None:
        """Refuse further puts until the store is reopened, remembering ``why`` for runtime info."""
        self.healthy_error = why
