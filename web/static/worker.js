// The engine in a worker, so that the page never freezes while it runs
// (docs/playground.md). It loads Go's wasm_exec.js and the engine,
// gzipped (ratesim.wasm.gz, unzipped here so that any static host serves
// it as it is), then answers each message {id, fn, args} with
// {id, out, ms, phases, sent}: fn is one of the functions web/wasm
// registers, out its JSON parsed, ms the time it took; a run also says
// how long the engine, Go's JSON and its parsing took (phases) and when
// it was sent, for the page's measure of its reruns. A run that replays a
// trace the engine has not been given fetches it first (withFiles).
"use strict";
importScripts("wasm_exec.js");

let ready;
const loaded = new Promise((resolve) => { ready = resolve; });
self.ratesimReady = () => ready();

async function start() {
  const go = new Go();
  const resp = await fetch("ratesim.wasm.gz");
  if (!resp.ok) throw new Error("ratesim.wasm.gz: " + resp.status);
  const code = await new Response(resp.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
  const { instance } = await WebAssembly.instantiate(code, go.importObject);
  go.run(instance);
}
const started = start().catch((err) => ({ failed: String(err) }));

// columns puts back into a run's rows their decisions, which the engine
// passes as float64s rather than JSON (web/wasm's columns): each column a
// Float64Array over the one buffer, which is moved to the page, not copied.
let moved = [];
function columns(out, data) {
  const all = new Float64Array(data.buffer, data.byteOffset, data.byteLength / 8);
  let at = 0;
  (out.rows || []).forEach((row, i) => {
    const n = row.v ? row.v.length : 0;
    for (const name of out.columns[i] || []) {
      row[name] = all.subarray(at, at + n);
      at += n;
    }
  });
  delete out.columns;
  moved = [all.buffer];
}

// withFiles fetches the files a run said it needs (play.Result's needs:
// the traces a replay reads) from traces/ beside the page, and gives them
// to the engine, which keeps them; the run is then made again. It returns
// the run's error when one is missing.
async function withFiles(out) {
  for (const name of out.needs) {
    const resp = await fetch("traces/" + encodeURIComponent(name));
    if (!resp.ok) {
      return { version: out.version, error: `${name}: the page has no such trace (it reads only those beside it, in traces/): ${resp.status}` };
    }
    self.ratesimAddFile(name, new Uint8Array(await resp.arrayBuffer()));
  }
  return null;
}

self.onmessage = async (e) => {
  const { id, fn, args } = e.data;
  const s = await Promise.race([loaded, started]);
  if (s && s.failed) {
    self.postMessage({ id, out: { error: "the engine did not load: " + s.failed }, ms: 0 });
    return;
  }
  const t0 = performance.now();
  let out, phases;
  moved = [];
  try {
    self.ratesimPhases = null;
    let text = self[fn](...args), data = null;
    if (Array.isArray(text)) [text, data] = text;
    let t1 = performance.now();
    out = JSON.parse(text);
    if (out.needs) {
      out = await withFiles(out);
      if (!out) {
        text = self[fn](...args);
        if (Array.isArray(text)) [text, data] = text;
        t1 = performance.now();
        out = JSON.parse(text);
      }
    }
    if (data) columns(out, data);
    if (self.ratesimPhases) phases = Object.assign({ parse: performance.now() - t1 }, self.ratesimPhases);
  } catch (err) {
    out = { error: String(err) };
  }
  self.postMessage({ id, out, ms: performance.now() - t0, phases, sent: performance.timeOrigin + performance.now() }, moved);
};
