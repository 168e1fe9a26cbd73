"""Rebalance jobs: make a group's members rebalance now and check that they converged.

- :mod:`.jobs` — trigger (both front doors), fail, sweep jobs whose worker is gone;
- :mod:`.runner` — the Celery task's body: look, notify, poll until converged or timeout;
- :mod:`.convergence` — who holds what, what they should hold, and whether they got there;
- :mod:`.selectors` — one job, the filtered history, a group's queue moves (flapping);
- :mod:`.records`, :mod:`.types` — rows to frozen dataclasses.

Job states, fault behaviour and settings: docs/rebalance.md.
"""
