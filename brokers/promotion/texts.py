"""The promotion job's sentences (progress, reason, plan, the candidate's refusal) in the reader's language:
the patterns of what brokers/promotion/runner.py, jobs.py and the candidate (brokers/engine/broker/promotion_plan.py,
processors/promote.py) write, for :class:`console.sentences.Sentences`."""

from __future__ import annotations

from django.utils.translation import gettext_noop as N_

from console.sentences import Sentences

_NAME = r"[^\s()]+"
_NUM = r"[\d,]+"
_CANDIDATE = rf"(?P<broker_name>{_NAME}) id (?P<broker_id>\d+) \((?P<addr>{_NAME})\)"
_SUMMARY_END = (
    rf" from (?P<from_role>\S+) to (?P<to_role>\S+), group epoch (?P<epoch>-?\d+) → (?P<new_epoch>-?\d+); "
    rf"it holds the commit log up to (?P<max_offset>{_NUM}) \(master's last known end (?P<master_end>{_NUM}), "
    rf"acknowledged up to (?P<acked>{_NUM})\)"
)

PROMOTION_SENTENCES = Sentences(
    (
        (
            rf"asking {_CANDIDATE} what a promotion would do",
            N_("asking %(broker_name)s id %(broker_id)s (%(addr)s) what a promotion would do"),
        ),
        (
            rf"asking {_CANDIDATE} to promote itself",
            N_("asking %(broker_name)s id %(broker_id)s (%(addr)s) to promote itself"),
        ),
        *(
            (status, status) for status in ("queued", "running", "planned", "promoted", "refused", "failed")
        ),  # msgids: console.tracked_jobs
        ("refused by the candidate: nothing changed", N_("refused by the candidate: nothing changed")),
        (
            rf"promoted; waiting for the name servers to route (?P<broker_name>{_NAME})'s master to (?P<addr>{_NAME})",
            N_("promoted; waiting for the name servers to route %(broker_name)s's master to %(addr)s"),
        ),
        (
            rf"the name servers did not route (?P<broker_name>{_NAME})'s master \(brokerId 0\) to (?P<addr>{_NAME}) within (?P<seconds>\d+) s "
            r"\(they route it to (?P<seen>.+)\); clients follow once they do",
            N_(
                "the name servers did not route %(broker_name)s's master (brokerId 0) to %(addr)s within %(seconds)s s "
                "(they route it to %(seen)s); clients follow once they do"
            ),
        ),
        (
            rf"found (?P<addr>{_NAME}) already (?P<role>\S+) when the job was delivered again",
            N_("found %(addr)s already %(role)s when the job was delivered again"),
        ),
        (
            r"a real promotion would be refused: (?P<s_refused>.+)",
            N_("a real promotion would be refused: %(s_refused)s"),
        ),
        ("the candidate answered without promoting itself", N_("the candidate answered without promoting itself")),
        (
            rf"the master of (?P<broker_name>{_NAME}) \((?P<addr>[^()]+)\) is alive; stop it first or pass force",
            N_("the master of %(broker_name)s (%(addr)s) is alive; stop it first or pass force"),
        ),
        (
            rf"promotion of (?P<broker_name>{_NAME}) id (?P<broker_id>\d+) refused: it lacks (?P<missing>{_NUM}) acknowledged bytes "
            r"\(commit-log offsets (?P<start>\d+)\.\.(?P<end>\d+)\) of its SYNC_MASTER group; pass force to promote anyway",
            N_(
                "promotion of %(broker_name)s id %(broker_id)s refused: it lacks %(missing)s acknowledged bytes (commit-log offsets "
                "%(start)s..%(end)s) of its SYNC_MASTER group; pass force to promote anyway"
            ),
        ),
        (
            rf"promotion of (?P<broker_name>{_NAME}) id (?P<broker_id>\d+) refused: it lacks (?P<missing>{_NUM}) bytes "
            r"\(commit-log offsets (?P<start>\d+)\.\.(?P<end>\d+)\) its (?P<role>.+?) master had, some of them acknowledged to producers; "
            "pass force to promote anyway",
            N_(
                "promotion of %(broker_name)s id %(broker_id)s refused: it lacks %(missing)s bytes (commit-log offsets %(start)s..%(end)s) "
                "its %(role)s master had, some of them acknowledged to producers; pass force to promote anyway"
            ),
        ),
        (
            rf"(?P<missing>{_NUM}) bytes the master held \(commit-log offsets (?P<start>\d+)\.\.(?P<end>\d+)\), "
            rf"(?P<acked>{_NUM}) of them acknowledged by the group's slaves",
            N_(
                "%(missing)s bytes the master held (commit-log offsets %(start)s..%(end)s), %(acked)s of them acknowledged by the group's slaves"
            ),
        ),
        (
            "nothing the master held, as far as this slave knows",
            N_("nothing the master held, as far as this slave knows"),
        ),
        (
            rf"would promote {_CANDIDATE}{_SUMMARY_END}",
            N_(
                "would promote %(broker_name)s id %(broker_id)s (%(addr)s) from %(from_role)s to %(to_role)s, group epoch %(epoch)s → "
                "%(new_epoch)s; it holds the commit log up to %(max_offset)s (master's last known end %(master_end)s, acknowledged up to %(acked)s)"
            ),
        ),
        (
            rf"promoted {_CANDIDATE}{_SUMMARY_END}",
            N_(
                "promoted %(broker_name)s id %(broker_id)s (%(addr)s) from %(from_role)s to %(to_role)s, group epoch %(epoch)s → "
                "%(new_epoch)s; it holds the commit log up to %(max_offset)s (master's last known end %(master_end)s, acknowledged up to %(acked)s)"
            ),
        ),
        (
            rf"did not promote {_CANDIDATE}{_SUMMARY_END}",
            N_(
                "did not promote %(broker_name)s id %(broker_id)s (%(addr)s) from %(from_role)s to %(to_role)s, group epoch %(epoch)s → "
                "%(new_epoch)s; it holds the commit log up to %(max_offset)s (master's last known end %(master_end)s, acknowledged up to %(acked)s)"
            ),
        ),
        (
            rf"(?P<name>{_NAME}) id (?P<broker_id>\d+) is not a slave \(role (?P<role>\S+)\); only a slave can be promoted",
            N_("%(name)s id %(broker_id)s is not a slave (role %(role)s); only a slave can be promoted"),
        ),
        (
            rf"job (?P<id>\d+) was already (?P<s_status>\S+) for (?P<broker_name>{_NAME}): no new job",
            N_("job %(id)s was already %(s_status)s for %(broker_name)s: no new job"),
        ),
        (
            r"worker lost: no heartbeat since (?P<when>[0-9: -]+) UTC \(the worker was killed or lost its connection\); "
            rf"the candidate may have promoted itself: look at (?P<broker_name>{_NAME})'s page before trying again",
            N_(
                "worker lost: no heartbeat since %(when)s UTC (the worker was killed or lost its connection); "
                "the candidate may have promoted itself: look at %(broker_name)s's page before trying again"
            ),
        ),
        (
            r"worker lost: no heartbeat(?P<since>.*?) \(the worker was killed or lost its connection\); "
            rf"the candidate may have promoted itself: look at (?P<broker_name>{_NAME})'s page before trying again",
            N_(
                "worker lost: no heartbeat%(since)s (the worker was killed or lost its connection); "
                "the candidate may have promoted itself: look at %(broker_name)s's page before trying again"
            ),
        ),
        (
            r"no worker took the job within (?P<seconds>\d+) s \(is a Celery worker running\?\)",
            N_("no worker took the job within %(seconds)s s (is a Celery worker running?)"),
        ),
    )
)
