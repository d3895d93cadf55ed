// The wasm build's PINN gradients against the native CPU build's (written by the
// `pinn_gradients` example; `cargo xtask wasm-test` makes the file), for three ways of writing
// the Laplacian, eager and jitted. Same parameters, same points, f32 both sides.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { q } from "./load.mjs";
import { initParams, points, loss } from "../../www/pinn.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const refFile =
  process.env.QUABLA_PINN_REFERENCE ?? path.join(here, "../../../../target/wasm/pinn_reference.json");

let ref;
before(async () => {
  await q.init({ backend: "cpu" });
  assert.ok(
    fs.existsSync(refFile),
    `${refFile} is missing: run \`cargo xtask wasm-test\`, which writes it with the native build`,
  );
  ref = JSON.parse(fs.readFileSync(refFile, "utf8"));
});

function setup() {
  const p = initParams(q, 0);
  const { inner, bnd } = points(ref.points);
  return { p, xs: q.array(inner, [ref.points, 2]), xb: q.array(bnd, [bnd.length / 2, 2]) };
}

// f32 on both sides, different operation orders: relative to the largest gradient entry.
function assertGradsMatch(got, want, what) {
  const scale = Math.max(...want.flat().map(Math.abs));
  let worst = 0;
  got.forEach((g, k) => {
    const v = g.dataSync();
    assert.equal(v.length, want[k].length, `${what}: parameter ${k} size`);
    v.forEach((x, i) => (worst = Math.max(worst, Math.abs(x - want[k][i]) / scale)));
  });
  assert.ok(worst < 2e-4, `${what}: worst gradient difference ${worst} of the largest entry`);
}

for (const lap of ["hessianTrace", "jvpOfGrad", "fwdOverFwd"]) {
  for (const jitted of [false, true]) {
    test(`${lap} ${jitted ? "under jit" : "eager"} matches the native gradients`, () => {
      const { p, xs, xb } = setup();
      let vg = q.valueAndGrad((p, xs, xb) => loss(q, p, xs, xb, lap));
      if (jitted) vg = q.jit(vg);
      const [l, g] = vg(p, xs, xb);
      assert.ok(Math.abs(l.item() - ref.loss) <= 1e-4 * Math.abs(ref.loss), `loss ${l.item()} vs ${ref.loss}`);
      assertGradsMatch(g, ref.grads, lap);
    });
  }
}
