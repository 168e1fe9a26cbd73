"""ReplayCache and the validator's replay step, on an injected clock: the window, seen nonces, the pair
rule, the accounts that require the fields, and a full cache whose floor keeps replays out."""

from __future__ import annotations

import pytest

from brokers.engine.acl.access_validator import AclValidator
from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.client_hook import AclClientHook
from brokers.engine.acl.plain_acl_config import ReplayProtection, parse_plain_acl_text
from brokers.engine.acl.replay_cache import ReplayCache
from brokers.engine.acl.signature import GANTRY_NONCE, GANTRY_TIMESTAMP
from brokers.engine.common.clock import ManualClock
from brokers.engine.remoting.codes import RequestCode as C
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand

SETTINGS = ReplayProtection()  # ±120 s
PEER = ("203.0.113.9", 50123)
ACL = """
accounts:
  - accessKey: admin-key
    secretKey: admin-secret
    admin: true
  - accessKey: strict-key
    secretKey: strict-secret
    defaultTopicPerm: PUB|SUB
    gantryRequireReplayProtection: true
"""


def fields(timestamp_ms: int, n: int) -> dict[str, str]:
    return {GANTRY_TIMESTAMP: str(timestamp_ms), GANTRY_NONCE: f"{n:032x}"}


def refusal(
    cache: ReplayCache, ext: dict[str, str], settings: ReplayProtection = SETTINGS, required: bool = False
) -> str:
    with pytest.raises(AclRefused) as caught:
        cache.check(ext, access_key="ak-1234", settings=settings, required=required)
    assert caught.value.code == ResponseCode.NO_PERMISSION
    return caught.value.remark


def accept(
    cache: ReplayCache, ext: dict[str, str], settings: ReplayProtection = SETTINGS, required: bool = False
) -> None:
    cache.check(ext, access_key="ak-1234", settings=settings, required=required)


def test_a_nonce_passes_once_within_the_window():
    clock = ManualClock()
    cache = ReplayCache(clock)
    accept(cache, fields(clock.now_ms(), 1))
    assert refusal(cache, fields(clock.now_ms(), 1)) == "replayed request: nonce already seen (accessKey ak-1234)"
    clock.advance(119)
    assert "nonce already seen" in refusal(cache, fields(clock.now_ms() - 119_000, 1))
    accept(cache, fields(clock.now_ms(), 2))


@pytest.mark.parametrize("offset_s", [-121, 121, -3600, 86_400])
def test_a_timestamp_outside_the_window_is_refused(offset_s):
    clock = ManualClock()
    cache = ReplayCache(clock)
    remark = refusal(cache, fields(clock.now_ms() + offset_s * 1000, 1))
    assert "outside the ±120 s window" in remark and f"({clock.now_ms()})" in remark
    assert len(cache) == 0


def test_the_edges_of_the_window_pass_and_the_window_is_a_setting():
    clock = ManualClock()
    cache = ReplayCache(clock)
    clock.advance(1)  # past the start floor
    accept(cache, fields(clock.now_ms() + 120_000, 1))
    accept(cache, fields(clock.now_ms() - 999, 2))
    narrow = ReplayProtection(window_s=5)
    assert "outside the ±5 s window" in refusal(cache, fields(clock.now_ms() + 5_001, 3), narrow)


def test_after_the_window_a_replay_is_refused_as_stale_and_its_nonce_is_forgotten():
    clock = ManualClock()
    cache = ReplayCache(clock)
    signed = clock.now_ms()
    accept(cache, fields(signed, 1))
    clock.advance(121)
    assert "outside the ±120 s window" in refusal(cache, fields(signed, 1))
    accept(cache, fields(clock.now_ms(), 2))
    assert len(cache) == 1 and cache.floor == signed


@pytest.mark.parametrize(
    "ext, message",
    [
        ({GANTRY_TIMESTAMP: "1700000000000"}, "carries GantryTimestamp without GantryNonce"),
        ({GANTRY_NONCE: "0" * 32}, "carries GantryNonce without GantryTimestamp"),
        ({GANTRY_TIMESTAMP: "-1", GANTRY_NONCE: "0" * 32}, "GantryTimestamp must be milliseconds"),
        ({GANTRY_TIMESTAMP: "1.7e12", GANTRY_NONCE: "0" * 32}, "GantryTimestamp must be milliseconds"),
        ({GANTRY_TIMESTAMP: "1700000000000", GANTRY_NONCE: "0" * 31}, "GantryNonce must be 32 lowercase hex digits"),
        ({GANTRY_TIMESTAMP: "1700000000000", GANTRY_NONCE: "A" * 32}, "GantryNonce must be 32 lowercase hex digits"),
        ({GANTRY_TIMESTAMP: "1700000000000", GANTRY_NONCE: "0" * 64}, "GantryNonce must be 32 lowercase hex digits"),
    ],
)
def test_half_a_pair_or_a_malformed_field_is_refused(ext, message):
    assert message in refusal(ReplayCache(ManualClock()), ext)


def test_neither_field_passes_unless_replay_protection_is_required():
    cache = ReplayCache(ManualClock())
    accept(cache, {"topic": "T"})
    assert "accessKey ak-1234 requires replay protection" in refusal(cache, {"topic": "T"}, required=True)


def test_a_request_signed_before_the_server_started_is_refused():
    clock = ManualClock()
    cache = ReplayCache(clock)
    remark = refusal(cache, fields(clock.now_ms() - 5_000, 1))
    assert "is not after" in remark and "sign the request again" in remark
    accept(cache, fields(clock.now_ms(), 2))


def test_a_full_cache_evicts_its_oldest_and_raises_the_floor_so_evicted_nonces_stay_refused():
    clock = ManualClock()
    cache = ReplayCache(clock)
    settings = ReplayProtection(nonce_cache_max=1_000)
    start = clock.now_ms()
    for n in range(1_000):  # one per ms, all within the window
        accept(cache, fields(start + n, n), settings)
    assert len(cache) == 1_000
    accept(cache, fields(start + 1_000, 1_000), settings)  # the oldest (start + 0) goes, the floor rises to it
    assert len(cache) == 1_000 and cache.floor == start
    assert "is not after" in refusal(cache, fields(start, 0), settings)  # the evicted one: still refused
    assert "nonce already seen" in refusal(cache, fields(start + 1, 1), settings)
    remark = refusal(cache, fields(start + 1, 5_000), settings)  # new, but older than all a full cache holds
    assert "the replay cache is full (1000 nonces)" in remark
    accept(cache, fields(start + 2_000, 5_001), settings)  # fresh requests keep passing


def test_a_smaller_cap_after_a_reload_evicts_down_and_a_longer_window_reopens_nothing():
    clock = ManualClock()
    cache = ReplayCache(clock)
    start = clock.now_ms()
    for n in range(1_500):
        accept(cache, fields(start + n, n))
    accept(cache, fields(start + 1_500, 1_500), ReplayProtection(nonce_cache_max=1_000))
    assert len(cache) == 1_000 and cache.floor == start + 500
    for n in (0, 499, 500):
        assert "is not after" in refusal(cache, fields(start + n, n), ReplayProtection(window_s=3600))


def test_the_validator_checks_the_fields_after_the_signature_and_requires_them_per_account():
    clock = ManualClock()
    validator = AclValidator(parse_plain_acl_text(ACL), clock=clock)
    clock.advance(1)

    def send(
        account: tuple[str, str], *, replay_protection: bool = True, signer_clock: ManualClock = clock
    ) -> RemotingCommand:
        request = RemotingCommand.request(
            C.SEND_MESSAGE_V2, {"a": "producers", "b": "orders", "c": "TBW102", "d": "4"}, b"x"
        )
        return AclClientHook(*account, replay_protection=replay_protection, clock=signer_clock).sign_request(request)

    def refused(request: RemotingCommand) -> str:
        with pytest.raises(AclRefused) as caught:
            validator.validate(request, PEER)
        return caught.value.remark

    captured = send(("admin-key", "admin-secret"))
    validator.validate(captured, PEER)
    assert refused(captured) == "replayed request: nonce already seen (accessKey admin-key)"
    forged = send(("admin-key", "wrong-secret"))
    assert refused(forged) == "signature mismatch for accessKey admin-key"
    assert len(validator.replays) == 1  # a request whose signature fails never reaches the cache
    validator.validate(send(("admin-key", "admin-secret"), replay_protection=False), PEER)  # a 4.x client
    validator.validate(send(("admin-key", "admin-secret"), replay_protection=False), PEER)
    assert "requires replay protection" in refused(send(("strict-key", "strict-secret"), replay_protection=False))
    validator.validate(send(("strict-key", "strict-secret")), PEER)
    behind = ManualClock(clock.now_ms() - 600_000)
    assert "outside the ±120 s window" in refused(send(("strict-key", "strict-secret"), signer_clock=behind))


def test_a_file_may_require_replay_protection_of_every_account():
    clock = ManualClock()
    config = parse_plain_acl_text(ACL + "gantryReplayProtection:\n  required: true\n")
    validator = AclValidator(config, clock=clock)
    clock.advance(1)
    apache_style = AclClientHook("admin-key", "admin-secret", replay_protection=False).sign_request(
        RemotingCommand.request(C.GET_BROKER_CLUSTER_INFO)
    )
    with pytest.raises(AclRefused, match="accessKey admin-key requires replay protection"):
        validator.validate(apache_style, PEER)
    validator.validate(
        AclClientHook("admin-key", "admin-secret", clock=clock).sign_request(
            RemotingCommand.request(C.GET_BROKER_CLUSTER_INFO)
        ),
        PEER,
    )
