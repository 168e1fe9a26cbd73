"""White-address patterns: RocketMQ's forms, IPv4 and IPv6, and the malformed ones refused."""

from __future__ import annotations

import pytest

from brokers.engine.acl.remote_address import AddressPatternError, RemoteAddressPattern, split_host

MATCHES = [
    # pattern, peer, matches?
    ("", "127.0.0.1", False),
    ("*", "10.1.2.3", True),
    ("*.*.*.*", "::1", True),
    ("*:*:*:*:*:*:*:*", "10.1.2.3", True),
    ("127.0.0.1", "127.0.0.1", True),
    ("127.0.0.1", "127.0.0.2", False),
    ("127.0.0.1,127.0.0.2,127.0.0.3", "127.0.0.2", True),
    ("127.0.0.1,127.0.0.2,127.0.0.3", "127.0.0.4", False),
    ("127.0.0.{1,2,3}", "127.0.0.3", True),
    ("10.0.0.1, 10.0.0.2", "10.0.0.2", True),  # spaces after commas are allowed
    ("127.0.0.{1,2,3}", "127.0.0.0", False),
    ("192.168.1.{1}", "192.168.1.1", True),
    ("127.0.0.1-200", "127.0.0.1", True),
    ("127.0.0.1-200", "127.0.0.200", True),
    ("127.0.0.1-200", "127.0.0.0", False),
    ("127.0.0.1-200", "127.0.0.201", False),
    ("127.0.0.*", "127.0.0.255", True),
    ("127.0.0.*", "127.0.1.1", False),
    ("127.0.1-20.*", "127.0.20.9", True),
    ("127.0.1-20.*", "127.0.21.9", False),
    ("192.100-150.*.*", "192.130.0.2", True),
    ("192.100-150.*.*", "192.151.0.2", False),
    ("10.10.103.*", "::ffff:10.10.103.7", True),  # an IPv4-mapped peer is its IPv4 address
    ("10.10.103.*", "::1", False),
    ("::1", "0000:0000:0000:0000:0000:0000:0000:0001", True),
    ("::1", "::2", False),
    ("0000:0000:0000:0000:0000:0000:0000:0001", "::1", True),
    ("1050:0000:0000:0000:0005:0600:300c:326b", "1050::5:600:300c:326b", True),
    ("1050::0005:0600:300c:3261,1050::0005:0600:300c:3262", "1050::5:600:300c:3262", True),
    ("1050::0005:0600:300c:{1,2,3}", "1050::5:600:300c:2", True),
    ("1050::0005:0600:300c:{1,2,3}", "1050::5:600:300c:4", False),
    ("1050::0005:0600:300c:1-200", "1050::5:600:300c:200", True),
    ("1050::0005:0600:300c:1-200", "1050::5:600:300c:201", False),
    ("1050::0005:0600:300c:*", "1050::5:600:300c:ffff", True),
    ("1050::0005:0600:3001:*", "1050::5:600:300c:1", False),
    ("1050::0005:0600:300c:1-200:*", "1050::5:600:300c:1:abcd", True),
    ("1050::0005:0600:300c:1-200:*", "1050::5:600:300c:201:0", False),
    ("1050:0005:0600:300c:3261:*", "1050:5:600:300c:3261:1:2:3", True),  # fewer than 8 groups ending in *
    ("1050:0005:0600:300c:3261:*", "1050:5:600:300c:3262:1:2:3", False),
    ("fe80::*", "fe80::1%eth0", True),  # a zone id is dropped
    ("127.0.0.*", "10.0.0.1", False),
    ("127.0.0.*", "not-an-ip", False),
    ("127.0.0.*", None, False),
    ("1050::*", "127.0.0.1", False),
]


@pytest.mark.parametrize("pattern, peer, expected", MATCHES)
def test_matches(pattern: str, peer: str | None, expected: bool) -> None:
    assert RemoteAddressPattern.parse(pattern).matches(peer) is expected


@pytest.mark.parametrize(
    "pattern",
    [
        "256.0.0.1",
        "::1ggg",
        "127.0.0.2-1",  # start after end
        "127.0.0.-1-200",
        "127.0.0.0-256",
        "127.0.0.1,2,3}",
        "::1,2,3}",
        "192.168.{1}",
        "{192.168.1}",
        "{192.168.1.1}",
        "192.168.1.{}",
        "192.168.1.{1,300}",
        "10.10.*",
        "10.*.*.*.*",
        "10.1.a.*",
        "1050::1::*",
        "1:2:3:4:5:6:7:8:*",
        "1050:5:*:1",
        "localhost",
    ],
)
def test_malformed_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(AddressPatternError, match="malformed address pattern"):
        RemoteAddressPattern.parse(pattern)


@pytest.mark.parametrize(
    "remote_addr, host",
    [
        (("10.0.0.1", 51000), "10.0.0.1"),
        (("::1", 51000, 0, 0), "::1"),
        ("10.0.0.1:51000", "10.0.0.1"),
        ("/10.0.0.1:51000", "10.0.0.1"),
        ("[::1]:51000", "::1"),
        ("::1", "::1"),
        ("0:0:0:0:0:0:0:1:51000", "0:0:0:0:0:0:0:1"),  # RocketMQ's unbracketed v6:port
        ("10.0.0.1", "10.0.0.1"),
        (None, None),
    ],
)
def test_split_host(remote_addr: object, host: str | None) -> None:
    assert split_host(remote_addr) == host
