//! The inverse error function as XLA's CPU backend computes it, bit for bit, so that
//! `lax.erf_inv` and `random.normal` give JAX's numbers on the CPU.
//!
//! XLA evaluates Giles' polynomials (`ErfInv32`, `ErfInv64` in `xla/hlo/builder/lib/math.cc`)
//! after `w = -log1p(-x^2)`, with its own `log1p` (a Cephes rational function below
//! `sqrt(2) - 1`, `log(1 + x)` above) and, in f32, its own inlined `log`. LLVM then fuses
//! every `a * b + c` whose product has no other use into one fused multiply-add (XLA sets
//! `-ffp-contract=fast`; the object code of JAX 0.10.2's kernel has 32 of them in f32 and 35
//! in f64). Each fused step below is a `mul_add` where the object code has one, and a plain
//! product and sum where it does not, in XLA's order; the constants are the bits of its IR.
//! f64's `log` is the C library's, as XLA calls it. Checked once against JAX 0.10.2 on every
//! 64th f32 bit pattern of [-1, 1] (33 million inputs) and on 5 million f64 inputs, all
//! equal but the subnormal ones (XLA flushes them); `tests_erf_inv.rs` checks the recorded
//! sample `erf_inv_jax.txt`.
//!
//! Accuracy (against scipy on the same inputs): within 5 ulp in f32 and 17 in f64 on
//! (-0.99, 0.99); next to +-1, where `1 - x^2` cancels, up to 64 ulp in f32 and 1.1e-10
//! relative in f64, as JAX's. The core's `random::erfinv` refines the f64 value where
//! accuracy matters more than JAX's bits.

/// XLA's f32 `log` (Cephes' `logf` polynomial, inlined by its CPU backend): `x <= 0` and NaN
/// give NaN, `0` gives `-inf`, `inf` gives `inf`. Subnormal operands are read as the
/// smallest normal, as XLA's code does.
#[inline(always)]
fn xla_log_f32(x: f32) -> f32 {
    let c = |b: u32| f32::from_bits(b);
    // `ule`/`une` in the IR: true for NaN too.
    let not_positive = x <= 0.0 || x.is_nan();
    let nonzero = x != 0.0;
    let finite_or_nan = x != f32::INFINITY;
    let clamped = if x > f32::MIN_POSITIVE {
        x
    } else {
        f32::MIN_POSITIVE
    };
    let bits = clamped.to_bits();
    let exponent = ((bits >> 23) as i32 - 127) as f32;
    let m = f32::from_bits((bits & 0x807F_FFFF) | 0x3F00_0000);
    let e1 = exponent + 1.0;
    let below = m < c(0x3F35_04F3);
    let e = e1 - if below { 1.0 } else { 0.0 };
    let r = (m + -1.0) + if below { m } else { 0.0 };
    let r2 = r * r;
    let r3 = r2 * r;
    let a = r.mul_add(c(0x3D90_21BB), c(0xBDEB_D1B8));
    let b = r.mul_add(c(0xBDFE_5D4F), c(0x3E11_E9BF));
    let d = r.mul_add(c(0x3E4C_CEAC), c(0xBE7F_FFFC));
    let a = a.mul_add(r, c(0x3DEF_251A));
    let b = b.mul_add(r, c(0xBE2A_AE50));
    let d = d.mul_add(r, c(0x3EAA_AAAA));
    let p = a.mul_add(r3, b);
    let p = p.mul_add(r3, d);
    let p = p.mul_add(r3, e * c(0xB95E_8083));
    let head = (-r2).mul_add(0.5, r);
    let y = e.mul_add(c(0x3F31_8000), head + p);
    let special = match (nonzero, finite_or_nan) {
        (false, _) => f32::NEG_INFINITY.to_bits(),
        (true, false) => f32::INFINITY.to_bits(),
        (true, true) => 0,
    };
    let value = if !(nonzero && finite_or_nan) {
        0
    } else if not_positive {
        u32::MAX
    } else {
        y.to_bits()
    };
    f32::from_bits(special | value)
}

/// XLA's f32 `log1p(v)` for `v = -x^2`: the rational function below `sqrt(2) - 1`, the
/// logarithm of `1 + v` above.
#[inline(always)]
fn xla_log1p_f32(v: f32) -> f32 {
    const DEN: [u32; 6] = [
        0x4171_01AD,
        0x42A6_185B,
        0x435D_C32D,
        0x439A_8CA3,
        0x4358_6D8A,
        0x4270_7982,
    ];
    const NUM: [u32; 6] = [
        0x3EFF_40C5,
        0x40D2_84FA,
        0x41EF_4B9C,
        0x4273_CC76,
        0x4264_73AD,
        0x41A0_5101,
    ];
    let zero = v * 0.0;
    let den = DEN
        .iter()
        .fold(zero + 1.0, |acc, &k| acc.mul_add(v, f32::from_bits(k)));
    let num = NUM.iter().fold(zero + 4.527e-05, |acc, &k| {
        acc.mul_add(v, f32::from_bits(k))
    });
    let v2 = v * v;
    let small = v + v2.mul_add(-0.5, (v * v2) * (num / den));
    if v.abs() < f32::from_bits(0x3ED4_13CD) {
        small
    } else {
        xla_log_f32(v + 1.0)
    }
}

/// XLA's `ErfInv32`; NaN comes back as itself and `|x| > 1` as the one quiet NaN (XLA's NaN
/// bits there depend on the hardware), and subnormal operands are kept (XLA flushes them to
/// zero, so there its result is `0`).
#[inline(always)]
pub fn erf_inv(x: f32) -> f32 {
    if x.is_nan() || x.abs() > 1.0 {
        return super::nan_or(x, f32::NAN);
    }
    // (w < 5, w >= 5) coefficient pairs, highest degree first.
    const C: [(u32, u32); 9] = [
        (0x32F1_6588, 0xB951_F09B),
        (0x34B8_4B36, 0x38D3_B56B),
        (0xB66C_7357, 0x3AB0_DC72),
        (0xB693_5AC1, 0xBB70_BDE7),
        (0x3965_32DB, 0x3BBC_127B),
        (0xBAA4_5408, 0xBBF9_C5D7),
        (0xBB88_E4EF, 0x3C1A_A57E),
        (0x3E7C_8F63, 0x3F80_36DB),
        (0x3FC0_2E2F, 0x4035_4F7E),
    ];
    let minus_w = xla_log1p_f32(x * -x);
    let central = minus_w > -5.0;
    let pick = |(a, b): (u32, u32)| f32::from_bits(if central { a } else { b });
    let t = if central {
        -2.5 - minus_w
    } else {
        (-minus_w).sqrt() + -3.0
    };
    let p = C[2..]
        .iter()
        .fold(pick(C[0]).mul_add(t, pick(C[1])), |acc, &k| {
            t.mul_add(acc, pick(k))
        });
    x * if x.abs() == 1.0 { f32::INFINITY } else { p }
}

/// XLA's f64 `log1p(v)` for `v = -x^2` (the C library's `log` above `sqrt(2) - 1`).
#[inline(always)]
fn xla_log1p_f64(v: f64) -> f64 {
    const DEN: [u64; 6] = [
        0x402E_2035_9E90_3E37,
        0x4054_C30B_5221_3498,
        0x406B_B865_90FC_FB56,
        0x4073_5194_5DC9_08A5,
        0x406B_0DB1_3E48_E066,
        0x404E_0F30_4466_448E,
    ];
    const NUM: [u64; 7] = [
        0x3F07_BC09_62B3_95CA,
        0x3FDF_E818_A0FE_1A83,
        0x401A_509F_46F4_FA53,
        0x403D_E973_8B8C_B9C9,
        0x404E_798E_B86C_3351,
        0x404C_8E75_9747_9A10,
        0x4034_0A20_2D99_830A,
    ];
    let zero = v * 0.0;
    let den = DEN
        .iter()
        .fold(zero + 1.0, |acc, &k| acc.mul_add(v, f64::from_bits(k)));
    let num = NUM[1..]
        .iter()
        .fold(zero + f64::from_bits(NUM[0]), |acc, &k| {
            acc.mul_add(v, f64::from_bits(k))
        });
    let v2 = v * v;
    let small = v + v2.mul_add(-0.5, (v * v2) * (num / den));
    if v.abs() < f64::from_bits(0x3FDA_8279_99FC_EF32) {
        small
    } else {
        (v + 1.0).ln()
    }
}

/// XLA's `ErfInv64`: one Horner chain whose coefficients are picked by the range of `w`
/// (`w < 6.25`: 23 terms, `w < 16`: 19, else 17), the shorter chains keeping their value
/// through the extra steps. NaN, `|x| > 1` and subnormals as [`erf_inv`].
#[inline(always)]
pub fn erf_inv64(x: f64) -> f64 {
    if x.is_nan() || x.abs() > 1.0 {
        return if x.is_nan() { x } else { f64::NAN };
    }
    let minus_w = xla_log1p_f64(x * -x);
    let central = minus_w > -6.25;
    let middle = minus_w > -16.0;
    let t = if central {
        -3.125 - minus_w
    } else {
        (-minus_w).sqrt() - if middle { 3.25 } else { 5.0 }
    };
    let k = |bits: u64| f64::from_bits(bits);
    // (w < 6.25, w < 16, w >= 16) for the first 17 coefficients.
    let three = |a: u64, b: u64, c: u64| {
        k(if central {
            a
        } else if middle {
            b
        } else {
            c
        })
    };
    let mut p = three(
        0xBBB1_35D2_E746_E627,
        0x3E23_040F_87DB_D932,
        0xBDBD_CEC3_A778_5389,
    )
    .mul_add(
        t,
        three(
            0xBC08_DDF9_3324_D327,
            0x3E78_5CBE_5287_8635,
            0xBDF1_8FEE_C0E3_8727,
        ),
    );
    for (a, b, c) in ERF_INV64_SHARED {
        p = t.mul_add(p, three(a, b, c));
    }
    for (a, b) in ERF_INV64_TWO {
        if middle {
            p = t.mul_add(p, k(if central { a } else { b }));
        }
    }
    for a in ERF_INV64_CENTRAL {
        if central {
            p = t.mul_add(p, k(a));
        }
    }
    x * if x.abs() == 1.0 { f64::INFINITY } else { p }
}

/// Coefficients 2-16 of the three chains.
const ERF_INV64_SHARED: [(u64, u64, u64); 15] = [
    (
        0x3C37_B83E_EF0B_7C9F,
        0xBE92_7774_53DD_3955,
        0x3E19_E6BF_2DDA_45E3,
    ),
    (
        0x3C69_BA72_CD58_9B91,
        0x3E53_95AB_CD55_4C6C,
        0xBE30_468F_B24E_2F5F,
    ),
    (
        0xBCA3_3689_090A_6B96,
        0x3EB9_3638_8A37_90AD,
        0x3E40_5AC6_A8FB_A182,
    ),
    (
        0x3C78_2E11_8981_32E0,
        0xBED0_D5DB_812B_5083,
        0xBE50_102E_495F_B9C0,
    ),
    (
        0x3CFD_E4AC_FD9E_26BA,
        0x3EC8_860C_D5D6_52F6,
        0x3E5F_4C20_E133_4AF8,
    ),
    (
        0xBD26_D33E_ED66_C487,
        0x3EEA_29A0_CACD_FB23,
        0xBE72_2D22_0FDF_9C3E,
    ),
    (
        0xBD36_F216_7040_D8E2,
        0xBF08_CEF1_F802_81F2,
        0x3E8E_BC8B_B824_CB54,
    ),
    (
        0x3D87_2A22_C2D7_7E20,
        0x3F11_E684_D0B9_188A,
        0xBEB0_A8D4_0EA3_72CC,
    ),
    (
        0xBDAC_8859_C4E5_C0AF,
        0x3EF9_32CD_54C8_A222,
        0x3ED2_FBD2_9D09_3D2B,
    ),
    (
        0xBDCD_C583_D118_A561,
        0xBF37_448A_89EF_8AA3,
        0xBEF4_A349_7E1E_0FAC,
    ),
    (
        0x3E12_0F47_CCF4_6B3C,
        0x3F4F_3CC5_5AD4_0C25,
        0x3F13_EBF4_EB00_938F,
    ),
    (
        0xBE31_A9E3_8DC8_4D60,
        0xBF5B_A924_132F_38B1,
        0xBF2C_2F36_A8FC_5D53,
    ),
    (
        0xBE5F_36CD_6D3D_46A9,
        0x3F64_68EE_CA53_3CF8,
        0xBF22_2EA5_DF04_047C,
    ),
    (
        0x3E9C_6B4F_5D03_B787,
        0xBF6E_BADA_BB89_1BBD,
        0x3FF0_2A30_D1FB_A0DC,
    ),
    (
        0xBEB6_E8A5_434A_E8A2,
        0x3F75_FFCF_E5B7_6AFC,
        0x4013_664D_DD1A_D7FB,
    ),
];

/// Coefficients 17 and 18 of the `w < 6.25` and `w < 16` chains.
const ERF_INV64_TWO: [(u64, u64); 2] = [
    (0xBEED_1D1F_7B87_36F6, 0x3FF0_158A_6D64_1D39),
    (0x3F28_79C2_A212_F024, 0x4008_ABCC_380D_5A48),
];

/// Coefficients 19-22 of the `w < 6.25` chain.
const ERF_INV64_CENTRAL: [u64; 4] = [
    0xBF48_4576_9484_FCA8,
    0xBF78_B6C3_3114_F909,
    0x3FCE_BD80_D9B1_3E28,
    0x3FFA_755E_7C99_AE86,
];
