"""Every console page, in a browser, light and dark, English and 简体中文, 1440 and 1280 px wide: nothing
overflows sideways, body text keeps a WCAG contrast of 4.5:1 (3:1 for large text) against the background
it is drawn on, a Chinese page leaves no English text in its chrome (headings, labels, buttons, table heads,
the menu: a text without Chinese whose words are not names RocketMQ's Chinese tools keep; data is marked
``translate="no"`` or set in ``<code>``), and every time reads HH:MM:SS.

The pages come from the URL resolver (as tests/console/test_access_sweep.py walks it), their parameters
filled from a cluster with data: a broker group with a slave, a topic with a traced message, a consumer
group, dashboard results, a rebalance job, a promotion job's dry run, an alert rule and event. Each page
is loaded once per language; the colour scheme and the width change in place, so one load serves four
variants. Screenshots go to the test's tmp_path.
"""

from __future__ import annotations

import re
import uuid

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.brokers.engine.client._cluster import create_topic
from tests.e2e.conftest import log_in
from tests.fixtures.cluster import GroupCluster
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDTHS = (1440, 1280)
SCHEMES = ("light", "dark")
OUTSIDE_THE_MENU = ("/account/", "/login/")  # the user's own pages and the login page: no menu entry holds them
NOT_PAGES = re.compile(r"^/(api/|logout/|i18n/|metrics|health|healthz|readyz)")  # machine endpoints and actions
# Words a Chinese page keeps (docs/i18n.md): product names, RocketMQ's role names, units and abbreviations.
KEPT_WORDS = {
    "RocketMQ",
    "Gantry",
    "Broker",
    "Master",
    "Slave",
    "NameServer",
    "TPS",
    "API",
    "BID",
    "UTC",
    "JSON",
    "ACL",
    "DLQ",
    "TLS",
    "URL",
    "AccessKey",
    "SecretKey",
    "Webhook",
}
CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_WORD = re.compile(r"[A-Za-z_]{3,}")
TIME_TOKEN = re.compile(r"(?<![\w:.+\-])\d{1,2}:\d{2}(?::\d{2})?(?:[.,][0-9A-Za-z]+)?(?![\w:])")
HH_MM_SS = re.compile(r"\d{2}:\d{2}:\d{2}")

# One pass over the page in its current variant: what overflows, what text lacks contrast, which chrome
# text is English (on a Chinese page), and the visible text (for the times).
INSPECT = r"""(chinese) => {
  const root = document.scrollingElement;
  const out = {overflow: null, contrast: [], english: [], text: document.body.innerText};
  // the menu: its entries (links, and the summary that opens the rest) on one row, no label broken over two lines
  const entries = [...document.querySelectorAll('header nav > ul > li > a, header nav > ul > li > details > summary')].filter(e => e.checkVisibility());
  out.menu = {current: document.querySelectorAll('header nav [aria-current=page]').length,
              rows: new Set(entries.map(e => Math.round(e.getBoundingClientRect().top))).size,
              broken: entries.filter(e => e.getClientRects().length > 1 || e.getBoundingClientRect().height > 1.6 * parseFloat(getComputedStyle(e).lineHeight))
                             .map(e => e.innerText)};
  if (root.scrollWidth > root.clientWidth) {
    const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > root.clientWidth + 1)
      .map(e => e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().replace(/\s+/g, '.') : '')
        + (e.dataset.testid ? '[' + e.dataset.testid + ']' : ''));
    out.overflow = {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, elements: wide.slice(-6)};
  }
  // a table cut off by its scrolling box (the page does not overflow, but columns are out of sight)
  out.clipped = [...document.querySelectorAll('table')].map(t => t.parentElement).filter(box => box.scrollWidth > box.clientWidth + 1
      && ['auto', 'scroll', 'hidden'].includes(getComputedStyle(box).overflowX) && box.checkVisibility())
    .map(box => (box.querySelector('[data-testid]') || box).dataset.testid + ' ' + box.scrollWidth + ' > ' + box.clientWidth);
  const parse = (c) => { const m = c.match(/[\d.]+/g) || [0, 0, 0, 0]; return [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1]; };
  const over = (top, below) => [0, 1, 2].map(i => top[i] * top[3] + below[i] * (1 - top[3])).concat([1]);
  const lum = (c) => { const l = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
                       return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  const canvas = dark ? [18, 18, 18, 1] : [255, 255, 255, 1];
  function background(el) {  // the colour behind el's text: its own and its ancestors' backgrounds, blended down to the first opaque one
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg[3] > 0) { layers.push(bg); if (bg[3] >= 1) break; }
    }
    let colour = canvas;
    for (let i = layers.length - 1; i >= 0; i--) colour = over(layers[i], colour);
    return colour;
  }
  function opacity(el) { let o = 1; for (let e = el; e; e = e.parentElement) o *= +getComputedStyle(e).opacity; return o; }
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || seen.has(el) || el.closest('script, style, template, noscript, select, option, svg, canvas, [hidden]')) continue;
    seen.add(el);
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true}) || el.closest(':disabled')) continue;  // WCAG exempts inactive controls
    const style = getComputedStyle(el);
    const alpha = opacity(el);
    if (alpha === 0) continue;
    const bg = background(el);
    const fg = over([...parse(style.color).slice(0, 3), parse(style.color)[3] * alpha], bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    const size = parseFloat(style.fontSize), bold = +style.fontWeight >= 700;
    const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < needed) out.contrast.push({text: node.textContent.trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100,
      color: style.color, background: 'rgb(' + bg.slice(0, 3).map(Math.round).join(', ') + ')',
      element: el.tagName.toLowerCase() + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().replace(/\s+/g, '.') : '')});
  }
  if (chinese) {
    // chrome, and the jobs' stored sentences (promotion and rebalance: reason, progress, plan), which a page translates
    const chrome = 'h1, h2, h3, h4, label, button, th, nav, legend, summary, dt, caption, .u-legend .u-series:first-child .u-label, '
      + '[data-testid=job-reason], [data-testid=job-progress], [data-testid=plan-summary], [data-testid=plan-would-lose], '
      + '[data-testid=plan-refused], [data-testid=promote-apply-withheld], [data-testid=group-reason], [data-testid=job-note]';
    const data = 'code, kbd, samp, input, textarea, select, [translate=no], [lang]:not([lang^="zh"])';  // data and names: not translated
    const texts = new Map();
    for (const el of document.querySelectorAll(chrome)) {
      const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = w.nextNode(); node; node = w.nextNode()) {
        const parent = node.parentElement;
        if (!node.textContent.trim() || parent.closest(data) || !parent.checkVisibility({visibilityProperty: true})) continue;
        texts.set(node.textContent.trim().replace(/\s+/g, ' '), parent.tagName.toLowerCase() + (parent.dataset.testid ? '[' + parent.dataset.testid + ']' : ''));
      }
    }
    out.english = [...texts.entries()];
  }
  return out;
}"""


def page_urls(fill: dict[str, str]) -> list[str]:
    """Every page the resolver knows (API, probes and actions left out), its parameters filled from ``fill``
    (keyed by the URL's prefix and parameter, e.g. ``topics/name``; a query string from ``query``), plus pages that
    show results for a query (``extra``)."""

    def walk(patterns, prefix=""):
        for p in patterns:
            regex = prefix + p.pattern.regex.pattern.lstrip("^")
            if isinstance(p, URLResolver):
                yield from walk(p.url_patterns, regex)
            elif isinstance(p, URLPattern):
                yield regex.rstrip("$").replace("\\Z", "")

    def concrete(regex: str) -> str:
        def value(match: re.Match) -> str:
            key = regex[: match.start()].replace("\\", "").strip("/").split("/")[0] + "/" + match.group(1)
            return fill.get(key, "x")

        path = re.sub(r"\(\?P<(\w+)>[^)]*\)", value, regex)
        return "/" + path.replace("/?", "").replace("\\", "")

    urls = sorted({concrete(r) for r in walk(get_resolver().url_patterns)})
    return [u + fill["query"].get(u, "") for u in urls if not NOT_PAGES.match(u) and "(" not in u] + fill["extra"]


@pytest.fixture
def console_with_data(console_group_cluster, make_user, live_server):
    """A broker group with a slave, a topic with a traced message, a group, dashboards, jobs, an alert: the URL fill."""
    from brokers.engine.client.admin import BlockingMQAdminClient
    from brokers.models import PromotionJob
    from brokers.promotion.runner import promotion_job_run
    from console.actor import Actor
    from console.roles import Role
    from console.services import api_token_create
    from health.models import AlertEvent, AlertRule
    from consumers.models import RebalanceGroupResult, RebalanceJob, RebalanceQueueChange
    from consumers.rebalance.jobs import scope_key
    from tests.analytics._dashboard_data import seed_dashboards
    from tests.topics._traces import traced_round_trip

    cluster = console_group_cluster
    topic, group = f"PagesTopic_{uuid.uuid4().hex[:6]}", f"PagesGroup_{uuid.uuid4().hex[:6]}"
    with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
        create_topic(admin, cluster, topic, queues=4)
    msg_id = traced_round_trip(cluster, topic, group)
    seed_dashboards()

    job = RebalanceJob.objects.create(
        requested_by="ops",
        scope="group",
        scope_value=group,
        dry_run=True,
        status="planned",
        scope_key=scope_key("group", group, True) + "#done",
        queues_moved=1,
        groups_total=1,
        timeout_s=25,
        reason="no running info from c9: the movement is incomplete",  # as the runner writes them
        progress="1 queue(s) would move in 1 group(s)",
    )
    result = RebalanceGroupResult.objects.create(
        job=job, group=group, status="planned", strategy="AVG", queues_total=2, queues_moved=1
    )
    for qid, before, expected in ((0, "c1", "c2"), (1, "c1", "c1")):
        RebalanceQueueChange.objects.create(
            result=result,
            job=job,
            group=group,
            topic=topic,
            broker_name="broker-a",
            queue_id=qid,
            owner_before=before,
            owner_expected=expected,
            owner_after="",
            moved=before != expected,
        )
    promotion = PromotionJob.objects.create(
        requested_by="olga",
        broker_name="broker-a",
        broker_id=1,
        dry_run=True,
        candidate_addr=cluster.broker_addr(GroupCluster.SLAVE_KEY),
        scope_key="dry:broker-a",
    )
    promotion_job_run(job_id=promotion.pk, budget_s=30)
    rule = AlertRule.objects.create(
        name="orders lag", kind="lag_above", target=group, threshold=5, for_minutes=1, created_by="olga"
    )
    AlertEvent.objects.create(
        rule=rule,
        rule_name=rule.name,
        kind=rule.kind,
        target=group,
        state="firing",
        value=12,
        message=f"group {group} lag 12 > 5",
    )
    make_user("admin", username="olga", password=PASSWORD)
    token = api_token_create(actor=Actor("olga", Role.ADMIN, "console"), username="olga")
    return {
        "tokens/token_id": str(token.info.id),
        "brokers/name": "broker-a",
        "promotion-jobs/pk": str(promotion.pk),
        "rebalance-jobs/pk": str(job.pk),
        "alerts/pk": str(rule.pk),
        "topics/name": topic,
        "groups/name": group,
        "subscription-groups/name": group,
        "users/username": "olga",
        "messages/msg_id": msg_id,
        "dashboards/topic": "orders",
        "dashboards/group": "billing",
        "query": {
            f"/messages/{msg_id}/": f"?topic={topic}",  # a UNIQ_KEY needs its topic
            f"/messages/{msg_id}/resend": f"?topic={topic}&group={group}",
        },
        "extra": [
            f"/messages/trace/?msg_id={msg_id}",
            f"/messages/?mode=key&topic={topic}&key=order-42",
            f"/topics/{topic}/shrink?target_queue_nums=2",
            f"/groups/{group}/reset-offset?topic={topic}&to=now",
            f"/allocation/?topic={topic}&group={group}",
            "/dashboards/?range=day",
        ],
    }


def problems_of(result: dict, chinese: bool, url: str) -> list[str]:
    found = []
    menu = result["menu"]
    if menu["rows"] != 1 or menu["broken"]:
        found.append(f"the menu takes {menu['rows']} rows, labels broken over lines: {menu['broken']}")
    if menu["current"] != (0 if url.startswith(OUTSIDE_THE_MENU) else 1):
        found.append(f"{menu['current']} menu entries marked as the current page")
    if result["overflow"]:
        found.append(f"overflows sideways: {result['overflow']}")
    found += [f"a table cut off by its scrolling box: {box}" for box in result["clipped"]]
    found += [
        f"contrast {c['ratio']}: {c['text']!r} ({c['element']}, {c['color']} on {c['background']})"
        for c in result["contrast"]
    ]
    if chinese:
        for text, element in result[
            "english"
        ]:  # a text with Chinese in it is translated (names and examples may sit in it)
            if not CJK.search(text) and any(w not in KEPT_WORDS for w in ENGLISH_WORD.findall(text)):
                found.append(f"English in the chrome: {text!r} ({element})")
    found += [f"time not HH:MM:SS: {t!r}" for t in TIME_TOKEN.findall(result["text"]) if not HH_MM_SS.fullmatch(t)]
    return found


def test_every_page_renders_in_every_variant(browser, live_server, console_with_data, tmp_path) -> None:
    urls = page_urls(console_with_data)
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = context.new_page()
    failures: dict[str, list[str]] = {}
    visited: list[str] = []
    try:
        log_in(page, live_server.url, "olga", PASSWORD)
        for language in ("en", "zh-hans"):
            if language != "en":
                page.goto(f"{live_server.url}/")
                page.click(f"[data-testid=language-{language}]")
                page.locator("html[lang=zh-hans]").wait_for()
            for url in urls:
                probe = page.request.get(live_server.url + url, max_redirects=0)  # the browser's session
                if (
                    probe.status == 405
                    or 300 <= probe.status < 400
                    or "text/html" not in probe.headers.get("content-type", "")
                ):
                    continue  # a POST-only action, a redirect (the favicon) or a download, not a page
                status = page.goto(live_server.url + url, wait_until="networkidle").status
                if status != 200:
                    failures[f"{url} [{language}]"] = [f"answered {status}"]
                    continue
                visited.append(url)
                if page.locator("[data-testid^=panel-][data-api]").count():  # dashboards: the charts have drawn
                    page.wait_for_selector("[data-testid^=panel-][data-loaded=true]")
                slug = re.sub(r"[^\w]+", "-", url).strip("-") or "home"
                for width in WIDTHS:
                    for scheme in SCHEMES:
                        page.set_viewport_size({"width": width, "height": 900})
                        page.emulate_media(color_scheme=scheme)
                        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                        # a chart reloading (a scheme change redraws it) is dimmed while busy: judge it drawn
                        page.wait_for_function(
                            "() => !document.querySelector('[aria-busy=true]') && [...document.querySelectorAll("
                            "'.chart')].every(c => getComputedStyle(c).opacity === '1')"
                        )
                        variant = f"{language}-{scheme}-{width}"
                        page.screenshot(path=str(tmp_path / f"{slug}-{variant}.png"), full_page=True)
                        found = problems_of(page.evaluate(INSPECT, language != "en"), language != "en", url)
                        if found:
                            failures[f"{url} [{variant}]"] = found
    finally:
        context.close()
    assert len(set(visited)) >= 35, visited
    assert not failures, "\n".join(
        f"{where}:\n  " + "\n  ".join(dict.fromkeys(found)) for where, found in failures.items()
    )
