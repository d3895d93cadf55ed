"""cond/while programs, nested regions, and loops whose trip count depends on data.

References are the same algorithms written as plain Python loops (IEEE f64/f32 arithmetic in
the same order, so results are exact)."""
import numpy as np

from golden import case, tol_exact
from qir import Program, region, ty

S_I32 = ty("i32", [])
S_U32 = ty("u32", [])
S_F64 = ty("f64", [])
S_BOOL = ty("bool", [])


def const(p, dtype, value, shape=()):
    vals = value if isinstance(value, list) else [value]
    return p.op("constant", [], ty(dtype, list(shape)), [("value", "[" + ", ".join(str(v) for v in vals) + "]")])


def cond_cases():
    out = []
    # Two branches, the unselected one would produce NaN: only the selected branch runs.
    b0 = region("branch", ty("f32", [3]))
    b0.ret(b0.op("exp", ["%0"], ty("f32", [3])))
    b1 = region("branch", ty("f32", [3]))
    b1.ret(b1.op("log", ["%0"], ty("f32", [3])))
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    for idx in [0, 1]:
        p = Program(S_I32, ty("f32", [3]))
        p.ret(p.op("cond", ["%0", "%1"], ty("f32", [3]), regions=[b0, b1]))
        with np.errstate(all="ignore"):
            y = (np.exp(x.astype(np.float64)) if idx == 0 else np.log(x.astype(np.float64))).astype(np.float32)
        out.append(case(f"cond/two_branches_index{idx}", p, [("i32", np.int32(idx)), ("f32", x)], [("f32", y)], {"ulp": 1}))
    # Three branches with two outputs; out-of-range indices run the last branch.
    branches = []
    for k in range(3):
        b = region("branch", ty("i32", [4]))
        if k == 0:
            r = b.op("neg", ["%0"], ty("i32", [4]))
        elif k == 1:
            r = b.op("abs", ["%0"], ty("i32", [4]))
        else:
            r = b.op("add", ["%0", "%0"], ty("i32", [4]))
        s = b.op("reduce", [r], S_I32, [("kind", "sum"), ("axes", "[0]")])
        b.ret(r, s)
        branches.append(b)
    v = np.array([3, -4, 5, -6], np.int32)
    for idx in [0, 1, 2, 7, -3]:
        p = Program(S_I32, ty("i32", [4]))
        outs = p.op("cond", ["%0", "%1"], [ty("i32", [4]), S_I32], regions=branches)
        p.ret(*outs)
        k = idx if 0 <= idx < 3 else 2
        r = [-v, np.abs(v), v + v][k].astype(np.int32)
        out.append(case(f"cond/three_branches_index{idx}", p, [("i32", np.int32(idx)), ("i32", v)], [("i32", r), ("i32", np.int32(r.sum()))], tol_exact()))
    # Nested: the outer branch 1 itself holds a cond on its second operand.
    inner0 = region("branch", S_F64)
    inner0.ret(inner0.op("sin", ["%0"], S_F64))
    inner1 = region("branch", S_F64)
    inner1.ret(inner1.op("cos", ["%0"], S_F64))
    o0 = region("branch", S_I32, S_F64)
    o0.ret(o0.op("neg", ["%1"], S_F64))
    o1 = region("branch", S_I32, S_F64)
    o1.ret(o1.op("cond", ["%0", "%1"], S_F64, regions=[inner0, inner1]))
    for a, b in [(0, 0), (1, 0), (1, 1)]:
        p = Program(S_I32, S_I32, S_F64)
        p.ret(p.op("cond", ["%0", "%1", "%2"], S_F64, regions=[o0, o1]))
        xv = 0.75
        y = -xv if a == 0 else (float(np.sin(xv)) if b == 0 else float(np.cos(xv)))
        out.append(case(f"cond/nested_{a}{b}", p, [("i32", np.int32(a)), ("i32", np.int32(b)), ("f64", np.float64(xv))], [("f64", np.float64(y))], {"ulp": 1}))
    return out


def while_counter(n):
    """carry (i, acc): while i < n: acc = acc * 2 + 1; i += 1"""
    c = region("cond", S_I32, ty("f32", []), S_I32)
    c.ret(c.op("compare", ["%0", "%2"], S_BOOL, [("dir", "lt")]))
    b = region("body", S_I32, ty("f32", []), S_I32)
    one_i = const(b, "i32", 1)
    two = const(b, "f32", "2.0")
    one_f = const(b, "f32", "1.0")
    i2 = b.op("add", ["%0", one_i], S_I32)
    m = b.op("mul", ["%1", two], ty("f32", []))
    acc = b.op("add", [m, one_f], ty("f32", []))
    b.ret(i2, acc, "%2")
    p = Program(S_I32, ty("f32", []), S_I32)
    outs = p.op("while", ["%0", "%1", "%2"], [S_I32, ty("f32", []), S_I32], regions=[c, b])
    p.ret(outs[0], outs[1])
    i, acc = 0, np.float32(0.5)
    while i < n:
        acc = np.float32(acc * np.float32(2.0) + np.float32(1.0))
        i += 1
    return p, [("i32", np.int32(0)), ("f32", np.float32(0.5)), ("i32", np.int32(n))], [("i32", np.int32(i)), ("f32", acc)]


def collatz():
    """carry (x: u32, steps: i32): while x != 1: x = x even ? x / 2 : 3x + 1; steps += 1"""
    c = region("cond", S_U32, S_I32)
    one = const(c, "u32", 1)
    c.ret(c.op("compare", ["%0", one], S_BOOL, [("dir", "ne")]))
    b = region("body", S_U32, S_I32)
    two = const(b, "u32", 2)
    three = const(b, "u32", 3)
    one_u = const(b, "u32", 1)
    zero = const(b, "u32", 0)
    one_i = const(b, "i32", 1)
    r = b.op("rem", ["%0", two], S_U32)
    even = b.op("compare", [r, zero], S_BOOL, [("dir", "eq")])
    half = b.op("div", ["%0", two], S_U32)
    t = b.op("mul", ["%0", three], S_U32)
    t1 = b.op("add", [t, one_u], S_U32)
    nx = b.op("select", [even, half, t1], S_U32)
    ns = b.op("add", ["%1", one_i], S_I32)
    b.ret(nx, ns)
    p = Program(S_U32, S_I32)
    outs = p.op("while", ["%0", "%1"], [S_U32, S_I32], regions=[c, b])
    p.ret(*outs)
    return p


def newton_sqrt():
    """carry (a, y, i): while |y*y - a| > 1e-12 * a and i < 100: y = 0.5 * (y + a / y); i += 1"""
    c = region("cond", S_F64, S_F64, S_I32)
    yy = c.op("mul", ["%1", "%1"], S_F64)
    d = c.op("sub", [yy, "%0"], S_F64)
    ad = c.op("abs", [d], S_F64)
    eps = const(c, "f64", "1e-12")
    tol = c.op("mul", [eps, "%0"], S_F64)
    big = c.op("compare", [ad, tol], S_BOOL, [("dir", "gt")])
    lim = const(c, "i32", 100)
    more = c.op("compare", ["%2", lim], S_BOOL, [("dir", "lt")])
    c.ret(c.op("and", [big, more], S_BOOL))
    b = region("body", S_F64, S_F64, S_I32)
    q = b.op("div", ["%0", "%1"], S_F64)
    s = b.op("add", ["%1", q], S_F64)
    half = const(b, "f64", "0.5")
    ny = b.op("mul", [half, s], S_F64)
    one = const(b, "i32", 1)
    ni = b.op("add", ["%2", one], S_I32)
    b.ret("%0", ny, ni)
    p = Program(S_F64)
    zero = const(p, "i32", 0)
    outs = p.op("while", ["%0", "%0", zero], [S_F64, S_F64, S_I32], regions=[c, b])
    p.ret(outs[1], outs[2])
    return p


def newton_ref(a):
    y, i = a, 0
    while abs(y * y - a) > 1e-12 * a and i < 100:
        y = 0.5 * (y + a / y)
        i += 1
    return y, i


def nested_loops():
    """Outer while over i < n; body: cond on (i % 2) picks either acc += v (array add) or an
    inner while that doubles acc k times. Exercises while-in-cond-in-while."""
    vt = ty("f32", [3])
    inner_c = region("cond", vt, S_I32)
    zero = const(inner_c, "i32", 0)
    inner_c.ret(inner_c.op("compare", ["%1", zero], S_BOOL, [("dir", "gt")]))
    inner_b = region("body", vt, S_I32)
    dbl = inner_b.op("add", ["%0", "%0"], vt)
    one = const(inner_b, "i32", 1)
    inner_b.ret(dbl, inner_b.op("sub", ["%1", one], S_I32))

    br0 = region("branch", vt, vt, S_I32)
    br0.ret(br0.op("add", ["%0", "%1"], vt))
    br1 = region("branch", vt, vt, S_I32)
    outs = br1.op("while", ["%0", "%2"], [vt, S_I32], regions=[inner_c, inner_b])
    br1.ret(outs[0])

    oc = region("cond", S_I32, vt, vt, S_I32, S_I32)
    oc.ret(oc.op("compare", ["%0", "%3"], S_BOOL, [("dir", "lt")]))
    ob = region("body", S_I32, vt, vt, S_I32, S_I32)
    two = const(ob, "i32", 2)
    par = ob.op("rem", ["%0", two], S_I32)
    acc = ob.op("cond", [par, "%1", "%2", "%4"], vt, regions=[br0, br1])
    one_o = const(ob, "i32", 1)
    ob.ret(ob.op("add", ["%0", one_o], S_I32), acc, "%2", "%3", "%4")

    p = Program(vt, vt, S_I32, S_I32)
    zero_p = const(p, "i32", 0)
    res = p.op("while", [zero_p, "%0", "%1", "%2", "%3"], [S_I32, vt, vt, S_I32, S_I32], regions=[oc, ob])
    p.ret(res[1])
    return p


def while_cases():
    out = []
    for n in [0, 1, 5, 40]:
        p, ins, exp = while_counter(n)
        out.append(case(f"while/counter_{n}_trips", p, ins, exp, tol_exact()))
    p = collatz()
    for x0 in [1, 6, 27, 97, 871]:
        x, steps = x0, 0
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            steps += 1
        out.append(case(f"while/collatz_{x0}", p, [("u32", np.uint32(x0)), ("i32", np.int32(0))], [("u32", np.uint32(1)), ("i32", np.int32(steps))], tol_exact(), note="data-dependent trip count"))
    p = newton_sqrt()
    for a in [2.0, 1e-6, 12345.678, 1e10]:
        y, i = newton_ref(a)
        out.append(case(f"while/newton_sqrt_{a:g}", p, [("f64", np.float64(a))], [("f64", np.float64(y)), ("i32", np.int32(i))], tol_exact()))
    p = nested_loops()
    v = np.array([1.0, -2.0, 0.25], np.float32)
    w = np.array([0.5, 0.5, -1.0], np.float32)
    for n, k in [(0, 2), (3, 2), (6, 1)]:
        acc = v.copy()
        for i in range(n):
            if i % 2 == 0:
                acc = (acc + w).astype(np.float32)
            else:
                for _ in range(k):
                    acc = (acc + acc).astype(np.float32)
        out.append(case(f"while/nested_cond_while_n{n}_k{k}", p, [("f32", v), ("f32", w), ("i32", np.int32(n)), ("i32", np.int32(k))], [("f32", acc)], tol_exact()))
    return out


# The conformance runner's host functions (tests/conformance/src/suite_callbacks.rs): AFFINE
# maps every operand elementwise to 3x + 1 in its dtype; OBSERVE reads and returns nothing.
FIXED_IDS = 1 << 40
AFFINE = FIXED_IDS + 1
OBSERVE = FIXED_IDS + 2


def affine_ref(x):
    if x.dtype.kind == "f":
        return (x * x.dtype.type(3) + x.dtype.type(1)).astype(x.dtype)
    return (x.astype(np.int64) * 3 + 1).astype(x.dtype)


def host_callback_cases():
    out = []

    def call(p, callback, effectful, operands, results):
        return p.op("host_callback", operands, results,
                    [("callback", str(callback)), ("effectful", "true" if effectful else "false")])

    x = np.array([1.5, -2.0, 0.0, 1e30, -0.25], np.float32)
    p = Program(ty("f32", [5]))
    p.ret(call(p, AFFINE, False, ["%0"], ty("f32", [5])))
    out.append(case("host_callback/affine_f32", p, [("f32", x)], [("f32", affine_ref(x))], tol_exact()))
    # Several operands of several dtypes, several results.
    a = np.array([[0.5, -1.0], [2.0, 3.0]], np.float64)
    n = np.array([7, -3, 2147483647], np.int32)
    p = Program(ty("f64", [2, 2]), ty("i32", [3]))
    r = call(p, AFFINE, False, ["%0", "%1"], [ty("f64", [2, 2]), ty("i32", [3])])
    p.ret(*r)
    out.append(case("host_callback/affine_f64_and_i32", p, [("f64", a), ("i32", n)], [("f64", affine_ref(a)), ("i32", affine_ref(n))], tol_exact()))
    # Called on each trip of a loop: carry (i, v): while i < 3: v = affine(v).
    c = region("cond", S_I32, ty("f64", [2]))
    three = const(c, "i32", 3)
    c.ret(c.op("compare", ["%0", three], S_BOOL, [("dir", "lt")]))
    b = region("body", S_I32, ty("f64", [2]))
    one = const(b, "i32", 1)
    i2 = b.op("add", ["%0", one], S_I32)
    b.ret(i2, call(b, AFFINE, False, ["%1"], ty("f64", [2])))
    p = Program(ty("f64", [2]))
    zero = const(p, "i32", 0)
    outs = p.op("while", [zero, "%0"], [S_I32, ty("f64", [2])], regions=[c, b])
    p.ret(outs[1])
    v = np.array([0.1, -4.0], np.float64)
    want = affine_ref(affine_ref(affine_ref(v)))
    out.append(case("host_callback/in_a_while_loop", p, [("f64", v)], [("f64", want)], tol_exact()))
    # An effectful call with no results beside the value the program returns.
    p = Program(ty("f32", [3]))
    call(p, OBSERVE, True, ["%0"], [])
    p.ret(p.op("mul", ["%0", "%0"], ty("f32", [3])))
    w = np.array([1.0, -2.0, 0.5], np.float32)
    out.append(case("host_callback/effectful_without_results", p, [("f32", w)], [("f32", (w * w).astype(np.float32))], tol_exact()))
    return out


def build():
    return {"regions/cond": cond_cases(), "regions/while": while_cases(),
            "regions/host_callback": host_callback_cases()}
