"""``make run``'s supervisor: the terminal gets "<name> is up", warnings and errors and, last, how
to log in; every line of every child is in var/log/<name>.log (0600); a child that dies has its
last lines shown and the run ends non-zero."""

from __future__ import annotations

import io
import stat
import sys
import threading
import time

from console.supervisor import ProcessSpec, Supervisor

CHATTY = (
    "import sys, time\n"
    "for i in range(50): print(f'2026-11-24 INFO noise line {i}')\n"
    "print('2026-11-24 WARNING something to look at')\n"
    "print(\"2026-11-24 INFO task succeeded: {'error': '', 'ok': True}\")\n"
    "print('service ready')\n"
    "sys.stdout.flush()\n"
    "time.sleep(60)\n"
)


def test_the_terminal_shows_what_matters_and_the_logs_keep_everything(tmp_path):
    out = io.StringIO()
    specs = [
        ProcessSpec("alpha", [sys.executable, "-c", CHATTY], ready_marker="service ready"),
        ProcessSpec("beta", [sys.executable, "-c", CHATTY], ready_marker="service ready"),
    ]
    sup = Supervisor(
        specs, out=out, log_dir=tmp_path / "log", ready_message=["Log in at http://x/ as admin."], stop_timeout_s=5
    )

    def stop_once_ready() -> None:
        while "Log in at" not in out.getvalue():
            time.sleep(0.05)
        sup.request_stop()

    threading.Thread(target=stop_once_ready, daemon=True).start()
    assert sup.run() == 0  # in the main thread: run() installs its signal handlers
    text = out.getvalue().splitlines()
    assert "[alpha] is up" not in text and "[run] alpha is up" in text and "[run] beta is up" in text
    assert "[alpha] 2026-11-24 WARNING something to look at" in text
    assert not any("noise line" in line or "task succeeded" in line for line in text)
    ready = text.index("[run] all services are up; press Ctrl-C to stop")
    assert text[ready + 1] == f"[run] each service's whole output is in {tmp_path / 'log'}/<name>.log"
    assert text[ready + 2] == "Log in at http://x/ as admin."  # the last line until Ctrl-C
    assert all(line.startswith("[run] stopping") for line in text[ready + 3 :])
    for name in ("alpha", "beta"):
        log = tmp_path / "log" / f"{name}.log"
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
        lines = log.read_text().splitlines()
        assert "2026-11-24 INFO noise line 0" in lines and "2026-11-24 INFO noise line 49" in lines
        assert "service ready" in lines
    assert stat.S_IMODE((tmp_path / "log").stat().st_mode) == 0o700


def test_a_dead_child_has_its_last_lines_shown_and_the_run_fails(tmp_path):
    out = io.StringIO()
    dying = "import sys\nfor i in range(40): print(f'INFO step {i}')\nprint('cannot bind port 9876')\nsys.exit(3)\n"
    sup = Supervisor(
        [ProcessSpec("cluster", [sys.executable, "-c", dying], ready_marker="ready")],
        out=out,
        log_dir=tmp_path / "log",
        stop_timeout_s=5,
    )
    assert sup.run() == 1
    text = out.getvalue()
    assert "[cluster] cannot bind port 9876" in text and "[cluster] INFO step 39" in text
    assert "[cluster] INFO step 5" not in text  # only the last lines, not all of them
    assert "cluster exited with code 3" in text and str(tmp_path / "log" / "cluster.log") in text


def test_verbose_echoes_every_line(tmp_path):
    out = io.StringIO()
    sup = Supervisor(
        [ProcessSpec("alpha", [sys.executable, "-c", CHATTY], ready_marker="service ready")],
        out=out,
        log_dir=tmp_path / "log",
        verbose=True,
        stop_timeout_s=5,
    )
    try:
        sup.start()
    finally:
        sup.stop()
    assert "[alpha] 2026-11-24 INFO noise line 7" in out.getvalue().splitlines()
