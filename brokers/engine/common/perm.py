"""Permission bits of topics and brokers (RocketMQ's PermName), and the one rule for a perm value.

:func:`is_valid_perm` is the rule every front door applies (the broker's UPDATE_AND_CREATE_TOPIC,
``TopicConfig.validate``, the name server's registration rules, the broker's ``broker_permission``,
``mqadmin``, the console's form and API, the metadata import); each turns a refusal into its own
error shape (a remark on the wire, a 400 naming the field, an argparse error).
"""

from __future__ import annotations

from typing import TypeGuard

PERM_PRIORITY = 0x8
PERM_READ = 0x4
PERM_WRITE = 0x2
PERM_INHERIT = 0x1  # topic may serve as an auto-create template (TBW102)

PERM_RW = PERM_READ | PERM_WRITE  # 6, the default for user topics

# RocketMQ's PermName.isValid: 0 <= perm < PERM_PRIORITY, any mix of read, write and inherit.
PERM_MIN = 0
PERM_MAX = PERM_PRIORITY - 1  # 7


def is_valid_perm(value: object) -> TypeGuard[int]:
    """Return whether ``value`` is a perm RocketMQ accepts: an integer from 0 to 7 (``PermName.isValid``).

    A ``bool`` is no perm (JSON's ``true`` is not 1 here), nor is a string of digits: parse first.
    """
    return isinstance(value, int) and not isinstance(value, bool) and PERM_MIN <= value <= PERM_MAX


def is_readable(perm: int) -> bool:
    return bool(perm & PERM_READ)


def is_writeable(perm: int) -> bool:
    return bool(perm & PERM_WRITE)


def is_inherited(perm: int) -> bool:
    return bool(perm & PERM_INHERIT)


def perm_to_string(perm: int) -> str:
    """Render like RocketMQ's PermName.perm2String: 'RWX' with '-' for missing bits."""
    return (
        ("R" if perm & PERM_READ else "-") + ("W" if perm & PERM_WRITE else "-") + ("X" if perm & PERM_INHERIT else "-")
    )
