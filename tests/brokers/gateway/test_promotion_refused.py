"""The gateway's promotion: a candidate's SYSTEM_ERROR refusal is PromotionRefused (a BrokerSystemError), the
class the promotion runner catches to record a refused job; asked of a real master as if it were a slave."""

from __future__ import annotations

import pytest

from brokers.gateway.errors import BrokerSystemError, MQBrokerError
from brokers.gateway.promotion import PromotionRefused, slave_promote
from brokers.engine.remoting.codes import ResponseCode

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_master_asked_as_a_slave_refuses_with_promotion_refused(console_cluster, dry_run) -> None:
    addr = console_cluster.broker_addr("broker-b")
    with pytest.raises(PromotionRefused) as err:
        slave_promote(addr=addr, broker_name="broker-b", broker_id=1, force=False, dry_run=dry_run)
    exc = err.value
    assert isinstance(exc, BrokerSystemError) and isinstance(exc, MQBrokerError)
    assert (exc.code, exc.addr) == (ResponseCode.SYSTEM_ERROR, addr)
    assert "not id 1" in (exc.remark or "") and exc.promotion is None
