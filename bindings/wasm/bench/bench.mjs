// The benchmark workloads (workloads.mjs) in Node, one thread: Quabla's wasm build (the
// nodejs package) against jax-js (wasm device) and TensorFlow.js (wasm backend), in one run.
// Writes report-node.md beside the installed packages. Run through `cargo xtask wasm-bench`.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { LIBRARIES, jaxjs, quabla, report, runAll, tfjs } from "./workloads.mjs";

const dir = process.env.QUABLA_BENCH_DIR;
const req = createRequire(path.join(dir, "package.json"));
const load = async (name) => import(pathToFileURL(req.resolve(name)).href);
const pkg = process.env.QUABLA_WASM_NODE_PKG;

const [ours, jax, tf] = LIBRARIES;
const results = await runAll({
  [ours]: () => quabla(createRequire(import.meta.url)(pkg)),
  [jax]: async () => jaxjs(await load("@jax-js/jax")),
  [tf]: async () => tfjs(await load("@tensorflow/tfjs"), await load("@tensorflow/tfjs-backend-wasm")),
});
const wasmBytes = fs.statSync(pkg.replace(/quabla_wasm\.js$/, "quabla_wasm_bg.wasm")).size;
const md = report(results, `Node ${process.versions.node}`, wasmBytes);
fs.writeFileSync(path.join(dir, "report-node.md"), md);
console.log(md);
