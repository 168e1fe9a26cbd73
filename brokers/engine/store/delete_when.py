"""deleteWhen: the hours of the day when expired commit log segments are deleted.

RocketMQ's ``deleteWhen`` (MessageStoreConfig, default ``"04"``) is a ``;``-separated list of
hours of the local day, each parsed as an integer and compared with the clock's hour
(``UtilAll.isItTimeToDo``): ``"04"`` deletes between 04:00 and 04:59, ``"03;04"`` between 03:00
and 04:59. RocketMQ throws a NumberFormatException from the clean thread on a malformed value,
every pass, and so never deletes; here the value is checked when the store is configured.

>>> parse_delete_when("03;04")
(3, 4)
>>> is_time_to_delete((4,), _local_ms(2024, 1, 2, 4, 30))
True
"""

from __future__ import annotations

import time

DEFAULT_DELETE_WHEN = "04"  # deleteWhen: 4 am, when traffic is usually lowest


def parse_delete_when(text: str) -> tuple[int, ...]:
    """The hours ``text`` names (``"04"``, ``"3;4"``, ``"03;15;23"``); ValueError naming deleteWhen
    for anything else (an empty list, a non-number, an hour outside 0..23)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"deleteWhen (delete_when) must name at least one hour 0..23, got {text!r}")
    hours = []
    for part in text.split(";"):
        part = part.strip()
        if not part.isdigit() or len(part) > 2 or not 0 <= int(part) <= 23:
            raise ValueError(
                f'deleteWhen (delete_when) must be hours 0..23 separated by \';\' (e.g. "04" or "03;04"), got {text!r}'
            )
        hours.append(int(part))
    return tuple(sorted(set(hours)))


def is_time_to_delete(hours: tuple[int, ...], now_ms: int) -> bool:
    """True when the local hour of ``now_ms`` is one of ``hours`` (RocketMQ's isTimeToDelete)."""
    return time.localtime(now_ms / 1000).tm_hour in hours


def _local_ms(year: int, month: int, day: int, hour: int, minute: int = 0) -> int:
    """Epoch milliseconds of a local wall-clock time (for examples and tests)."""
    return int(time.mktime((year, month, day, hour, minute, 0, 0, 0, -1)) * 1000)
