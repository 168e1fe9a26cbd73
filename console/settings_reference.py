"""The settings reference: every environment variable console/settings.py reads, found in its source.

Read from the code, not kept by hand, so the table cannot drift: the syntax tree of the settings
module is searched for the ways it reads the environment: ``os.environ.get("X", default)``,
``os.environ["X"]``, a helper of the module that reads the variable its first argument names (like
``_env_bool("X", default)``), and ``dj_database_url.config(default=...)``, which reads
``DATABASE_URL``. For each variable the reference names the setting it feeds (the assigned name,
``MQ["STORE_DIR"]`` for a dict entry, the names an ``if`` on it sets), its default (the expression
as written) and its meaning: the comment on the line, else the comment block right above the
statement (inside a dict literal: above the first of its run of entries), else the variable's
parenthesis in the module docstring (``GANTRY_HTTPS (serve over HTTPS only: ...)``), else the
comment above the whole statement (a dict) or the docstring of the function that reads it.
``python manage.py settings_reference`` writes docs/settings.md; tests/console/test_settings_reference.py
fails when that file differs.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import TypeGuard

HEADER = """# Settings reference

Every environment variable the settings module (`console/settings.py`) reads: the setting it feeds,
its default and what it means. Generated from the module's source by
`python manage.py settings_reference` (do not edit by hand: `make test` fails when this file and the
settings differ). Paths are relative to the checkout; `VAR_DIR` is `GANTRY_VAR_DIR` (default `var/`).

| environment variable | setting | default | meaning |
| --- | --- | --- | --- |
"""
MAX_SETTINGS = 3  # an `if` on a variable that sets more names lists this many, then "…"


@dataclass(frozen=True)
class EnvSetting:
    """One environment variable: the settings it feeds, its default (source text) and its meaning."""

    env: str
    settings: tuple[str, ...]
    default: str | None  # None: no default written (unset means empty or off)
    meaning: str


@dataclass(frozen=True)
class _Read:
    env: str
    default: str | None
    line: int


def _comments(source: str) -> dict[int, str]:
    """Line number -> the text of the comment on it."""
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string.lstrip("#").strip()
    return found


def _clean(text: str) -> str:
    text = re.sub(r"\s*\(noqa[^)]*\)|\s*noqa:?\s*\S*", "", text)
    return " ".join(text.split())


class _Finder:
    """Walk the settings module and collect each environment read with its setting and meaning."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines()
        self.comments = _comments(source)
        self.tree = ast.parse(source)
        self.doc = _clean(ast.get_docstring(self.tree) or "")
        self.found: dict[str, dict] = {}
        self.helpers = {node.name: node for node in self.tree.body if isinstance(node, ast.FunctionDef)}
        self.helper_users = self._helper_users()
        # helpers that read the variable their first argument names, like _env_bool("DEBUG", False)
        self.readers = {"os.environ.get", "os.getenv"} | {
            name
            for name, node in self.helpers.items()
            if any(
                isinstance(call, ast.Call)
                and _dotted(call.func) in ("os.environ.get", "os.getenv")
                and call.args
                and isinstance(call.args[0], ast.Name)
                for call in ast.walk(node)
            )
        }

    def _helper_users(self) -> dict[str, list[str]]:
        """Function name -> the top-level names assigned from a call of it (``SECRET_KEY = _secret_key()``)."""
        users: dict[str, list[str]] = {}
        for node in self.tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                for call in ast.walk(node.value) if node.value is not None else ():
                    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in self.helpers:
                        users.setdefault(call.func.id, []).extend(_targets(node))
        return users

    def _segment(self, node: ast.AST | None) -> str | None:
        return None if node is None else " ".join((ast.get_source_segment(self.source, node) or "").split())

    def _reads(self, node: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[_Read]:
        reads = []
        for sub in ast.walk(node):
            read = self._read(sub, parents)
            if read is not None:
                reads.append(read)
        return reads

    def _read(self, node: ast.AST, parents: dict[ast.AST, ast.AST]) -> _Read | None:
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in self.readers and node.args and _is_str(node.args[0]):
                default = self._segment(node.args[1]) if len(node.args) > 1 else None
                parent = parents.get(node)
                if (
                    default is None
                    and isinstance(parent, ast.BoolOp)
                    and isinstance(parent.op, ast.Or)
                    and parent.values[0] is node
                ):
                    default = self._segment(parent.values[1])  # os.environ.get("X") or fallback
                return _Read(str(node.args[0].value), default, node.lineno)
            if name == "dj_database_url.config":
                keywords = {k.arg: k.value for k in node.keywords}
                env_node = keywords.get("env")
                env = str(env_node.value) if _is_str(env_node) else "DATABASE_URL"
                return _Read(env, self._segment(keywords.get("default")), node.lineno)
        if (
            isinstance(node, ast.Subscript)
            and _dotted(node.value) == "os.environ"
            and _is_str(node.slice)
            and isinstance(node.ctx, ast.Load)
        ):
            return _Read(str(node.slice.value), None, node.lineno)
        return None

    def _comment_above(self, line: int, *, within: range | None = None) -> str:
        """The comment on ``line``, else the block of comment lines right above it. ``within``: a dict
        literal's lines, in which the block above the first of a run of entries covers the run."""
        if line in self.comments and not self.lines[line - 1].lstrip().startswith("#"):
            return self.comments[line]
        above = line - 1
        if within is not None:
            while above in within and above >= 1 and self.lines[above - 1].strip() and above not in self.comments:
                above -= 1
        block: list[str] = []
        while above >= 1 and self.lines[above - 1].lstrip().startswith("#"):
            if not self.comments[above].startswith("--"):  # a section rule ("-- Celery ----"), not a meaning
                block.insert(0, self.comments[above])
            above -= 1
        return " ".join(block)

    def _from_docstring(self, env: str) -> str:
        match = re.search(rf"(?<![A-Z_]){re.escape(env)} \(([^()]*(?:\([^()]*\)[^()]*)*)\)", self.doc)
        return match.group(1) if match else ""

    def _note(self, read: _Read, settings: list[str], meaning: str, *, weak: bool = False) -> None:
        """Record a read; a ``weak`` meaning (a whole dict's comment) gives way to a later direct one."""
        entry = self.found.setdefault(read.env, {"settings": [], "default": None, "meaning": "", "weak": True})
        for name in settings:
            if name not in entry["settings"]:
                entry["settings"].append(name)
        entry["default"] = entry["default"] or read.default
        if meaning and (not entry["meaning"] or (entry["weak"] and not weak)):
            entry["meaning"], entry["weak"] = _clean(meaning), weak

    def _statement(self, node: ast.stmt, parents: dict[ast.AST, ast.AST], names: list[str]) -> None:
        if isinstance(node, ast.If):
            assigned = [
                t for stmt in ast.walk(node) if isinstance(stmt, (ast.Assign, ast.AnnAssign)) for t in _targets(stmt)
            ]
            for read in self._reads(node.test, parents):
                shown = assigned[:MAX_SETTINGS] + (["…"] if len(assigned) > MAX_SETTINGS else [])
                self._note(
                    read,
                    shown,
                    self._comment_above(read.line)
                    or self._from_docstring(read.env)
                    or self._comment_above(node.lineno),
                )
            for stmt in node.body + node.orelse:
                self._statement(stmt, parents, names)
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            names = _targets(node)
            if isinstance(node.value, ast.Dict):
                self._dict(node.value, names[0] if names else "?", parents, self._comment_above(node.lineno))
                return
        for read in self._reads(node, parents):
            self._note(
                read,
                names,
                self._comment_above(read.line) or self._from_docstring(read.env) or self._comment_above(node.lineno),
            )

    def _dict(self, value: ast.Dict, prefix: str, parents: dict[ast.AST, ast.AST], outer: str) -> None:
        """The reads in a dict literal's entries; ``outer``: the comment on the dict (or on its key)."""
        span = range(value.lineno + 1, (value.end_lineno or value.lineno) + 1)
        for key, item in zip(value.keys, value.values):
            if not _is_str(key):
                continue
            path = f'{prefix}["{str(key.value)}"]'
            if isinstance(item, ast.Dict):
                self._dict(item, path, parents, self._comment_above(key.lineno, within=span) or outer)
                continue
            for read in self._reads(item, parents):
                meaning = (
                    self._comment_above(read.line, within=span)
                    or self._comment_above(key.lineno, within=span)
                    or self._from_docstring(read.env)
                )
                self._note(read, [path], meaning or outer, weak=not meaning)

    def run(self) -> list[EnvSetting]:
        parents = {child: node for node in ast.walk(self.tree) for child in ast.iter_child_nodes(node)}
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef):
                helper_doc = (ast.get_docstring(node) or "").split("\n\n")[0]
                for read in self._reads(node, parents):
                    self._note(
                        read,
                        self.helper_users.get(node.name, []),
                        self._comment_above(read.line) or self._from_docstring(read.env) or helper_doc,
                    )
            else:
                self._statement(node, parents, [])
        return sorted(
            (
                EnvSetting(env, tuple(entry["settings"]), entry["default"], entry["meaning"])
                for env, entry in self.found.items()
            ),
            key=lambda s: s.env,
        )


def _targets(node: ast.Assign | ast.AnnAssign) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _is_str(node: ast.AST | None) -> TypeGuard[ast.Constant]:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def settings_reference(source: str) -> list[EnvSetting]:
    """Every environment variable the settings module ``source`` reads, by name."""
    return _Finder(source).run()


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def settings_markdown(source: str) -> str:
    """docs/settings.md: the reference of ``source`` as a Markdown table."""
    rows = []
    for item in settings_reference(source):
        settings = ", ".join(f"`{name}`" if name != "…" else name for name in item.settings) or "—"
        default = f"`{item.default}`" if item.default is not None else "unset"
        rows.append(f"| `{item.env}` | {_cell(settings)} | {_cell(default)} | {_cell(item.meaning)} |")
    return HEADER + "\n".join(rows) + "\n"
