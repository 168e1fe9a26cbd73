"""``manage.py run_demo`` against a broker group (broker-a SYNC_MASTER + a slave, broker-b alone): it
produces to both groups and reports how its sends were answered per broker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from brokers.management.commands.run_demo import status_report
from tests.brokers.test_run_cluster import wait_for

ROOT = Path(__file__).resolve().parents[2]


def test_status_report_lists_send_ok_first() -> None:
    counts = Counter(
        {("broker-b", "SEND_OK"): 5, ("broker-a", "FLUSH_SLAVE_TIMEOUT"): 2, ("broker-a", "SEND_OK"): 1180}
    )
    assert status_report(counts) == "broker-a SEND_OK 1180, FLUSH_SLAVE_TIMEOUT 2; broker-b SEND_OK 5"
    assert status_report(Counter()) == "none"


def test_the_demo_writes_through_the_sync_master_and_reports_statuses(group_cluster, tmp_path) -> None:
    import queue
    import threading

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "PYTHONUNBUFFERED": "1",
        "NAMESRV_ADDR": group_cluster.namesrv_addr,
        "GANTRY_VAR_DIR": str(tmp_path),
    }
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "run_demo", "--rate", "50", "--report", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        found = None
        for _ in range(3):  # the first report may come before both brokers had a send
            found, seen = wait_for(lines, "demo sends:", timeout_s=30)
            assert found is not None, "\n".join(seen)
            if "broker-a SEND_OK" in found and "broker-b SEND_OK" in found:
                break
        assert "broker-a SEND_OK" in found and "broker-b SEND_OK" in found, found
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
