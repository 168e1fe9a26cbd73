"""One rule for NAMESRV_ADDR, used by brokers and clients: ``;``-separated host:port entries."""

from __future__ import annotations

import pytest

from brokers.engine.common.namesrv_addr import InvalidNamesrvAddrError, parse_namesrv_addrs


def test_entries_are_split_on_semicolons_trimmed_and_kept_once() -> None:
    assert parse_namesrv_addrs("127.0.0.1:9876;10.0.0.1:9876") == ("127.0.0.1:9876", "10.0.0.1:9876")
    assert parse_namesrv_addrs(" a:1 ;; b:2;a:1;") == ("a:1", "b:2")
    assert parse_namesrv_addrs(["a:1", "b:2;c:3"]) == ("a:1", "b:2", "c:3")


@pytest.mark.parametrize("bad", ["nohost", "h:0", "h:x", "h:65536", ":1", "a:1,b:2", "a b:1"])
def test_an_entry_that_is_not_host_port_is_refused(bad: str) -> None:
    with pytest.raises(InvalidNamesrvAddrError):
        parse_namesrv_addrs(bad)


@pytest.mark.parametrize("empty", ["", ";", " ; ", [], None])
def test_an_empty_list_is_refused_only_where_one_is_required(empty) -> None:
    with pytest.raises(InvalidNamesrvAddrError):
        parse_namesrv_addrs(empty)
    assert parse_namesrv_addrs(empty, required=False) == ()
