// The engine in a worker, so that the page never freezes while it runs
// (docs/playground.md). It loads Go's wasm_exec.js and the engine,
// gzipped (ratesim.wasm.gz, unzipped here so that any static host serves
// it as it is), then answers each message {id, fn, args} with
// {id, out, ms}: fn is one of the functions web/wasm registers, out its
// JSON parsed, ms the time it took.
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

self.onmessage = async (e) => {
  const { id, fn, args } = e.data;
  const s = await Promise.race([loaded, started]);
  if (s && s.failed) {
    self.postMessage({ id, out: { error: "the engine did not load: " + s.failed }, ms: 0 });
    return;
  }
  const t0 = performance.now();
  let out;
  try {
    out = JSON.parse(self[fn](...args));
  } catch (err) {
    out = { error: String(err) };
  }
  self.postMessage({ id, out, ms: performance.now() - t0 });
};
