// The JavaScript API on the CPU backend, against analytic values, finite differences and
// plain-JS loops. Run: node --test bindings/wasm/tests/node/
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { q } from "./load.mjs";

before(async () => {
  assert.match(await q.init({ backend: "cpu" }), /^cpu/);
});

const close = (got, want, tol = 1e-5) => {
  assert.equal(got.length, want.length, "length");
  for (let i = 0; i < want.length; i++) {
    const scale = Math.max(1, Math.abs(want[i]));
    assert.ok(
      Math.abs(got[i] - want[i]) <= tol * scale || (Number.isNaN(got[i]) && Number.isNaN(want[i])),
      `element ${i}: got ${got[i]}, want ${want[i]}`,
    );
  }
};
const f32 = (xs) => Array.from(new Float32Array(xs));

test("arrays: creation, shape, dtype and data round trip", async () => {
  const x = q.array([[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual(x.shape, [2, 3]);
  assert.equal(x.dtype, "float32");
  assert.equal(x.size, 6);
  assert.deepEqual(Array.from(await x.data()), [1, 2, 3, 4, 5, 6]);
  const i = q.array(new Int32Array([7, -8]));
  assert.equal(i.dtype, "int32");
  assert.deepEqual(Array.from(i.dataSync()), [7, -8]);
  assert.deepEqual(Array.from(q.zeros([2, 2]).dataSync()), [0, 0, 0, 0]);
  assert.deepEqual(Array.from(q.full([3], 2.5).dataSync()), [2.5, 2.5, 2.5]);
  close(q.linspace(0, 1, 5).dataSync(), [0, 0.25, 0.5, 0.75, 1]);
  assert.deepEqual(Array.from(q.arange(4).dataSync()), [0, 1, 2, 3]);
  assert.equal(q.array(3).item(), 3);
});

test("core errors throw by kind: TypeError for shapes and dtypes, named Errors otherwise", () => {
  const kind = (f) => {
    try {
      f();
    } catch (e) {
      return [e instanceof TypeError, e.name];
    }
    return [false, "no error"];
  };
  assert.deepEqual(kind(() => q.add(q.ones([2]), q.ones([3]))), [true, "TypeError"]);
  assert.deepEqual(kind(() => q.matmul(q.ones([2, 3]), q.ones([2, 3]))), [true, "TypeError"]);
  assert.deepEqual(
    kind(() => q.grad((x) => q.sum(x))(q.array(new Int32Array([1, 2])))),
    [true, "TypeError"],
  );
  assert.deepEqual(kind(() => q.concatenate([])), [false, "ValueError"]);
  assert.deepEqual(
    kind(() => q.jit((x) => q.full([2], x.item()))(q.array(1))),
    [true, "ConcretizationTypeError"],
  );
  // A user's own exception comes out of a transformation as itself.
  class Mine extends Error {}
  const thrown = new Mine("mine");
  assert.throws(
    () => q.grad(() => {
      throw thrown;
    })(q.array(1)),
    (e) => e === thrown,
  );
});

test("arrays: bad input is an error that says what to do", () => {
  assert.throws(() => q.array([[1, 2], [3]]), /rectangular/);
  assert.throws(() => q.array([1, 2, 3], [2, 2]), /do not fill shape/);
  assert.throws(() => q.zeros([2], "complex64"), /unknown dtype/);
  assert.throws(() => q.array([1, 2]).reshape([3]), /.+/);
  assert.throws(() => q.add(q.ones([2]), q.ones([3])), /.+/);
});

test("elementwise math matches Math.* in f32", () => {
  const xs = [-2.5, -0.5, 0, 0.25, 1, 3];
  const x = q.array(xs);
  for (const [name, ref] of [
    ["exp", Math.exp], ["sin", Math.sin], ["cos", Math.cos], ["tanh", Math.tanh],
    ["atan", Math.atan], ["expm1", Math.expm1], ["sinh", Math.sinh],
  ]) {
    close(q[name](x).dataSync(), f32(xs.map(ref)), 2e-7);
  }
  close(q.sqrt(q.abs(x)).dataSync(), f32(xs.map((v) => Math.sqrt(Math.abs(v)))), 2e-7);
  const lg = q.log(x).dataSync();
  assert.ok(Number.isNaN(lg[0]) && lg[2] === -Infinity, "log: NaN below 0, -inf at 0");
});

test("broadcasting and weak scalars keep the array's dtype", () => {
  const x = q.array([[1, 2], [3, 4]]);
  const y = x.add(q.array([10, 20])).mul(2);
  assert.equal(y.dtype, "float32");
  assert.deepEqual(Array.from(y.dataSync()), [22, 44, 26, 48]);
  const i = q.array(new Int32Array([1, 2])).add(1);
  assert.equal(i.dtype, "int32");
  assert.deepEqual(Array.from(i.dataSync()), [2, 3]);
  assert.deepEqual(Array.from(q.divide(q.array(new Int32Array([1])), 2).dataSync()), [0.5]);
  assert.deepEqual(Array.from(q.less(x, 2.5).dataSync()), [1, 1, 0, 0]);
  assert.deepEqual(Array.from(q.where(q.greater(x, 2), x, 0).dataSync()), [0, 0, 3, 4]);
});

test("reductions, shapes and products against loops", () => {
  const a = [[1, 2, 3], [4, 5, 6]];
  const x = q.array(a);
  assert.deepEqual(Array.from(x.sum(0).dataSync()), [5, 7, 9]);
  assert.deepEqual(Array.from(q.sum(x, 1).dataSync()), [6, 15]);
  assert.deepEqual(Array.from(x.sum(-1, true).reshape([2]).dataSync()), [6, 15]);
  assert.equal(q.mean(x).item(), 3.5);
  assert.deepEqual(Array.from(x.transpose().dataSync()), [1, 4, 2, 5, 3, 6]);
  const b = [[1, 0], [2, 1], [0, 3]];
  const want = [];
  for (let i = 0; i < 2; i++)
    for (let j = 0; j < 2; j++) want.push(a[i].reduce((s, v, k) => s + v * b[k][j], 0));
  assert.deepEqual(Array.from(q.matmul(x, q.array(b)).dataSync()), want);
  assert.deepEqual(q.concatenate([x, x], 1).shape, [2, 6]);
  assert.deepEqual(q.stack([x, x]).shape, [2, 2, 3]);
});

// Central differences in f64 on a JS re-implementation of the same function.
const fd = (fn, xs, h = 1e-4) =>
  xs.map((_, i) => {
    const p = xs.slice(); p[i] += h;
    const m = xs.slice(); m[i] -= h;
    return (fn(p) - fn(m)) / (2 * h);
  });

test("grad and valueAndGrad against analytic derivatives and finite differences", () => {
  const xs = [0.3, -1.2, 2.0];
  const f = (x) => q.sum(q.sin(x).mul(x));
  const g = q.grad(f)(q.array(xs)).dataSync();
  close(g, xs.map((v) => Math.sin(v) + v * Math.cos(v)), 1e-6);
  const ref = (v) => v.reduce((s, a) => s + Math.sin(a) * a, 0);
  close(g, fd(ref, xs), 1e-4);
  // pytrees: an object of parameters, and a second argument left alone
  const loss = (p, x) => q.sum(q.tanh(x.mul(p.w).add(p.b)).square());
  const [v, gp] = q.valueAndGrad(loss)({ w: q.array(0.7), b: q.array(-0.1) }, q.array(xs));
  const jsLoss = ([w, b]) => xs.reduce((s, a) => s + Math.tanh(a * w + b) ** 2, 0);
  close([v.item()], [jsLoss([0.7, -0.1])], 1e-6);
  close([gp.w.item(), gp.b.item()], fd(jsLoss, [0.7, -0.1]), 1e-4);
  // argnums as a list gives a list
  const [ga, gb] = q.grad((a, b) => q.sum(a.mul(b)), [0, 1])(q.array([1, 2]), q.array([3, 4]));
  assert.deepEqual(Array.from(ga.dataSync()), [3, 4]);
  assert.deepEqual(Array.from(gb.dataSync()), [1, 2]);
});

test("JAX's derivative conventions at edges", () => {
  // d/dx max(x, 0) at the tie is 0.5 (JAX splits ties evenly); |x|' at 0 is 1 (JAX's rule
  // is select(x >= 0, t, -t)).
  close(q.grad((x) => q.sum(q.maximum(x, 0)))(q.array([0, 1, -1])).dataSync(), [0.5, 1, 0]);
  close(q.grad((x) => q.sum(q.abs(x)))(q.array([0, -2])).dataSync(), [1, -1]);
  assert.equal(q.grad((x) => q.sum(q.sqrt(x)))(q.array([0])).dataSync()[0], Infinity);
});

test("jit gives the eager results, and composes with grad", () => {
  const f = (x, y) => q.sum(q.exp(x.mul(y)).sub(x));
  const x = q.array([0.1, 0.2, 0.3]);
  const y = q.array([1, -1, 2]);
  const jf = q.jit(f);
  close([jf(x, y).item()], [f(x, y).item()], 1e-6);
  close([jf(y, x).item()], [f(y, x).item()], 1e-6);
  const jg = q.jit(q.grad(f));
  close(jg(x, y).dataSync(), q.grad(f)(x, y).dataSync(), 1e-6);
  // pytree results come back with their structure
  const out = q.jit((p) => ({ s: q.sum(p[0]), d: p[1].mul(2) }))([x, y]);
  close([out.s.item()], [0.6], 1e-6);
  assert.deepEqual(Array.from(out.d.dataSync()), [2, -2, 4]);
});

test("vmap matches a loop over examples", () => {
  const w = q.array([[1, 2], [3, 4], [5, 6]]);
  const f = (w, x) => q.tanh(q.matmul(x, w));
  const xs = [[1, 0, -1], [0.5, 0.5, 0.5]];
  const batched = q.vmap(f, [null, 0])(w, q.array(xs)).dataSync();
  const looped = xs.flatMap((x) => Array.from(f(w, q.array(x)).dataSync()));
  close(batched, looped, 1e-6);
  // per-example gradients
  const pg = q.vmap(q.grad((x) => q.sum(q.sin(x))))(q.array([[0, 1], [2, 3]])).dataSync();
  close(pg, [0, 1, 2, 3].map(Math.cos), 1e-6);
});

test("jvp, hessian and nested derivatives", () => {
  const [p, t] = q.jvp((x) => q.sin(x).mul(x), [q.array([0.5, 1.5])], [q.array([1, 2])]);
  close(p.dataSync(), f32([0.5, 1.5].map((v) => Math.sin(v) * v)));
  close(t.dataSync(), [0.5, 1.5].map((v, i) => (Math.sin(v) + v * Math.cos(v)) * [1, 2][i]), 1e-6);
  const h = q.hessian((x) => q.sum(x.mul(x).mul(x)))(q.array([1, -2])).dataSync();
  close(h, [6, 0, 0, -12]);
  // second derivative by grad of grad: d2/dx2 tanh = -2 tanh sech^2
  const d2 = q.grad((x) => q.sum(q.grad((y) => q.sum(q.tanh(y)))(x)))(q.array([0.4])).dataSync();
  const th = Math.tanh(0.4);
  close(d2, [-2 * th * (1 - th * th)], 1e-6);
});

test("adam follows optax's update rule and trains a regression", () => {
  const opt = q.adam(0.1);
  const params = [q.array([1, -1])];
  let state = opt.init(params);
  const grads = [q.array([0.5, -2])];
  const [updates, state2] = opt.update(grads, state, params);
  // first step of Adam: m_hat = g, v_hat = g^2, update = -lr * g / (|g| + eps)
  close(updates[0].dataSync(), [-0.1 / (1 + 2e-8), 0.1 / (1 + 5e-9)], 1e-6);
  assert.equal(state2.length, state.length);
  // y = 3x - 1 recovered by jitted Adam steps
  const x = q.linspace(-1, 1, 16);
  const y = x.mul(3).sub(1);
  const loss = (p, x, y) => q.mean(x.mul(p.a).add(p.b).sub(y).square());
  const step = q.jit((p, s, x, y) => {
    const [l, g] = q.valueAndGrad(loss)(p, x, y);
    const [u, s2] = opt.update(g, s, p);
    return [q.applyUpdates(p, u), s2, l];
  });
  let p = { a: q.array(0), b: q.array(0) };
  state = opt.init(p);
  let l;
  for (let i = 0; i < 300; i++) [p, state, l] = step(p, state, x, y);
  assert.ok(l.item() < 1e-4, `loss ${l.item()}`);
  close([p.a.item(), p.b.item()], [3, -1], 1e-2);
});

test("exceptions inside traced functions come back as errors", () => {
  const bad = q.grad(() => { throw new Error("boom in user code"); });
  assert.throws(() => bad(q.array(1)), /boom in user code/);
  assert.throws(() => q.jit(() => undefined)(q.array(1)), /forget to return/);
  assert.throws(() => q.grad((x) => q.sum(x), 3)(q.array(1)), /argument 3 does not exist/);
});
