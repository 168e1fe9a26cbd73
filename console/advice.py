"""One finding of the queue-count advisor: what is wrong, about what, and the change it suggests.
Shared by the topic half (topics/advisor.py: queue layout, hot brokers, skew, idle consumers) and the group half
(consumers/advisor.py: idle members, unowned queues, lag on one queue); console/serializers.AdviceListOutput
writes it for the API, templates/console/_advice.html for the pages."""

from __future__ import annotations

from dataclasses import dataclass

WARNING, INFO = "warning", "info"
EDIT, SHRINK = "edit", "shrink"  # the console page the suggestion links to ("" none)
KINDS = (
    "write-not-readable",
    "read-not-written",
    "idle-consumers",
    "hot-broker",
    "skewed-queues",
    "unowned-queues",
    "lag-on-one-queue",
)


@dataclass(frozen=True)
class Advice:
    kind: str  # one of KINDS
    severity: str  # WARNING | INFO
    subject: str  # the broker, queue, topic or group the finding is about
    finding: str
    suggestion: str
    action: str = ""  # EDIT | SHRINK | ""
