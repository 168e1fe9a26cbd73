"""The suite's fixtures are plugins in tests/fixtures/, registered here once for every test."""
from __future__ import annotations

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
]


def pytest_collection_modifyitems(config, items):
    """Run browser tests last: Playwright's sync API holds an event loop on the main thread while
    a browser is open, and tests that call asyncio.run() cannot share the thread with it.

    Under pytest-xdist every worker collects in this order and the scheduler hands tests out in
    it, so in each worker the browser tests still come after every other test."""
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)
