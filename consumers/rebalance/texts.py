"""The rebalance job's sentences (progress, reasons, each group's reason) in the reader's language: the patterns
of what consumers/rebalance/runner.py, convergence.py and jobs.py write, for :class:`console.sentences.Sentences`."""

from __future__ import annotations

from django.utils.translation import gettext_noop as N_

from console.sentences import Sentences

_NAME = r"[^\s():;,]+"
_STATUSES = (
    "queued",
    "running",
    "pending",
    "planned",
    "converged",
    "not converged",
    "failed",
    "skipped",
    N_("notified"),
)

REBALANCE_SENTENCES = Sentences(
    (
        ("reading the group", N_("reading the group")),
        (
            r"delivered again \(attempt (?P<attempt>\d+)\): taking over",
            N_("delivered again (attempt %(attempt)s): taking over"),
        ),
        (rf"no member of (?P<group>{_NAME}) is online", N_("no member of %(group)s is online")),
        (r"(?P<model>[A-Z]+): every member consumes every queue", N_("%(model)s: every member consumes every queue")),
        (
            r"strategy (?P<strategy>\S+) cannot be recomputed here \(it needs the members' configuration, or members disagree\): "
            "the movement cannot be predicted; an apply waits for every queue held exactly once",
            N_(
                "strategy %(strategy)s cannot be recomputed here (it needs the members' configuration, or members disagree): "
                "the movement cannot be predicted; an apply waits for every queue held exactly once"
            ),
        ),
        (
            r"no running info from (?P<clients>.+): the movement is incomplete",
            N_("no running info from %(clients)s: the movement is incomplete"),
        ),
        (r"no running info from (?P<clients>[^:;]+)", N_("no running info from %(clients)s")),
        (
            rf"another job \((?P<holder>[^()]*)\) is rebalancing (?P<group>{_NAME}) now",
            N_("another job (%(holder)s) is rebalancing %(group)s now"),
        ),
        (
            r"broker (?P<addr>\S+) does not support GANTRY_NOTIFY_CONSUMER_IDS_CHANGED \(an Apache RocketMQ broker\?\): "
            r"members rebalance on their own every 20 s \(rocketmq\.client\.rebalance\.waitInterval\)",
            N_(
                "broker %(addr)s does not support GANTRY_NOTIFY_CONSUMER_IDS_CHANGED (an Apache RocketMQ broker?): "
                "members rebalance on their own every 20 s (rocketmq.client.rebalance.waitInterval)"
            ),
        ),
        (r"(?P<done>\d+)/(?P<total>\d+) groups done", N_("%(done)s/%(total)s groups done")),
        (r"look (?P<polls>\d+): (?P<s_state>.+)", N_("look %(polls)s: %(s_state)s")),
        (r"(?P<settled>\d+)/(?P<total>\d+) queues settled", N_("%(settled)s/%(total)s queues settled")),
        (r"not converged within the timeout: (?P<s_detail>.+)", N_("not converged within the timeout: %(s_detail)s")),
        (
            r"(?P<count>\d+) queue\(s\) not yet held as (?P<strategy>\S+) expects \((?P<queues>[^()]*)\)",
            N_("%(count)s queue(s) not yet held as %(strategy)s expects (%(queues)s)"),
        ),
        (r"(?P<count>\d+) held by nobody \((?P<queues>[^()]*)\)", N_("%(count)s held by nobody (%(queues)s)")),
        (r"(?P<count>\d+) held twice \((?P<queues>[^()]*)\)", N_("%(count)s held twice (%(queues)s)")),
        (
            "every queue held once; waiting one more look to see it stable",
            N_("every queue held once; waiting one more look to see it stable"),
        ),
        (r"no online clustering group consumes (?P<topic>\S+)", N_("no online clustering group consumes %(topic)s")),
        ("no online clustering group", N_("no online clustering group")),
        (
            r"(?P<converged>\d+)/(?P<total>\d+) group\(s\) converged, (?P<moved>\d+) queue\(s\) moved",
            N_("%(converged)s/%(total)s group(s) converged, %(moved)s queue(s) moved"),
        ),
        (
            r"(?P<moved>\d+) queue\(s\) would move in (?P<total>\d+) group\(s\)",
            N_("%(moved)s queue(s) would move in %(total)s group(s)"),
        ),
        (r"(?P<count>\d+) group\(s\) read", N_("%(count)s group(s) read")),
        ("notifying the members", N_("notifying the members")),
        (
            r"job (?P<id>\d+) was already (?P<s_status>\S+) for this scope: no new job",
            N_("job %(id)s was already %(s_status)s for this scope: no new job"),
        ),
        (
            r"worker lost: no heartbeat since (?P<when>[0-9: -]+) UTC \(the worker was killed or lost its connection\); "
            "the members may be in the middle of a rebalance: look at the group, then trigger again",
            N_(
                "worker lost: no heartbeat since %(when)s UTC (the worker was killed or lost its connection); "
                "the members may be in the middle of a rebalance: look at the group, then trigger again"
            ),
        ),
        (
            r"worker lost: no heartbeat(?P<since>.*?) \(the worker was killed or lost its connection\); "
            "the members may be in the middle of a rebalance: look at the group, then trigger again",
            N_(
                "worker lost: no heartbeat%(since)s (the worker was killed or lost its connection); "
                "the members may be in the middle of a rebalance: look at the group, then trigger again"
            ),
        ),
        (
            r"no worker took the job within (?P<seconds>\d+) s \(is a Celery worker running\?\)",
            N_("no worker took the job within %(seconds)s s (is a Celery worker running?)"),
        ),
        *(
            (status.replace(" ", "[ _]"), status) for status in _STATUSES
        ),  # msgids marked in console.tracked_jobs (notified: below)
        (rf"(?P<group>{_NAME}): (?P<s_rest>.+)", N_("%(group)s: %(s_rest)s")),
    )
)
