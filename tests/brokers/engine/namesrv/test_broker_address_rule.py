"""BrokerAddressRule: a registration's brokerAddr must be on the connecting peer's host.

Remote peers are documentation addresses (RFC 5737 / 3849), never held by this machine; the
name-server tests over real sockets (test_hijack.py) cover loopback peers end to end.
"""

from __future__ import annotations

import pytest

from brokers.engine.namesrv.broker_address_rule import (
    BrokerAddressError,
    BrokerAddressRule,
    parse_host_alias,
    split_addr,
)


def test_a_remote_peer_registers_its_own_host_only():
    rule = BrokerAddressRule()
    assert rule.refusal("198.51.100.7:10911", "198.51.100.7:40001") is None  # the port may differ
    refused = rule.refusal("198.51.100.8:10911", "198.51.100.7:40001")
    assert refused is not None and "198.51.100.8:10911" in refused and "198.51.100.7:40001" in refused
    assert rule.refusal("127.0.0.1:10911", "198.51.100.7:40001") is not None  # not this machine's loopback either
    assert rule.refusal("broker.example.com:10911", "198.51.100.7:40001") is not None  # names are not resolved


def test_ipv6_and_mapped_addresses_compare_as_addresses():
    rule = BrokerAddressRule()
    assert rule.refusal("[2001:db8::1]:10911", "2001:db8:0:0::1:40001") is None
    assert rule.refusal("2001:db8::1:10911", "2001:db8::1:40001") is None  # RocketMQ's v6:port spelling
    assert rule.refusal("198.51.100.7:10911", "::ffff:198.51.100.7:40001") is None
    assert rule.refusal("[2001:db8::2]:10911", "2001:db8::1:40001") is not None


def test_peers_on_this_machine_register_addresses_of_this_machine():
    rule = BrokerAddressRule()
    assert rule.refusal("127.0.0.1:10911", "127.0.0.1:40001") is None
    assert rule.refusal("localhost:10911", "127.0.0.1:40001") is None
    assert rule.refusal("127.0.0.2:10911", "127.0.0.1:40001") is None
    assert rule.refusal("203.0.113.9:10911", "127.0.0.1:40001") is not None  # not an address of this machine


def test_host_aliases_let_a_natted_broker_register_its_public_address():
    rule = BrokerAddressRule(["10.0.0.5=203.0.113.50", "198.51.100.7=broker-a.example.com"])
    assert rule.refusal("203.0.113.50:10911", "10.0.0.5:40001") is None
    assert rule.refusal("broker-a.example.com:10911", "198.51.100.7:40001") is None
    assert rule.refusal("203.0.113.50:10911", "10.0.0.6:40001") is not None  # only from the aliased peer
    assert rule.refusal("203.0.113.51:10911", "10.0.0.5:40001") is not None


@pytest.mark.parametrize("text", ["10.0.0.5", "=1.2.3.4", "10.0.0.5=", "host=1.2.3.4"])
def test_malformed_aliases_are_refused(text):
    with pytest.raises(BrokerAddressError):
        parse_host_alias(text)


@pytest.mark.parametrize("addr", ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", ":10911", "a b:1", "x/y:1", "h:port"])
def test_split_addr_refuses_what_is_not_host_port(addr):
    with pytest.raises(BrokerAddressError):
        split_addr(addr)
