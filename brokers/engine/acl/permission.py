"""Perm: what an account may do with a topic or a group, in RocketMQ's plain ACL bits.

The bits are RocketMQ's ``Permission`` (4.x)::

    DENY = 1   refuses everything, whatever other bit is set
    ANY  = 2   needed by nobody in 4.x's table; owned PUB or SUB satisfies it
    PUB  = 4   send to a topic
    SUB  = 8   consume a topic; for a group, act as one of its consumers

A group's permission is stored and checked under the resource ``%RETRY%<group>`` (the group's retry
topic), so one map holds topics and groups and a send to a retry topic is checked as SUB on its group.

The file spells a perm ``PUB``, ``SUB``, ``PUB|SUB`` (or ``SUB|PUB``) or ``DENY``. RocketMQ reads an
unknown spelling as DENY at run time; Gantry refuses the file instead (:func:`parse_perm`), so a typo
cannot silently lock out, or open up, an account.
"""

from __future__ import annotations

from enum import IntFlag

from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX


class Perm(IntFlag):
    DENY = 1
    ANY = 2
    PUB = 4
    SUB = 8


PUB_SUB = Perm.PUB | Perm.SUB

# The spellings a plain_acl.yml may use (AclConstants), and how Gantry prints a perm back.
_PERM_SPELLINGS: dict[str, Perm] = {
    "PUB": Perm.PUB,
    "SUB": Perm.SUB,
    "PUB|SUB": PUB_SUB,
    "SUB|PUB": PUB_SUB,
    "DENY": Perm.DENY,
}


class UnknownPermError(ValueError):
    """A perm spelled other than PUB, SUB, PUB|SUB, SUB|PUB or DENY."""


def parse_perm(text: str) -> Perm:
    """Read a perm as plain_acl.yml spells it (surrounding spaces ignored, case-sensitive like Java)."""
    perm = _PERM_SPELLINGS.get(text.strip())
    if perm is None:
        raise UnknownPermError(f"unknown perm {text!r}: expected PUB, SUB, PUB|SUB or DENY")
    return perm


def perm_name(perm: Perm) -> str:
    """The file's spelling of a perm: ``PUB``, ``SUB``, ``PUB|SUB``, ``DENY`` (``ANY`` for the rare need)."""
    if perm & Perm.DENY:
        return "DENY"
    names = [name for name, bit in (("PUB", Perm.PUB), ("SUB", Perm.SUB), ("ANY", Perm.ANY)) if perm & bit]
    return "|".join(names) or "NONE"


_DENY, _ANY, _PUB_OR_SUB = int(Perm.DENY), int(Perm.ANY), int(Perm.PUB | Perm.SUB)


def check_permission(needed: Perm, owned: Perm) -> bool:
    """RocketMQ's ``Permission.checkPermission``: DENY owned refuses; ANY needs PUB or SUB; else a shared bit."""
    owned_bits, needed_bits = int(owned), int(needed)  # plain ints: IntFlag's operators cost ~1 us each, per request
    if owned_bits & _DENY:
        return False
    if needed_bits & _ANY:
        return bool(owned_bits & _PUB_OR_SUB)
    return bool(needed_bits & owned_bits)


def group_resource(group: str) -> str:
    """The resource a group's permission lives under: its retry topic, ``%RETRY%<group>``."""
    return RETRY_GROUP_TOPIC_PREFIX + group


def is_group_resource(resource: str) -> bool:
    return resource.startswith(RETRY_GROUP_TOPIC_PREFIX)


def describe_resource(resource: str) -> str:
    """``topic X`` or ``group G`` (a ``%RETRY%G`` resource), for refusal remarks."""
    if is_group_resource(resource):
        return f"group {resource[len(RETRY_GROUP_TOPIC_PREFIX) :]}"
    return f"topic {resource}"
