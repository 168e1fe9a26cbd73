"""The metrics port's bearer token (docs/metrics.md): a bind beyond loopback without a token is
refused at start naming the flag; with a token every request needs ``Authorization: Bearer``.

In-process servers and real name server and broker processes, all on 127.0.0.1 with a token
configured (the auth path is the same whatever the address)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from brokers.engine.metrics.bearer_token import TOKEN_ENV
from brokers.engine.metrics.metrics_endpoint import (
    MetricsConfigError,
    MetricsEndpoint,
    MetricsServer,
    add_metrics_arguments,
    metrics_endpoint_from_args,
)
from tests.brokers.engine._group_procs import ROOT, BrokerProc, NamesrvProc
from tests.fixtures.ports import free_port

TOKEN = "s3cret-metrics-token-0123456789"


class OneGauge:
    def collect(self):
        yield GaugeMetricFamily("gantry_test_answer", "a fixed value", value=42)


def get(port: int, authorization: str | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if authorization is not None:
        request.add_header("Authorization", authorization)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_metrics_arguments(parser)
    return parser.parse_args(argv)


@pytest.fixture
def no_env_token(monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "metrics-token"
    path.write_text(TOKEN + "\n")
    return path


# -- the guard, on an in-process server ----------------------------------------------------------


@pytest.fixture
def guarded_port():
    server = MetricsServer(MetricsEndpoint("127.0.0.1", free_port(), TOKEN), OneGauge())
    try:
        yield server.endpoint.port
    finally:
        server.close()


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        "Bearer wrong-token-wrong-token",
        f"Basic {TOKEN}",
        f"Token {TOKEN}",
        TOKEN,
    ],
)
def test_a_request_without_the_token_is_answered_401_and_shown_nothing(guarded_port, authorization):
    status, headers, body = get(guarded_port, authorization)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
    assert b"gantry_test_answer" not in body


@pytest.mark.parametrize("authorization", [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"  Bearer   {TOKEN} "])
def test_a_request_with_the_token_gets_the_metrics(guarded_port, authorization):
    status, headers, body = get(guarded_port, authorization)
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    assert families["gantry_test_answer"].samples[0].value == 42


def test_loopback_without_a_token_stays_open():
    server = MetricsServer(MetricsEndpoint("127.0.0.1", free_port()), OneGauge())
    try:
        assert get(server.endpoint.port)[0] == 200
    finally:
        server.close()


def test_a_server_beyond_loopback_without_a_token_does_not_bind():
    with pytest.raises(MetricsConfigError, match="--metrics-host 0.0.0.0 is not a loopback address"):
        MetricsServer(MetricsEndpoint("0.0.0.0", free_port()), OneGauge())


# -- the flags -------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7"])
def test_a_host_beyond_loopback_without_a_token_is_refused_naming_the_flag(no_env_token, host):
    with pytest.raises(MetricsConfigError) as info:
        metrics_endpoint_from_args(parse(["--metrics-port", "9100", "--metrics-host", host]))
    assert str(info.value).startswith(f"--metrics-host {host} is not a loopback address")
    assert "--metrics-token-file" in str(info.value)


def test_a_host_beyond_loopback_with_a_token_is_accepted(no_env_token, token_file, monkeypatch):
    endpoint = metrics_endpoint_from_args(
        parse(["--metrics-port", "9100", "--metrics-host", "0.0.0.0", "--metrics-token-file", str(token_file)])
    )
    assert (endpoint.host, endpoint.port, endpoint.token) == ("0.0.0.0", 9100, TOKEN)
    assert TOKEN not in repr(endpoint)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert metrics_endpoint_from_args(parse(["--metrics-port", "9100", "--metrics-host", "::"])).token == TOKEN
    assert metrics_endpoint_from_args(parse(["--metrics-port", "9100"])).token == TOKEN  # loopback takes it too


@pytest.mark.parametrize(
    "extra, flag",
    [
        (["--metrics-token", "short"], "--metrics-token"),
        (["--metrics-token", "has a space in it, sixteen+"], "--metrics-token"),
        (["--metrics-token-file", "/nonexistent/metrics-token"], "--metrics-token-file /nonexistent/metrics-token"),
        (["--metrics-token", TOKEN, "--metrics-token-file", "/nonexistent/metrics-token"], "--metrics-token-file"),
    ],
)
def test_an_unusable_token_is_refused_naming_the_flag(no_env_token, extra, flag):
    with pytest.raises(MetricsConfigError, match=flag):
        metrics_endpoint_from_args(parse(["--metrics-port", "9100", *extra]))


def test_an_empty_token_file_is_refused(no_env_token, tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(MetricsConfigError, match="at least 16 characters"):
        metrics_endpoint_from_args(parse(["--metrics-port", "9100", "--metrics-token-file", str(empty)]))


# -- real processes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["namesrv", "--port", "0"],
        ["broker", "--name", "b", "--store-dir", "unused"],
    ],
)
def test_a_process_asked_for_metrics_on_every_interface_without_a_token_refuses_to_start(argv):
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "brokers.engine",
            *argv,
            "--metrics-port",
            str(free_port()),
            "--metrics-host",
            "0.0.0.0",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "--metrics-host 0.0.0.0 is not a loopback address" in done.stderr and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def token_procs(tmp_path_factory):
    root = tmp_path_factory.mktemp("metrics-token-procs")
    path = root / "metrics-token"
    path.write_text(TOKEN + "\n")
    namesrv = NamesrvProc(root, metrics={"port": free_port(), "token_file": str(path)})
    namesrv.start()
    broker = BrokerProc(
        root, namesrv.addr, "broker-t", 0, "ASYNC_MASTER", metrics={"port": free_port(), "token": TOKEN}
    )
    try:
        broker.start()
        yield namesrv, broker
    finally:
        broker.stop()
        namesrv.stop()


@pytest.mark.parametrize("which, family", [(0, "gantry_namesrv_live_brokers"), (1, "rocketmq_broker_tps")])
def test_name_server_and_broker_serve_metrics_only_with_the_token(token_procs, which, family):
    port = token_procs[which].metrics_port
    assert get(port)[0] == 401
    assert get(port, "Bearer not-the-metrics-token")[0] == 401
    status, _headers, body = get(port, f"Bearer {TOKEN}")
    assert status == 200 and family in {f.name for f in text_string_to_metric_families(body.decode())}
