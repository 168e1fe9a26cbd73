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
PURE_PACKAGES = ["brokers/engine", "brokers/engine/client/allocation", "consumers/allocation", "analytics/jobs"]


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
            if top in {"consumers", "health", "topics", "analytics", "metadata", "console"} or (
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


# -- the import graph: no cycles, no arrow against the rules (tests/architecture_graph.py) ------------

from tests.architecture_graph import (  # noqa: E402
    Edge,
    cycles,
    describe_cycle,
    import_graph,
    project_modules,
    rule_violations,
)

REVIEW_MODULE_LINES = 400  # past this a module is a question for review (split by meaning, if it has two)
MAX_MODULE_LINES = 600  # past this it has grown unreviewed: the test fails


def test_the_import_graph_has_no_cycle() -> None:
    _, edges = import_graph()
    assert [describe_cycle(c, edges) for c in cycles(edges)] == []


def test_no_import_goes_against_the_dependency_rules() -> None:
    _, edges = import_graph()
    assert rule_violations(edges) == []


def test_the_graph_checks_see_a_cycle_and_a_wrong_way_arrow() -> None:
    """The checks above can fail: a made-up cycle and made-up wrong-way arrows are reported."""
    made_up = [
        Edge("brokers.engine.store.commitlog", "brokers.engine.store.consume_queue", 1, True),
        Edge("brokers.engine.store.consume_queue", "brokers.engine.store.commitlog", 2, False),
    ]
    assert [describe_cycle(c, made_up) for c in cycles(made_up)] == [
        "brokers.engine.store.commitlog (line 1) <-> brokers.engine.store.consume_queue (line 2) in a cycle of 2: "
        "brokers.engine.store.commitlog, brokers.engine.store.consume_queue"
    ]
    wrong = [
        Edge("brokers.engine.store.commitlog", "django.conf", 3, True),
        Edge("console.views", "topics.selectors", 4, True),
        Edge("consumers.selectors", "topics.views", 5, False),
        Edge("brokers.engine.client.allocation.averagely", "brokers.engine.client.producer", 6, True),
    ]
    assert len(rule_violations(wrong)) == 4


def test_the_graph_checks_see_an_app_speaking_the_wire() -> None:
    """Only the gateway, the engine's tools and the engine import the wire or the raw admin client: made-up
    arrows from apps are reported, the gateway's and mqadmin's and the kernel's typed errors are not."""
    wrong = [
        Edge("topics.selectors", "brokers.engine.remoting.codes", 1, True),
        Edge("consumers.alerts", "brokers.gateway.client", 2, False),
        Edge("metadata.selectors", "brokers.engine.client.admin", 3, True),
        Edge("brokers.acl.services", "brokers.engine.client.admin_acl", 4, True),
        Edge("console.http_errors", "brokers.engine.remoting.errors", 5, True),
        Edge("topics.services", "brokers.engine.client.admin_errors", 6, True),
    ]
    found = rule_violations(wrong)
    assert [line.split(":")[0] for line in found] == [
        "topics.selectors -> brokers.engine.remoting.codes (line 1)",
        "consumers.alerts -> brokers.gateway.client (line 2)",
        "metadata.selectors -> brokers.engine.client.admin (line 3)",
        "brokers.acl.services -> brokers.engine.client.admin_acl (line 4)",
        "console.http_errors -> brokers.engine.remoting.errors (line 5)",
        "topics.services -> brokers.engine.client.admin_errors (line 6)",
    ]
    assert all("only the gateway speaks the wire" in line for line in found)
    allowed = [
        Edge("brokers.gateway.topics", "brokers.engine.remoting.codes", 1, True),
        Edge("brokers.gateway.errors", "brokers.engine.client.admin_errors", 2, True),
        Edge("brokers.mqadmin.subcommands", "brokers.engine.remoting.codes", 3, True),
        Edge("brokers.management.commands.mqadmin", "brokers.gateway.client", 4, True),
        Edge("console.http_errors", "brokers.engine.client.admin_errors", 5, True),
        Edge("topics.selectors", "brokers.gateway.errors", 6, True),
        Edge("brokers.namesrv_sets.services", "brokers.gateway.client_lifecycle", 7, True),
    ]
    assert rule_violations(allowed) == []


def test_module_size_is_a_review_question_not_a_placement_rule() -> None:
    """Over 400 lines: a warning in the test report (does the module hold two concepts?); over 600: a failure.
    The cap never decides where code goes: a file is placed by its meaning."""
    import warnings

    long, too_long = [], []
    for name, path in project_modules().items():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES:
            too_long.append(f"{name}: {lines} lines")
        elif lines > REVIEW_MODULE_LINES:
            long.append(f"{name}: {lines} lines")
    if long:
        warnings.warn(
            f"modules over {REVIEW_MODULE_LINES} lines, a question for review: {', '.join(sorted(long))}", stacklevel=1
        )
    assert too_long == []


def test_no_two_public_engine_modules_define_a_class_of_the_same_name() -> None:
    seen: dict[str, str] = {}
    clashes = []
    for name, path in sorted(project_modules().items()):
        if not name.startswith("brokers.engine") or any(p.startswith("_") for p in name.split(".")):
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                if node.name in seen:
                    clashes.append(f"{node.name}: {seen[node.name]} and {name}")
                else:
                    seen[node.name] = name
    assert clashes == []
