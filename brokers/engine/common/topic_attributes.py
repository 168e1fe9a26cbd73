"""Topic attributes: the key/value settings RocketMQ 5 keeps on a TopicConfig.

Facts taken from RocketMQ 5.x (``TopicAttributes``, ``AttributeParser``, ``AttributeUtil``):

* The known attributes, and whether an existing topic may change them::

      message.type    enum UNSPECIFIED NORMAL FIFO DELAY TRANSACTION MIXED  changeable    default NORMAL
      queue.type      enum BatchCQ SimpleCQ                                 creation only default SimpleCQ
      cleanup.policy  enum DELETE COMPACTION                                creation only default DELETE
      reserve.time    integer -1..2**63-1                                   changeable    default -1

  Any other key is refused. ``reserve.time`` is a tiered-store setting; a broker without a
  tiered store (Gantry has none) refuses it on every write.
* UPDATE_AND_CREATE_TOPIC carries a *modification* in its ``attributes`` header, the text
  ``+key=value`` (add or change) and ``-key`` (remove) joined by commas, e.g.
  ``+message.type=FIFO,-reserve.time``. Creating a topic takes only ``+`` entries; on an existing
  topic a ``-`` entry must name an attribute the topic has, and an entry of a creation-only
  attribute is refused. A request without the header leaves the attributes as they are.
* The attributes are stored as a plain map (``{"message.type": "FIFO"}``) under the JSON name
  ``attributes`` of TopicConfig (topics.json, GET_ALL_TOPIC_CONFIG, GET_TOPIC_CONFIG, the
  registration body).

Every refusal raises :class:`InvalidAttributeError` whose message names the attribute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MESSAGE_TYPE = "message.type"
QUEUE_TYPE = "queue.type"
CLEANUP_POLICY = "cleanup.policy"
RESERVE_TIME = "reserve.time"

ADD_SIGN = "+"
DELETE_SIGN = "-"
JAVA_LONG_MAX = 2**63 - 1


class InvalidAttributeError(ValueError):
    """An attribute modification RocketMQ refuses; the message names the attribute."""


@dataclass(frozen=True, slots=True)
class EnumAttribute:
    name: str
    changeable: bool  # False: settable when the topic is created, never after
    universe: tuple[str, ...]
    default: str

    def verify(self, value: str) -> None:
        if value not in self.universe:
            raise InvalidAttributeError(f"attribute {self.name}: {value!r} is not one of {', '.join(self.universe)}")


@dataclass(frozen=True, slots=True)
class LongRangeAttribute:
    name: str
    changeable: bool
    minimum: int
    maximum: int
    default: int

    def verify(self, value: str) -> None:
        try:
            number = int(value.strip(), 10)
        except ValueError:
            raise InvalidAttributeError(f"attribute {self.name}: {value!r} is not an integer") from None
        if not self.minimum <= number <= self.maximum:
            raise InvalidAttributeError(f"attribute {self.name}: {number} is not within {self.minimum}..{self.maximum}")


Attribute = EnumAttribute | LongRangeAttribute

# Order as RocketMQ's TopicMessageType enum declares it (UNSPECIFIED first, MIXED last).
MESSAGE_TYPE_VALUES = ("UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "MIXED")

TOPIC_ATTRIBUTES: Mapping[str, Attribute] = {
    a.name: a
    for a in (
        EnumAttribute(QUEUE_TYPE, False, ("BatchCQ", "SimpleCQ"), "SimpleCQ"),
        EnumAttribute(CLEANUP_POLICY, False, ("DELETE", "COMPACTION"), "DELETE"),
        EnumAttribute(MESSAGE_TYPE, True, MESSAGE_TYPE_VALUES, "NORMAL"),
        LongRangeAttribute(RESERVE_TIME, True, -1, JAVA_LONG_MAX, -1),
    )
}


def parse_attribute_modification(text: str | None) -> dict[str, str]:
    """Split ``+k=v,-k2`` into ``{"+k": "v", "-k2": ""}`` (keys keep their sign), as AttributeParser.

    Refuses an entry without ``=`` that is no removal, an ``=`` entry that is no addition, an empty
    value, and a key given twice.
    """
    if not text:
        return {}
    out: dict[str, str] = {}
    for entry in text.split(","):
        if "=" in entry:
            key, _, value = entry.partition("=")
            value = value.split("=", 1)[0]  # Java's split("=") keeps what lies before a second '='
            if not key.startswith(ADD_SIGN):
                raise InvalidAttributeError(
                    f"attribute {key or entry!r}: an entry with a value must start with '+', e.g. +{key}={value}"
                )
            if not value:
                raise InvalidAttributeError(f"attribute {key[1:]}: no value after '='")
        else:
            key, value = entry, ""
            if not key.startswith(DELETE_SIGN):
                raise InvalidAttributeError(
                    f"attribute {key!r}: an entry without a value must start with '-' (remove the attribute)"
                )
        if key in out:
            raise InvalidAttributeError(f"attribute {key[1:]}: given twice")
        out[key] = value
    return out


def format_attribute_modification(modification: Mapping[str, str]) -> str:
    """The header text of a modification (AttributeParser.parseToString): ``+k=v`` or ``-k``, comma-joined."""
    return ",".join(key + ("=" + value if value else "") for key, value in modification.items())


def alter_attributes(
    *,
    create: bool,
    current: Mapping[str, str],
    modification: Mapping[str, str],
    supported: Mapping[str, Attribute] = TOPIC_ATTRIBUTES,
    tiered_store: bool = False,
) -> dict[str, str]:
    """The attributes after applying ``modification`` (signed keys) to ``current``, as AttributeUtil.

    ``create``: the topic does not exist yet (only additions, creation-only attributes allowed).
    Raises InvalidAttributeError, naming the attribute, and changes nothing.
    """
    final = dict(current)
    seen: set[str] = set()
    removals: list[str] = []
    for signed, value in modification.items():
        sign, name = signed[:1], signed[1:]
        if not name or ADD_SIGN in name or DELETE_SIGN in name:
            raise InvalidAttributeError(f"attribute {signed!r}: the name is empty or holds '+' or '-'")
        if name in seen:
            raise InvalidAttributeError(f"attribute {name}: given twice")
        seen.add(name)
        attribute = supported.get(name)
        if attribute is None:
            raise InvalidAttributeError(f"attribute {name}: unsupported; known: {', '.join(sorted(supported))}")
        if create and sign != ADD_SIGN:
            raise InvalidAttributeError(f"attribute {name}: a new topic takes only additions (+{name}=value)")
        if sign not in (ADD_SIGN, DELETE_SIGN):
            raise InvalidAttributeError(f"attribute {name}: the entry must start with '+' or '-'")
        if sign == DELETE_SIGN and name not in current:
            raise InvalidAttributeError(f"attribute {name}: cannot remove it, the topic does not have it")
        if not create and not attribute.changeable:
            raise InvalidAttributeError(f"attribute {name}: can be set only when the topic is created")
        if name == RESERVE_TIME and not tiered_store:
            raise InvalidAttributeError(f"attribute {name}: needs a tiered store, which this broker does not have")
        if sign == ADD_SIGN:
            attribute.verify(value)
            final[name] = value
        else:
            removals.append(name)
    for name in removals:
        final.pop(name, None)
    return final
