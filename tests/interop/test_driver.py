"""The interop driver runs on each Apache client Maven resolved, and says which version it is."""

from __future__ import annotations

import pytest

from tests.fixtures.interop import JavaDriverError


@pytest.mark.parametrize(("module", "prefix"), [("client4", "V4_9_"), ("client5", "V5_")])
def test_driver_reports_the_apache_client_version(java_driver, module, prefix):
    driver = java_driver(module)
    assert driver.call("version").startswith(prefix)


def test_an_unknown_command_is_an_error_not_a_hang(java_driver):
    driver = java_driver("client4")
    with pytest.raises(JavaDriverError, match="unknown op"):
        driver.call("no-such-op")
    assert driver.call("version").startswith("V4_9_")
