// The browser-anchor workloads, shared by the Node runner (bench.mjs) and the Chromium page
// (index.html): matmul 512^3, a 20-op elementwise chain over 1e6 values, an MLP
// 2-64-64-64-1 (tanh) training step on 1024 points (loss, gradients, SGD update), and the PINN
// step (Quabla only: see the note in the report). Every timed call includes reading the result
// back. Each runner passes the libraries in, loaded its own way.
import { initParams, points, trainStep, LAYERS } from "../www/pinn.js";

/// Median milliseconds per call of `run` (async), after warm-up, over about `budgetMs`.
async function time(run, budgetMs = 3000) {
  for (let i = 0; i < 3; i++) await run();
  const samples = [];
  const end = performance.now() + budgetMs;
  while (samples.length < 5 || (performance.now() < end && samples.length < 200)) {
    const t0 = performance.now();
    await run();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

function lcg(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) - 0.5;
}
const randomData = (n, seed) => { const r = lcg(seed); return Float32Array.from({ length: n }, r); };

const A = randomData(512 * 512, 1), B = randomData(512 * 512, 2);
const X = randomData(1e6, 3);
const MLP_X = randomData(1024 * 2, 4), MLP_Y = randomData(1024, 5);
const mlpInit = () => LAYERS.flatMap(([i, o], k) => [randomData(i * o, 10 + k).map((v) => v * Math.sqrt(6 / (i + o)) * 2), new Float32Array(o)]);
const LR = 1e-2;

// The chain: 20 elementwise ops, the same in every library.
const CHAIN = ["sin", "mul", "add", "tanh", "exp", "mul", "sub", "cos", "add", "mul", "sin", "add", "mul", "tanh", "sub", "exp", "mul", "add", "cos", "mul"];

export async function quabla(q) {
  await q.init({ backend: "cpu" });
  const out = {};
  const a = q.array(A, [512, 512]), b = q.array(B, [512, 512]);
  const mm = q.jit((a, b) => q.matmul(a, b));
  out.matmul = await time(async () => { await mm(a, b).data(); });
  const chain = q.jit((x) => {
    for (const op of CHAIN) x = op === "mul" ? x.mul(0.9) : op === "add" ? x.add(0.1) : op === "sub" ? x.sub(0.05) : q[op](x);
    return x;
  });
  const x = q.array(X, [1e6]);
  out.chain = await time(async () => { await chain(x).data(); });
  const mlp = (p, x) => {
    let h = x;
    for (let l = 0; l < 3; l++) h = q.tanh(q.matmul(h, p[2 * l]).add(p[2 * l + 1]));
    return q.matmul(h, p[6]).add(p[7]);
  };
  const step = q.jit((p, x, y) => {
    const [l, g] = q.valueAndGrad((p) => q.mean(mlp(p, x).sub(y).square()))(p);
    return [p.map((w, k) => w.sub(g[k].mul(LR))), l];
  });
  let p = mlpInit().map((w, k) => q.array(w, k % 2 ? [LAYERS[k >> 1][1]] : LAYERS[k >> 1]));
  const mx = q.array(MLP_X, [1024, 2]), my = q.array(MLP_Y, [1024, 1]);
  out.mlp = await time(async () => { let l; [p, l] = step(p, mx, my); await l.data(); });
  const { inner, bnd } = points(256);
  const xs = q.array(inner, [256, 2]), xb = q.array(bnd, [256, 2]);
  const opt = q.adam(1e-3);
  let pp = initParams(q, 0), st = opt.init(pp);
  const pstep = trainStep(q, opt);
  out.pinn = await time(async () => { let l; [pp, st, l] = pstep(pp, st, xs, xb); await l.data(); });
  return out;
}

export async function jaxjs(jax) {
  const { init, numpy: np, jit, valueAndGrad, defaultDevice } = jax;
  await init("wasm");
  defaultDevice("wasm");
  const out = {};
  const a = np.array(A).reshape([512, 512]), b = np.array(B).reshape([512, 512]);
  const mm = jit((a, b) => np.matmul(a, b));
  // jax-js: data() consumes its array (move semantics), so nothing is disposed after it.
  out.matmul = await time(async () => { await mm(a.ref, b.ref).data(); });
  const chain = jit((x) => {
    for (const op of CHAIN) x = op === "mul" ? x.mul(0.9) : op === "add" ? x.add(0.1) : op === "sub" ? x.sub(0.05) : np[op](x);
    return x;
  });
  const x = np.array(X);
  out.chain = await time(async () => { await chain(x.ref).data(); });
  const mlp = (p, x) => {
    let h = x;
    for (let l = 0; l < 3; l++) h = np.tanh(np.matmul(h, p[2 * l].ref).add(p[2 * l + 1].ref));
    return np.matmul(h, p[6].ref).add(p[7].ref);
  };
  const step = jit((p, x, y) => {
    const [l, g] = valueAndGrad((p) => {
      const r = mlp(p, x).sub(y);
      const loss = np.mean(r.ref.mul(r));
      for (const w of p) w.dispose();
      return loss;
    })(p.map((w) => w.ref));
    const next = p.map((w, k) => w.sub(g[k].mul(LR)));
    return [next, l];
  });
  let p = mlpInit().map((w, k) => np.array(w).reshape(k % 2 ? [LAYERS[k >> 1][1]] : LAYERS[k >> 1]));
  const mx = np.array(MLP_X).reshape([1024, 2]), my = np.array(MLP_Y).reshape([1024, 1]);
  out.mlp = await time(async () => {
    const [next, l] = step(p, mx.ref, my.ref);
    p = next;
    await l.data();
  });
  return out;
}

export async function tfjs(tf, wasm) {
  // One thread, like the others (without cross-origin isolation the browser has one anyway).
  wasm.setThreadsCount?.(1);
  await tf.setBackend("wasm");
  await tf.ready();
  const out = {};
  const a = tf.tensor2d(A, [512, 512]), b = tf.tensor2d(B, [512, 512]);
  out.matmul = await time(async () => { const r = tf.matMul(a, b); await r.data(); r.dispose(); });
  const x = tf.tensor1d(X);
  out.chain = await time(async () => {
    const r = tf.tidy(() => {
      let y = x;
      for (const op of CHAIN) y = op === "mul" ? y.mul(0.9) : op === "add" ? y.add(0.1) : op === "sub" ? y.sub(0.05) : tf[op](y);
      return y;
    });
    await r.data();
    r.dispose();
  });
  const p = mlpInit().map((w, k) => tf.variable(tf.tensor(w, k % 2 ? [LAYERS[k >> 1][1]] : LAYERS[k >> 1])));
  const mx = tf.tensor2d(MLP_X, [1024, 2]), my = tf.tensor2d(MLP_Y, [1024, 1]);
  const opt = tf.train.sgd(LR);
  const mlp = () => {
    let h = mx;
    for (let l = 0; l < 3; l++) h = tf.tanh(tf.matMul(h, p[2 * l]).add(p[2 * l + 1]));
    return tf.matMul(h, p[6]).add(p[7]);
  };
  out.mlp = await time(async () => {
    const l = opt.minimize(() => tf.mean(tf.square(mlp().sub(my))), true, p);
    await l.data();
    l.dispose();
  });
  return out;
}


export const LIBRARIES = ["quabla-wasm", "jax-js 0.1.25 (wasm)", "TF.js 4.22 (wasm)"];

/// Runs each library's workloads in turn (`runs` maps a name of LIBRARIES to a thunk);
/// a library that throws is reported as an error, not a failed run.
export async function runAll(runs, log = console.log) {
  const results = {};
  for (const name of LIBRARIES) {
    try {
      results[name] = await runs[name]();
    } catch (e) {
      log(`${name}: ${e.stack ?? e}`);
      results[name] = { error: String(e.message ?? e).split("\n")[0] };
    }
    log(`${name} ${JSON.stringify(results[name])}`);
  }
  return results;
}

/// The markdown table, the ratios against Quabla, and the shipped size.
export function report(results, where, wasmBytes) {
  const fmt = (r, k) => r.error ? "error" : r[k] === undefined ? "n/a" : k === "matmul" ? `${(2 * 512 ** 3 / (r[k] / 1e3) / 1e9).toFixed(1)} GFLOP/s (${r[k].toFixed(1)} ms)` : `${r[k].toFixed(2)} ms`;
  const rows = [
    ["matmul 512^3 f32", "matmul"],
    ["20-op chain, 1e6 f32", "chain"],
    ["MLP 2-64-64-64-1 step, 1024 pts", "mlp"],
    ["PINN step (256 pts, Laplacian by AD)", "pinn"],
  ];
  const names = Object.keys(results);
  let md = `${where}, one thread, median per call including readback.\n\n`;
  md += `| workload | ${names.join(" | ")} |\n|---|${names.map(() => "---").join("|")}|\n`;
  for (const [label, k] of rows) md += `| ${label} | ${names.map((n) => fmt(results[n], k)).join(" | ")} |\n`;
  const ours = results[LIBRARIES[0]];
  md += "\nRatios (other / quabla-wasm time; > 1 means quabla-wasm is faster):\n\n";
  for (const n of names.slice(1)) {
    const r = results[n];
    md += `- ${n}: ${rows.filter(([, k]) => !r.error && !ours.error && r[k] !== undefined && ours[k] !== undefined).map(([l, k]) => `${l} ${(r[k] / ours[k]).toFixed(2)}`).join("; ") || "none"}\n`;
  }
  md += `\nquabla_wasm_bg.wasm: ${(wasmBytes / 1e6).toFixed(2)} MB.\n`;
  md += "The PINN step is not run on jax-js (its Laplacian gradients are wrong in most formulations) nor TF.js (no nested gradients through tanh).\n";
  return md;
}
