"""analytics.jobs is pure: the standard library and pyspark only, no framework, no I/O at import."""

from __future__ import annotations

import ast
import doctest
import pathlib
import sys

import analytics.jobs
import analytics.jobs.windows

PACKAGE = pathlib.Path(analytics.jobs.__file__).parent
ROOT = PACKAGE.parent.parent


def test_sources_import_only_the_standard_library_and_pyspark() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert name.startswith("analytics.jobs") or top in {"pyspark", *sys.stdlib_module_names}, (
                    path.name,
                    name,
                )


def test_modules_stay_small() -> None:
    for path in PACKAGE.glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) < 400, path.name


def test_public_api() -> None:
    for name in (
        "queue_deltas",
        "throughput",
        "backlog",
        "backlog_trend",
        "top_topics",
        "top_groups",
        "QUEUE_SAMPLES_SCHEMA",
        "GROUP_SAMPLES_SCHEMA",
        "RESOLUTIONS",
    ):
        assert hasattr(analytics.jobs, name), name
    assert analytics.jobs.RESOLUTIONS == {"1m": 60, "1h": 3600}


def test_docstring_examples_run() -> None:
    result = doctest.testmod(analytics.jobs.windows)
    assert result.attempted > 0 and result.failed == 0
