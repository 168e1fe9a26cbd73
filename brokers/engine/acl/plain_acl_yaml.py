"""load_plain_acl_yaml: the text of ``plain_acl.yml`` as dicts, lists, strings and None, read by PyYAML.

PyYAML's ``BaseLoader`` resolves no type: every scalar stays the string it was written as. That removes
YAML 1.1's traps for this file (``secretKey: 12345678`` an int, ``secretKey: 0777`` an octal,
``admin: yes`` or ``on`` a boolean); the ACL schema (:mod:`~brokers.engine.acl.plain_acl_config`) then
decides what each field means and names the field that is wrong. A plain (unquoted) empty value, ``~``
or ``null`` reads as None, as in any YAML loader; a quoted ``""`` stays an empty string.

Whatever YAML RocketMQ's snakeyaml reads is read (block and flow collections, quoted, block and
multi-line scalars, comments), except what has no business in an ACL file and is refused with its line:

- anchors and aliases (``&a``, ``*a``): an alias bomb (a billion laughs) expands a few hundred bytes
  into gigabytes, so no alias is followed at all. A bare ``*`` pattern must be quoted: ``'*'``;
- explicit tags (``!!str``, ``!custom``): the schema decides the types, a tag would only mislead;
- a second document (``---`` after a first one): one file, one config;
- the same key twice in one mapping (PyYAML keeps the last one silently; RocketMQ's snakeyaml too);
- a key that is not a plain string (``? [a, b]: c``);
- nesting deeper than :data:`MAX_DEPTH` (the file needs four levels);
- text longer than :data:`MAX_ACL_FILE_BYTES` in UTF-8.

Errors are :class:`AclYamlError`, a ValueError whose message starts with the line (``line 3: ...``).

PyYAML is imported on the first read, not with the module: the ``gantry-client`` wheel ships this
package for its request signer (:mod:`.client_hook`), never reads an ACL file, and declares no
dependency (tests/test_client_wheel.py).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml
    from yaml.nodes import Node

# An ACL file is accounts and address patterns: ~300 bytes an account, so 1 MiB holds ~3,000 accounts.
# Reading it is pure-Python PyYAML (about a second per MiB), and the servers re-read it when it changes.
MAX_ACL_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 16  # collections inside collections; plain_acl.yml uses 4 (accounts > item > topicPerms > entry)
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})


class AclYamlError(ValueError):
    """The text cannot be read as a plain ACL file; the message names the line."""


def load_plain_acl_yaml(text: str) -> Any:
    """Parse ``text``; return nested dicts, lists, strings and None (an empty document is None)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_ACL_FILE_BYTES:
        raise AclYamlError(f"the file has {size} bytes, more than the {MAX_ACL_FILE_BYTES} an ACL file may have")
    import yaml  # here, not at the top: see the module docstring

    loader = None
    try:
        loader = _loader_class()(text)
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise AclYamlError(_message(exc)) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise AclYamlError(
            f"line {line}: the character #x{exc.character:04x} is not allowed in YAML (write it as \\u{exc.character:04x} inside double quotes)"
        ) from None
    except yaml.YAMLError as exc:
        raise AclYamlError(str(exc)) from None
    finally:
        if loader is not None:
            loader.dispose()
    return None if node is None else _value(node)


def _message(exc: yaml.MarkedYAMLError) -> str:
    """``line N: problem (context)``; PyYAML's marks count from 0."""
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}" if mark is not None else "the file"
    if exc.context == "while scanning an alias":
        return f"{where}: a * starts an alias, which this file does not allow; quote a * pattern: '*'"
    problem = exc.problem or exc.context or "not valid YAML"
    message = f"{where}: {problem}"
    if exc.problem and exc.context:
        message += f" ({exc.context}"
        if exc.context_mark is not None and exc.context_mark.line != getattr(mark, "line", None):
            message += f" from line {exc.context_mark.line + 1}"
        message += ")"
    return message


@functools.cache
def _loader_class() -> type[yaml.BaseLoader]:
    import yaml

    class _AclLoader(yaml.BaseLoader):
        """BaseLoader's scanner, parser and composer, refusing aliases, anchors, tags, deep nesting and a second document."""

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._depth = 0

        def get_single_node(self) -> Node | None:
            self.get_event()  # StreamStartEvent
            document = None
            if not self.check_event(yaml.StreamEndEvent):
                document = self.compose_document()
            if not self.check_event(yaml.StreamEndEvent):
                event = self.get_event()
                raise _refused(event.start_mark, "a second YAML document; only one is read")
            self.get_event()
            return document

        def compose_node(self, parent: Node | None, index: Any) -> Node | None:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                raise _refused(
                    event.start_mark,
                    f"an alias (*{event.anchor}) is not allowed in this file; a bare * must be quoted: '*'",
                )
            if event.anchor is not None:
                raise _refused(event.start_mark, f"an anchor (&{event.anchor}) is not allowed in this file")
            if event.tag is not None:
                raise _refused(event.start_mark, f"a tag ({event.tag}) is not allowed in this file")
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if self._depth >= MAX_DEPTH:
                    raise _refused(event.start_mark, f"nested too deeply (more than {MAX_DEPTH} levels)")
                self._depth += 1
                try:
                    return super().compose_node(parent, index)
                finally:
                    self._depth -= 1
            return super().compose_node(parent, index)

    return _AclLoader


def _refused(mark: object, problem: str) -> yaml.MarkedYAMLError:
    """``mark``: an event's start mark, a pure-Python ``yaml.Mark`` (BaseLoader's parser makes no C marks)."""
    import yaml

    return yaml.MarkedYAMLError(problem=problem, problem_mark=mark if isinstance(mark, yaml.Mark) else None)


def _value(node: Node) -> Any:
    """The composed node as Python values: no resolver, no constructor, so nothing but str, list, dict and None."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if isinstance(node, ScalarNode):
        return None if node.style is None and node.value in _NULLS else node.value
    if isinstance(node, SequenceNode):
        return [_value(item) for item in node.value]
    assert isinstance(node, MappingNode)
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        if not isinstance(key_node, ScalarNode) or _value(key_node) is None:
            raise AclYamlError(
                f"line {line}: a key must be a name, not {'an empty value' if isinstance(key_node, ScalarNode) else 'a collection'}"
            )
        if key_node.value in result:
            raise AclYamlError(f"line {line}: the key {key_node.value!r} appears twice in one mapping")
        result[key_node.value] = _value(value_node)
    return result
