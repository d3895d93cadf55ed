// The demo: trains the PINN live. Query parameters: backend=auto|webgpu|cpu, steps (0 = until
// paused), points (collocation points), lr. When the steps are done, #status reads "done" and
// #result holds a JSON summary (the page test reads it).
import init, * as q from "./pkg/quabla_wasm.js";
import { initParams, points, trainStep, mlp, grid } from "./pinn.js";

const params = new URLSearchParams(location.search);
const BACKEND = params.get("backend") ?? "auto";
const STEPS = Number(params.get("steps") ?? 2000);
const N = Number(params.get("points") ?? 256);
const LR = Number(params.get("lr") ?? 3e-3);
const GRID = 41;
const $ = (id) => document.getElementById(id);

// A perceptual-ish colour map (dark blue -> teal -> yellow).
function colour(t) {
  t = Math.min(1, Math.max(0, t));
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const x = t * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(x)), f = x - i;
  return stops[i].map((a, k) => Math.round(a + f * (stops[i + 1][k] - a)));
}

function heatmap(canvas, values, lo, hi) {
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(GRID, GRID);
  for (let i = 0; i < GRID; i++)
    for (let j = 0; j < GRID; j++) {
      const v = values[i * GRID + j];
      const [r, g, b] = colour((v - lo) / (hi - lo || 1));
      const o = 4 * ((GRID - 1 - i) * GRID + j); // y up
      img.data.set([r, g, b, 255], o);
    }
  ctx.putImageData(img, 0, 0);
}

function drawCurve(losses) {
  const c = $("curve"), ctx = c.getContext("2d");
  ctx.clearRect(0, 0, c.width, c.height);
  if (losses.length < 2) return;
  const logs = losses.map((l) => Math.log10(Math.max(l, 1e-12)));
  const hi = Math.max(...logs), lo = Math.min(...logs);
  ctx.strokeStyle = "#ddd";
  ctx.fillStyle = "#777";
  ctx.font = "11px sans-serif";
  for (let d = Math.ceil(lo); d <= Math.floor(hi); d++) {
    const y = 10 + (c.height - 20) * (hi - d) / (hi - lo || 1);
    ctx.beginPath(); ctx.moveTo(30, y); ctx.lineTo(c.width, y); ctx.stroke();
    ctx.fillText(`1e${d}`, 0, y + 4);
  }
  ctx.strokeStyle = "#1f6feb";
  ctx.beginPath();
  logs.forEach((v, i) => {
    const x = 30 + (c.width - 35) * i / (logs.length - 1);
    const y = 10 + (c.height - 20) * (hi - v) / (hi - lo || 1);
    i ? ctx.lineTo(x, y) : ctx.moveTo(x, y);
  });
  ctx.stroke();
}

async function main() {
  await init();
  const backend = await q.init({ backend: BACKEND });
  $("backend").textContent = backend;
  const { inner, bnd } = points(N);
  const xs = q.array(inner, [N, 2]);
  const xb = q.array(bnd, [bnd.length / 2, 2]);
  const g = grid(q, GRID);
  const predict = q.jit((p, x) => mlp(q, p, x));
  const opt = q.adam(LR);
  let p = initParams(q, 0);
  let s = opt.init(p);
  const step = trainStep(q, opt);
  const losses = [];
  let paused = false, done = 0;
  $("toggle").disabled = false;
  $("toggle").onclick = () => {
    paused = !paused;
    $("toggle").textContent = paused ? "resume" : "pause";
    if (!paused) loop();
  };
  $("status").textContent = "training";
  const t0 = performance.now();
  let trainMs = 0, l2 = NaN;

  const refresh = async () => {
    const u = await predict(p, g.points).data();
    let num = 0, den = 0, emax = 0;
    const err = u.map((v, k) => {
      const e = Math.abs(v - g.exact[k]);
      num += e * e; den += g.exact[k] ** 2; emax = Math.max(emax, e);
      return e;
    });
    l2 = Math.sqrt(num / den);
    heatmap($("solution"), u, 0, 1);
    heatmap($("error"), err, 0, Math.max(emax, 1e-6));
    drawCurve(losses);
    $("l2").textContent = l2.toExponential(2);
  };

  async function loop() {
    while (!paused && (STEPS === 0 || done < STEPS)) {
      // A batch of steps, then one asynchronous read of their losses: the page stays live
      // and WebGPU is never waited on synchronously.
      const batch = [];
      const tb = performance.now();
      for (let k = 0; k < 10 && (STEPS === 0 || done < STEPS); k++, done++) {
        let l;
        [p, s, l] = step(p, s, xs, xb);
        batch.push(l);
      }
      for (const l of batch) losses.push((await l.data())[0]);
      trainMs += performance.now() - tb;
      $("step").textContent = String(done);
      $("loss").textContent = losses[losses.length - 1].toExponential(3);
      $("rate").textContent = (done / (trainMs / 1000)).toFixed(1);
      if (done % 50 === 0 || done === STEPS) await refresh();
      await new Promise((r) => setTimeout(r, 0));
    }
    if (STEPS !== 0 && done >= STEPS) {
      await refresh();
      $("result").textContent = JSON.stringify({
        backend, steps: done, points: N,
        firstLoss: losses[0], lastLoss: losses[losses.length - 1],
        stepsPerSecond: done / (trainMs / 1000), relL2: l2,
        seconds: (performance.now() - t0) / 1000,
      });
      $("status").textContent = "done";
      $("status").dataset.state = "done";
    }
  }
  await loop();
}

main().catch((e) => {
  console.error(e);
  $("status").textContent = `error: ${e.message ?? e}`;
  $("status").dataset.state = "error";
});
