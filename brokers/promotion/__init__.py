"""Promotion jobs: make a slave its group's master, online, as a tracked Celery job with a dry run first.

- :mod:`.jobs` — trigger (both front doors and the checks of the request), fail, sweep jobs whose worker is gone;
- :mod:`.runner` — the Celery task's body: read the group, ask the candidate, follow the route, record;
- :mod:`.selectors` — one job, the history;
- :mod:`.snapshots` — the group as JSON (a job's before and after), rows to frozen dataclasses;
- :mod:`.types` — the frozen dataclasses the pages and the API render.

Job states, the checks and the settings: docs/promotion-jobs.md.
"""
