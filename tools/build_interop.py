"""Resolve Apache RocketMQ's Java clients, tools and servers from Maven Central and build the interop drivers.

    .venv/bin/python tools/build_interop.py     # make test does this; the interop fixtures do it too

Runs ``mvn package dependency:build-classpath`` on ``interop/pom.xml`` when a pom or a Java source is
newer than the last build (a stamp under ``interop/target``); each module's runtime classpath, its
compiled classes first, lands in ``interop/<module>/target/classpath.txt`` (``grpc5``: the gRPC client
rocketmq-client-java with the driver of ``interop/grpc-driver``). Maven's local repository
(``~/.m2``, or ``MAVEN_REPO``) is a cache: a fresh machine resolves everything from Maven Central.
Exits non-zero, printing Maven's output, when the build fails.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INTEROP = ROOT / "interop"
MODULES = ("client4", "client5", "apache5", "grpc5")
STAMP = INTEROP / "target" / "build.stamp"
MVN_TIMEOUT_S = 900  # a fresh ~/.m2 downloads ~120 MB; far above the ~30 s that takes here


class InteropBuildError(RuntimeError):
    """Maven could not resolve or build the interop modules (its output is the message)."""


def _inputs_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(INTEROP.glob("**/pom.xml")) + sorted(INTEROP.glob("*driver/src/**/*.java")):
        if "target" in path.relative_to(INTEROP).parts:
            continue
        digest.update(str(path.relative_to(INTEROP)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _classpath_file(module: str) -> pathlib.Path:
    return INTEROP / module / "target" / "classpath.txt"


def classpath(module: str) -> str:
    """The runtime classpath of ``module`` (its own classes first), as built by :func:`build`."""
    own = INTEROP / module / "target" / "classes"
    deps = _classpath_file(module).read_text().strip()
    return f"{own}{os.pathsep}{deps}" if own.is_dir() else deps


def build(*, quiet: bool = True) -> dict[str, str]:
    """Build when the inputs changed since the last build (one process at a time); return each module's classpath."""
    STAMP.parent.mkdir(parents=True, exist_ok=True)
    with open(STAMP.parent / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # pytest-xdist workers: the first builds, the others wait and reuse it
        digest = _inputs_digest()
        fresh = STAMP.exists() and STAMP.read_text() == digest and all(_classpath_file(m).exists() for m in MODULES)
        if not fresh:
            command = [
                "mvn",
                "-B",
                "-f",
                str(INTEROP / "pom.xml"),
                "package",
                "dependency:build-classpath",
                "-Dmdep.outputFile=target/classpath.txt",
            ]
            if quiet:
                command.insert(2, "-q")
            if os.environ.get("MAVEN_REPO"):
                command.append(f"-Dmaven.repo.local={os.environ['MAVEN_REPO']}")
            try:
                done = subprocess.run(command, cwd=INTEROP, capture_output=True, text=True, timeout=MVN_TIMEOUT_S)
            except FileNotFoundError:
                raise InteropBuildError(
                    "mvn is not installed (make test installs it: the Debian package maven)"
                ) from None
            except subprocess.TimeoutExpired as exc:
                raise InteropBuildError(f"mvn did not finish within {MVN_TIMEOUT_S} s: {exc.stdout or ''}") from None
            if done.returncode != 0:
                raise InteropBuildError(f"mvn exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
            STAMP.write_text(digest)
    return {module: classpath(module) for module in MODULES}


if __name__ == "__main__":
    try:
        paths = build(quiet="-v" not in sys.argv)
    except InteropBuildError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
    print("interop: built " + ", ".join(f"{m} ({len(p.split(os.pathsep))} jars)" for m, p in paths.items()))
