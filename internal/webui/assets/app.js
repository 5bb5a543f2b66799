// podvisor's web page: no framework, no build step. State comes from
// /events (Server-Sent Events); the graph and the shutdown report from
// /timeline; the timeline chart is /ui/timeline.svg.
"use strict";

const $ = (id) => document.getElementById(id);
const procs = new Map(); // name -> ProcessStatus
const cpu = new Map(); // name -> {secs, at, pct}
let status = { phase: "", ready: false, generation: 0 };
let cfg = { actions: false, logs: false };
let sortKey = "name", sortRev = false, selected = "";
let graphDeps = null; // name -> [{name, condition}]
let redrawQueued = false;
let statusSeen = false; // a status frame came: until then the served state shows
let es = null; // the event stream
let failures = 0, downSince = null; // connection attempts failed in a row, since when
// After this many failed attempts (the stream asks for one a second),
// podvisor is taken as gone and the page stops retrying.
const maxFailures = 5;

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function svg(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function uptime(p) {
  if (!p.pid || !p.started_at) return "-";
  let s = Math.max(0, Math.floor((Date.now() - Date.parse(p.started_at)) / 1000));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + (s % 60) + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
  return Math.floor(s / 86400) + "d" + Math.floor((s % 86400) / 3600) + "h";
}
function bytes(n) {
  if (n == null) return "-";
  const u = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}
function detail(p) {
  if (p.waiting_for && p.waiting_for.length) return "waiting for " + p.waiting_for.join(", ");
  return p.reason || p.status || "";
}
function value(p, key) {
  switch (key) {
    case "uptime": return p.pid && p.started_at ? -Date.parse(p.started_at) : -Infinity;
    case "exit": return p.exit_code == null ? -1 : p.exit_code;
    case "cpu": return (cpu.get(p.name) || {}).pct || 0;
    case "rss": return p.resources ? p.resources.memory_bytes : 0;
    case "detail": return detail(p);
    default: return p[key];
  }
}

function queueRedraw() {
  if (redrawQueued) return;
  redrawQueued = true;
  requestAnimationFrame(() => { redrawQueued = false; redraw(); });
}

function redraw() {
  if (!statusSeen) return; // the page's own first state stands until the stream's
  $("phase").textContent = status.phase || "?";
  $("ready").textContent = status.ready ? "ready" : "not ready";
  $("ready").className = "badge " + (status.ready ? "s-running" : "s-backoff");
  $("gen").textContent = status.generation > 1 ? "config generation " + status.generation : "";
  const f = $("filter").value.trim().toLowerCase();
  let rows = [...procs.values()].filter((p) => !f || p.name.toLowerCase().includes(f) || p.state.includes(f));
  rows.sort((a, b) => {
    const x = value(a, sortKey), y = value(b, sortKey);
    const c = x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : 1;
    return sortRev ? -c : c;
  });
  const tb = document.querySelector("#procs tbody");
  const old = new Map([...tb.rows].map((r) => [r.dataset.name, r]));
  const trs = [];
  for (const p of rows) {
    const c = cpu.get(p.name);
    const cells = [p.name, p.type, p.state, p.ready ? "yes" : "no", p.pid || "-", uptime(p), p.restarts,
      p.exit_code == null ? "-" : String(p.exit_code) + (p.reason && p.state !== "pending" ? "" : ""),
      c && p.pid ? c.pct.toFixed(1) : "-", p.resources ? bytes(p.resources.memory_bytes) : "-", detail(p)];
    let tr = old.get(p.name);
    if (!tr) {
      tr = el("tr", { "data-name": p.name });
      cells.forEach((_, i) => tr.appendChild(el("td", i === 10 ? { class: "detail" } : {})));
    }
    cells.forEach((v, i) => { if (tr.cells[i].textContent !== String(v)) tr.cells[i].textContent = v; });
    tr.cells[2].className = "s-" + p.state;
    tr.dataset.restarts = p.restarts;
    tr.classList.toggle("sel", p.name === selected);
    trs.push(tr);
  }
  // Rows move only when the order changed: a moved row is a new node to
  // whoever holds it (a click under way, a screen reader).
  if (trs.length !== tb.rows.length || trs.some((tr, i) => tb.rows[i] !== tr)) tb.replaceChildren(...trs);
  for (const th of document.querySelectorAll("#procs th")) {
    th.classList.toggle("sorted", th.dataset.key === sortKey);
    th.classList.toggle("rev", th.dataset.key === sortKey && sortRev);
  }
  drawGraph();
}

function flash(name) {
  const tr = document.querySelector(`#procs tr[data-name="${CSS.escape(name)}"]`);
  if (!tr) return;
  tr.classList.remove("flash");
  void tr.offsetWidth;
  tr.classList.add("flash");
}

// Dependency graph: one column per level, arrows from a dependency to its
// dependents, each box coloured by the process's state.
function drawGraph() {
  const g = $("graph");
  if (!graphDeps) return;
  const level = new Map();
  const lv = (n, seen) => {
    if (level.has(n)) return level.get(n);
    if (seen.has(n)) return 0;
    seen.add(n);
    const d = graphDeps.get(n) || [];
    const l = d.length ? 1 + Math.max(...d.map((x) => lv(x.name, seen))) : 0;
    level.set(n, l);
    return l;
  };
  for (const n of graphDeps.keys()) lv(n, new Set());
  const cols = [];
  for (const [n, l] of level) (cols[l] = cols[l] || []).push(n);
  cols.forEach((c) => c.sort());
  const W = 150, H = 26, GX = 60, GY = 10, pos = new Map();
  cols.forEach((c, i) => c.forEach((n, j) => pos.set(n, { x: 10 + i * (W + GX), y: 10 + j * (H + GY) })));
  const width = 20 + cols.length * (W + GX), height = 20 + Math.max(1, ...cols.map((c) => c.length)) * (H + GY);
  const kids = [];
  for (const [n, deps] of graphDeps) {
    const b = pos.get(n);
    for (const d of deps) {
      const a = pos.get(d.name);
      if (!a || !b) continue;
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
      kids.push(svg("path", { d: `M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)" }));
      kids.push(svg("title", {}, `${n} needs ${d.name}: ${d.condition}`));
    }
  }
  for (const [n, p] of pos) {
    const st = (procs.get(n) || {}).state || "";
    const grp = svg("g", { "data-name": n });
    grp.appendChild(svg("rect", { x: p.x, y: p.y, width: W, height: H, class: "s-" + st }));
    grp.appendChild(svg("text", { x: p.x + 6, y: p.y + 17 }, n.length > 14 ? n.slice(0, 13) + "…" : n));
    grp.appendChild(svg("text", { x: p.x + W - 6, y: p.y + 17, "text-anchor": "end", class: "s-" + st }, st));
    kids.push(grp);
  }
  const defs = svg("defs");
  const m = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" });
  m.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#888" }));
  defs.appendChild(m);
  g.setAttribute("viewBox", `0 0 ${width} ${height}`);
  g.setAttribute("height", height);
  g.replaceChildren(defs, ...kids);
}

let timelineTimer = null, lastTimeline = 0;
// The timeline and graph change only with processes' lives: refetched at
// most every 2 s, after a change.
function refreshTimeline() {
  if (timelineTimer) return;
  const wait = Math.max(0, 2000 - (Date.now() - lastTimeline));
  timelineTimer = setTimeout(async () => {
    timelineTimer = null;
    lastTimeline = Date.now();
    $("timeline").src = "/ui/timeline.svg?t=" + lastTimeline;
    try {
      const r = await fetch("/timeline");
      if (!r.ok) return;
      const doc = await r.json();
      graphDeps = new Map(doc.processes.map((p) => [p.name, p.depends_on || []]));
      drawShutdown(doc.shutdown);
      queueRedraw();
    } catch (e) { /* the stream's reconnect reports the outage */ }
  }, wait);
}

function drawShutdown(s) {
  $("shutdown").hidden = !s;
  if (!s) return;
  $("shutcause").textContent = `${s.cause}: used ${s.used_seconds.toFixed(2)}s of ${s.budget_seconds}s` + (s.ended ? "" : " (still stopping)");
  const tb = document.querySelector("#shuttable tbody");
  const fmt = (v) => (v == null ? "-" : v.toFixed(2) + "s");
  tb.replaceChildren(...s.processes.map((p) => {
    const tr = el("tr");
    for (const v of [p.process, fmt(p.requested_at), fmt(p.exited_at), fmt(p.stop_seconds), p.ended_by + (p.sigkilled ? " (SIGKILL)" : ""), p.exit_code == null ? "-" : p.exit_code])
      tr.appendChild(el("td", {}, String(v)));
    return tr;
  }));
}

function onResources(data) {
  const now = Date.now();
  for (const [name, r] of Object.entries(data)) {
    const p = procs.get(name);
    if (p) p.resources = r;
    const prev = cpu.get(name);
    const pct = prev && now > prev.at ? Math.max(0, (100 * (r.cpu_seconds - prev.secs) * 1000) / (now - prev.at)) : 0;
    cpu.set(name, { secs: r.cpu_seconds, at: now, pct: pct });
  }
  queueRedraw();
}

function connect() {
  es = new EventSource("/events?resources=5s");
  es.onopen = () => { failures = 0; downSince = null; $("conn").textContent = "live"; };
  es.onerror = () => {
    downSince = downSince || new Date();
    const since = downSince.toLocaleTimeString();
    if (++failures >= maxFailures) {
      es.close();
      $("conn").textContent = "podvisor is gone (no answer since " + since + "): reload the page to try again";
      return;
    }
    $("conn").textContent = "reconnecting… (no answer since " + since + ")";
    if (es.readyState === EventSource.CLOSED) setTimeout(connect, 1000); // refused, not retried by the browser
  };
  es.addEventListener("status", (e) => {
    const st = JSON.parse(e.data);
    status = st;
    statusSeen = true;
    procs.clear();
    for (const p of st.processes) procs.set(p.name, p);
    refreshTimeline();
    queueRedraw();
  });
  es.addEventListener("process", (e) => {
    const ev = JSON.parse(e.data);
    const old = procs.get(ev.process.name);
    if (old && old.resources && ev.process.pid === old.pid) ev.process.resources = old.resources;
    procs.set(ev.process.name, ev.process);
    queueRedraw();
    if (ev.change.includes("restart") || ev.change.includes("exit")) requestAnimationFrame(() => flash(ev.process.name));
    if (ev.change.includes("state")) refreshTimeline();
    if (ev.process.name === selected && ev.change.includes("pid")) loadLogs();
  });
  es.addEventListener("phase", (e) => {
    const ph = JSON.parse(e.data);
    Object.assign(status, ph);
    refreshTimeline();
    queueRedraw();
  });
  es.addEventListener("resources", (e) => onResources(JSON.parse(e.data)));
  es.addEventListener("overflow", () => { $("conn").textContent = "fell behind; reconnecting…"; });
}

// token resolves to the token of actions: the tab's, or one typed into a
// password field ("" if cancelled).
function token() {
  const t = sessionStorage.getItem("podvisor-token");
  if (t) return Promise.resolve(t);
  const d = $("tokendlg"), input = $("token");
  input.value = "";
  return new Promise((resolve) => {
    d.addEventListener("close", () => {
      const v = d.returnValue === "ok" ? input.value : "";
      input.value = "";
      if (v) sessionStorage.setItem("podvisor-token", v);
      resolve(v);
    }, { once: true });
    d.returnValue = "";
    d.showModal();
  });
}

async function act(op, body) {
  const what = op + (body.names ? " " + body.names.join(" ") : "") + (body.signal ? " " + body.signal : "");
  if (!confirm(what + "?")) return;
  const tok = await token();
  if (!tok) { $("result").textContent = what + ": cancelled (no token)"; return; }
  $("result").textContent = what + "…";
  try {
    const r = await fetch("/ui/api/" + op, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: "Bearer " + tok },
      body: JSON.stringify(body),
    });
    const res = await r.json();
    if (r.status === 401) sessionStorage.removeItem("podvisor-token");
    const parts = [res.error || ""].concat((res.results || []).map((x) => x.name + ": " + x.message), res.plan || []);
    $("result").textContent = what + ": " + (res.ok ? "done" : "refused") + " " + parts.filter(Boolean).join("; ");
  } catch (e) {
    $("result").textContent = what + ": " + e;
  }
}

let logText = "";
async function loadLogs() {
  if (!cfg.logs || !selected) return;
  const r = await fetch("/ui/api/logs?tail=200&name=" + encodeURIComponent(selected));
  logText = r.ok ? await r.text() : "";
  showLogs();
}
function showLogs() {
  const q = $("logsearch").value;
  const pre = $("logs");
  if (!q) { pre.textContent = logText; pre.scrollTop = pre.scrollHeight; return; }
  pre.replaceChildren(...logText.split("\n").filter((l) => l.includes(q)).flatMap((l) => {
    const out = [];
    l.split(q).forEach((part, i) => { if (i) out.push(el("mark", {}, q)); out.push(document.createTextNode(part)); });
    out.push(document.createTextNode("\n"));
    return out;
  }));
}

function select(name) {
  selected = name;
  $("selected").hidden = !name;
  $("selname").textContent = name;
  $("actions").hidden = !cfg.actions;
  $("nologs").hidden = cfg.logs;
  $("logbox").hidden = !cfg.logs;
  loadLogs();
  queueRedraw();
}

async function init() {
  // A timeline that cannot be fetched (podvisor gone) is said, not shown broken.
  $("timeline").addEventListener("error", () => { $("timeline").hidden = true; $("notimeline").hidden = false; });
  $("timeline").addEventListener("load", () => { $("timeline").hidden = false; $("notimeline").hidden = true; });
  if ($("timeline").complete && !$("timeline").naturalWidth) { $("timeline").hidden = true; $("notimeline").hidden = false; }
  $("reload").addEventListener("click", () => act("reload", {}));
  $("filter").addEventListener("input", queueRedraw);
  $("logsearch").addEventListener("input", showLogs);
  for (const th of document.querySelectorAll("#procs th")) {
    th.addEventListener("click", () => {
      if (sortKey === th.dataset.key) sortRev = !sortRev;
      else { sortKey = th.dataset.key; sortRev = false; }
      queueRedraw();
    });
  }
  document.querySelector("#procs tbody").addEventListener("click", (e) => {
    const tr = e.target.closest("tr");
    if (tr) select(tr.dataset.name);
  });
  for (const b of document.querySelectorAll("#actions button")) {
    b.addEventListener("click", () => {
      const op = b.dataset.op;
      if (op === "signal") {
        const sig = prompt("Signal to send to " + selected + " (e.g. HUP, USR1):");
        if (sig) act("signal", { names: [selected], signal: sig });
      } else act(op, { names: [selected] });
    });
  }
  setInterval(() => { if (procs.size) queueRedraw(); }, 1000); // uptimes
  setInterval(() => { if (cfg.logs && selected) loadLogs(); }, 2000);
  // The rows came with the page: a click may come before the config.
  try {
    const r = await fetch("/ui/api/config");
    if (r.ok) cfg = await r.json();
  } catch (e) { /* read-only then */ }
  $("reload").hidden = !cfg.actions;
  if (selected) select(selected);
  connect();
}

init();
