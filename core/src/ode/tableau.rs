//! Butcher tableaux of the explicit Runge-Kutta methods, with their order conditions
//! checked in the tests below.

/// An explicit Runge-Kutta method: stage `i` evaluates at `t + c[i]·h` on
/// `y + h·Σ_j a[i][j]·k_j`; the step is `y + h·Σ b_i k_i`, its error estimate
/// `h·Σ e_i k_i`. With `fsal`, the last stage is `f(t + h, y_new)`.
pub(crate) struct Tableau {
    pub c: &'static [f64],
    pub a: &'static [&'static [f64]],
    pub b: &'static [f64],
    /// Empty for fixed-step methods.
    pub e: &'static [f64],
    pub fsal: bool,
    pub dense: Dense,
}

/// How a step's dense output (the solution between its ends) is formed, as the
/// coefficients `p1..p4` of `y(t0 + θh) = y0 + θp1 + θ²p2 + θ³p3 + θ⁴p4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dense {
    /// Cubic Hermite from the values and slopes at both ends (third order).
    Hermite,
    /// Shampine's fourth-order continuous extension of DOPRI5 (Hairer's `CONTD5`).
    Dopri5,
    /// Tsitouras' fourth-order interpolant.
    Tsit5,
}

/// DOPRI5's dense-output weights `d_i` (stage 2 has none).
pub(crate) const DOPRI5_DENSE: [f64; 7] = [
    -12715105075.0 / 11282082432.0,
    0.0,
    87487479700.0 / 32700410799.0,
    -10690763975.0 / 1880347072.0,
    701980252875.0 / 199316789632.0,
    -1453857185.0 / 822651844.0,
    69997945.0 / 29380423.0,
];

/// Tsitouras' interpolant weights `b_i(θ)` as published (factored), expanded to the
/// coefficients of θ¹..θ⁴ per stage.
pub(crate) fn tsit5_dense() -> [[f64; 4]; 7] {
    // Polynomials as coefficient lists, lowest power first.
    fn mul(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; a.len() + b.len() - 1];
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                out[i + j] += x * y;
            }
        }
        out
    }
    let sq = [0.0, 0.0, 1.0];
    let factored: [Vec<f64>; 7] = [
        mul(
            &mul(&[0.0, -1.0530884977290216], &[-1.3299890189751412, 1.0]),
            &[0.7139816917074209, -1.4364028541716351, 1.0],
        ),
        mul(
            &[0.0, 0.0, 0.1017],
            &[1.2949852507374631, -2.1966568338249754, 1.0],
        ),
        mul(
            &[0.0, 0.0, 2.490627285651252793],
            &[1.57803468208092486, -2.38535645472061657, 1.0],
        ),
        mul(
            &mul(&[-1.21712927295533244, 1.0], &[-0.61620406037800089, 1.0]),
            &[0.0, 0.0, -16.54810288924490272],
        ),
        mul(
            &mul(&[-1.203071208372362603, 1.0], &[-0.658047292653547382, 1.0]),
            &[0.0, 0.0, 47.37952196281928122],
        ),
        mul(
            &mul(&[-1.2, 1.0], &[-0.666666666666666667, 1.0]),
            &[0.0, 0.0, -34.87065786149660974],
        ),
        mul(&mul(&[-1.0, 1.0], &[-0.6, 1.0]), &mul(&sq, &[2.5])),
    ];
    let mut out = [[0.0; 4]; 7];
    for (i, p) in factored.iter().enumerate() {
        for q in 1..=4 {
            out[i][q - 1] = p.get(q).copied().unwrap_or(0.0);
        }
    }
    out
}

/// Dormand & Prince (1980) 5(4), as in Hairer, Nørsett & Wanner's DOPRI5.
pub(crate) const DOPRI5: Tableau = Tableau {
    c: &[0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0],
    a: &[
        &[],
        &[1.0 / 5.0],
        &[3.0 / 40.0, 9.0 / 40.0],
        &[44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0],
        &[
            19372.0 / 6561.0,
            -25360.0 / 2187.0,
            64448.0 / 6561.0,
            -212.0 / 729.0,
        ],
        &[
            9017.0 / 3168.0,
            -355.0 / 33.0,
            46732.0 / 5247.0,
            49.0 / 176.0,
            -5103.0 / 18656.0,
        ],
        &[
            35.0 / 384.0,
            0.0,
            500.0 / 1113.0,
            125.0 / 192.0,
            -2187.0 / 6784.0,
            11.0 / 84.0,
        ],
    ],
    b: &[
        35.0 / 384.0,
        0.0,
        500.0 / 1113.0,
        125.0 / 192.0,
        -2187.0 / 6784.0,
        11.0 / 84.0,
        0.0,
    ],
    e: &[
        71.0 / 57600.0,
        0.0,
        -71.0 / 16695.0,
        71.0 / 1920.0,
        -17253.0 / 339200.0,
        22.0 / 525.0,
        -1.0 / 40.0,
    ],
    fsal: true,
    dense: Dense::Dopri5,
};

/// Tsitouras (2011) 5(4), the pair DifferentialEquations.jl and diffrax call Tsit5.
pub(crate) const TSIT5: Tableau = Tableau {
    c: &[0.0, 0.161, 0.327, 0.9, 0.9800255409045097, 1.0, 1.0],
    a: &[
        &[],
        &[0.161],
        &[-0.008480655492356989, 0.335480655492357],
        &[2.8971530571054935, -6.359448489975075, 4.3622954328695815],
        &[
            5.325864828439257,
            -11.748883564062828,
            7.4955393428898365,
            -0.09249506636175525,
        ],
        &[
            5.86145544294642,
            -12.92096931784711,
            8.159367898576159,
            -0.071584973281401,
            -0.028269050394068383,
        ],
        &[
            0.09646076681806523,
            0.01,
            0.4798896504144996,
            1.379008574103742,
            -3.290069515436081,
            2.324710524099774,
        ],
    ],
    b: &[
        0.09646076681806523,
        0.01,
        0.4798896504144996,
        1.379008574103742,
        -3.290069515436081,
        2.324710524099774,
        0.0,
    ],
    e: &[
        -0.00178001105222577714,
        -0.0008164344596567469,
        0.007880878010261995,
        -0.1447110071732629,
        0.5823571654525552,
        -0.45808210592918697,
        1.0 / 66.0,
    ],
    fsal: true,
    dense: Dense::Tsit5,
};

/// The classical fourth-order method (fixed step).
pub(crate) const RK4: Tableau = Tableau {
    c: &[0.0, 0.5, 0.5, 1.0],
    a: &[&[], &[0.5], &[0.0, 0.5], &[0.0, 0.0, 1.0]],
    b: &[1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0],
    e: &[],
    fsal: false,
    dense: Dense::Hermite,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(x: &[f64], y: &[f64]) -> f64 {
        x.iter().zip(y).map(|(a, b)| a * b).sum()
    }

    /// The order conditions up to order 5 for `b` (4 for the embedded `b - e`).
    fn check(t: &Tableau, order: usize, name: &str) {
        let s = t.c.len();
        let a = |i: usize, j: usize| t.a[i].get(j).copied().unwrap_or(0.0);
        for i in 0..s {
            let row: f64 = t.a[i].iter().sum();
            assert!((row - t.c[i]).abs() < 1e-13, "{name}: row {i} sums to c");
        }
        let ac = |v: &[f64]| -> Vec<f64> {
            (0..s)
                .map(|i| (0..s).map(|j| a(i, j) * v[j]).sum())
                .collect()
        };
        let c2: Vec<f64> = t.c.iter().map(|c| c * c).collect();
        let c3: Vec<f64> = t.c.iter().map(|c| c * c * c).collect();
        let c4: Vec<f64> = t.c.iter().map(|c| c.powi(4)).collect();
        let ones = vec![1.0; s];
        let mut conds: Vec<(f64, f64)> = vec![
            (dot(t.b, &ones), 1.0),
            (dot(t.b, t.c), 0.5),
            (dot(t.b, &c2), 1.0 / 3.0),
            (dot(t.b, &ac(t.c)), 1.0 / 6.0),
            (dot(t.b, &c3), 0.25),
            (
                dot(
                    &t.b.iter().zip(t.c).map(|(b, c)| b * c).collect::<Vec<_>>(),
                    &ac(t.c),
                ),
                1.0 / 8.0,
            ),
            (dot(t.b, &ac(&c2)), 1.0 / 12.0),
            (dot(t.b, &ac(&ac(t.c))), 1.0 / 24.0),
        ];
        if order >= 5 {
            conds.push((dot(t.b, &c4), 0.2));
            conds.push((dot(t.b, &ac(&c3)), 1.0 / 20.0));
            conds.push((dot(t.b, &ac(&ac(&ac(t.c)))), 1.0 / 120.0));
        }
        for (k, (got, want)) in conds.iter().enumerate() {
            assert!(
                (got - want).abs() < 1e-12,
                "{name}: condition {k}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn tableaux_satisfy_their_order_conditions() {
        check(&DOPRI5, 5, "dopri5");
        check(&TSIT5, 5, "tsit5");
        check(&RK4, 4, "rk4");
        for (t, name) in [(&DOPRI5, "dopri5"), (&TSIT5, "tsit5")] {
            // The embedded solution b - e is a fourth-order method.
            let bhat: Vec<f64> = t.b.iter().zip(t.e).map(|(b, e)| b - e).collect();
            let leaked: &'static [f64] = Box::leak(bhat.into_boxed_slice());
            let embedded = Tableau { b: leaked, ..*t };
            check(&embedded, 4, &format!("{name} embedded"));
            assert_eq!(t.a.last().map(|r| r.len()), Some(t.c.len() - 1));
            let last: Vec<f64> = t.a[t.c.len() - 1].to_vec();
            assert_eq!(&last[..], &t.b[..t.c.len() - 1], "{name}: FSAL");
        }
    }

    #[test]
    fn tsit5_interpolant_is_consistent_and_ends_at_the_step() {
        let p = tsit5_dense();
        let b = |i: usize, th: f64| (0..4).map(|q| p[i][q] * th.powi(q as i32 + 1)).sum::<f64>();
        for i in 0..7 {
            assert!((b(i, 1.0) - TSIT5.b[i]).abs() < 1e-13, "b_{i}(1)");
        }
        for th in [0.1, 0.37, 0.5, 0.8] {
            // Σ b_i(θ) = θ (exact for y' = 1) and Σ b_i(θ) c_i = θ²/2 (exact for y' = t).
            let s: f64 = (0..7).map(|i| b(i, th)).sum();
            assert!((s - th).abs() < 1e-13);
            let sc: f64 = (0..7).map(|i| b(i, th) * TSIT5.c[i]).sum();
            assert!((sc - th * th / 2.0).abs() < 1e-13);
        }
    }

    #[test]
    fn dopri5_dense_weights_vanish_on_constants() {
        // The continuous extension adds h·Σ d_i k_i·θ²(1-θ)², zero when every k_i is equal.
        assert!(DOPRI5_DENSE.iter().sum::<f64>().abs() < 1e-12);
    }
}
