"""The dependency rules of DESIGN.md section 2, checked on the real import graph."""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Pure packages may import the standard library and libraries such as pyspark (analytics/jobs),
# never these frameworks.
FRAMEWORKS = ("django", "rest_framework", "celery", "redis", "django_htmx")
PURE_PACKAGES = ["brokers/engine", "consumers/allocation", "analytics/jobs"]


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_pure_package_source_never_imports_a_framework(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[0] in FRAMEWORKS:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_engine_never_imports_the_django_apps() -> None:
    offenders = []
    for path in sorted((ROOT / "brokers/engine").rglob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if top in {"consumers", "topics", "analytics", "console"} or (
                top == "brokers" and not name.startswith("brokers.engine")
            ):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_pure_packages_import_without_django_loaded() -> None:
    modules = [package.replace("/", ".") for package in PURE_PACKAGES]
    code = (
        "import sys, pkgutil, importlib\n"
        f"pkgs = [importlib.import_module(name) for name in {modules!r}]\n"
        "for pkg in pkgs:\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        if not m.name.endswith('__main__'):\n"
        "            importlib.import_module(m.name)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}]\n"
        "assert not bad, bad\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
