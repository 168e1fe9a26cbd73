"""The suite's fixtures are plugins in tests/fixtures/, registered here once for every test."""

from __future__ import annotations

import os

# Before anything imports grpc (the 5.x endpoint, Apache's Python client): gRPC's fork handlers, with its
# threads busy, broke one fork in ten (a subprocess whose preexec_fn runs: Spark's JVM launch failed with
# JAVA_GATEWAY_EXITED beside a cluster serving gRPC). brokers/engine/proxy sets the same default.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

import pytest  # noqa: E402

pytest_plugins = [
    "tests.fixtures.cluster",
    "tests.fixtures.console",
    "tests.fixtures.celery",
    "tests.fixtures.postgres",
    "tests.fixtures.spark",
    "tests.fixtures.lake",
    "tests.fixtures.tls",
    "tests.fixtures.crash_sim",
    "tests.fixtures.disk_volume",
    "tests.fixtures.faulty_io",
    "tests.fixtures.webhook",
    "tests.fixtures.interop",
    "tests.fixtures.apache_servers",
]


LONGEST_BROWSER_FILES = ("tests/e2e/test_every_page_renders.py",)  # ~3 min on 2 cores (docs/benchmarks.md)


def pytest_collection_modifyitems(config, items):
    """Run browser tests last: Playwright's sync API holds an event loop on the main thread while
    a browser is open, and tests that call asyncio.run() cannot share the thread with it.

    Under pytest-xdist every worker collects in this order, and ``make test``'s scheduler
    (``--dist loadfile --no-loadscope-reorder``) hands out whole files in it, so in each worker the
    browser tests still come after every other test, provided no file mixes the two kinds: a
    file that does is refused here (its early, non-browser tests would pull its browser tests to
    the front of some worker)."""
    kinds: dict[str, set[bool]] = {}
    for item in items:
        if item.nodeid.startswith("tests/interop/"):
            item.add_marker(pytest.mark.interop)
        kinds.setdefault(item.nodeid.split("::", 1)[0], set()).add(item.get_closest_marker("e2e") is not None)
    mixed = sorted(path for path, seen in kinds.items() if len(seen) > 1)
    if mixed:
        raise pytest.UsageError(
            f"{', '.join(mixed)}: a test file is either all browser tests (marked e2e) "
            "or none; move the browser tests to tests/e2e/"
        )
    # among the browser tests, the longest file first: handed out last, its 3 minutes were the run's tail
    items.sort(
        key=lambda item: (
            (is_e2e := item.get_closest_marker("e2e") is not None),
            is_e2e and item.nodeid.split("::", 1)[0] not in LONGEST_BROWSER_FILES,
        )
    )
