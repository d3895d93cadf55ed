// The 2D Poisson PINN of the native main job (examples/src/pinn.rs), written against the
// JavaScript API: -(u_xx + u_yy) = 2 pi^2 sin(pi x) sin(pi y) on [0, 1]^2, u = 0 on the
// boundary, an MLP 2 -> 64 -> 64 -> 64 -> 1 (tanh). Parameters and points are made exactly as
// the native code makes them, so the two builds can be compared number for number.
// Every function takes the module `q` (the Node or the web build).

export const LAYERS = [[2, 64], [64, 64], [64, 64], [64, 1]];

const MASK = (1n << 64n) - 1n;

/// Glorot-uniform weights, zero biases, from the native code's 64-bit LCG and seed.
export function initParams(q, seed = 0) {
  let s = BigInt(seed);
  const params = [];
  for (const [fanIn, fanOut] of LAYERS) {
    const lim = Math.sqrt(6 / (fanIn + fanOut));
    const w = new Float32Array(fanIn * fanOut);
    for (let i = 0; i < w.length; i++) {
      s = (s * 6364136223846793005n + 1442695040888963407n) & MASK;
      w[i] = (Number(s >> 11n) / 2 ** 53 * 2 - 1) * lim;
    }
    params.push(q.array(w, [fanIn, fanOut]), q.zeros([fanOut]));
  }
  return params;
}

/// Collocation points (the R2 sequence) and 64 points per boundary side, as flat [x, y] pairs.
export function points(n) {
  const a1 = 0.7548776662466927, a2 = 0.5698402909980533;
  const inner = new Float32Array(2 * n);
  for (let i = 0; i < n; i++) {
    inner[2 * i] = (0.5 + a1 * i) % 1;
    inner[2 * i + 1] = (0.5 + a2 * i) % 1;
  }
  const bnd = [];
  for (let k = 0; k < 64; k++) {
    const t = Math.fround((k + 0.5) / 64);
    bnd.push(t, 0, t, 1, 0, t, 1, t);
  }
  return { inner, bnd: new Float32Array(bnd) };
}

/// The network at points x ([m, 2] -> [m, 1]).
export function mlp(q, p, x) {
  let h = x;
  for (let l = 0; l < 3; l++) h = q.tanh(q.matmul(h, p[2 * l]).add(p[2 * l + 1]));
  return q.matmul(h, p[6]).add(p[7]);
}

/// u at one point x ([2] -> scalar).
const u = (q, p) => (x) => q.sum(mlp(q, p, x.reshape([1, 2])));

/// Three ways of writing the Laplacian of u at one point, all per point under vmap.
export const laplacians = {
  /// trace of jax.hessian (forward over reverse)
  hessianTrace: (q, p) => (x) => q.sum(q.hessian(u(q, p))(x).mul(q.eye(2))),
  /// e_i . (d/de_i grad u): a jvp of the gradient along each axis
  jvpOfGrad: (q, p) => (x) => {
    const g = q.grad(u(q, p));
    const e = [q.array([1, 0]), q.array([0, 1])];
    return q.add(
      q.sum(q.jvp(g, [x], [e[0]])[1].mul(e[0])),
      q.sum(q.jvp(g, [x], [e[1]])[1].mul(e[1])),
    );
  },
  /// second directional derivatives by forward over forward
  fwdOverFwd: (q, p) => (x) => {
    const second = (e) => {
      const d = (y) => q.jvp(u(q, p), [y], [e])[1];
      return q.jvp(d, [x], [e])[1];
    };
    return q.add(second(q.array([1, 0])), second(q.array([0, 1])));
  },
};

/// Mean squared PDE residual plus mean squared boundary value.
export function loss(q, p, xs, xb, laplacian = "hessianTrace") {
  const lap = q.vmap(laplacians[laplacian](q, p))(xs);
  const m = xs.shape[0];
  const x = xs.slice([0, 0], [m, 1]).reshape([m]);
  const y = xs.slice([0, 1], [m, 2]).reshape([m]);
  const f = q.sin(x.mul(Math.PI)).mul(q.sin(y.mul(Math.PI))).mul(2 * Math.PI * Math.PI);
  const res = lap.add(f);
  const ub = mlp(q, p, xb);
  return q.mean(res.square()).add(q.mean(ub.square()));
}

/// One jitted Adam step: [params, state, loss] from [params, state, xs, xb].
export function trainStep(q, opt, laplacian = "hessianTrace") {
  return q.jit((p, s, xs, xb) => {
    const [l, g] = q.valueAndGrad((p) => loss(q, p, xs, xb, laplacian))(p);
    const [upd, s2] = opt.update(g, s, p);
    return [q.applyUpdates(p, upd), s2, l];
  });
}

/// u on an n x n grid over [0, 1]^2 and the exact solution there.
export function grid(q, n) {
  const pts = new Float32Array(2 * n * n);
  const exact = new Float32Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const x = j / (n - 1), y = i / (n - 1);
      pts[2 * (i * n + j)] = x;
      pts[2 * (i * n + j) + 1] = y;
      exact[i * n + j] = Math.sin(Math.PI * x) * Math.sin(Math.PI * y);
    }
  return { points: q.array(pts, [n * n, 2]), exact };
}
