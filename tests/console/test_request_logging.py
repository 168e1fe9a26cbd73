"""A terminal free of the clients' mistakes: a 4xx answer is logged at INFO (a 5xx stays ERROR), and the
favicon browsers ask for is served (linked from every page, and /favicon.ico itself)."""

from __future__ import annotations

import logging

import pytest
from django.contrib.staticfiles import finders

from console.log_format import ClientErrorsAtInfo

pytestmark = pytest.mark.django_db


def _levels(caplog) -> dict[str, str]:
    return {r.getMessage(): r.levelname for r in caplog.records if r.name == "django.request"}


def test_a_4xx_answer_is_logged_at_info(client, caplog) -> None:
    with caplog.at_level(logging.DEBUG):
        assert client.get("/no-such-page/").status_code == 404
        assert client.get("/api/v1/no-such-endpoint").status_code == 404
    assert _levels(caplog) == {"Not Found: /no-such-page/": "INFO", "Not Found: /api/v1/no-such-endpoint": "INFO"}


def test_a_5xx_stays_an_error_and_a_demoted_record_below_the_level_is_dropped() -> None:
    def record(level: int, status: int) -> logging.LogRecord:
        made = logging.LogRecord("django.request", level, __file__, 1, "answered %s", (status,), None)
        made.status_code = status
        return made

    server_error = record(logging.ERROR, 503)
    assert ClientErrorsAtInfo().filter(server_error) and server_error.levelname == "ERROR"
    logger = logging.getLogger("django.request")
    before = logger.level
    logger.setLevel(logging.WARNING)  # LOG_LEVEL=WARNING: the demoted 404 goes
    try:
        assert not ClientErrorsAtInfo().filter(record(logging.WARNING, 404))
    finally:
        logger.setLevel(before)


def test_the_favicon_is_linked_and_served(client) -> None:
    assert 'rel="icon" href="/static/favicon.svg"' in client.get("/login/").content.decode()
    answer = client.get("/favicon.ico")
    assert answer.status_code == 302 and answer["Location"] == "/static/favicon.svg"
    icon = finders.find("favicon.svg")  # what collectstatic gathers and WhiteNoise serves
    assert icon and open(icon, encoding="utf-8").read().startswith("<svg")
