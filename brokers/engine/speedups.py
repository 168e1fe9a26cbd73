"""Compiled twins of the hottest pure functions, and the switch between the two paths.

The frame header codecs (:mod:`brokers.engine.remoting.header_codec`), the batch body codec
(:mod:`brokers.engine.common.batch_body`), the commit log record codec
(:mod:`brokers.engine.common.message_codec`), Java's string hash (:mod:`brokers.engine.common.java_hash`:
tag codes and index keys), the properties string decoder (:mod:`brokers.engine.common.message`),
the in-place record check of recovery and replication (:mod:`brokers.engine.store.record_check`) and
a slave's dispatch plan (:mod:`brokers.engine.store.dispatch_plan`) each have a Cython twin next to
them (``_header_codec_c.pyx``, ``_batch_body_c.pyx``, ``_message_codec_c.pyx``, ``_java_hash_c.pyx``,
``_message_c.pyx``, ``_record_check_c.pyx``, ``_dispatch_plan_c.pyx``), built in place by
``make`` (``tools/build_speedups.py``). At the end of each pure module :func:`install` puts the
compiled functions in place of the pure ones, so every caller that imports a name from the pure
module gets the compiled one, and the pure module stays the reference:

- the twins do the common, well-formed case in C and hand anything else (a malformed header or
  record, a value out of its field's range, a type they do not expect) to the pure function, so
  errors and edge cases are the pure module's, word for word;
- ``GANTRY_PURE_PYTHON=1`` in the environment keeps the pure path (``make test`` runs its
  PostgreSQL pass so); a missing build (the ``gantry-client`` wheel ships no compiled code) or a
  stale one (its ``.pyx``, or a ``.pxd`` it cimports, newer than the built module: a pull without
  ``make``) also does, the
  stale case with a warning;
- :data:`PURE` and :data:`COMPILED` name every function of both paths and :data:`TWINS` each pure
  module's twin, for the test that proves they give byte-identical frames and records
  (tests/brokers/engine/test_speedups.py) and for bench/codec_bench.py.
"""

from __future__ import annotations

import importlib
import logging
import os
import pathlib
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["COMPILED", "DISABLE_ENV", "PURE", "TWINS", "active", "enabled", "install"]

log = logging.getLogger(__name__)

DISABLE_ENV = "GANTRY_PURE_PYTHON"
ROOT = pathlib.Path(__file__).resolve().parent.parent.parent  # the repository: `brokers.x.y` is brokers/x/y.pxd
_CIMPORT = re.compile(r"^\s*from\s+(brokers(?:\.\w+)+)\s+cimport\b", re.MULTILINE)
PURE: dict[str, Callable[..., Any]] = {}  # "module.function" -> the pure function
COMPILED: dict[str, Callable[..., Any]] = {}  # "module.function" -> the twin in use in its place
TWINS: dict[str, str] = {}  # pure module -> its compiled twin module


def enabled() -> bool:
    """Whether the environment allows the compiled path (``GANTRY_PURE_PYTHON`` unset, empty or 0)."""
    return os.environ.get(DISABLE_ENV, "").strip() in ("", "0")


def active() -> bool:
    """Whether any pure function was replaced by its compiled twin in this process."""
    return bool(COMPILED)


def load(module: str) -> Any | None:
    """Import the compiled module ``module``; None when it is not built or older than its ``.pyx``."""
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    built = pathlib.Path(mod.__file__ or "")
    source = built.parent / (module.rsplit(".", 1)[-1] + ".pyx")
    newer = newer_sources(built, source)
    if newer:
        log.warning(
            "%s is older than %s: using the pure-Python path (run `make` to rebuild)",
            built.name,
            ", ".join(p.name for p in newer),
        )
        return None
    return mod


def newer_sources(built: pathlib.Path, source: pathlib.Path, root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """The sources of ``built`` changed after it was built: its ``.pyx`` and the project's ``.pxd``
    files it cimports (``from brokers.engine._byteorder cimport ...``). None when the ``.pyx`` is not
    next to it (an installed build: nothing to compare with)."""
    try:
        built_at = built.stat().st_mtime
        if not source.exists():
            return []
        headers = [root.joinpath(*name.split(".")).with_suffix(".pxd") for name in _CIMPORT.findall(source.read_text())]
        return [p for p in (source, *headers) if p.stat().st_mtime > built_at]
    except OSError:
        return []


def install(namespace: dict[str, Any], module: str, names: Iterable[str]) -> bool:
    """Replace ``names`` in ``namespace`` (a pure module's globals) by their twins in ``module``.

    Every pure function is recorded in :data:`PURE` first, whatever happens next. Returns whether
    the twins were installed (see the module docstring for when they are not).
    """
    names = list(names)
    owner = namespace["__name__"]
    TWINS[owner] = module
    for name in names:
        PURE[f"{owner}.{name}"] = namespace[name]
    compiled = load(module) if enabled() else None
    if compiled is None:
        return False
    for name in names:
        COMPILED[f"{owner}.{name}"] = namespace[name] = getattr(compiled, name)
    return True
