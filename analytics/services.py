"""Analytics writes: asking for a dashboard refresh.

Not audited: a refresh recomputes the console's own dashboards and changes nothing in the
cluster (the run itself records who asked, and when).
"""

from __future__ import annotations

from dataclasses import replace

from analytics.models import RefreshRun
from analytics.runs import RefreshRunInfo, run_fail, run_info, run_open
from console import namesrv_scope
from console.actor import Actor
from console.errors import InvalidInput, QueueUnavailable
from console.queueing import submit
from console.roles import Role


def dashboard_refresh_request(*, actor: Actor, trigger: str = RefreshRun.Trigger.MANUAL) -> RefreshRunInfo:
    """Queue a refresh of the current name-server set's dashboards on the ``analytics`` queue, or
    return that set's run already queued or running.

    ``is_new`` on the answer says which. When Redis does not answer, the new run is recorded
    failed with the reason and QueueUnavailable (503) is raised; the dashboards are not marked
    stale by a run that never started.
    """
    actor.require(Role.OPERATOR)
    if trigger not in RefreshRun.Trigger.values:
        raise InvalidInput("trigger", f"must be one of {', '.join(RefreshRun.Trigger.values)}.")
    run, opened = run_open(trigger=trigger, requested_by=actor.username, namesrv_set=namesrv_scope.current_name())
    if not opened:
        return run_info(run)
    from analytics.tasks import dashboard_refresh_task

    try:
        task_id = submit(dashboard_refresh_task, kwargs={"run_id": run.pk, "trigger": trigger}, queue="analytics")
    except QueueUnavailable as exc:
        run_fail(run.pk, exc.message, stale=False)
        raise
    RefreshRun.objects.filter(pk=run.pk).update(task_id=task_id)
    run.refresh_from_db()
    return replace(run_info(run), is_new=True)
