"""The ``gantry-client`` wheel (pyproject.toml): built from the repository, installed in a fresh
virtualenv with nothing but its declared dependencies (none: ``--no-index``), it imports without
Django, Celery or PySpark and runs the example of docs/clients.md against a real cluster.

The wheel is built from a copy of the repository's ``pyproject.toml``, ``brokers/`` and
``consumers/`` (Django modules included, so the package selection is what is tested) so that the
build's ``build/`` and ``*.egg-info`` never land in the work tree. The virtualenv has no pip of its
own: the suite's pip installs into it (``pip --python``), which keeps the set-up to a few seconds.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import uuid
import zipfile
from dataclasses import dataclass

import pytest

import brokers.engine

ROOT = pathlib.Path(__file__).resolve().parent.parent
CLIENTS_DOC = ROOT / "docs" / "clients.md"
INSTALL_SECTION = "## In an application: `pip install`"
SHIPPED_PACKAGES = {  # what brokers.engine.client imports (its allocation strategies included), and nothing else
    "brokers/engine",
    "brokers/engine/acl",
    "brokers/engine/client",
    "brokers/engine/client/allocation",
    "brokers/engine/common",
    "brokers/engine/remoting",
    "brokers/engine/remoting/headers",
}
FRAMEWORKS = ("django", "rest_framework", "celery", "redis", "pyspark")


@dataclass(frozen=True)
class ClientVenv:
    wheel: pathlib.Path
    python: pathlib.Path  # the fresh virtualenv's interpreter
    work: pathlib.Path  # a directory outside the repository to run it in


def _run(args: list[str | os.PathLike], cwd: pathlib.Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory) -> ClientVenv:
    """Build the wheel from a copy of the repository and install it alone in a new virtualenv."""
    root = tmp_path_factory.mktemp("client-wheel")
    src = root / "src"
    src.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", src / "pyproject.toml")
    for top in ("brokers", "consumers"):
        shutil.copytree(ROOT / top, src / top, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _ok(
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-index",
                "--no-build-isolation",
                "-w",
                root / "dist",
                src,
            ],
            cwd=root,
        )
    )
    (wheel,) = (root / "dist").glob("gantry_client-*.whl")
    venv = root / "venv"
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=root))
    python = venv / "bin" / "python"
    # --no-index and no --no-deps: a dependency the wheel declared would have to be found, and is not.
    _ok(_run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-index", wheel], cwd=root))
    return ClientVenv(wheel=wheel, python=python, work=root)


def _install_example() -> str:
    """The first Python block after the install section heading of docs/clients.md."""
    text = CLIENTS_DOC.read_text()
    section = text[text.index(INSTALL_SECTION) :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_wheel_holds_only_the_client_closure_and_declares_no_dependency(client_venv: ClientVenv) -> None:
    with zipfile.ZipFile(client_venv.wheel) as whl:
        names = whl.namelist()
        metadata = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    modules = [n for n in names if ".dist-info/" not in n]
    assert {n.rsplit("/", 1)[0] for n in modules} == SHIPPED_PACKAGES
    assert all((ROOT / n).is_file() for n in modules)
    assert re.search(r"^Name: gantry-client$", metadata, re.M)
    assert re.search(rf"^Version: {re.escape(brokers.engine.__version__)}$", metadata, re.M)
    assert "Requires-Dist" not in metadata


def test_every_shipped_module_imports_in_a_fresh_venv_without_the_frameworks(client_venv: ClientVenv) -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        "import brokers.engine\n"
        "for pkg in (brokers.engine,):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        if not m.name.endswith('__main__'):\n"
        "            importlib.import_module(m.name)\n"
        "missing = []\n"
        f"for name in {FRAMEWORKS!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ModuleNotFoundError:\n"
        "        missing.append(name)\n"
        "print(brokers.engine.__file__)\n"
        "print(','.join(missing))\n"
    )
    where, missing = _ok(_run([client_venv.python, "-I", "-c", code], cwd=client_venv.work)).stdout.split()
    assert pathlib.Path(where).is_relative_to(client_venv.python.parent.parent)  # the wheel's copy, not the repo's
    assert missing.split(",") == list(FRAMEWORKS)


def test_the_servers_are_not_shipped_and_say_so(client_venv: ClientVenv) -> None:
    proc = _run([client_venv.python, "-I", "-m", "brokers.engine", "namesrv", "--port", "0"], cwd=client_venv.work)
    assert proc.returncode == 1
    assert "not installed here" in proc.stderr and "Traceback" not in proc.stderr


def test_the_install_example_round_trips_a_message_from_the_wheel(
    client_venv: ClientVenv, session_cluster, topic_name: str
) -> None:
    from brokers.engine.client.admin import BlockingMQAdminClient
    from tests.brokers.engine.client._cluster import create_topic

    with BlockingMQAdminClient(session_cluster.namesrv_addr, timeout_s=5.0) as admin:
        create_topic(admin, session_cluster, topic_name)
    example = _install_example()
    assert example.count("127.0.0.1:9876") == 2 and "Orders" in example
    script = (
        example.replace("127.0.0.1:9876", session_cluster.namesrv_addr)
        .replace("Orders", topic_name)
        .replace("order-audit", f"audit_{uuid.uuid4().hex[:8]}")
    )
    (client_venv.work / "example.py").write_text(script)
    proc = _ok(_run([client_venv.python, "-I", "example.py"], cwd=client_venv.work, timeout=60))
    assert proc.stdout.strip() == "[b'order 42']"
