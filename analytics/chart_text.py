"""The text static/js/dashboards.js writes on the page (control labels, legends, units, the panels' state
line), translated on the server and handed to the script as JSON (``{% chart_text %}`` in
templates/analytics/_assets.html writes ``<div id="chart-text" data-json="...">``).

Keys are the script's; each English text is the script's own fallback too, so a page without the JSON
still reads in English. Sentences carry named placeholders (``%(time)s``) that the script fills.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

CHART_TEXT = {
    "by": pgettext_lazy("chart grouping", "By"),
    "show": _("Show"),
    "by.topic": _("topic"),
    "by.broker": "Broker",
    "title.msgs_per_s": _("Messages per second"),
    "title.bytes_per_s": _("Bytes per second"),
    "title.backlog": _("Backlog (messages)"),
    "title.consume_rate": _("Consume rate"),
    "title.produce_rate": _("Produce rate"),
    "label.msgs_per_s": _("msgs/s"),
    "label.bytes_per_s": _("bytes/s"),
    "label.backlog": _("messages"),
    "label.consume_rate": _("msgs/s consumed"),
    "label.produce_rate": _("msgs/s produced"),
    "unit.msgs_per_s": _("msgs/s"),
    "unit.backlog": _("msgs"),
    "latest": _("latest"),
    "empty": _("No samples yet — the sampler writes every 10 s and the dashboards refresh every minute."),
    "none": _("No %(what)s in the last %(range)s (the brokers of these queues do not report it)."),
    "range.hour": _("hour"),
    "range.day": _("day"),
    "range.week": _("week"),
    "largest": _("Showing the %(shown)s largest of %(total)s (by peak); the table has them all."),
    "load_failed": _("Could not load the chart data: %(error)s"),
    "per.1m": _("per minute"),
    "per.1h": _("per hour"),
    "data_until": _("data until %(time)s UTC"),
    "refreshed": _("refreshed %(time)s UTC"),
    "never_refreshed": _("never refreshed"),
    "stale_since": _("stale since %(time)s UTC"),
    "stale_title": _("The last refresh failed: this is the last good result."),
}
