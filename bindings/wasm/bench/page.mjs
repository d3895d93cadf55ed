// The benchmark workloads in the browser page: Quabla's web package, jax-js as an ES module,
// TensorFlow.js and its wasm backend as their browser bundles (script tags, global `tf`).
import { LIBRARIES, jaxjs, quabla, report, runAll, tfjs } from "./workloads.mjs";

const params = new URLSearchParams(location.search);
const modules = params.get("modules"), pkg = params.get("pkg");
const out = document.getElementById("log");
const log = (line) => { out.textContent += `${line}\n`; console.log(line); };

const script = (src) => new Promise((resolve, reject) => {
  const s = document.createElement("script");
  s.src = src;
  s.onload = resolve;
  s.onerror = () => reject(new Error(`cannot load ${src}`));
  document.head.append(s);
});

try {
  const wasmUrl = `${pkg}/quabla_wasm_bg.wasm`;
  const q = await import(`${pkg}/quabla_wasm.js`);
  await q.default();
  const [ours, jax, tf] = LIBRARIES;
  const results = await runAll({
    [ours]: () => quabla(q),
    [jax]: async () => jaxjs(await import(`${modules}/@jax-js/jax/dist/index.js`)),
    [tf]: async () => {
      await script(`${modules}/@tensorflow/tfjs/dist/tf.min.js`);
      await script(`${modules}/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js`);
      window.tf.wasm.setWasmPaths(`${modules}/@tensorflow/tfjs-backend-wasm/dist/`);
      return tfjs(window.tf, window.tf.wasm);
    },
  }, log);
  const wasmBytes = (await (await fetch(wasmUrl)).arrayBuffer()).byteLength;
  const where = navigator.userAgent.match(/(Headless)?Chrome\/[\d.]+/)?.[0] ?? navigator.userAgent;
  const md = report(results, where, wasmBytes);
  log(md);
  window.benchResult = { md, results };
} catch (e) {
  log(`failed: ${e.stack ?? e}`);
  window.benchResult = { error: String(e.stack ?? e) };
}
