"""The promotion and rebalance jobs' stored English sentences (progress, reasons, the dry run's plan and refusal)
read Chinese on a Chinese page (console/sentences.py with each app's patterns), while the API keeps them English.
The sentences come from real runs: a promotion dry run against the group cluster (its master is alive, so a real
run would be refused) and a rebalance dry run of a topic no group consumes; the rest of the runner's sentences
are checked in the forms the runner writes them."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from brokers.promotion.texts import PROMOTION_SENTENCES
from consumers.rebalance.texts import REBALANCE_SENTENCES

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")


def _chinese(client, url: str) -> str:
    return client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()


def _texts(page: str, testid: str) -> list[str]:
    return [
        re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(rf'data-testid="{testid}"[^>]*>(.*?)</p>', page, re.S)
    ]


def test_a_promotion_dry_run_reads_chinese_on_a_chinese_page(console_group_cluster, as_role) -> None:
    from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: F401  (the cluster's client, as the e2e fill)
    from brokers.models import PromotionJob
    from brokers.promotion.runner import promotion_job_run
    from tests.fixtures.cluster import GroupCluster

    job = PromotionJob.objects.create(
        requested_by="olga",
        broker_name="broker-a",
        broker_id=1,
        dry_run=True,
        candidate_addr=console_group_cluster.broker_addr(GroupCluster.SLAVE_KEY),
        scope_key="dry:broker-a",
    )
    assert promotion_job_run(job_id=job.pk, budget_s=30) == "planned"
    job.refresh_from_db()
    assert job.reason.startswith("a real promotion would be refused: the master of broker-a")
    admin = as_role("admin")
    english = admin.get(f"/promotion-jobs/{job.pk}/").content.decode()
    assert job.reason in english
    page = _chinese(admin, f"/promotion-jobs/{job.pk}/")
    for testid in ("job-reason", "plan-summary", "plan-would-lose", "plan-refused", "promote-apply-withheld"):
        texts = _texts(page, testid)
        assert texts and all(CJK.search(t) for t in texts), (testid, texts)
    assert (
        "真正的提升会被拒绝" in page and "仍然存活" in page and "would promote" not in page and "is alive" not in page
    )
    api = admin.get(f"/api/v1/promotion-jobs/{job.pk}", HTTP_ACCEPT_LANGUAGE="zh-hans")
    if api.status_code == 200:  # the API answers English whatever the language
        assert "a real promotion would be refused" in api.content.decode()


def test_a_rebalance_dry_run_reads_chinese_on_a_chinese_page(console_cluster, celery_redis, topic, as_role) -> None:
    from consumers.models import RebalanceJob
    from consumers.rebalance import runner
    from consumers.rebalance.jobs import scope_key

    job = RebalanceJob.objects.create(
        requested_by="tester",
        scope="topic",
        scope_value=topic,
        scope_key=scope_key("topic", topic, True),
        dry_run=True,
        timeout_s=15,
    )
    runner.rebalance_job_run(job_id=job.pk, budget_s=20)
    job.refresh_from_db()
    assert job.reason or job.progress
    client = as_role("viewer")
    page = _chinese(client, f"/rebalance-jobs/{job.pk}/")
    for testid in ("job-reason", "job-progress"):
        for text in _texts(page, testid):
            assert CJK.search(text), (testid, text)
    listing = _chinese(client, "/rebalance-jobs/")
    assert job.reason not in listing and job.progress not in listing


RUNNER_SENTENCES = [
    "reading the group",
    "delivered again (attempt 2): taking over",
    "no member of G1 is online",
    "BROADCASTING: every member consumes every queue",
    "strategy unknown cannot be recomputed here (it needs the members' configuration, or members disagree): the movement cannot be "
    "predicted; an apply waits for every queue held exactly once",
    "no running info from c1@1, c2@2: the movement is incomplete",
    "another job (rebalance-job-7) is rebalancing G1 now",
    "broker 127.0.0.1:10911 does not support GANTRY_NOTIFY_CONSUMER_IDS_CHANGED (an Apache RocketMQ broker?): members rebalance on "
    "their own every 20 s (rocketmq.client.rebalance.waitInterval)",
    "look 3: 2/4 queues settled; 2 queue(s) not yet held as AVG expects (T/broker-a:0, T/broker-a:1)",
    "look 2: 1/2 groups done; G2: 3/4 queues settled",
    "look 1: notified",
    "G1: converged",
    "G1: not_converged",
    "not converged within the timeout: 1 held by nobody (T/broker-a:3); 2 held twice (T/broker-a:0, T/broker-b:1)",
    "every queue held once; waiting one more look to see it stable",
    "no online clustering group consumes T",
    "no online clustering group",
    "1/2 group(s) converged, 3 queue(s) moved",
    "3 queue(s) would move in 2 group(s)",
    "2 group(s) read; notifying the members",
    "job 4 was already running for this scope: no new job",
    "G1: no member of G1 is online; G2: no running info from c3: the movement is incomplete",
    "worker lost: no heartbeat (the worker was killed or lost its connection); the members may be in the middle of a rebalance: "
    "look at the group, then trigger again",
    "worker lost: no heartbeat since 2026-11-28 14:31:41 UTC (the worker was killed or lost its connection); the members may be "
    "in the middle of a rebalance: look at the group, then trigger again",
    "no worker took the job within 60 s (is a Celery worker running?)",
]
PROMOTION_RUNNER_SENTENCES = [
    "asking broker-a id 1 (127.0.0.1:10915) what a promotion would do",
    "asking broker-a id 1 (127.0.0.1:10915) to promote itself",
    "refused by the candidate: nothing changed",
    "promoted; waiting for the name servers to route broker-a's master to 127.0.0.1:10915",
    "the name servers did not route broker-a's master (brokerId 0) to 127.0.0.1:10915 within 10 s (they route it to nobody); "
    "clients follow once they do",
    "found 127.0.0.1:10915 already SYNC_MASTER when the job was delivered again",
    "the candidate answered without promoting itself",
    "promotion of broker-a id 1 refused: it lacks 1,024 acknowledged bytes (commit-log offsets 10..1034) of its SYNC_MASTER group; "
    "pass force to promote anyway",
    "promotion of broker-a id 1 refused: it lacks 2,048 bytes (commit-log offsets 10..2058) its ASYNC_MASTER (assumed) master had, "
    "some of them acknowledged to producers; pass force to promote anyway",
    "2,048 bytes the master held (commit-log offsets 10..2058), 0 of them acknowledged by the group's slaves",
    "nothing the master held, as far as this slave knows",
    "promoted broker-a id 1 (127.0.0.1:10915) from SLAVE to SYNC_MASTER, group epoch 2 → 3; it holds the commit log up to 1,000 "
    "(master's last known end 1,000, acknowledged up to 1,000)",
    "job 3 was already running for broker-a: no new job",
    "worker lost: no heartbeat since 2026-11-28 14:31:41 UTC (the worker was killed or lost its connection); the candidate may "
    "have promoted itself: look at broker-a's page before trying again",
    "no worker took the job within 60 s (is a Celery worker running?)",
]


@pytest.mark.parametrize(
    ("sentences", "texts"),
    [(REBALANCE_SENTENCES, RUNNER_SENTENCES), (PROMOTION_SENTENCES, PROMOTION_RUNNER_SENTENCES)],
    ids=["rebalance", "promotion"],
)
def test_every_sentence_the_runners_write_has_a_chinese_form(sentences, texts) -> None:
    names = re.compile(
        r"GANTRY_\w+|SYNC_MASTER|ASYNC_MASTER|BROADCASTING|SLAVE|AVG|brokerId|rocketmq\.client\.rebalance\.waitInterval|"
        r"Celery|Worker|Apache|RocketMQ|Broker|Master|Slave|NameServer|CommitLog|broker-[ab]|c\d@\d|G\d|unknown|assumed|"
        r"rebalance-job-\d|nobody|UTC"
    )
    with translation.override("zh-hans"):
        for text in texts:
            chinese = sentences.text(text)
            assert CJK.search(chinese), text
            left = re.findall(r"[A-Za-z]{3,}", names.sub("", chinese))
            assert not left, (text, chinese, left)
    with translation.override("en"):
        assert [sentences.text(t) for t in texts] == [
            t.replace("not_converged", "not converged") for t in texts
        ]  # English stays
