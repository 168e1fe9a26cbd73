"""The project's import graph and the dependency rules of DESIGN.md section 2.

Every ``import`` statement of every module counts, wherever it stands: at module level, inside a
function, or under ``if TYPE_CHECKING:`` (a cycle hidden in a function-level import is still a
cycle). Tests, migrations and benches are not part of the graph.

Run as a script to print what breaks the rules: ``python tests/architecture_graph.py``.
"""

from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("brokers", "topics", "consumers", "health", "analytics", "metadata", "console")
APPS = ("brokers", "topics", "consumers", "health", "analytics", "metadata")
FRAMEWORKS = ("django", "rest_framework", "celery", "redis", "django_htmx", "drf_spectacular", "kombu")
# Pure cores and what each may import from the project (besides itself and the standard library).
# The longest matching package decides (the strategies are a stricter core inside the engine).
PURE = {
    "brokers.engine": (),
    "brokers.engine.client.allocation": ("brokers.engine.common",),
    "consumers.allocation": ("brokers.engine.common", "brokers.engine.client.allocation"),
    "analytics.jobs": (),
}
# What one app may import of another: the tier's gateway and the pure cores.
SHARED_OF_APPS = ("brokers.gateway", "brokers.engine", "consumers.allocation", "analytics.jobs")
# Modules no other app may import, whatever the rule above says (front doors and commands).
PRIVATE_SUFFIXES = (".views", ".forms", ".api", ".urls")
# The wire and the raw admin client: only the gateway (the facade), the engine's own tools (mqadmin,
# management commands) and the engine itself import them; everyone else calls brokers.gateway functions,
# catches brokers.gateway.errors and names brokers.gateway.types.
WIRE = ("brokers.engine.remoting", "brokers.gateway.client")  # these packages or modules
RAW_ADMIN = "brokers.engine.client.admin"  # admin.py and every admin_*.py beside it
WIRE_SPEAKERS = ("brokers.engine", "brokers.gateway", "brokers.mqadmin", "brokers.management")
# The kernel maps errors to HTTP and imports no app, so it reads the typed errors from the engine itself.
KERNEL_ERRORS = ("console", "brokers.engine.client.admin_errors")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    module_level: bool


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, pathlib.Path]:
    modules: dict[str, pathlib.Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or "__pycache__" in path.parts:
                continue
            modules[module_name(path)] = path
    return modules


def _resolve(name: str, modules: dict[str, pathlib.Path]) -> str | None:
    """The project module an imported dotted name lands in (the longest known prefix)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _module_level_nodes(tree: ast.Module) -> set[int]:
    """ids of import nodes executed when the module is imported (not inside a def)."""
    found: set[int] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.add(id(child))
            visit(child)

    visit(tree)
    return found


def edges_of(name: str, path: pathlib.Path, modules: dict[str, pathlib.Path]) -> list[Edge]:
    tree = ast.parse(path.read_text(), filename=str(path))
    top_level = _module_level_nodes(tree)
    is_package = path.name == "__init__.py"
    edges: list[Edge] = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            # ``from pkg import sub`` imports the module pkg.sub when there is one
            targets = [f"{prefix}.{alias.name}" for alias in node.names] or [prefix]
        else:
            continue
        for target in targets:
            resolved = _resolve(target, modules)
            if resolved is None or resolved == name:
                if resolved is None and target.split(".")[0] in FRAMEWORKS:
                    edges.append(Edge(name, target, node.lineno, id(node) in top_level))
                continue
            edges.append(Edge(name, resolved, node.lineno, id(node) in top_level))
    return edges


def import_graph() -> tuple[dict[str, pathlib.Path], list[Edge]]:
    modules = project_modules()
    edges: list[Edge] = []
    for name, path in modules.items():
        edges.extend(edges_of(name, path, modules))
    return modules, edges


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _app_of(name: str) -> str:
    return name.split(".")[0]


def _speaks_wire(src: str, dst: str) -> bool:
    """``src`` imports the wire (codes, remoting) or a raw admin client module without being allowed to."""
    if any(_within(src, p) for p in WIRE_SPEAKERS):
        return False
    if _app_of(src) == KERNEL_ERRORS[0] and dst == KERNEL_ERRORS[1]:
        return False
    return any(_within(dst, w) for w in WIRE) or dst == RAW_ADMIN or dst.startswith(RAW_ADMIN + "_")


def rule_violations(edges: list[Edge]) -> list[str]:
    """Each arrow against the rules, as 'a -> b (line n): why'."""
    found: list[str] = []
    seen: set[tuple[str, str]] = set()
    for edge in edges:
        src, dst = edge.source, edge.target
        if (src, dst) in seen:
            continue
        seen.add((src, dst))
        where = f"{src} -> {dst} (line {edge.line})"
        if _speaks_wire(src, dst):
            found.append(
                f"{where}: only the gateway speaks the wire or holds the raw admin client; "
                "call brokers.gateway functions, catch brokers.gateway.errors, name brokers.gateway.types"
            )
            continue
        pure = max((p for p in PURE if _within(src, p)), key=len, default=None)
        if pure is not None:
            if dst.split(".")[0] in FRAMEWORKS:
                found.append(f"{where}: {pure} is pure and imports a framework")
            elif not _within(dst, pure) and not any(_within(dst, allowed) for allowed in PURE[pure]):
                found.append(
                    f"{where}: {pure} may import only itself{' and ' + ', '.join(PURE[pure]) if PURE[pure] else ''}"
                )
            continue
        if dst.split(".")[0] in FRAMEWORKS:
            continue
        src_app, dst_app = _app_of(src), _app_of(dst)
        if src_app == "console" and dst_app in APPS:
            if not _within(dst, "brokers.engine"):
                found.append(f"{where}: console (project and kernel) imports no app, only the pure engine")
            continue
        if src_app == dst_app:
            continue
        if dst_app == "console":
            if ".management.commands" in dst or dst.endswith(PRIVATE_SUFFIXES):
                found.append(f"{where}: a view, form, API or command of the console is not for apps")
            continue
        if ".management.commands" in dst:
            found.append(f"{where}: nothing imports another app's management command")
        elif dst.endswith(PRIVATE_SUFFIXES) or any(f"{s}." in dst for s in PRIVATE_SUFFIXES):
            found.append(f"{where}: nothing imports another app's views, forms, API or URLs")
        elif not any(_within(dst, shared) for shared in SHARED_OF_APPS):
            found.append(f"{where}: an app reaches another app only through {', '.join(SHARED_OF_APPS)}")
    return found


def cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        if edge.target.split(".")[0] in FRAMEWORKS:
            continue
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        # iterative Tarjan: (node, iterator over its successors)
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    result.append(sorted(component))
    return sorted(result)


def describe_cycle(component: list[str], edges: list[Edge]) -> str:
    """Name two modules of a cycle that import each other through it, with the lines."""
    members = set(component)
    inside = [e for e in edges if e.source in members and e.target in members]
    pairs = {(e.source, e.target): e for e in inside}
    for (a, b), edge in sorted(pairs.items()):
        if (b, a) in pairs:
            return f"{a} (line {edge.line}) <-> {b} (line {pairs[(b, a)].line}) in a cycle of {len(component)}: {', '.join(component)}"
    arrows = ", ".join(
        f"{e.source} -> {e.target} (line {e.line})" for e in sorted(inside, key=lambda e: (e.source, e.target))
    )
    return f"cycle of {len(component)}: {arrows}"


if __name__ == "__main__":
    _, all_edges = import_graph()
    for component in cycles(all_edges):
        print("CYCLE", describe_cycle(component, all_edges))
    for line in rule_violations(all_edges):
        print("RULE", line)
