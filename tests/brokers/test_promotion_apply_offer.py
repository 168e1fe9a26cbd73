"""A promotion dry run that predicts a refusal offers no Apply button (it would only be refused), and says why;
one that predicts success offers it."""

from __future__ import annotations

import pytest

from brokers.models import PromotionJob

pytestmark = pytest.mark.django_db

PLAN = {
    "brokerName": "broker-a",
    "brokerId": 1,
    "fromRole": "SLAVE",
    "toRole": "SYNC_MASTER",
    "dryRun": True,
    "promoted": False,
    "epoch": 3,
    "newEpoch": 4,
    "maxPhyOffset": 100,
    "knownMasterMaxOffset": 200,
    "ackedOffset": 200,
    "missingAckedBytes": 100,
    "missingBytes": 100,
    "masterReachable": True,
    "wouldLose": "100 acknowledged bytes",
}


def _planned(refused: str) -> PromotionJob:
    return PromotionJob.objects.create(
        requested_by="ops",
        broker_name="broker-a",
        broker_id=1,
        candidate_addr="127.0.0.1:10915",
        scope_key="dry:broker-a",
        dry_run=True,
        status=PromotionJob.PLANNED,
        reason=f"a real promotion would be refused: {refused}" if refused else "",
        plan={**PLAN, "refused": refused},
    )


def test_a_dry_run_predicting_refusal_offers_no_apply_and_says_why(as_role) -> None:
    admin = as_role("admin")
    refused = _planned("the candidate lacks 100 acknowledged bytes; use force to accept losing them")
    page = admin.get(f"/promotion-jobs/{refused.pk}/").content.decode()
    assert 'data-testid="promote-apply-button"' not in page
    assert 'data-testid="promote-apply-withheld"' in page and "lacks 100 acknowledged bytes" in page
    fine = _planned("")
    assert 'data-testid="promote-apply-button"' in admin.get(f"/promotion-jobs/{fine.pk}/").content.decode()
