"""``/metrics`` for the engine's processes: Prometheus text format through prometheus-client.

Only imported when a process is started with ``--metrics-port`` (so the engine itself needs
prometheus-client only then). See docs/metrics.md.
"""
