// The playground's page (docs/playground.md). The engine runs in a worker
// (worker.js); this file draws what it returns and edits the scenario.
// Plain JavaScript, no library.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";

// ---- the worker ----
const worker = new Worker("worker.js");
let nextID = 0;
const waiting = new Map();
worker.onmessage = (e) => {
  const { id, out, ms, phases, sent } = e.data;
  const w = waiting.get(id);
  waiting.delete(id);
  if (phases) phases.post = performance.timeOrigin + performance.now() - sent;
  w({ out, ms, phases });
};
function call(fn, ...args) {
  return new Promise((resolve) => {
    const id = nextID++;
    waiting.set(id, resolve);
    worker.postMessage({ id, fn, args });
  });
}

// ---- state ----
const st = {
  presets: null,     // presets.json
  preset: "",        // the preset's name ("" for a scenario of a link)
  presetText: "",    // its text, to tell an edited scenario
  lesson: null,
  algorithms: null,  // the rows shown (null: every row)
  result: null,      // the last run (play.Result)
  controls: null,    // play.Controls of the text
  sel: null,         // {row, index}
  view: null,        // [t0, t1] ns of the timeline
  seq: 0,            // the latest run asked for
};

function file() {
  if (st.preset && $("yaml").value === st.presetText) return "builtin:" + st.preset;
  return "scenario.yaml";
}

function setStatus(s, error) {
  $("status").textContent = s;
  $("status").classList.toggle("error", !!error);
}

// ---- formatting ----
function dur(ns) {
  if (ns === -1) return "never";
  const a = Math.abs(ns);
  if (a === 0) return "0";
  if (a >= 60e9 && ns % 60e9 === 0) return ns / 60e9 + "m";
  if (a >= 1e9) return +(ns / 1e9).toFixed(6) + "s";
  if (a >= 1e6) return +(ns / 1e6).toFixed(3) + "ms";
  if (a >= 1e3) return +(ns / 1e3).toFixed(3) + "µs";
  return ns + "ns";
}
function num(v) {
  return Number.isInteger(v) ? String(v) : v.toFixed(3);
}
function el(tag, attrs, ...kids) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}

// ---- running ----
async function run() {
  const seq = ++st.seq;
  const t0 = performance.now();
  const text = $("yaml").value;
  const opts = JSON.stringify({ algorithms: st.algorithms ? st.algorithms.join(",") : "" });
  setStatus("running…");
  const [{ out: res, ms, phases }, { out: ctl }] = await Promise.all([
    call("ratesimRun", file(), text, opts),
    call("ratesimDescribe", file(), text),
  ]);
  if (seq !== st.seq) return; // a newer run is on its way
  const t1 = performance.now();
  st.result = res;
  if (!ctl.error) st.controls = ctl;
  $("version").textContent = res.version || "";
  $("file").textContent = file();
  showErrors(res.error);
  showRefused(res.refused);
  if (res.report) {
    st.sel = null;
    $("why").hidden = true;
    drawResults(res);
    st.view = [0, Math.max(res.report.duration_ns, 1)];
    drawTimeline();
    drawWindows();
  }
  if (!ctl.error) showControls(ctl);
  $("command").textContent = res.command || "";
  const total = performance.now() - t0;
  // where the time went, for the measure of the reruns (docs/playground.md)
  if (phases) {
    phases.draw = performance.now() - t1;
    document.body.dataset.phases = Object.entries(phases).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ");
  }
  document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
  document.body.dataset.rerunMs = total.toFixed(1);
  setStatus(res.error ? "the scenario has errors" : res.refused ? "too large for the browser" :
    `ran in ${ms.toFixed(0)} ms (drawn in ${total.toFixed(0)} ms)`, !!res.error);
}

let timer = 0;
function runSoon() {
  clearTimeout(timer);
  timer = setTimeout(run, 300);
}

function showErrors(err) {
  const ul = $("errors");
  ul.replaceChildren();
  if (!err) return;
  const problems = err.problems && err.problems.length ? err.problems : [{ text: err.message || err }];
  for (const p of problems) {
    const li = el("li", {}, p.text);
    if (p.line) {
      li.dataset.line = p.line;
      li.dataset.col = p.col;
      li.onclick = () => goTo(p.line, p.col);
    }
    ul.append(li);
  }
}

// goTo puts the editor's cursor at line:col.
function goTo(line, col) {
  const ta = $("yaml");
  const lines = ta.value.split("\n");
  let at = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) at += lines[i].length + 1;
  at += Math.max(col - 1, 0);
  ta.focus();
  ta.setSelectionRange(at, at + 1);
}

function showRefused(r) {
  const box = $("refused");
  box.hidden = !r;
  if (!r) return;
  box.replaceChildren(
    el("strong", {}, "Too large to run in the browser."),
    el("pre", {}, r.message),
    el("p", {}, "Run it on the command line: ", el("code", {}, r.command)),
  );
  $("results").tBodies[0].replaceChildren();
  $("timeline").replaceChildren();
  $("windows").replaceChildren();
}

// ---- results ----
function policyPeak(r, perNs) {
  const p = (r.peaks || []).find((p) => p.window_ns === perNs) || (r.peaks || [])[0];
  return p;
}

function drawResults(res) {
  const tb = $("results").tBodies[0];
  tb.replaceChildren();
  const per = res.report.limit.per_ns;
  res.report.results.forEach((r, i) => {
    const p = policyPeak(r, per);
    const tr = el("tr", { "data-row": i, "data-label": r.label },
      el("td", {}, r.label), el("td", { class: "l" }, r.algorithm),
      el("td", { "data-col": "offered" }, String(r.offered)),
      el("td", { "data-col": "accepted" }, String(r.accepted)),
      el("td", { "data-col": "delayed" }, String(r.delayed)),
      el("td", { "data-col": "rejected" }, String(r.rejected)),
      el("td", { "data-col": "peak" }, p ? String(p.count) : ""),
      el("td", {}, p ? p.ratio.toFixed(1) + "x" : ""));
    tb.append(tr);
  });
  $("notes").textContent = (res.notes || []).join(" ");
}

// ---- the timeline ----
const W = 900, LANE = 34, LEFT = 130, RIGHT = 10, TOP = 8;

function xOf(t) {
  const [a, b] = st.view;
  return LEFT + ((t - a) / (b - a)) * (W - LEFT - RIGHT);
}

function ticks(svg, y0, y1) {
  const [a, b] = st.view;
  const span = b - a;
  let step = Math.pow(10, Math.floor(Math.log10(span / 6)));
  for (const m of [2, 5, 10]) if (span / step > 8) step = Math.pow(10, Math.floor(Math.log10(span / 6))) * m;
  const first = Math.ceil(a / step) * step;
  for (let t = first; t <= b; t += step) {
    const x = xOf(t);
    svg.append(el("svg:line", { x1: x, x2: x, y1: y0, y2: y1, stroke: "#eee" }));
    svg.append(el("svg:text", { x, y: y1 + 12, "text-anchor": "middle", fill: "#555" }, dur(Math.round(t))));
  }
}

function drawTimeline() {
  const res = st.result;
  const box = $("timeline");
  box.replaceChildren();
  if (!res || !res.rows) return;
  const rows = res.rows;
  const h = TOP + rows.length * LANE + 20;
  const svg = el("svg:svg", { xmlns: SVGNS, viewBox: `0 0 ${W} ${h}`, width: "100%", id: "timeline-svg" });
  svg.append(el("svg:rect", { x: 0, y: 0, width: W, height: h, fill: "#fff" }));
  ticks(svg, TOP, TOP + rows.length * LANE);
  const per = res.report.limit.per_ns;
  // the window boundaries, where a fixed window starts again
  const [a, b] = st.view;
  if ((b - a) / per < 200) {
    for (let t = Math.ceil(a / per) * per; t <= b; t += per) {
      const x = xOf(t);
      svg.append(el("svg:line", { x1: x, x2: x, y1: TOP, y2: TOP + rows.length * LANE, stroke: "#88a", "stroke-dasharray": "3 3" }));
    }
  }
  rows.forEach((row, i) => {
    const y = TOP + i * LANE;
    svg.append(el("svg:text", { x: 4, y: y + LANE / 2 + 4 }, row.label));
    svg.append(el("svg:line", { x1: LEFT, x2: W - RIGHT, y1: y + LANE - 2, y2: y + LANE - 2, stroke: "#ddd" }));
    if (!row.kept) {
      svg.append(el("svg:text", { x: LEFT + 4, y: y + LANE / 2 + 4, fill: "#777" }, "too many decisions to draw (the counts above are the run's)"));
      return;
    }
    // one path per verdict and attempt band, a mark per column of
    // pixels: a few DOM nodes whatever the number of decisions (a rect
    // per decision made the redraw of the retry storms take seconds)
    const d = ["", "", "", "", "", ""];
    let last = [-1, -1, -1, -1, -1, -1];
    for (let j = 0; j < row.t.length; j++) {
      const t = row.t[j];
      if (t < a || t > b) continue;
      const x = Math.round(xOf(t) * 2) / 2;
      const v = row.v[j];
      const band = v === "r" ? 2 : v === "d" ? 1 : 0;
      const k = band * 2 + (row.attempt[j] > 1 ? 1 : 0);
      if (last[k] === x) continue;
      last[k] = x;
      d[k] += `M${x - 2} ${y + 4 + band * 9}h4v8h-4z`;
    }
    const g = el("svg:g", { "data-row": i });
    d.forEach((p, k) => {
      if (!p) return;
      const band = k >> 1;
      g.append(el("svg:path", { d: p, class: VERDICT[band] + " dec", fill: FILL[band], opacity: k & 1 ? 0.55 : 1 }));
    });
    if (st.sel && st.sel.row === i) {
      const j = st.sel.index, t = row.t[j];
      const band = row.v[j] === "r" ? 2 : row.v[j] === "d" ? 1 : 0;
      if (t >= a && t <= b) {
        g.append(el("svg:rect", { x: xOf(t) - 2, y: y + 4 + band * 9, width: 4, height: 8, fill: FILL[band],
          stroke: "#000", "stroke-width": 2, class: "sel", "data-row": i, "data-index": j }));
      }
    }
    svg.append(g);
  });
  svg.addEventListener("click", (e) => {
    const hit = decisionAt(svg, e.clientX, e.clientY);
    if (hit) select(hit.row, hit.index);
  });
  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const rect = svg.getBoundingClientRect();
    const fx = ((e.clientX - rect.left) / rect.width * W - LEFT) / (W - LEFT - RIGHT);
    zoom(e.deltaY < 0 ? 0.5 : 2, Math.min(Math.max(fx, 0), 1));
  }, { passive: false });
  box.append(svg);
}

const VERDICT = ["accept", "delay", "reject"];
const FILL = ["#2a8a3a", "#d08a00", "#c62828"];

// decisionAt is the decision drawn under the point (clientX, clientY) of
// the timeline: the row of its lane, the verdict of its band, the nearest
// in time within 4 pixels; null if none.
function decisionAt(svg, clientX, clientY) {
  const res = st.result;
  const rect = svg.getBoundingClientRect();
  const scale = W / rect.width;
  const x = (clientX - rect.left) * scale, y = (clientY - rect.top) * scale;
  const i = Math.floor((y - TOP) / LANE);
  if (i < 0 || i >= res.rows.length || !res.rows[i].kept) return null;
  const band = Math.min(Math.max(Math.floor((y - TOP - i * LANE - 4) / 9), 0), 2);
  const row = res.rows[i];
  const want = "adr"[band];
  let best = -1, bestDx = 4;
  for (let j = 0; j < row.t.length; j++) {
    if (row.v[j] !== want) continue;
    const dx = Math.abs(xOf(row.t[j]) - x);
    if (dx < bestDx) { best = j; bestDx = dx; }
  }
  return best < 0 ? null : { row: i, index: best };
}

// pointOf is where decision index of row is drawn, in the page's
// coordinates: what a click there selects.
function pointOf(row, index) {
  const svg = $("timeline-svg");
  const rect = svg.getBoundingClientRect();
  const r = st.result.rows[row];
  const band = r.v[index] === "r" ? 2 : r.v[index] === "d" ? 1 : 0;
  const s = rect.width / W;
  return { x: rect.left + xOf(r.t[index]) * s, y: rect.top + (TOP + row * LANE + 8 + band * 9) * s };
}

function zoom(f, at) {
  if (!st.result || !st.result.report) return;
  const full = [0, Math.max(st.result.report.duration_ns, 1)];
  const [a, b] = st.view;
  const c = a + (b - a) * (at === undefined ? 0.5 : at);
  let na = c - (c - a) * f, nb = c + (b - c) * f;
  if (nb - na < 1000) return;
  if (na < full[0]) { nb += full[0] - na; na = full[0]; }
  if (nb > full[1]) { na -= nb - full[1]; nb = full[1]; }
  st.view = [Math.max(na, full[0]), Math.min(nb, full[1])];
  drawTimeline();
  drawWindows();
}

// ---- the window chart ----
function drawWindows() {
  const res = st.result;
  const box = $("windows");
  box.replaceChildren();
  if (!res || !res.rows) return;
  const PH = 70;
  const rows = res.rows.filter((r) => r.window);
  const h = TOP + rows.length * (PH + 8) + 20;
  const svg = el("svg:svg", { xmlns: SVGNS, viewBox: `0 0 ${W} ${h}`, width: "100%", id: "windows-svg" });
  svg.append(el("svg:rect", { x: 0, y: 0, width: W, height: h, fill: "#fff" }));
  ticks(svg, TOP, TOP + rows.length * (PH + 8));
  const start = res.report.start_ns;
  const [a, b] = st.view;
  rows.forEach((row, i) => {
    const w = row.window;
    const y0 = TOP + i * (PH + 8);
    let peak = 0;
    for (const m of w.Max) peak = Math.max(peak, m);
    const top = Math.max(peak, row.limit) * 1.15 || 1;
    const yOf = (v) => y0 + PH - (v / top) * PH;
    let d = "";
    w.Max.forEach((m, k) => {
      const t0 = w.StartNs - start + k * w.StepNs, t1 = t0 + w.StepNs;
      if (t1 < a || t0 > b) return;
      const x0 = Math.max(xOf(t0), LEFT), x1 = Math.min(xOf(t1), W - RIGHT);
      d += (d ? "L" : "M") + x0.toFixed(1) + "," + yOf(m).toFixed(1) + "L" + x1.toFixed(1) + "," + yOf(m).toFixed(1);
    });
    svg.append(el("svg:path", { d, fill: "none", stroke: "#1f5fa8", "stroke-width": 1.5 }));
    const ly = yOf(row.limit);
    svg.append(el("svg:line", { x1: LEFT, x2: W - RIGHT, y1: ly, y2: ly, stroke: "#c62828", "stroke-dasharray": "5 3" }));
    svg.append(el("svg:text", { x: 4, y: y0 + 14 }, row.label));
    svg.append(el("svg:text", { x: 4, y: y0 + 28, fill: "#555", "data-peak": peak }, `peak ${peak}, limit ${row.limit}`));
    svg.append(el("svg:text", { x: 4, y: y0 + 42, fill: "#555" }, `in ${dur(w.WindowNs)}`));
  });
  box.append(svg);
}

// ---- why this decision ----
async function select(row, index) {
  st.sel = { row, index };
  drawTimeline();
  const { out } = await call("ratesimExplain", row, index);
  const box = $("why");
  box.hidden = false;
  const tb = $("why-table").tBodies[0];
  tb.replaceChildren();
  if (out.error) {
    $("why-head").textContent = out.error;
    return;
  }
  const me = out[row];
  $("why-head").textContent = `Request at ${dur(me.time_ns)}, key ${me.key}` +
    (me.attempt > 1 ? `, attempt ${me.attempt}` : "") + (me.cost > 1 ? `, cost ${me.cost}` : "") +
    ` (decision #${index} of ${me.label})`;
  const gauges = (gs) => (gs || []).map((g) => `${g.name} ${num(g.value)}`).join(", ");
  out.forEach((w, i) => {
    const tr = el("tr", { "data-row": i, class: i === row ? "me" : "" });
    if (!w.found) {
      tr.append(el("td", {}, w.label), el("td", { colspan: 6 }, "this row saw no such attempt"));
    } else {
      const node = w.node !== undefined && w.node !== null ? ` on node ${w.node}, in effect at ${dur(w.decided_ns)}` : "";
      // a cluster row: where its rule ran and when, what was in flight
      // then, and what else the mode decided on (web/play's Why)
      let where = "";
      if (w.where) {
        where = `decided in the ${w.where} at ${dur(w.at_ns)}`;
        if (w.in_flight !== undefined && w.in_flight !== null) {
          where += `; ${w.in_flight} store operation${w.in_flight === 1 ? "" : "s"} in flight (${w.in_flight_key || 0} of this key)`;
        }
      }
      const rule = el("td", {}, w.rule);
      if (where || w.note) rule.append(el("div", { "data-col": "cluster", class: "note" }, [where, w.note].filter(Boolean).join(". ")));
      tr.append(
        el("td", {}, w.label),
        el("td", { "data-col": "verdict" }, w.verdict + node),
        el("td", {}, dur(w.delay_ns)),
        el("td", {}, w.verdict === "reject" ? dur(w.retry_after_ns) : ""),
        el("td", { "data-col": "before" }, w.state || gauges(w.before)),
        el("td", { "data-col": "after" }, w.state ? "" : gauges(w.after)),
        rule,
      );
    }
    tb.append(tr);
  });
}

function step(by) {
  const res = st.result;
  if (!res || !res.rows || !res.rows.length) return;
  let { row, index } = st.sel || { row: 0, index: -1 };
  const n = res.rows[row].t ? res.rows[row].t.length : 0; // none kept: no timeline
  if (!n) return;
  index = Math.min(Math.max(index + by, 0), n - 1);
  const t = res.rows[row].t[index];
  if (t < st.view[0] || t > st.view[1]) {
    const span = st.view[1] - st.view[0];
    st.view = [Math.max(t - span / 2, 0), Math.max(t - span / 2, 0) + span];
  }
  select(row, index);
}

// ---- controls ----
function showControls(c) {
  const set = (id, v) => { if (document.activeElement !== $(id)) $(id).value = v; };
  set("c-rate", c.rate);
  set("c-per", c.per);
  set("c-burst", c.burst);
  for (const e of document.querySelectorAll(".bursts")) e.hidden = !c.bursts;
  if (c.bursts) {
    set("c-burst-count", c.bursts.count);
    set("c-burst-offset", Math.round(c.bursts.offset_ns / 1e6));
    $("c-burst-offset").min = -Math.round(c.per_ns / 2e6);
    $("c-burst-offset").max = Math.round(c.per_ns / 2e6);
    $("o-burst-offset").textContent = Math.round(c.bursts.offset_ns / 1e6) + " ms";
  }
  for (const e of document.querySelectorAll(".flow")) e.hidden = !c.flow;
  if (c.flow) {
    set("c-flow-rate", c.flow.rate);
    set("c-clients", c.flow.clients);
  }
  set("c-nodes", c.nodes || 1);
  for (const e of document.querySelectorAll(".cluster")) e.hidden = !c.nodes;
  if (c.mode) set("c-mode", c.mode);
  set("c-workers", c.workers || "");
  const box = $("algorithms");
  const names = [...c.algorithms, ...(c.skipped || [])];
  const shown = st.algorithms || c.algorithms;
  if (box.dataset.names !== names.join(",")) {
    box.dataset.names = names.join(",");
    box.replaceChildren(el("span", {}, "rows:"));
    for (const n of names) {
      const cb = el("input", { type: "checkbox", value: n, "data-algorithm": n });
      cb.checked = shown.includes(n);
      cb.onchange = () => {
        const on = [...box.querySelectorAll("input:checked")].map((x) => x.value);
        st.algorithms = on.length === names.length - (c.skipped || []).length && !(c.skipped || []).some((s) => on.includes(s)) ? null : on;
        run();
      };
      box.append(el("label", {}, cb, n));
    }
  }
}

async function edit(control, value) {
  if (value === "" || value === null) return;
  const { out } = await call("ratesimEdit", file(), $("yaml").value, control, String(value));
  if (out.error) {
    showErrors({ message: control + ": " + out.error });
    return;
  }
  $("yaml").value = out.text;
  await run();
}

for (const input of document.querySelectorAll("[data-control]")) {
  const control = input.dataset.control;
  input.addEventListener("change", () => {
    let v = input.value;
    if (control === "burst-offset") v = v + "ms";
    edit(control, v);
  });
  if (control === "burst-offset") {
    input.addEventListener("input", () => { $("o-burst-offset").textContent = input.value + " ms"; });
  }
}
for (const m of ["local", "split", "central", "racy", "sync", "lease", "global"]) $("c-mode").append(el("option", { value: m }, m));

// ---- presets and lessons ----
async function loadPresets() {
  const resp = await fetch("presets.json");
  st.presets = await resp.json();
  const sel = $("preset");
  const lessons = el("optgroup", { label: "Lessons" });
  for (const l of st.presets.lessons) {
    if (!l.runs || !l.runs.length) continue;
    lessons.append(el("option", { value: "lesson:" + l.name }, `${l.name}: ${l.title}`));
  }
  const builtins = el("optgroup", { label: "Built-in scenarios" });
  for (const b of st.presets.builtins) {
    builtins.append(el("option", { value: "builtin:" + b.name }, b.name + (b.fits ? "" : " (too large for the browser)")));
  }
  sel.append(lessons, builtins);
  sel.onchange = () => choose(sel.value);
}

// reflow joins the lines `ratesim demo` folded at 80 columns, so that the
// words fill the page's box; a table's lines (two spaces first) and a
// list's items stay lines of their own.
function reflow(text) {
  return text.split("\n\n").map((p) => p.split("\n").reduce((out, line) => {
    if (out === null) return line;
    const table = /^  .*\S {2,}\S/.test(line);
    if (line === "" || line.startsWith("- ") || table) return out + "\n" + line;
    return out + " " + line.trim();
  }, null)).join("\n\n");
}

function builtin(name) {
  return st.presets.builtins.find((b) => b.name === name);
}

function choose(value, run_ = 0) {
  const [kind, name] = value.split(/:(.*)/s);
  st.lesson = null;
  $("lesson").hidden = true;
  if (kind === "lesson") {
    const l = st.presets.lessons.find((l) => l.name === name);
    st.lesson = l;
    $("lesson").hidden = false;
    $("lesson-text").textContent = reflow(l.text);
    const charts = $("lesson-charts");
    charts.replaceChildren();
    for (const svg of l.charts || []) {
      const img = el("img", { alt: "the lesson's chart", src: "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(svg))) });
      img.style.width = "100%";
      charts.append(img);
    }
    const runs = $("lesson-runs");
    runs.replaceChildren();
    if (l.runs.length > 1) {
      l.runs.forEach((r, i) => {
        const b = el("button", { type: "button" }, "run " + (i + 1) + ": " + r.scenario);
        b.onclick = () => loadRun(r);
        runs.append(b);
      });
    }
    loadRun(l.runs[run_]);
    return;
  }
  loadRun({ scenario: name, algorithms: "" });
}

function loadRun(r) {
  // a built-in by name, or a lesson's replay of a bundled trace (its
  // scenario's text, run as a file of the page's)
  const b = r.text ? { text: r.text } : builtin(r.scenario);
  st.preset = r.text ? "" : r.scenario;
  st.presetText = b.text;
  st.algorithms = r.algorithms ? r.algorithms.split(",") : null;
  $("algorithms").dataset.names = "";
  $("yaml").value = b.text;
  run();
}

// ---- share, downloads ----
function b64url(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function unb64url(s) {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}
async function pipe(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

// shareLink is the page's address with the scenario deflated into the
// fragment (#s=...), and the rows shown (&a=...).
async function shareLink() {
  const z = await pipe(new TextEncoder().encode($("yaml").value), new CompressionStream("deflate-raw"));
  let h = "#s=" + b64url(z);
  if (st.algorithms) h += "&a=" + encodeURIComponent(st.algorithms.join(","));
  return location.href.split("#")[0] + h;
}

async function fromLink() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (!h.get("s")) return false;
  const text = new TextDecoder().decode(await pipe(unb64url(h.get("s")), new DecompressionStream("deflate-raw")));
  st.preset = "";
  st.presetText = "";
  st.algorithms = h.get("a") ? h.get("a").split(",") : null;
  $("yaml").value = text;
  $("preset").value = "";
  await run();
  return true;
}

function download(name, type, data) {
  const a = el("a", { href: URL.createObjectURL(new Blob([data], { type })), download: name });
  document.body.append(a);
  a.click();
  a.remove();
}

$("share").onclick = async () => {
  const url = await shareLink();
  $("share-url").value = url;
  history.replaceState(null, "", url);
};
$("dl-yaml").onclick = () => download(file().replace("builtin:", "") .replace(/(\.yaml)?$/, ".yaml"), "application/yaml", $("yaml").value);
$("dl-csv").onclick = async () => {
  const { out } = await call("ratesimCSV");
  if (!out.error) download("decisions.csv", "text/csv", out.csv);
};
// svgText is a chart as a file of its own: its font and colours are
// written on it, so that it looks the same out of the page.
function svgText(id) {
  const svg = $(id).cloneNode(true);
  svg.setAttribute("font-family", '"Liberation Sans", Arial, sans-serif');
  svg.setAttribute("font-size", "11");
  return new XMLSerializer().serializeToString(svg);
}

// png draws a chart on a canvas, twice its size, and returns it as a PNG.
async function png(id) {
  const svg = $(id);
  const vb = svg.viewBox.baseVal;
  const url = URL.createObjectURL(new Blob([svgText(id)], { type: "image/svg+xml" }));
  try {
    const img = new Image(vb.width, vb.height);
    img.src = url;
    await img.decode();
    const c = document.createElement("canvas");
    c.width = vb.width * 2;
    c.height = vb.height * 2;
    c.getContext("2d").drawImage(img, 0, 0, c.width, c.height);
    return await new Promise((resolve) => c.toBlob(resolve, "image/png"));
  } finally {
    URL.revokeObjectURL(url);
  }
}

$("dl-timeline").onclick = () => download("timeline.svg", "image/svg+xml", svgText("timeline-svg"));
$("dl-windows").onclick = () => download("window.svg", "image/svg+xml", svgText("windows-svg"));
$("dl-timeline-png").onclick = async () => download("timeline.png", "image/png", await png("timeline-svg"));
$("dl-windows-png").onclick = async () => download("window.png", "image/png", await png("windows-svg"));
$("zoom-in").onclick = () => zoom(0.5);
$("zoom-out").onclick = () => zoom(2);
$("zoom-reset").onclick = () => { st.view = [0, Math.max(st.result.report.duration_ns, 1)]; drawTimeline(); drawWindows(); };
$("step-back").onclick = () => step(-1);
$("step-next").onclick = () => step(1);
$("run").onclick = run;
$("yaml").addEventListener("input", runSoon);
window.addEventListener("hashchange", fromLink);

// ---- start ----
(async () => {
  try {
    await loadPresets();
    const { out: v } = await call("ratesimVersion");
    $("version").textContent = v;
    if (!(await fromLink())) {
      $("preset").value = "lesson:double-burst";
      choose("lesson:double-burst");
    }
  } catch (err) {
    setStatus(String(err), true);
    throw err;
  }
})();
