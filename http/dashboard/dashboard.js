// The live dashboard: reads /api/status (the JSON of `outboxctl status
// --json`) every 2 s and draws the headline figures, the queues, the nodes
// and two plots of the last 15 minutes, kept in this page only (a reload
// starts them empty).
//
// What is plotted, per queue, at each sample after the first:
// - published/s: what the queue's dispatchers had the broker confirm since
//   the previous sample (the sum, over every node's dispatcher actor of the
//   queue seen in both samples, of the growth of its `rows`; an actor whose
//   count went back was restarted and counts from zero), over the seconds
//   between the two samples;
// - completed/s: the growth of the queue's `completed` deliveries in the
//   database over the same seconds (none while the database is unreadable,
//   nor when the count went back: rows were deleted);
// - backlog: the queue's open deliveries (pending + dispatched) and, for
//   the cluster, the unrouted events.
// Samples more than 3 polls apart are not joined by a line.
//
// A cluster of several databases (the status JSON's `databases`) is shown
// one database at a time, picked in the header: its counts, its queues'
// rates (its own dispatchers, named "...@database"), and every node.
//
// Names (queues, nodes, actors, databases) come from the config and the
// peers: they are only ever written with textContent, never as markup.
"use strict";

(function () {
  const POLL_MS = 2000;
  const TIMEOUT_MS = 5000;
  const WINDOW_MS = 15 * 60 * 1000;
  const GAP_MS = 3 * POLL_MS + TIMEOUT_MS;
  const STATUSES = ["pending", "dispatched", "completed", "failed", "expired",
                    "superseded"];
  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                   "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"];

  const samples = [];          // what the plots need of each good answer
  const colourOf = new Map();  // queue -> colour, fixed once seen
  let lastGood = null;         // {doc, t} of the last answer
  let failingSince = 0;        // when the status node stopped answering
  let selected = null;         // the database shown, of a cluster of several

  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  // As `outboxctl status` writes ages: 4.2s, 3.1m, 2.0h.
  function age(seconds) {
    if (seconds < 60) return seconds.toFixed(1) + "s";
    if (seconds < 3600) return (seconds / 60).toFixed(1) + "m";
    return (seconds / 3600).toFixed(1) + "h";
  }

  function clock(t) {
    return new Date(t).toLocaleTimeString([], { hour12: false });
  }

  function colour(queue) {
    if (!colourOf.has(queue))
      colourOf.set(queue, COLOURS[colourOf.size % COLOURS.length]);
    return colourOf.get(queue);
  }

  // ---- samples and rates ----

  // ---- databases ----

  // The picker lists the cluster's databases; none for a cluster of one.
  function showPicker(names) {
    const select = $("database-select");
    const now = Array.from(select.options).map((o) => o.value);
    if (now.join("\u0000") !== names.join("\u0000")) {
      select.replaceChildren(...names.map((n) => {
        const o = el("option", null, n);
        o.value = n;
        return o;
      }));
    }
    select.value = selected;
    $("database-pick").hidden = names.length === 0;
  }

  // The status as one database's: a cluster of several shows the picked
  // one (the first by name at first), with every node.
  function viewOf(doc) {
    if (!doc.databases) {
      showPicker([]);
      return doc;
    }
    const names = Object.keys(doc.databases).sort();
    if (!names.includes(selected)) {
      selected = names[0];
      samples.length = 0; // the rates of another database
    }
    showPicker(names);
    const one = doc.databases[selected] || { database: { ok: false } };
    return Object.assign({}, one, { nodes: doc.nodes, selected });
  }

  function sampleOf(doc, t) {
    const s = { t, db: doc.database.ok, completed: {}, open: {}, rows: {},
                unrouted: null };
    if (s.db) {
      s.unrouted = doc.unroutedEvents;
      for (const [q, v] of Object.entries(doc.queues || {})) {
        s.completed[q] = v.deliveries.completed || 0;
        s.open[q] = (v.deliveries.pending || 0) + (v.deliveries.dispatched || 0);
      }
    }
    const suffix = doc.selected === undefined ? null : "@" + doc.selected;
    for (const n of doc.nodes || [])
      for (const a of n.actors || [])
        if (a.role === "dispatcher" && (suffix === null || a.name.endsWith(suffix)))
          s.rows[n.name + "\u0000" + a.name] = { queue: a.queue, rows: a.rows };
    return s;
  }

  function publishedRate(prev, cur, queue, dt) {
    let sum = 0, seen = false;
    for (const [key, a] of Object.entries(cur.rows)) {
      const before = prev.rows[key];
      if (a.queue !== queue || !before) continue;
      seen = true;
      sum += a.rows >= before.rows ? a.rows - before.rows : a.rows;
    }
    return seen ? sum / dt : null;
  }

  function completedRate(prev, cur, queue, dt) {
    if (!prev.db || !cur.db) return null;
    const a = prev.completed[queue], b = cur.completed[queue];
    if (a === undefined || b === undefined || b < a) return null;
    return (b - a) / dt;
  }

  function ratesAt(i, queue) {
    if (i === 0) return { published: null, completed: null };
    const prev = samples[i - 1], cur = samples[i];
    const dt = (cur.t - prev.t) / 1000;
    if (dt <= 0) return { published: null, completed: null };
    return { published: publishedRate(prev, cur, queue, dt),
             completed: completedRate(prev, cur, queue, dt) };
  }

  function plotQueues() {
    const qs = new Set();
    for (const s of samples) {
      Object.keys(s.open).forEach((q) => qs.add(q));
      Object.values(s.rows).forEach((a) => a.queue && qs.add(a.queue));
    }
    return [...qs].sort();
  }

  // ---- plots ----

  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function fmt(v) {
    if (v === 0) return "0";
    if (v >= 100) return v.toFixed(0);
    if (v >= 10) return v.toFixed(1).replace(/\.0$/, "");
    return v.toFixed(2).replace(/\.?0+$/, "");
  }

  // The canvas at the size it is shown, in device pixels.
  function prepare(canvas) {
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || 600, h = canvas.clientHeight || 220;
    canvas.width = Math.round(w * ratio);
    canvas.height = Math.round(h * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    return { g, w, h };
  }

  function drawAxes(g, box, top, now) {
    g.strokeStyle = "#dde1e6"; g.fillStyle = "#66707c";
    g.lineWidth = 1; g.setLineDash([]); g.font = "11px system-ui, sans-serif";
    g.textAlign = "right"; g.textBaseline = "middle";
    for (let k = 0; k <= 4; ++k) {
      const y = box.y + box.h - (k / 4) * box.h;
      g.beginPath(); g.moveTo(box.x, y); g.lineTo(box.x + box.w, y); g.stroke();
      g.fillText(fmt((top * k) / 4), box.x - 6, y);
    }
    g.textAlign = "center"; g.textBaseline = "top";
    for (let m = 15; m >= 0; m -= 5) {
      const x = box.x + box.w * (1 - (m * 60000) / WINDOW_MS);
      g.textAlign = m === 0 ? "right" : m === 15 ? "left" : "center";
      g.fillText(m === 0 ? "now" : "-" + m + " min", x, box.y + box.h + 4);
    }
  }

  // series: [{colour, dash, points: [[t, value or null]]}]
  function drawPlot(canvas, series, now) {
    const { g, w, h } = prepare(canvas);
    const box = { x: 44, y: 8, w: w - 56, h: h - 28 };
    let max = 0;
    for (const s of series)
      for (const [, v] of s.points) if (v !== null && v > max) max = v;
    const top = niceMax(max);
    drawAxes(g, box, top, now);
    const xOf = (t) => box.x + box.w * (1 - (now - t) / WINDOW_MS);
    const yOf = (v) => box.y + box.h - (v / top) * box.h;
    for (const s of series) {
      g.strokeStyle = s.colour; g.lineWidth = 1.8; g.setLineDash(s.dash || []);
      g.beginPath();
      let prevT = null;
      for (const [t, v] of s.points) {
        if (v === null || t < now - WINDOW_MS) { prevT = null; continue; }
        if (prevT === null || t - prevT > GAP_MS) g.moveTo(xOf(t), yOf(v));
        else g.lineTo(xOf(t), yOf(v));
        prevT = t;
      }
      g.stroke();
    }
  }

  function legend(target, entries) {
    target.replaceChildren();
    for (const e of entries) {
      const item = el("span");
      const sw = el("span", "swatch");
      sw.style.background = e.colour;
      item.append(sw, document.createTextNode(e.label));
      target.append(item);
    }
  }

  function drawPlots(now) {
    const qs = plotQueues();
    const through = [], backlog = [];
    for (const q of qs) {
      const pub = [], done = [], open = [];
      samples.forEach((s, i) => {
        const r = ratesAt(i, q);
        pub.push([s.t, r.published]);
        done.push([s.t, r.completed]);
        open.push([s.t, s.db && s.open[q] !== undefined ? s.open[q] : null]);
      });
      through.push({ colour: colour(q), points: pub },
                   { colour: colour(q), dash: [5, 4], points: done });
      backlog.push({ colour: colour(q), points: open });
    }
    backlog.push({ colour: "#7f7f7f", dash: [2, 3],
                   points: samples.map((s) => [s.t, s.unrouted]) });
    drawPlot($("throughput"), through, now);
    drawPlot($("backlog"), backlog, now);
    const entries = qs.map((q) => ({ colour: colour(q), label: q }));
    legend($("throughput-legend"), entries);
    legend($("backlog-legend"),
           entries.concat([{ colour: "#7f7f7f", label: "unrouted events" }]));
  }

  // ---- figures, queues, nodes ----

  function showHeadline(doc) {
    const statuses = $("statuses");
    statuses.replaceChildren();
    if (!doc.database.ok) {
      $("unrouted").textContent = "–";
      $("unrouted-age").textContent = "database unavailable";
      $("oldest-open").textContent = "–";
      statuses.append(el("div", "unavailable", "database unavailable"));
      return;
    }
    $("unrouted").textContent = doc.unroutedEvents;
    $("unrouted-age").textContent = doc.unroutedEvents > 0
      ? "oldest " + age(doc.oldestUnroutedAgeSeconds) : "none waiting";
    $("oldest-open").textContent = age(doc.oldestOpenAgeSeconds);
    for (const st of STATUSES) {
      const n = doc.deliveries[st] || 0;
      const box = el("div", st + (n === 0 ? " zero" : ""));
      box.append(el("div", "n", n), el("div", "muted", st));
      statuses.append(box);
    }
  }

  function showQueueHead() {
    const head = $("queues-head");
    if (head.childElementCount) return;
    for (const t of ["queue"].concat(STATUSES, ["oldest open", "blocked keys",
                                               "published/s", "completed/s"]))
      head.append(el("th", null, t));
  }

  function noteRow(text) {
    const tr = el("tr"), td = el("td", "unavailable", text);
    td.colSpan = STATUSES.length + 4;
    tr.append(td);
    return tr;
  }

  function showQueues(doc) {
    showQueueHead();
    const body = $("queues-body");
    body.replaceChildren();
    if (!doc.database.ok) {
      body.append(noteRow("counts unavailable while the database is unreadable"));
      return;
    }
    const names = Object.keys(doc.queues || {}).sort();
    if (!names.length) body.append(noteRow("no deliveries yet"));
    const last = samples.length - 1;
    for (const q of names) {
      const tr = el("tr");
      tr.dataset.queue = q;
      const name = el("td");
      const sw = el("span", "swatch");
      sw.style.background = colour(q);
      name.append(sw, document.createTextNode(q));
      const p = doc.queues[q].paused; // outboxctl pause: who and why on hover
      if (p) name.append(" ", Object.assign(badge(false, "", "paused", "warn"),
                                             { title: p.pausedBy + (p.reason ? ": " + p.reason : "") }));
      tr.append(name);
      for (const st of STATUSES) tr.append(el("td", null, doc.queues[q].deliveries[st] || 0));
      tr.append(el("td", null, age(doc.queues[q].oldestOpenAgeSeconds)));
      // Ordered keys waiting for an operator (outboxctl blocked).
      tr.append(el("td", null, doc.queues[q].blockedKeys || 0));
      const r = ratesAt(last, q);
      for (const v of [r.published, r.completed])
        tr.append(el("td", null, v === null ? "–" : fmt(v)));
      body.append(tr);
    }
  }

  function badge(ok, good, bad, badClass) {
    return el("span", "badge " + (ok ? "up" : badClass || "down"), ok ? good : bad);
  }

  function actorRow(a, now) {
    const tr = el("tr");
    tr.append(el("td", null, a.name), el("td"), el("td"),
              el("td", null, a.passes), el("td", null, a.rows),
              el("td", null, a.errors),
              el("td", null, a.lastPassMs ? age(Math.max(0, now - a.lastPassMs) / 1000) + " ago" : "never"));
    tr.children[1].append(badge(a.up, "up", "DOWN"));
    tr.children[2].append(badge(a.connected, "connected", "disconnected", "warn"));
    return tr;
  }

  function nodeCard(n, now) {
    const card = el("div", "node" + (n.up ? "" : " down"));
    card.dataset.node = n.name;
    const head = el("div", "node-head");
    head.append(el("span", "node-name", n.name), badge(n.up && !n.draining, "up", n.up ? "draining" : "DOWN", n.up ? "warn" : ""));
    card.append(head, el("div", "muted", "roles " + ((n.roles || []).join(", ") || "–")
                                         + "; queues " + ((n.queues || []).join(", ") || "–")));
    if (!n.wakeupsOk)
      card.append(el("div", "note", "wake-ups degraded (dispatchers wait for their timers): "
                                    + (n.wakeupsDegraded || "")));
    const life = Object.entries(n.lifecycle || {});
    if (life.length)
      card.append(el("div", "muted", "since start: "
                                     + life.map(([k, v]) => k + " " + v).join(", ")));
    if (!(n.actors || []).length) {
      card.append(el("div", "muted", "no actors besides the status actor"));
      return card;
    }
    const table = el("table");
    const hr = el("tr");
    for (const t of ["actor", "", "", "passes", "rows", "errors", "last pass"])
      hr.append(el("th", null, t));
    table.append(hr);
    for (const a of n.actors || []) table.append(actorRow(a, now));
    card.append(table);
    return card;
  }

  function showNodes(doc, now) {
    const nodes = doc.nodes || [];
    const up = nodes.filter((n) => n.up).length;
    $("node-count").textContent = "(" + nodes.length + ", " + up + " up)";
    const box = $("nodes");
    box.replaceChildren(...nodes.map((n) => nodeCard(n, now)));
  }

  // ---- the poll ----

  function onStatus(raw, t) {
    lastGood = { doc: raw, t };
    const doc = viewOf(raw);
    samples.push(sampleOf(doc, t));
    while (samples.length && samples[0].t < t - WINDOW_MS - POLL_MS) samples.shift();
    failingSince = 0;
    document.body.dataset.state = doc.database.ok ? "ok" : "database-down";
    $("banner-unreachable").hidden = true;
    const db = $("banner-database");
    db.hidden = doc.database.ok;
    db.textContent = doc.database.ok ? ""
      : "database unavailable: " + (doc.database.error || "no reason given")
        + " (the counts are unknown; the nodes below are current)";
    $("updated").textContent = "updated " + clock(t) + ", every " + POLL_MS / 1000 + " s";
    showHeadline(doc);
    showQueues(doc);
    showNodes(doc, t);
    drawPlots(t);
  }

  function onFailure(reason, t) {
    if (!failingSince) failingSince = t;
    document.body.dataset.state = "unreachable";
    const b = $("banner-unreachable");
    b.hidden = false;
    b.textContent = "status node unreachable since " + clock(failingSince) + " ("
      + reason + ")" + (lastGood ? "; showing the data of " + clock(lastGood.t) : "");
    $("updated").textContent = lastGood ? "last update " + clock(lastGood.t) : "no data yet";
    if (lastGood) drawPlots(t);
  }

  async function poll() {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
    try {
      const res = await fetch("/api/status", { cache: "no-store", signal: abort.signal });
      const text = await res.text();
      let doc = null;
      try { doc = JSON.parse(text); } catch (e) { doc = null; }
      if (res.ok && doc && (doc.database || doc.databases)) onStatus(doc, Date.now());
      else onFailure("HTTP " + res.status + (doc && doc.error ? ": " + doc.error : ""), Date.now());
    } catch (e) {
      onFailure(e.name === "AbortError" ? "no answer in " + TIMEOUT_MS / 1000 + " s"
                                        : "no connection", Date.now());
    } finally {
      clearTimeout(timer);
      setTimeout(poll, POLL_MS);
    }
  }

  $("database-select").addEventListener("change", (e) => {
    selected = e.target.value;
    samples.length = 0;
    if (lastGood) onStatus(lastGood.doc, lastGood.t);
  });

  poll();
})();
