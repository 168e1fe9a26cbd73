/*
 * Dashboards: draw every [data-chart] panel with uPlot (static/vendor/uplot) from the §4 JSON
 * of /api/v1/dashboards/throughput and /api/v1/dashboards/backlog (docs/analytics.md).
 *
 * A panel names its endpoint (data-api), fixed query (data-params), range (data-range), the
 * metrics it may show (data-metrics, first shown), an optional "by" selector (data-by-options)
 * and an optional drill-down URL with __key__ (data-drill, data-drill-key). One chart per panel,
 * one series per topic / group / queue; times in UTC.
 *
 * Panels come and go with htmx swaps (range switch, reload after a refresh): charts are drawn
 * on load and after every swap, and charts whose panel left the page are destroyed.
 * When an envelope says a refresh is running and the page is not polling it, the refresh
 * fragment (#refresh-status) is asked to follow it.
 */
(function () {
  "use strict";

  var MAX_SERIES = 12; // the largest (by peak) are drawn; the note says how many were left out
  // The axes take the page's colours (gantry.css's variables), so a dark system setting gets dark charts.
  function themeColours() {
    var css = getComputedStyle(document.documentElement);
    function v(name, fallback) { return (css.getPropertyValue(name) || "").trim() || fallback; }
    return {axis: v("--muted", "#475467"), grid: v("--surface-2", "#eef1f6"), tick: v("--line", "#d9dee7")};
  }
  var PALETTE = ["#2f5bd3", "#e8590c", "#12b76a", "#c11574", "#0e9384", "#f79009",
                 "#7a5af8", "#b42318", "#475467", "#66c61c", "#dd2590", "#155eef"];
  // The page's language: the text the server translated (analytics/chart_text.py, <div id="chart-text" data-json>),
  // keyed as there; the English here is the fallback. t("refreshed", "refreshed %(time)s UTC", {time: ...}).
  var TEXT = (function () {
    var el = document.getElementById("chart-text");
    try { return el ? JSON.parse(el.dataset.json) : {}; } catch (e) { return {}; }
  }());
  function t(key, english, values) {
    return (TEXT[key] || english).replace(/%\((\w+)\)s/g, function (m, name) { return values && name in values ? values[name] : m; });
  }
  var EMPTY_TEXT = t("empty", "No samples yet — the sampler writes every 10 s and the dashboards refresh every minute.");
  // Counts (backlog) tick at whole numbers only: 1, 2, 5, 10, ... (never 0.2, which would print as "0").
  var COUNT_INCRS = [];
  for (var p10 = 1; p10 <= 1e12; p10 *= 10) [1, 2, 5].forEach(function (m) { COUNT_INCRS.push(m * p10); });
  var STEP_S = {"1m": 60, "1h": 3600};
  // Byte rates tick at powers of two (64 KiB/s, 128 KiB/s, ...), not at 48.8 KiB/s.
  var BYTE_INCRS = [];
  [1, 1024, 1048576, 1073741824].forEach(function (unit) {
    [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].forEach(function (m) { BYTE_INCRS.push(m * unit); });
  });

  var METRICS = {
    // label: in texts; axis: the y axis' title (bytes carry their unit on every tick); unit: after legend values
    msgs_per_s: {label: t("label.msgs_per_s", "msgs/s"), axis: t("label.msgs_per_s", "msgs/s"), unit: t("unit.msgs_per_s", "msgs/s"),
                 title: t("title.msgs_per_s", "Messages per second"), fmt: fmtRate},
    bytes_per_s: {label: t("label.bytes_per_s", "bytes/s"), axis: "", unit: "", title: t("title.bytes_per_s", "Bytes per second"),
                  fmt: fmtBytes, incrs: BYTE_INCRS},
    backlog: {label: t("label.backlog", "messages"), axis: t("label.backlog", "messages"), unit: t("unit.backlog", "msgs"),
              title: t("title.backlog", "Backlog (messages)"), fmt: fmtCount, incrs: COUNT_INCRS},
    consume_rate: {label: t("label.consume_rate", "msgs/s consumed"), axis: t("label.consume_rate", "msgs/s consumed"),
                   unit: t("unit.msgs_per_s", "msgs/s"), title: t("title.consume_rate", "Consume rate"), fmt: fmtRate},
    produce_rate: {label: t("label.produce_rate", "msgs/s produced"), axis: t("label.produce_rate", "msgs/s produced"),
                   unit: t("unit.msgs_per_s", "msgs/s"), title: t("title.produce_rate", "Produce rate"), fmt: fmtRate}
  };
  var charts = new Map(); // panel element -> {plot, observer, controller}

  // -- number and time formats (the same as analytics/templatetags/dashboard_format.py) -----------

  function fmtRate(v) {
    if (v == null) return "—";
    var a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1e6) return trimZero((v / 1e6).toFixed(1)) + "M";
    if (a >= 1e4) return trimZero((v / 1e3).toFixed(1)) + "k";
    if (a >= 100) return Math.round(v).toLocaleString("en");
    if (a >= 1) return trimZero(v.toFixed(1));
    return String(Number(v.toPrecision(2)));
  }

  function fmtBytes(v) {
    if (v == null) return "—";
    var units = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"], i = 0, n = v;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? Math.round(n) : trimZero(n.toFixed(1))) + " " + units[i];
  }

  function trimZero(text) { return text.replace(/\.0$/, ""); }

  function fmtCount(v) {
    if (v == null) return "—";
    var a = Math.abs(v);
    if (a >= 1e9) return trimZero((v / 1e9).toFixed(1)) + "G";
    if (a >= 1e6) return trimZero((v / 1e6).toFixed(1)) + "M";
    if (a >= 1e4) return trimZero((v / 1e3).toFixed(1)) + "k";
    return Math.round(v).toLocaleString("en");
  }

  function withUnit(spec, v) { return v == null ? "—" : spec.fmt(v) + (spec.unit ? " " + spec.unit : ""); }

  function pad(n) { return n < 10 ? "0" + n : "" + n; }

  function fmtTime(date, withDay) {  // HH:MM:SS, as every time the console shows
    var hm = pad(date.getUTCHours()) + ":" + pad(date.getUTCMinutes()) + ":" + pad(date.getUTCSeconds());
    if (!withDay) return hm;
    return date.getUTCFullYear() + "-" + pad(date.getUTCMonth() + 1) + "-" + pad(date.getUTCDate()) + " " + hm;
  }

  /** An x tick: HH:MM:SS, with the date on a second line at midnight and on the first tick (day, week). */
  function timeTick(seconds, index, withDay) {
    var d = new Date(seconds * 1e3), hm = fmtTime(d, false);
    if (withDay && (index === 0 || (d.getUTCHours() === 0 && d.getUTCMinutes() === 0))) {
      return pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + "\n" + hm;
    }
    return hm;
  }

  /** The y axis is as wide as its longest tick label (uPlot asks again when the ticks change). */
  function axisSize(u, values) {
    var longest = (values || []).reduce(function (m, v) { return Math.max(m, String(v).length); }, 0);
    return Math.max(40, Math.ceil(longest * 7 + 18));
  }

  function parseTime(iso) { return iso ? new Date(iso) : null; }

  /**
   * The x scale (seconds): the envelope's range [from, to], widened to the data; never uPlot's
   * own guess, which pads a single point by its order of magnitude (an axis across years).
   * Without a range and with one time, one resolution step either side of it.
   */
  function xRange(from, to, xs, stepS) {
    var lo = isNaN(from) ? null : from, hi = isNaN(to) ? null : to;
    if (xs.length) {
      lo = lo == null ? xs[0] : Math.min(lo, xs[0]);
      hi = hi == null ? xs[xs.length - 1] : Math.max(hi, xs[xs.length - 1]);
    }
    if (lo == null || hi == null) return [0, 1];
    if (hi - lo < 1) { lo -= stepS || 60; hi += stepS || 60; }
    return [lo, hi];
  }

  /** The y scale: from 0 to a tenth above the peak; at least 0..1 (so a flat 0 has an axis). */
  function yRange(max) { return [0, max > 0 ? max * 1.1 : 1]; }

  /** Tick labels; a label equal to the one before it is left blank (no "1 1 1 0 0 0"). */
  function tickLabels(splits, fmt) {
    var labels = splits.map(function (v) { return fmt(v); });
    return labels.map(function (l, i) { return i > 0 && l === labels[i - 1] ? "" : l; });
  }

  // -- the data: §4 series -> uPlot's aligned columns ------------------------------------------------

  function seriesValues(s, metric) {
    var out = new Map();
    (s.points || []).forEach(function (p) {
      var t = Date.parse(p.t) / 1000;
      if (!isNaN(t)) out.set(t, p[metric] == null ? null : Number(p[metric]));
    });
    return out;
  }

  function peak(values) {
    var m = null;
    values.forEach(function (v) { if (v != null && (m == null || v > m)) m = v; });
    return m;
  }

  /** {xs, columns: [{label, values[]}], total, withValues} for one metric of an envelope. */
  function align(envelope, metric) {
    var all = (envelope.series || []).map(function (s) {
      var values = seriesValues(s, metric);
      return {label: s.label, key: s.key || {}, values: values, peak: peak(values)};
    });
    var withValues = all.filter(function (c) { return c.peak != null; });
    var shown = withValues.slice().sort(function (a, b) { return b.peak - a.peak; }).slice(0, MAX_SERIES);
    shown.sort(function (a, b) { return a.label < b.label ? -1 : a.label > b.label ? 1 : 0; });
    var times = new Set();
    shown.forEach(function (c) { c.values.forEach(function (_, t) { times.add(t); }); });
    var xs = Array.from(times).sort(function (a, b) { return a - b; });
    var columns = shown.map(function (c) {
      var values = xs.map(function (t) { return c.values.has(t) ? c.values.get(t) : null; });
      var latest = null;
      for (var i = values.length - 1; i >= 0 && latest == null; i--) latest = values[i];
      return {label: c.label, values: values, latest: latest};
    });
    return {xs: xs, columns: columns, total: all.length, withValues: withValues.length};
  }

  // -- one panel --------------------------------------------------------------------------------------

  function part(panel, role) { return panel.querySelector("[data-role=" + role + "]"); }

  function words(text) { return (text || "").split(/\s+/).filter(Boolean); }

  function buildControls(panel) {
    var box = part(panel, "controls");
    if (!box || box.childElementCount) return;
    var byOptions = words(panel.dataset.byOptions);
    if (byOptions.length > 1) box.appendChild(select("by", t("by", "By"), byOptions.map(function (b) { return [b, t("by." + b, b)]; })));
    var metrics = words(panel.dataset.metrics);
    if (metrics.length > 1) {
      box.appendChild(select("metric", t("show", "Show"), metrics.map(function (m) { return [m, METRICS[m].title]; })));
    }
  }

  function select(name, text, options) {
    var label = document.createElement("label");
    label.className = "inline-label";
    label.textContent = text + " ";
    var sel = document.createElement("select");
    sel.name = name;
    sel.dataset.control = name;
    options.forEach(function (o) {
      var opt = document.createElement("option");
      opt.value = o[0];
      opt.textContent = o[1];
      sel.appendChild(opt);
    });
    sel.addEventListener("change", function () { load(label.closest("[data-chart]")); });
    label.appendChild(sel);
    return label;
  }

  function controlValue(panel, name, fallback) {
    var sel = panel.querySelector("select[data-control=" + name + "]");
    return sel ? sel.value : fallback;
  }

  function requestUrl(panel) {
    var params = new URLSearchParams(panel.dataset.params || "");
    params.set("range", panel.dataset.range || "hour");
    var by = controlValue(panel, "by", null);
    if (by) params.set("by", by);
    return panel.dataset.api + "?" + params.toString();
  }

  function show(panel, role, text) {
    ["empty", "error"].forEach(function (r) {
      var el = part(panel, r);
      if (el) el.hidden = r !== role;
    });
    if (role && text) part(panel, role).textContent = text;
    part(panel, "chart").hidden = role === "empty" || role === "error";
  }

  function load(panel) {
    var entry = charts.get(panel) || {};
    if (entry.controller) entry.controller.abort();
    var controller = new AbortController();
    entry.controller = controller;
    charts.set(panel, entry);
    panel.setAttribute("aria-busy", "true");
    fetch(requestUrl(panel), {credentials: "same-origin", headers: {Accept: "application/json"}, signal: controller.signal})
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok) throw new Error((body && body.detail) || response.status + " " + response.statusText);
          return body;
        });
      })
      .then(function (envelope) {
        panel.dataset.loaded = "true";
        draw(panel, envelope);
        showState(panel, envelope);
        followRun(envelope.state && envelope.state.run);
      })
      .catch(function (err) {
        if (err.name === "AbortError") return;
        destroyPlot(panel);
        show(panel, "error", t("load_failed", "Could not load the chart data: %(error)s", {error: err.message}));
      })
      .finally(function () { panel.removeAttribute("aria-busy"); });
  }

  function destroyPlot(panel) {
    var entry = charts.get(panel);
    if (entry && entry.plot) { entry.plot.destroy(); entry.plot = null; }
    if (entry && entry.observer) { entry.observer.disconnect(); entry.observer = null; }
  }

  function draw(panel, envelope) {
    var metric = controlValue(panel, "metric", words(panel.dataset.metrics)[0]);
    var spec = METRICS[metric];
    var data = align(envelope, metric);
    destroyPlot(panel);
    drillDown(panel, envelope);
    var note = part(panel, "note");
    panel.dataset.series = String(data.columns.length);
    if (!data.columns.length) {
      var text = data.total ? t("none", "No %(what)s in the last %(range)s (the brokers of these queues do not report it).",
                                {what: spec.label, range: t("range." + envelope.range, envelope.range)}) : EMPTY_TEXT;
      show(panel, "empty", text);
      if (note) note.hidden = true;
      return;
    }
    show(panel, null);
    if (note) {
      note.hidden = data.withValues <= data.columns.length;
      note.textContent = t("largest", "Showing the %(shown)s largest of %(total)s (by peak); the table has them all.",
                           {shown: data.columns.length, total: data.withValues});
    }
    var box = part(panel, "chart");
    var from = Date.parse(envelope.from) / 1000, to = Date.parse(envelope.to) / 1000;
    var withDay = envelope.range !== "hour";
    var stepS = STEP_S[envelope.resolution] || 60;
    var entry = charts.get(panel) || {};
    charts.set(panel, entry);
    var ink = themeColours();
    var height = +panel.dataset.height || 260;  // the overview's small charts ask for less
    var opts = {
      width: Math.max(box.clientWidth, 300),
      height: height,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },
      cursor: {points: {size: 7}},
      legend: {live: true},
      scales: {
        x: {time: true, range: function () { return xRange(from, to, data.xs, stepS); }},
        y: {range: function (u, min, max) { return yRange(max); }}
      },
      axes: [
        {stroke: ink.axis, grid: {stroke: ink.grid}, ticks: {stroke: ink.tick}, space: 64, size: withDay ? 52 : 40,
         values: function (u, splits) {
           entry.xLabels = splits.map(function (s, i) { return timeTick(s, i, withDay); });
           return entry.xLabels;
         }},
        {stroke: ink.axis, grid: {stroke: ink.grid}, ticks: {stroke: ink.tick}, label: spec.axis, labelSize: spec.axis ? 18 : 0,
         incrs: spec.incrs, size: axisSize, values: function (u, splits) { entry.yLabels = tickLabels(splits, spec.fmt); return entry.yLabels; }}
      ],
      // Away from the chart the legend shows the latest values; under the cursor, the cursor's.
      series: [{label: "UTC", value: function (u, v, s, idx) {
        if (idx == null) return data.xs.length ? t("latest", "latest") : "—";
        return v == null ? "—" : fmtTime(new Date(v * 1e3), true);
      }}].concat(data.columns.map(function (c, i) {
          var color = PALETTE[i % PALETTE.length];
          return {label: c.label, stroke: color, width: 1.75, fill: data.columns.length === 1 ? color + "1a" : undefined,
                  points: {size: data.xs.length <= 2 ? 9 : 4}, spanGaps: false,  // one or two points: dots one can see
                  value: function (u, v, s, idx) { return withUnit(spec, idx == null ? c.latest : v); }};
        }))
    };
    var plot = new uPlot(opts, [data.xs].concat(data.columns.map(function (c) { return c.values; })), box);
    // the series' names are topics, groups and queues: data, not text to translate
    plot.root.querySelectorAll(".u-legend .u-series:not(:first-child) .u-label").forEach(function (e) { e.setAttribute("translate", "no"); });
    entry.plot = plot;
    if (window.ResizeObserver) {
      entry.observer = new ResizeObserver(function () {
        var w = Math.max(box.clientWidth, 300);
        if (entry.plot && Math.abs(entry.plot.width - w) > 2) entry.plot.setSize({width: w, height: height});
      });
      entry.observer.observe(box);
    }
    charts.set(panel, entry);
  }

  function drillDown(panel, envelope) {
    var list = part(panel, "drill");
    if (!list) return;
    list.textContent = "";
    var keyName = panel.dataset.drillKey, seen = new Set();
    (envelope.series || []).forEach(function (s) {
      var value = s.key && s.key[keyName];
      if (value == null || seen.has(value)) return;
      seen.add(value);
      var li = document.createElement("li"), a = document.createElement("a");
      a.href = panel.dataset.drill.replace("__key__", encodeURIComponent(value));
      a.textContent = value;
      a.dataset.drill = value;
      li.appendChild(a);
      list.appendChild(li);
    });
    list.hidden = seen.size === 0;
  }

  function showState(panel, envelope) {
    var box = part(panel, "state");
    if (!box) return;
    var state = envelope.state || {};
    box.textContent = "";
    var bits = [];
    var per = {"1m": "per minute", "1h": "per hour"}[envelope.resolution] || "per " + envelope.resolution;
    if (envelope.resolution) bits.push(t("per." + envelope.resolution, per));
    var until = parseTime(state.data_until);
    if (until) bits.push(t("data_until", "data until %(time)s UTC", {time: fmtTime(until, true)}));
    var last = parseTime(state.last_refresh_at);
    bits.push(last ? t("refreshed", "refreshed %(time)s UTC", {time: fmtTime(last, true)}) : t("never_refreshed", "never refreshed"));
    var span = document.createElement("span");
    span.className = "muted";
    span.textContent = bits.join(" · ");
    box.appendChild(span);
    var stale = parseTime(state.stale_since);
    if (stale) {
      var badge = document.createElement("span");
      badge.className = "badge badge-stale";
      badge.dataset.testid = "panel-stale";
      badge.title = t("stale_title", "The last refresh failed: this is the last good result.");
      badge.textContent = t("stale_since", "stale since %(time)s UTC", {time: fmtTime(stale, true)});
      box.appendChild(document.createTextNode(" "));
      box.appendChild(badge);
    }
  }

  /** A refresh the page does not follow yet (started elsewhere): let the fragment poll it. */
  function followRun(run) {
    var bar = document.getElementById("refresh-status");
    if (!run || !bar || !window.htmx) return;
    if (run.status !== "queued" && run.status !== "running") return;
    if (bar.hasAttribute("hx-trigger")) return; // already polling
    window.htmx.ajax("GET", bar.dataset.url + "?run=" + encodeURIComponent(run.id), {target: bar, swap: "outerHTML"});
  }

  // -- wiring -----------------------------------------------------------------------------------------

  function scan() {
    charts.forEach(function (entry, panel) {
      if (!panel.isConnected) {
        if (entry.controller) entry.controller.abort();
        destroyPlot(panel);
        charts.delete(panel);
      }
    });
    if (typeof uPlot === "undefined") return;
    document.querySelectorAll("[data-chart]").forEach(function (panel) {
      if (charts.has(panel)) return;
      buildControls(panel);
      load(panel);
    });
  }

  document.addEventListener("DOMContentLoaded", scan);
  document.addEventListener("htmx:afterSettle", scan);
  // The axes take their colours when drawn: a switch between light and dark draws the charts again.
  if (window.matchMedia) {
    var scheme = window.matchMedia("(prefers-color-scheme: dark)");
    var redraw = function () { charts.forEach(function (_, panel) { load(panel); }); };
    if (scheme.addEventListener) scheme.addEventListener("change", redraw); else if (scheme.addListener) scheme.addListener(redraw);
  }
  /** What a panel's chart shows: its x scale (seconds), the axes' tick labels, its points (for tests). */
  function plotInfo(panel) {
    var entry = charts.get(panel);
    if (!entry || !entry.plot) return null;
    var u = entry.plot;
    return {xMin: u.scales.x.min, xMax: u.scales.x.max, yMin: u.scales.y.min, yMax: u.scales.y.max,
            xLabels: (entry.xLabels || []).slice(), yLabels: (entry.yLabels || []).slice(), points: u.data[0].length};
  }

  window.gantryDashboards = {reload: function () { charts.forEach(function (_, panel) { load(panel); }); }, scan: scan,
                             plotInfo: plotInfo, scales: {x: xRange, y: yRange, ticks: tickLabels},
                             formats: {rate: fmtRate, bytes: fmtBytes, count: fmtCount}};
})();
