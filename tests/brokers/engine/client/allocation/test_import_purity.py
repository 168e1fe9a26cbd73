"""The strategies are pure: they import without Django and only the standard library and engine common."""

from __future__ import annotations

import ast
import doctest
import pathlib
import subprocess
import sys

import brokers.engine.client.allocation.strategy

PACKAGE = pathlib.Path(brokers.engine.client.allocation.strategy.__file__).parent
ROOT = PACKAGE.parents[3]


def test_imports_without_django_or_other_frameworks() -> None:
    code = (
        "import sys, brokers.engine.client.allocation\n"
        "bad = [m for m in ('django', 'rest_framework', 'celery', 'redis', 'pyspark') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == ""


def test_sources_import_only_the_standard_library_and_engine_common() -> None:
    """Not the rest of the client either: the strategies are what the client, previews and scripts share."""
    allowed_prefixes = ("brokers.engine.common", "brokers.engine.client.allocation")
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
                assert name.startswith(allowed_prefixes) or top in sys.stdlib_module_names, (path.name, name)


def test_modules_stay_small() -> None:
    for path in PACKAGE.glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) < 400, path.name


def test_docstring_examples_run() -> None:
    result = doctest.testmod(brokers.engine.client.allocation.strategy)
    assert result.attempted > 0 and result.failed == 0
