"""The queue-count advisor's findings and the group half of it: what a group's members get wrong,
each finding with the change it suggests. Pure: it reads the figures the group page already fetched. The topic
half (queue layout, hot brokers, skew) is topics/advisor.py, with the list of every finding kind.
"""

from __future__ import annotations

from collections import defaultdict

from console.advice import EDIT, WARNING, Advice
from consumers.types import GroupDetail

LAG_SHARE = 0.5  # one queue's share of a group's lag
MIN_LAG = 1000


def group_advice(detail: GroupDetail) -> tuple[Advice, ...]:
    """Every finding about a group: idle members, queues no member holds, lag piled on one queue."""
    found: list[Advice] = []
    queues = detail.progress.queues
    per_topic: dict[str, int] = defaultdict(int)
    for q in queues:
        if not q.topic.startswith("%RETRY%"):
            per_topic[q.topic] += 1
    members = len(detail.members)
    if detail.online and detail.message_model != "BROADCASTING":
        for topic, count in sorted(per_topic.items()):
            if members > count:
                found.append(
                    Advice(
                        "idle-consumers",
                        WARNING,
                        topic,
                        f"{members} online members share {count} queue(s) of {topic}: {members - count} member(s) get no queue of it",
                        f"raise {topic}'s queues to at least {members} in all, or run {count} members",
                        EDIT,
                    )
                )
        if not detail.not_answering:
            unowned = [q for q in queues if q.owner is None and not q.topic.startswith("%RETRY%")]
            if unowned:
                names = ", ".join(f"{q.topic} {q.broker_name}:{q.queue_id}" for q in unowned[:5])
                more = f" and {len(unowned) - 5} more" if len(unowned) > 5 else ""
                found.append(
                    Advice(
                        "unowned-queues",
                        WARNING,
                        detail.name,
                        f"{len(unowned)} queue(s) no online member holds ({names}{more}): they are not being consumed",
                        "trigger a rebalance of the group; if it persists, check the members' subscriptions agree",
                    )
                )
    lag = sum(max(q.lag, 0) for q in queues)
    if lag >= MIN_LAG and len(queues) > 1:
        worst = max(queues, key=lambda q: q.lag)
        if worst.lag > LAG_SHARE * lag:
            owner = f" (held by {worst.owner})" if worst.owner else ""
            found.append(
                Advice(
                    "lag-on-one-queue",
                    WARNING,
                    f"{worst.topic} {worst.broker_name}:{worst.queue_id}",
                    f"{worst.lag / lag:.0%} of the group's lag ({worst.lag:,} of {lag:,}) is on {worst.topic} "
                    f"{worst.broker_name}:{worst.queue_id}{owner}",
                    "that queue's owner is slow or stuck: look at its consumer (running info, stack) or restart it",
                )
            )
    return tuple(found)
