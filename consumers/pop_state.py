"""A consumer group's POP state (RocketMQ 5's message-level consumption, the 5.x clients'): per
queue its next cursor and deliveries in flight, from every master at once
(``brokers/gateway/pop_state.py``; one GANTRY_GET_POP_STATE per master).

The group page shows it when there is some (a 4.x group has none); the API answers it for any group
a broker knows (404 otherwise, as the other group endpoints).
"""

from __future__ import annotations

from brokers.gateway.cluster import cluster_info, masters_by_addr
from brokers.gateway.pop_state import GroupPopState, group_pop_state
from console.errors import NotFound
from consumers.rules import checked_group
from consumers.selectors import group_known

# Deliveries listed per broker (the counts per queue are always whole): what a page can show.
MAX_ENTRIES = 200


def group_pop_state_read(*, name: str, known: bool = False) -> GroupPopState:
    """The group's POP state; NotFound when no broker knows the group (``known``: the caller checked already)."""
    checked_group(name, "name")
    if not known and not group_known(name=name):
        raise NotFound(f"consumer group {name} does not exist")
    return group_pop_state(name, masters_by_addr(cluster_info()), max_entries=MAX_ENTRIES)
