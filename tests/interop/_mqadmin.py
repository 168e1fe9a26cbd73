"""Apache RocketMQ's own admin tool, ``mqadmin`` 4.9.x (``org.apache.rocketmq.tools.command.MQAdminStartup``
from ``rocketmq-tools`` on the ``client4`` classpath; the 5.x tool on ``apache5``: ``mqadmin5``), run as a
subprocess against a Gantry cluster.

Each call is one JVM, like ``bin/mqadmin``: ``java ... MQAdminStartup <command> -n <namesrv> <args>``.
The JVM prints and exits in about 3.5 s on this machine, most of it Netty's two-second quiet period
before its non-daemon event-loop threads stop (Apache's tool, whatever the server), so tests that
only read run their commands side by side (:meth:`MQAdmin.run_all`).

What the tool needs from its surroundings:

- ``ROCKETMQ_HOME`` (``-Drocketmq.home.dir``): ``MQAdminStartup`` configures logback from
  ``$ROCKETMQ_HOME/conf/logback_tools.xml`` before anything else and, when the file is missing, prints
  a JoranException and runs no command at all. We write our own small config there (warnings to stderr);
  ``conf/tools.yml`` (ACL keys) is left out, so no RPC hook signs the requests.
- ``user.home`` points into the same directory: the client's own log goes to ``~/logs/rocketmqlogs``
  (made before any JVM runs: two side by side raced to make it).
- ``queryMsgById`` writes each message body it shows to ``/tmp/rocketmq/msgbodys/<msgId>`` (a path
  fixed in the tool) and prints that path; :func:`body_file` reads it back.

The tool's exit code is 0 whatever happened: a failed command prints Java's stack trace of a
``SubCommandException`` to stderr. A refusal by the server is a chain of Apache's own exception
types ending in ``CODE: <n>  DESC: <remark>``; :meth:`MQAdminResult.refusal` returns it and fails on
any other exception in the chain (a JSON, number or null-pointer error would mean Gantry answered
something Apache's tool cannot read). A command that does not finish within the timeout is a test
failure, never a hang. A run whose JVM got no answer within the tool's own timeouts (a connect, send or
call timeout, which a starved JVM on a loaded machine can hit) is run once more; twice is a failure.
"""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import re
import subprocess
from dataclasses import dataclass

import pytest

MQADMIN_CLASS = "org.apache.rocketmq.tools.command.MQAdminStartup"
# One JVM per command: small heap, serial GC, C1 only (these JVMs live for seconds).
JVM_OPTIONS = ("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
TIMEOUT_S = 60.0  # a command takes ~3.5 s; a minute is a hang
# JVMs started at once: each burns ~0.6 s of CPU starting up, then idles ~3 s; eight at once on two
# cores starved Apache's client past its own 3 s connect and 5 s call timeouts.
MAX_SIDE_BY_SIDE = 2
# Our own logback config for the tool: warnings and errors to stderr, nothing on stdout.
LOGBACK_TOOLS_XML = """<configuration>
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{0} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR"/></root>
</configuration>
"""
# The same for the 5.x tool, which logs through RocketMQ's shaded logback (``rmq.logback.configurationFile``);
# left alone it loads the broker jar's rmq.broker.logback.xml from the apache5 classpath and prints its status on stdout.
RMQ_LOGBACK_XML = LOGBACK_TOOLS_XML.replace(
    'class="ch.qos.logback.', 'class="org.apache.rocketmq.logging.ch.qos.logback.'
)
# The exception types of a refusal: the tool's wrapper and the client's two answers to a non-success code.
REFUSAL_TYPES = frozenset(
    {
        "org.apache.rocketmq.tools.command.SubCommandException",
        "org.apache.rocketmq.client.exception.MQClientException",
        "org.apache.rocketmq.client.exception.MQBrokerException",
    }
)
# No answer within the tool's own timeouts (see MQAdminResult.transport_failure).
TRANSPORT_FAILURES = frozenset(
    f"org.apache.rocketmq.remoting.exception.{name}"
    for name in ("RemotingConnectException", "RemotingSendRequestException", "RemotingTimeoutException")
)
_EXCEPTION_LINE = re.compile(
    r"^(?:Caused by: )?((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error))(?::|$)", re.MULTILINE
)
_CODE_DESC = re.compile(r"CODE: (-?\d+)\s+DESC: (.*)")
BODY_DIR = pathlib.Path("/tmp/rocketmq/msgbodys")  # where queryMsgById writes bodies (fixed in the tool)


@dataclass(frozen=True)
class MQAdminResult:
    """One mqadmin run: its arguments, exit code and output."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def exception_types(self) -> list[str]:
        """The Java exception classes in stderr's stack traces, outermost first."""
        return _EXCEPTION_LINE.findall(self.stderr)

    def ok(self) -> str:
        """stdout of a command that ran to the end without any Java exception (else fail with both outputs)."""
        assert self.returncode == 0 and not self.exception_types(), self.describe()
        return self.stdout

    def refusal(self) -> tuple[int, str]:
        """``(code, remark)`` of a command the server refused; fail unless the only exceptions are Apache's refusal types."""
        types = self.exception_types()
        assert types and set(types) <= REFUSAL_TYPES, f"not a clean refusal: {types}\n{self.describe()}"
        found = _CODE_DESC.findall(self.stderr)
        assert found, f"no CODE/DESC in the refusal\n{self.describe()}"
        code, remark = found[-1]
        return int(code), remark.strip()

    def transport_failure(self) -> bool:
        """The tool got no answer in time: could not connect, or its request or the answer took longer than
        its own timeouts (3 s to connect, 5 s a call). On a loaded machine (the suite runs beside other
        JVMs and servers) a freshly started JVM can be starved that long; a server that does not answer
        fails the second run the same way."""
        return bool(set(self.exception_types()) & TRANSPORT_FAILURES)

    def rows(self) -> list[list[str]]:
        """stdout's non-empty lines after the header line, split on whitespace."""
        lines = [line for line in self.ok().splitlines() if line.strip()]
        return [line.split() for line in lines[1:]]

    def properties(self, separator: str) -> dict[str, str]:
        """``key <separator> value`` lines of stdout (brokerStatus ``:``, getBrokerConfig ``=``) as a dict."""
        out = {}
        for line in self.ok().splitlines():
            key, sep, value = line.partition(separator)
            if sep and key.strip() and " " not in key.strip():
                out[key.strip()] = value.strip()
        return out

    def describe(self) -> str:
        return f"mqadmin {' '.join(self.args)} exited {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


class MQAdmin:
    """Runs Apache's mqadmin from ``classpath`` with ``home`` as ROCKETMQ_HOME and user.home."""

    def __init__(self, classpath: str, home: pathlib.Path, *, timeout_s: float = TIMEOUT_S) -> None:
        self.classpath = classpath
        self.home = home
        self.timeout_s = timeout_s
        (home / "conf").mkdir(parents=True, exist_ok=True)
        # made here, not by two JVMs side by side: the 4.9 client's logger opened its file while another JVM's
        # mkdirs of the same directory was half done, and printed a FileNotFoundException (a flake on CI)
        (home / "logs" / "rocketmqlogs").mkdir(parents=True, exist_ok=True)
        (home / "conf" / "logback_tools.xml").write_text(LOGBACK_TOOLS_XML)
        (home / "conf" / "rmq_logback_tools.xml").write_text(RMQ_LOGBACK_XML)

    def run(self, command: str, *args: str, namesrv: str, retry: bool = True) -> MQAdminResult:
        """``mqadmin <command> -n <namesrv> <args>``; fail the test if it has not finished within the timeout.

        A run that got no answer in time (:meth:`MQAdminResult.transport_failure`) is run once more
        unless ``retry`` is false (a command that must not take effect twice).
        """
        result = self._run_once((command, "-n", namesrv, *args))
        if retry and result.transport_failure():
            result = self._run_once(result.args)
        return result

    def _run_once(self, argv: tuple[str, ...]) -> MQAdminResult:
        home = str(self.home)
        try:
            done = subprocess.run(
                [
                    "java",
                    *JVM_OPTIONS,
                    f"-Drocketmq.home.dir={home}",
                    f"-Duser.home={home}",
                    f"-Drmq.logback.configurationFile={home}/conf/rmq_logback_tools.xml",
                    "-cp",
                    self.classpath,
                    MQADMIN_CLASS,
                    *argv,
                ],
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
                cwd=home,
                env={**os.environ, "ROCKETMQ_HOME": home},
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(
                f"mqadmin {' '.join(argv)} did not finish within {self.timeout_s} s\n"
                f"--- stdout\n{exc.stdout or ''}\n--- stderr\n{exc.stderr or ''}",
                pytrace=False,
            )
        return MQAdminResult(argv, done.returncode, done.stdout, done.stderr)

    def run_all(self, *calls: tuple[str, ...]) -> list[MQAdminResult]:
        """Run several ``(namesrv, command, *args)`` side by side (each its own JVM); results in the order given."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(calls), MAX_SIDE_BY_SIDE)) as pool:
            futures = [pool.submit(self.run, *call[1:], namesrv=call[0]) for call in calls]
            return [future.result() for future in futures]


def body_file(result: MQAdminResult) -> bytes:
    """The body queryMsgById wrote to its ``Message Body Path`` (the file is removed once read)."""
    match = re.search(r"^Message Body Path:\s+(\S+)$", result.ok(), re.MULTILINE)
    assert match, result.describe()
    path = pathlib.Path(match.group(1))
    assert path.parent == BODY_DIR, path
    try:
        return path.read_bytes()
    finally:
        path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def mqadmin(interop_classpaths, tmp_path_factory) -> MQAdmin:
    """Apache's mqadmin 4.9.x (``client4``), its home in a directory of this module's own."""
    return MQAdmin(interop_classpaths["client4"], tmp_path_factory.mktemp("mqadmin-home"))


@pytest.fixture(scope="module")
def mqadmin5(interop_classpaths, tmp_path_factory) -> MQAdmin:
    """Apache's mqadmin 5.x (``apache5``: rocketmq-tools beside Apache's broker), its home in a directory of this module's own."""
    return MQAdmin(interop_classpaths["apache5"], tmp_path_factory.mktemp("mqadmin5-home"))
