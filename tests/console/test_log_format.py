"""One log format for every process: text by default, JSON lines with GANTRY_LOG_FORMAT=json."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOG_A_LINE = (
    "import django, logging; django.setup(); log = logging.getLogger('gantry.probe'); log.warning('disk %s', 'low')\n"
    "try:\n    1 / 0\nexcept ZeroDivisionError:\n    log.exception('failed')"
)


def _run(tmp_path, **env) -> subprocess.CompletedProcess:
    environ = {
        **os.environ,
        "GANTRY_VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "GANTRY_PROCESS_NAME": "worker",
        **env,
    }
    return subprocess.run(
        [sys.executable, "-c", LOG_A_LINE], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )


def test_text_lines_name_time_level_process_logger_and_request_id(tmp_path) -> None:
    result = _run(tmp_path, GANTRY_LOG_FORMAT="text")
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if "gantry.probe" in line)
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000 WARNING \[worker \d+\] gantry.probe req=- disk low", line
    ), line


def test_json_lines_keep_a_traceback_inside_one_line(tmp_path) -> None:
    result = _run(tmp_path, GANTRY_LOG_FORMAT="json")
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]  # every line is JSON
    warning, failure = (e for e in entries if e["logger"] == "gantry.probe")
    assert warning["level"] == "WARNING" and warning["message"] == "disk low" and warning["process_name"] == "worker"
    assert warning["request_id"] == "-" and warning["time"].endswith("+0000") and isinstance(warning["process"], int)
    assert failure["level"] == "ERROR" and "ZeroDivisionError" in failure["exc_info"]


def test_an_unknown_format_is_refused_naming_the_setting(tmp_path) -> None:
    result = _run(tmp_path, GANTRY_LOG_FORMAT="xml")
    assert result.returncode != 0 and "GANTRY_LOG_FORMAT must be one of text, json" in result.stderr
