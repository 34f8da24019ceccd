"""The ``semantic`` cases lane of the vexl verifier.

Usage::

    python semantic.py            # run every case
    python semantic.py --list     # print the case ids, one per line
    python semantic.py -k fused/  # run the cases whose id contains fused/

Each case compiles a vexl program with the installed ``vexl_compiler``
wheel, runs it with the installed ``vexl_plugin`` wheel under whatever
profile the environment selects (``VEXL_PROFILE``: unset means ``fused``,
``baseline`` is the rollback) and compares the result with the pure-Python
reference interpreter in ``reference.py``.

Output: one JSON line per case (format in ``_lane.py``), appended to
``$MKRELEASE_CASES`` or written to standard output; ``lane`` is
``$MKRELEASE_LANE`` (default ``semantic``), ``tier`` is ``semantic``. A
progress summary goes to standard error. Exit status 0 when every case ran
(whatever the verdicts), 2 when the lane could not run.

Comparison: element by element. NaN matches any NaN (payload and sign are
not compared); +-Inf must match exactly; otherwise an element passes when
``|got - want| <= abs + rel * |want|``. A tolerance of ``abs = rel = 0``
means bit-exact (signed zeros included): IEEE ``+ - * /``, ``sqrt``,
``abs``, ``min``, ``max`` and ``clamp`` are correctly rounded or exact in both
implementations, so they must agree to the bit, and that also proves that no
multiply-add is contracted into an FMA. ``exp`` and ``log`` come from
different math libraries (Go's ``math`` in the runtime, the C library here)
and get a few ulps:

==========  ================================  ==============================
tolerance   float64                           float32
==========  ================================  ==============================
exact       abs 0, rel 0                      abs 0, rel 0
transc      abs 1e-300, rel 1e-15 (~4.5 ulp)  abs 1e-44, rel 2.5e-7 (~2 ulp)
==========  ================================  ==============================

A few compositions that amplify those ulps get an explicit looser
tolerance (``log(exp(x)) - x``: 1e-12; a let-chain ending in ``exp``: 1e-13).

Groups (there are no reductions in vexl: every operation is element-wise,
so the lane covers element-wise arithmetic, functions and broadcasting of
constants instead):

``arith``     + - * / and unary minus, precedence, associativity, IEEE
              division by zero, overflow and underflow
``func``      sqrt abs exp log min max clamp, including domain edges
``nan``       NaN/Inf propagation and the min/max NaN and signed-zero rules
``broadcast`` constants broadcast over vectors, literal forms, constant
              folding, float32 rounding of constants, 16 inputs
``let``       let-chains, reused and unused temporaries
``shape``     empty, one-element, chunk-boundary and long vectors
``fused``     the programs the fused profile rewrites (multiply-add
              superinstructions, folding, register reuse)
``fuzz``      seeded random programs of the exactly-rounded operations
``profiles``  the same program loaded under ``fused`` and ``baseline`` in
              this process: results must agree (NaN payloads aside)
``errors``    compile errors (exact vexlc message, reproduced by the
              reference) and run-time errors (input count, lengths, bad
              bytecode, closed program, unknown profile)
``syntax``    seeded random edits of valid programs: vexlc and the reference
              must both accept each one, or refuse it with the same message
``api``       versions, profile, result typecodes, input counts
"""

import array
import math
import os
import random
import sys
import zlib

import _lane
import reference
from _lane import BIG, ERROR, FAIL, PASS

INF = float("inf")
NAN = float("nan")

# Tolerances: (abs, rel).
EXACT = (0.0, 0.0)
TRANSC = "transc"  # resolved per precision by _tolerance()
TRANSC_F64 = (1e-300, 1e-15)
TRANSC_F32 = (1e-44, 2.5e-7)


def _tolerance(tol, prec):
    if tol == TRANSC:
        return TRANSC_F64 if prec == "d" else TRANSC_F32
    return tol


# --------------------------------------------------------------------------
# Inputs

SPECIALS = [0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, 1e308, -1e308, 5e-324, -1e-310,
            3.4e38, -3.5e38, 1e-40, 0.5, -2.5, 7.0]
SPECIALS_NO_POSITIVE_SUBNORMAL = [v for v in SPECIALS if not 0.0 < v < 2.2250738585072014e-308]


def gen_vector(kind, n, rng):
    """n deterministic values of the named kind, drawn from rng."""
    if kind == "normal":  # signed, magnitudes 1e-3 .. 1e3
        return [(rng.random() - 0.5) * 10.0 ** rng.randint(-3, 3) for _ in range(n)]
    if kind == "unit":
        return [rng.uniform(-1.0, 1.0) for _ in range(n)]
    if kind == "pos":  # positive, 1e-3 .. 1e3
        return [10.0 ** rng.uniform(-3.0, 3.0) for _ in range(n)]
    if kind == "wide":  # any sign, 1e-320 .. 1e308
        return [rng.choice((-1.0, 1.0)) * 10.0 ** rng.uniform(-320.0, 308.0) for _ in range(n)]
    if kind == "wide-normal":  # any sign, 1e-307 .. 1e308: no subnormals
        return [rng.choice((-1.0, 1.0)) * 10.0 ** rng.uniform(-307.0, 308.0) for _ in range(n)]
    if kind == "exp":  # arguments of exp: overflow and underflow included
        return [rng.uniform(-760.0, 720.0) for _ in range(n)]
    if kind == "int":  # small integers, zeros of both signs
        return [rng.choice((0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 4.0)) for _ in range(n)]
    if kind in ("special", "special-normal"):  # normal values with one in four special
        pool = SPECIALS if kind == "special" else SPECIALS_NO_POSITIVE_SUBNORMAL
        return [rng.choice(pool) if rng.random() < 0.25 else (rng.random() - 0.5) * 10.0 ** rng.randint(-3, 3)
                for _ in range(n)]
    if kind == "nan":
        return [NAN] * n
    raise ValueError("unknown input kind %r" % (kind,))


# --------------------------------------------------------------------------
# Cases


class Case(object):
    """One check of the lane.

    ``kind`` is ``"run"`` (compare the runtime with the reference),
    ``"compile_error"`` (vexlc and the reference must both refuse ``src``
    with ``expect``) or ``"custom"`` (``fn(case)`` returns a result dict).
    """

    def __init__(self, group, name, src=None, inputs=None, prec="d", tol=EXACT, n=257,
                 kind="run", expect=None, fn=None):
        self.id = "%s/%s" % (group, name)
        self.src = src
        self.inputs = inputs
        self.prec = prec
        self.tol = _tolerance(tol, prec)
        self.n = n
        self.kind = kind
        self.expect = expect
        self.fn = fn

    def seed(self):
        return zlib.crc32(self.id.encode("utf-8"))

    def build_inputs(self, num_inputs):
        """The input arrays: kinds are generated, explicit lists are used as is."""
        rng = random.Random(self.seed())
        specs = self.inputs if self.inputs is not None else ["normal"] * num_inputs
        if len(specs) != num_inputs:
            raise ValueError("case gives %d inputs, program takes %d" % (len(specs), num_inputs))
        vectors = []
        for spec in specs:
            values = gen_vector(spec, self.n, rng) if isinstance(spec, str) else list(spec)
            vectors.append(array.array(self.prec, values))
        return vectors


def both(group, name, src, tol=EXACT, **kw):
    """The same case in float64 and in float32."""
    return [Case(group, name + "-f64", src, prec="d", tol=tol, **kw),
            Case(group, name + "-f32", src, prec="f", tol=tol, **kw)]


def _arith_cases():
    g = "arith"
    xy = "in x, y\n"
    cases = []
    cases += both(g, "add", xy + "out x + y", inputs=["special", "special"])
    cases += both(g, "sub", xy + "out x - y", inputs=["special", "special"])
    cases += both(g, "mul", xy + "out x * y", inputs=["special", "special"])
    cases += both(g, "div", xy + "out x / y", inputs=["special", "special"])
    cases += both(g, "neg", "in x\nout -x", inputs=["special"])
    cases += both(g, "precedence", xy + "out x + y * 2 - x / 4 * y")
    cases += both(g, "left-assoc", xy + "out x - y - 1 + x / y / 3")
    cases += both(g, "parens", xy + "out (x + y) * (x - y) / (2 - (y - x))")
    cases += both(g, "unary-chains", xy + "out - - x * -y - -(x + y)")
    zx = [1.0, -1.0, 0.0, -0.0, INF, -INF, NAN, 5e-324] * 2
    zy = [0.0] * 8 + [-0.0] * 8
    cases += both(g, "div-by-zero-runtime", xy + "out x / y", inputs=[zx, zy], n=16)
    cases += both(g, "div-by-folded-zero", "in x\nout x / (1 - 1)", inputs=[zx], n=16)
    cases += both(g, "overflow-underflow", xy + "out x * y + x / y", inputs=["wide", "wide"])
    cases += both(g, "integers-exact", "in x, y, z\nout (x + y) * z - x * y / (z + 8)", inputs=["int", "int", "int"])
    return cases


def _func_cases():
    g = "func"
    cases = []
    cases += both(g, "sqrt", "in x\nout sqrt(x)", inputs=["special"])
    cases += both(g, "sqrt-positive", "in x\nout sqrt(x)", inputs=["pos"])
    cases += both(g, "abs", "in x\nout abs(x)", inputs=["special"])
    cases += both(g, "exp", "in x\nout exp(x)", tol=TRANSC, inputs=["unit"])
    cases += both(g, "exp-range", "in x\nout exp(x)", tol=TRANSC, inputs=["exp"])
    cases += both(g, "exp-special", "in x\nout exp(x)", tol=TRANSC, inputs=["special"])
    cases += both(g, "log", "in x\nout log(x)", tol=TRANSC, inputs=["pos"])
    cases += both(g, "log-special", "in x\nout log(x)", tol=TRANSC, inputs=["special-normal"])
    cases += both(g, "log-wide", "in x\nout log(abs(x))", tol=TRANSC, inputs=["wide-normal"])
    # Positive subnormal float64 arguments of log, kept apart from the cases
    # above: Go's math.Log is wrong for them on amd64 (its assembly does not
    # normalise subnormals, golang/go#56600), so this case fails there and
    # passes on arm64. float32 subnormals are normal float64 values.
    subnormals = [5e-324, 1e-320, 1e-315, 1e-310, 2.225073858507201e-308, 2.2250738585072014e-308, -1e-310, 0.0]
    cases.append(Case(g, "log-subnormal-f64", "in x\nout log(x)", tol=TRANSC, inputs=[subnormals], n=len(subnormals)))
    cases.append(Case(g, "log-f32-subnormal", "in x\nout log(x)", prec="f", tol=TRANSC,
                      inputs=[[1e-45, 1e-40, 1.1754942e-38, 1.1754944e-38]], n=4))
    cases += both(g, "min", "in x, y\nout min(x, y)", inputs=["special", "special"])
    cases += both(g, "max", "in x, y\nout max(x, y)", inputs=["special", "special"])
    cases += both(g, "clamp", "in x, lo, hi\nout clamp(x, lo, hi)", inputs=["special", "special", "special"])
    cases += both(g, "clamp-inverted-bounds", "in x\nout clamp(x, 1, -1)", inputs=["special"])
    cases += both(g, "exp-log-roundtrip", "in x\nout log(exp(x)) - x", tol=(1e-12, 1e-12), inputs=["unit"])
    return cases


def _nan_cases():
    g = "nan"
    nums = [1.0, -1.0, 0.0, -0.0, INF, -INF, 2.5, NAN]
    nans = [NAN] * len(nums)
    n = len(nums)
    cases = [
        Case(g, "min-nan-left", "in x, y\nout min(x, y)", inputs=[nans, nums], n=n),
        Case(g, "min-nan-right", "in x, y\nout min(x, y)", inputs=[nums, nans], n=n),
        Case(g, "max-nan-left", "in x, y\nout max(x, y)", inputs=[nans, nums], n=n),
        Case(g, "max-nan-right", "in x, y\nout max(x, y)", inputs=[nums, nans], n=n),
        Case(g, "clamp-nan-value", "in x, y\nout clamp(x, y, 10)", inputs=[nans, nums], n=n),
        Case(g, "clamp-nan-lo", "in x, y\nout clamp(y, x, 10)", inputs=[nans, nums], n=n),
        Case(g, "clamp-nan-hi", "in x, y\nout clamp(y, -10, x)", inputs=[nans, nums], n=n),
        Case(g, "min-max-signed-zeros", "in x, y\nout min(x, y) + max(x, y) * 0 + max(y, x) - min(y, x)",
             inputs=[[0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, 0.0, -0.0]], n=4),
        Case(g, "min-signed-zeros", "in x, y\nout min(x, y)", inputs=[[0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, 0.0, -0.0]], n=4),
        Case(g, "max-signed-zeros", "in x, y\nout max(x, y)", inputs=[[0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, 0.0, -0.0]], n=4),
        Case(g, "inf-arithmetic", "in x, y\nout (x - y) + x * 0 + (x + y)", inputs=[[INF, INF, -INF, 1.0], [INF, -INF, -INF, INF]], n=4),
        Case(g, "nan-through-lets", "in x, y\nlet t = sqrt(x)\nlet u = t * 0 + 1\nout min(u, y) + max(y, u)",
             inputs=["special", "special"]),
        Case(g, "folded-nan-constant", "in x\nout x + log(-1)", inputs=["normal"]),
        Case(g, "folded-inf-times-zero", "in x\nout exp(1000) * 0 + x", inputs=["normal"]),
        Case(g, "max-with-folded-nan", "in x\nout max(log(-1), x) + min(x, sqrt(-1))", inputs=["special"]),
        Case(g, "all-nan-f32", "in x, y\nout x * y + min(x, y)", prec="f", inputs=["nan", "special"]),
    ]
    return cases


def _broadcast_cases():
    g = "broadcast"
    cases = []
    cases += both(g, "constant-only", "in x\nout 2.5")
    cases += both(g, "constant-0.1", "in x\nout 0.1")
    cases += both(g, "literal-forms", "in x\nout x + 2 + 2.5 + .5 + 2. + 1e-3 + 4E+2 + 1.5e+1 + 25e-1")
    cases += both(g, "negative-literal", "in x\nout x * -2.5 + -0.125")
    cases += both(g, "constant-first", "in x\nout 3 - x + 1 / x", inputs=["special"])
    cases += both(g, "folded-arith", "in x\nout x + 2 * 3 - 4 / 8 + (1 + 2) * (3 - 5)")
    cases += both(g, "folded-transc", "in x\nout x * sqrt(2) + log(10) - exp(-1) + abs(-3) * max(1, 2)", tol=TRANSC)
    cases += both(g, "const-rounded-first", "in x\nout x * 0.1 + 0.2 - 0.3", inputs=["unit"])
    cases += [
        Case(g, "f32-constant-overflow", "in x\nout x + 1e39", prec="f", inputs=["special"]),
        Case(g, "f32-constant-subnormal", "in x\nout x * 1e-45 + 1e-39", prec="f", inputs=["normal"]),
        Case(g, "f32-intermediate-overflow", "in x\nout x * 1e30 * 1e30 / 1e30", prec="f", inputs=["unit"]),
        Case(g, "f64-huge-constants", "in x\nout x * 1.7976931348623157e308 + 4.9e-324", inputs=["unit"]),
        Case(g, "f64-underflowing-literal", "in x\nout x + 1e-400", inputs=["normal"]),
    ]
    names = ["a%d" % i for i in range(16)]
    src16 = "in " + ", ".join(names) + "\nout " + " + ".join("%s * %d" % (v, i + 1) for i, v in enumerate(names))
    cases += both(g, "sixteen-inputs", src16)
    cases += both(g, "clamp-constant-bounds", "in x\nout clamp(x, -0.5, 0.5)", inputs=["special"])
    return cases


def _let_cases():
    g = "let"
    cases = []
    chain = "in x, y\n" + "let t0 = x + 1\n" + "".join(
        "let t%d = t%d * %s + y\n" % (i, i - 1, "0.5" if i % 2 else "-0.25") for i in range(1, 30)) + "out t29"
    cases += both(g, "chain-30", chain)
    cases += both(g, "reuse", "in x, y\nlet t = x * y\nout t * t + t")
    cases += both(g, "unused", "in x, y, z\nlet unused = x * y + z\nout z")
    cases += both(g, "temp-of-constant", "in x\nlet t = 2 * 3\nlet u = t * x + t\nout u * u + t")
    cases += both(g, "temp-of-input", "in x\nlet t = x\nlet u = 1.5\nout t * u + u * t")
    cases += both(g, "readme-demo", "in x, y\nlet t = x * y\nout t + 2.5 * sqrt(abs(x)) - min(x, y) / 3")
    cases += both(g, "benchmark-program",
                  "in x, y\nlet t = x * y\nout t + 2.5 * sqrt(abs(x)) - min(x, y) / 3 + x * 0.25 + y * 0.75")
    deep = "in x, y\nlet t0 = x\n" + "".join("let t%d = t%d * 0.5 + y\n" % (i, i - 1) for i in range(1, 255)) + "out t254"
    cases += both(g, "max-temporaries-255", deep)
    cases += both(g, "comments-and-continuations",
                  "# a comment\nin x, y # trailing comment\n\n\nlet t = (x +\n  y) # inside parens\nout min(t,\n max(x,\n\n y))")
    cases += both(g, "in-repeated", "in x\nlet t = x * 2\nin y\nout t - y")
    return cases


def _shape_cases():
    g = "shape"
    prog = "in x, y, z\nlet t = x * y + z\nout t * t - z / (abs(x) + 1)"
    cases = []
    cases += both(g, "empty", prog, n=0)
    cases += both(g, "empty-constant-only", "in x\nout 2.5", n=0)
    cases += both(g, "one-element", prog, n=1)
    for n in (255, 256, 257, 513, 1000):
        cases.append(Case(g, "n-%d-f64" % n, prog, n=n))
    cases.append(Case(g, "n-257-f32", prog, prec="f", n=257))
    cases.append(Case(g, "long-1M-f64", "in x, y\nout x * y + x - min(x, y) * 0.5", n=1 << 20, inputs=["unit", "unit"]))
    cases.append(Case(g, "long-200k-f32", prog, prec="f", n=200003, inputs=["unit", "unit", "unit"]))
    cases.append(Case(g, "long-constant-only", "in x\nout 2.5 * 4", n=100000))
    return cases


FUSED_PROGRAMS = [
    ("muladd", "out x * y + z"),
    ("muladd-swapped", "out z + x * y"),
    ("mulsub", "out x * y - z"),
    ("nmuladd", "out z - x * y"),
    ("two-products-add", "out x * y + z * x"),
    ("two-products-sub", "out x * y - z * x"),
    ("product-chain", "out (x * y) * z + 1"),
    ("fold-with-pending-product", "out x * 2 + 3 * 4"),
    ("fold-in-product", "out x * (2 + 3) - -(1 / 3)"),
    ("temps-read-twice", "let t = x * y\nlet u = t + z\nout t * u + u * t - t"),
    ("temp-fusion", "let t = x * 2\nout t + (t * x + t) * (t - t * y)"),
    ("deep-muladd", "out " + "(" * 20 + "x" + " * y + z)" * 20),
    ("deep-right-nesting", "out " + "x + (" * 30 + "y * z" + ")" * 30),
    ("registers", "let a = x * y + z\nlet b = a * a - z\nlet c = b * a + a\nout c / (abs(b) + 1) + abs(-a) * 0.5"),
    ("min-max-of-products", "out min(x * y, z) + max(x, y * z - 1)"),
]


def _fused_cases():
    cases = []
    for name, body in FUSED_PROGRAMS:
        cases += both("fused", name, "in x, y, z\n" + body)
    cases += both("fused", "muladd-special-inputs", "in x, y, z\nout x * y + z - z * x",
                  inputs=["special", "special", "special"])
    cases += both("fused", "registers-with-exp",
                  "in x, y, z\nlet a = x * y + z\nlet b = a * a - z\nlet c = b * a + a\nout c / (abs(b) + 1) + exp(-abs(a))",
                  tol=(1e-13, 1e-13), inputs=["unit", "unit", "unit"])
    return cases


# Random programs over the exactly-rounded operations (no exp/log), so that
# the comparison can be bit-exact.
def random_expr(rng, names, depth):
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.3:
            return rng.choice(["2", "0.5", "-1.25", "3", "1e-3", "0", "7"])
        return rng.choice(names)
    a = random_expr(rng, names, depth - 1)
    b = random_expr(rng, names, depth - 1)
    r = rng.randrange(11)
    if r in (0, 1):
        return "(%s * %s)" % (a, b)
    if r == 2:
        return "%s + %s" % (a, b)
    if r == 3:
        return "%s - %s" % (a, b)
    if r == 4:
        return "(%s) / (%s + 7)" % (a, b)
    if r == 5:
        return "-(%s)" % a
    if r == 6:
        return "%s(%s)" % (rng.choice(["sqrt", "abs"]), a)
    if r == 7:
        return "%s(%s, %s)" % (rng.choice(["min", "max"]), a, b)
    if r == 8:
        return "clamp(%s, %s, %s)" % (a, b, random_expr(rng, names, depth - 1))
    if r == 9:
        return "%s * %s + %s" % (a, b, random_expr(rng, names, depth - 1))
    return "%s - %s * %s" % (random_expr(rng, names, depth - 1), a, b)


def random_program(rng):
    names = ["x", "y", "z"]
    lines = ["in x, y, z"]
    for k in range(rng.randrange(5)):
        lines.append("let t%d = %s" % (k, random_expr(rng, names, 4)))
        names.append("t%d" % k)
    lines.append("out %s" % random_expr(rng, names, 5))
    return "\n".join(lines)


def _fuzz_cases():
    rng = random.Random(20261101)
    cases = []
    for i in range(24):
        src = random_program(rng)
        n = rng.randint(1, 600)
        cases += both("fuzz", "program-%02d" % i, src, n=n, inputs=["special", "special", "special"])
    return cases


# --------------------------------------------------------------------------
# Running and comparing


def _signbit(x):
    return math.copysign(1.0, x) < 0


def compare(got, want, tol):
    """Compare two equally long float sequences.

    Returns (max_abs, max_rel, bad, first) where bad counts the elements out
    of tolerance and first is the index of the first one (or None).
    """
    tol_abs, tol_rel = tol
    exact = tol_abs == 0.0 and tol_rel == 0.0
    max_abs = max_rel = 0.0
    bad, first = 0, None
    for i, (g, w) in enumerate(zip(got, want)):
        if g != g or w != w:
            if g != g and w != w:
                continue  # any NaN matches any NaN
            a = r = BIG
            ok = False
        elif g == w:
            a = r = 0.0
            ok = not exact or _signbit(g) == _signbit(w)  # exact: -0 is not +0
        elif math.isinf(g) or math.isinf(w):
            a = r = BIG
            ok = False
        else:
            a = _lane.finite(g - w)
            r = _lane.finite(a / abs(w)) if w != 0.0 else BIG
            ok = a <= tol_abs + tol_rel * abs(w)
        max_abs, max_rel = max(max_abs, a), max(max_rel, r)
        if not ok:
            bad += 1
            if first is None:
                first = i
    return max_abs, max_rel, bad, first


def _result(status, message="", max_abs=0.0, max_rel=0.0, n=0):
    return {"status": status, "message": message, "max_abs": max_abs, "max_rel": max_rel, "n": n}


def run_case(case, vc, vp):
    """Run one case; return a result dict (status, message, metrics)."""
    if case.kind == "custom":
        return case.fn(case, vc, vp)
    if case.kind == "compile_error":
        return _run_compile_error(case, vc)
    ref = reference.compile_program(case.src)
    data = vc.compile_source(case.src)
    inputs = case.build_inputs(ref.num_inputs)
    with vp.Program.load(data) as prog:
        if prog.num_inputs != ref.num_inputs:
            return _result(FAIL, "program takes %d inputs, the reference says %d" % (prog.num_inputs, ref.num_inputs))
        got = prog.run(*inputs)
    n = len(inputs[0])
    if got.typecode != case.prec or len(got) != n:
        return _result(FAIL, "result is array(%r) of %d elements, want array(%r) of %d"
                       % (got.typecode, len(got), case.prec, n), n=len(got))
    want = ref.run([list(v) for v in inputs], case.prec)
    if got.tobytes() == array.array(case.prec, want).tobytes():
        # Identical bits (the common case): equal under any tolerance.
        return _result(PASS, "%d elements agree with the reference (bit-identical)" % n, 0.0, 0.0, n)
    max_abs, max_rel, bad, first = compare(got, want, case.tol)
    if bad:
        at = ", ".join(repr(v[first]) for v in inputs)
        msg = "%d of %d elements out of tolerance; first [%d]: got %r, want %r (inputs %s)" % (
            bad, n, first, got[first], want[first], at)
        return _result(FAIL, msg, max_abs, max_rel, n)
    return _result(PASS, "%d elements agree with the reference" % n, max_abs, max_rel, n)


def _run_compile_error(case, vc):
    """vexlc must refuse the program with the expected message, and so must
    the reference."""
    try:
        reference.compile_program(case.src)
        ref_msg = None
    except reference.CompileError as exc:
        ref_msg = str(exc)
    try:
        vc.compile_source(case.src)
        got = None
    except vc.CompileError as exc:
        got = exc.message
        if exc.returncode != 1:
            return _result(FAIL, "vexlc exited with %d, want 1 (%s)" % (exc.returncode, got))
    if got is None:
        return _result(FAIL, "vexlc compiled the program, want CompileError %r" % case.expect)
    if got != case.expect:
        return _result(FAIL, "vexlc said %r, want %r" % (got, case.expect))
    if ref_msg != case.expect:
        return _result(FAIL, "vexlc said %r as expected, but the reference said %r" % (got, ref_msg))
    return _result(PASS, "CompileError as expected: %s" % got)


# --------------------------------------------------------------------------
# Error and API cases


def _compile_error_cases():
    """Invalid programs with vexlc's exact message (the file is <stdin>)."""
    rows = [
        ("empty", "", "1:1: missing out statement (a program ends with: out EXPRESSION)"),
        ("missing-out", "in x\nlet t = x\n", "3:1: missing out statement (a program ends with: out EXPRESSION)"),
        ("no-inputs", "out 1", "1:1: no inputs declared (declare them with: in NAME, ...)"),
        ("unknown-identifier", "in x\nout x + y", "2:9: unknown identifier y"),
        ("unknown-function", "in x\nout foo(x)", "2:5: unknown function foo"),
        ("input-called", "in x\nout x(1)", "2:5: x is an input, not a function"),
        ("function-as-value", "in x\nout sqrt + x", "2:5: sqrt is a function; call it as sqrt(...)"),
        ("arity-one", "in x\nout sqrt(x, x)", "2:5: sqrt expects 1 argument, got 2"),
        ("arity-two", "in x\nout  min(x)", "2:6: min expects 2 arguments, got 1"),
        ("arity-three", "in x\nout clamp(x, 1)", "2:5: clamp expects 3 arguments, got 2"),
        ("unexpected-token", "in x\nout x + * 2", '2:9: unexpected "*", expected expression'),
        ("unexpected-end", "in x\nout x +", "2:8: unexpected end of file, expected expression"),
        ("unclosed-paren", "in x\nout (x + 1", '2:11: unexpected end of file, expected ")"'),
        ("extra-token", "in x\nout x x", '2:7: unexpected name "x", expected end of line'),
        ("assignment-without-let", "in x\nt = x", '2:1: unexpected name "t", expected in, let or out (did you mean let t = ...?)'),
        ("keyword-as-name", "in x, out", '1:7: unexpected keyword "out", expected input name'),
        ("duplicate-input", "in x, y\nin x\nout x", "2:4: duplicate input x"),
        ("let-shadows-input", "in x\nlet x = 1\nout x", "2:5: x already declared as an input at 1:4"),
        ("let-redeclared", "in x\nlet t = x\nlet t = 2\nout t", "3:5: t already declared by let at 2:5"),
        ("recursive-let", "in x\nlet t = t + 1\nout t", "2:9: unknown identifier t"),
        ("function-name-as-input", "in exp\nout 1", "1:4: cannot use function name exp as a variable name"),
        ("statement-after-out", "in x\nout x\nlet t = 1", "3:1: statement after out (out must be the last statement, see 2:1)"),
        ("division-by-literal-zero", "in x\nout x / 0", "2:9: division by literal zero"),
        ("division-by-negative-zero", "in x\nout x / (-0)", "2:10: division by literal zero"),
        ("division-by-zero-float", "in x\nout x / 0.0e5", "2:9: division by literal zero"),
        ("malformed-number", "in x\nout 1e+", '2:5: malformed number "1e+"'),
        ("number-with-letters", "in x\nout 2x", '2:5: malformed number "2x"'),
        ("number-out-of-range", "in x\nout x * 1e400", "2:9: number 1e400 out of range"),
        ("bad-character", "in x\nout x % 2", "2:7: unexpected character '%'"),
        ("non-ascii", "in x\nout x + \u00e9", "2:9: unexpected character '\u00e9'"),
        ("too-many-inputs", "in " + ", ".join("a%d" % i for i in range(17)) + "\nout a0",
         "1:%d: too many inputs (limit 16)" % (4 + len(", ".join("a%d" % i for i in range(16))) + 2)),
        ("input-name-too-long", "in " + "v" * 65 + "\nout 1", "1:4: input name longer than 64 bytes"),
        ("too-many-temporaries", "in x\n" + "".join("let t%d = x\n" % i for i in range(256)) + "out x",
         "257:1: too many let statements (limit 255)"),
        ("stack-too-deep", "in x\nout " + "x + (" * 64 + "x" + ")" * 64,
         "2:5: expression too complex: needs a stack of 65 values (limit 64)"),
        ("nested-too-deeply", "in x\nout " + "-" * 300 + "x", "2:205: expression nested too deeply (limit 200)"),
        ("too-many-constants", "in x\nout x" + "".join(" + %d" % i for i in range(1, 4098)),
         None),  # position computed below
        ("program-too-large", "in x\nout x" + " + x" * 22000, None),
    ]
    cases = []
    for name, src, expect in rows:
        if expect is None:
            # Let the reference locate the error; the case still requires
            # vexlc to produce exactly the same message.
            try:
                reference.compile_program(src)
                expect = "<stdin>:?:?: (the reference compiled it)"
            except reference.CompileError as exc:
                expect = str(exc)
        else:
            expect = "<stdin>:" + expect
        cases.append(Case("errors", "compile-" + name, src, kind="compile_error", expect=expect))
    return cases


def _expect_error(exc_types, must_contain, action):
    """Run action(); PASS if it raises one of exc_types whose message contains
    must_contain, FAIL otherwise."""
    try:
        action()
    except exc_types as exc:
        text = str(exc)
        if must_contain not in text:
            return _result(FAIL, "raised %s but the message lacks %r" % (_lane.exception_text(exc), must_contain))
        return _result(PASS, "raised as expected: %s" % _lane.exception_text(exc))
    return _result(FAIL, "no error raised, want %s containing %r"
                   % ("/".join(t.__name__ for t in exc_types), must_contain))


def _wrong_count(count):
    def fn(case, vc, vp):
        with vp.Program.load(vc.compile_source("in x, y\nout x * y")) as prog:
            args = [array.array("d", [1.0, 2.0, 3.0]) for _ in range(count)]
            return _expect_error((vp.VexlError,), "program takes 2 inputs", lambda: prog.run(*args))
    return fn


def _unequal_lengths(case, vc, vp):
    with vp.Program.load(vc.compile_source("in x, y\nout x * y")) as prog:
        return _expect_error((ValueError,), "input 1 has 2 elements",
                             lambda: prog.run(array.array("d", [1.0, 2.0, 3.0]), array.array("d", [1.0, 2.0])))


def _bad_bytecode(case, vc, vp):
    return _expect_error((vp.VexlError,), "", lambda: vp.Program.load(b"not a vexl program"))


def _corrupted_bytecode(case, vc, vp):
    data = bytearray(vc.compile_source("in x, y\nout x * y + 2.5"))
    data[len(data) // 2] ^= 0x40
    return _expect_error((vp.VexlError,), "", lambda: vp.Program.load(bytes(data)))


def _closed_program(case, vc, vp):
    prog = vp.Program.load(vc.compile_source("in x\nout x + 1"))
    prog.close()
    return _expect_error((vp.VexlError,), "closed", lambda: prog.run([1.0]))


class _ProfileEnv(object):
    """Temporarily set VEXL_PROFILE (the library reads it at each load)."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.saved = os.environ.get("VEXL_PROFILE")
        if self.value is None:
            os.environ.pop("VEXL_PROFILE", None)
        else:
            os.environ["VEXL_PROFILE"] = self.value

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop("VEXL_PROFILE", None)
        else:
            os.environ["VEXL_PROFILE"] = self.saved
        return False


def _unknown_profile(case, vc, vp):
    data = vc.compile_source("in x\nout x")
    with _ProfileEnv("turbo"):
        res = _expect_error((vp.VexlError,), 'unknown profile "turbo"', vp.profile)
        if res["status"] != PASS:
            return res
        return _expect_error((vp.VexlError,), 'unknown profile "turbo"', lambda: vp.Program.load(data))


def _versions(case, vc, vp):
    from importlib import metadata
    found = {
        "vexlc": vc.version(),
        "libvexl": vp.version(),
        "vexl-compiler": metadata.version("vexl-compiler"),
        "vexl-plugin": metadata.version("vexl-plugin"),
    }
    text = ", ".join("%s %s" % kv for kv in sorted(found.items()))
    if len(set(found.values())) != 1:
        return _result(FAIL, "versions disagree: " + text)
    requires = metadata.requires("vexl-plugin") or []
    pin = "vexl-compiler==" + found["vexl-compiler"]
    if not any(r.replace(" ", "").startswith(pin) for r in requires):
        return _result(FAIL, "vexl-plugin does not require %s (requires %s)" % (pin, requires))
    return _result(PASS, text + "; exact pair pinned")


def _profile_matches_env(case, vc, vp):
    env = os.environ.get("VEXL_PROFILE") or ""
    want = env or "fused"
    got = vp.profile()
    prog = vp.Program.load(vc.compile_source("in x\nout x"))
    try:
        loaded = prog.profile
    finally:
        prog.close()
    if got != want or loaded != want:
        return _result(FAIL, "VEXL_PROFILE=%r: profile() %r, program loaded with %r, want %r" % (env, got, loaded, want))
    return _result(PASS, "profile %s (VEXL_PROFILE %s)" % (got, "unset" if not env else "=" + env))


def _typecodes(case, vc, vp):
    with vp.Program.load(vc.compile_source("in x, y\nout x + y")) as prog:
        checks = [
            ("two array('f')", prog.run(array.array("f", [1.5]), array.array("f", [2.0])), "f"),
            ("array('f') and array('d')", prog.run(array.array("f", [1.5]), array.array("d", [2.0])), "d"),
            ("lists", prog.run([1.5], [2.0]), "d"),
            ("lists with typecode='f'", prog.run([1.5], [2.0], typecode="f"), "f"),
        ]
    for what, got, want in checks:
        if got.typecode != want or list(got) != [3.5]:
            return _result(FAIL, "%s gave array(%r, %r), want array(%r, [3.5])" % (what, got.typecode, list(got), want))
    return _result(PASS, "float32 only when every input is array('f'), or with typecode='f'", n=len(checks))


def _num_inputs(case, vc, vp):
    src = "in a, b\nin c\nlet t = a\nout t + c"
    with vp.Program.load(vc.compile_source(src)) as prog:
        got = prog.num_inputs
    want = reference.compile_program(src).num_inputs
    if got != want:
        return _result(FAIL, "num_inputs %d, want %d" % (got, want))
    return _result(PASS, "num_inputs %d" % got)


_MUTATIONS = ["x", "y", "z", "(", ")", ",", "+", "-", "*", "/", "=", ".", "1", "0", "e", "#", "\n", " ",
              "let ", "in ", "out ", "min(", "sqrt", "clamp(", "%", "\u00e9", "2e+", "t"]


def mutate(rng, src):
    """A random edit of src: insert, delete or replace a few characters."""
    chars = list(src)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(chars) + 1)
        r = rng.random()
        if r < 0.4 or not chars:
            chars.insert(i, rng.choice(_MUTATIONS))
        elif r < 0.7:
            del chars[min(i, len(chars) - 1)]
        else:
            chars[min(i, len(chars) - 1)] = rng.choice(_MUTATIONS)
    return "".join(chars)


def _compile_agree(case, vc, vp):
    """vexlc and the reference must agree on a source: both accept it (with
    the same inputs) or both refuse it with the same message."""
    try:
        ref = reference.compile_program(case.src)
        ref_msg = None
    except reference.CompileError as exc:
        ref, ref_msg = None, str(exc)
    try:
        data = vc.compile_source(case.src)
        got_msg = None
    except vc.CompileError as exc:
        data, got_msg = None, exc.message
    if got_msg != ref_msg:
        return _result(FAIL, "vexlc said %r, the reference said %r" % (got_msg or "OK", ref_msg or "OK"))
    if got_msg is not None:
        return _result(PASS, "both refuse it: %s" % got_msg)
    with vp.Program.load(data) as prog:
        if prog.num_inputs != ref.num_inputs:
            return _result(FAIL, "both accept it, but with %d and %d inputs" % (prog.num_inputs, ref.num_inputs))
    return _result(PASS, "both accept it (%d inputs)" % ref.num_inputs)


def _syntax_cases():
    """Seeded random edits of valid programs: vexlc and the reference must
    agree on every one (accepted, or refused with the same message)."""
    rng = random.Random(1101)
    bases = ["in x, y, z\n" + body for _, body in FUSED_PROGRAMS] + [
        "in x, y\nlet t = x * y\nout t + 2.5 * sqrt(abs(x)) - min(x, y) / 3",
        "# demo\nin x\nlet a = clamp(x, -1, 1)\nout exp(a) / (1 + log(abs(a) + 1e-3))",
    ]
    return [Case("syntax", "mutation-%02d" % i, mutate(rng, rng.choice(bases)), kind="custom", fn=_compile_agree)
            for i in range(40)]


def _error_cases():
    cases = _compile_error_cases()
    custom = [
        ("run-too-few-inputs", _wrong_count(1)),
        ("run-too-many-inputs", _wrong_count(3)),
        ("run-no-inputs", _wrong_count(0)),
        ("run-unequal-lengths", _unequal_lengths),
        ("load-garbage", _bad_bytecode),
        ("load-corrupted-bytecode", _corrupted_bytecode),
        ("run-closed-program", _closed_program),
        ("unknown-profile", _unknown_profile),
    ]
    cases += [Case("errors", name, kind="custom", fn=fn) for name, fn in custom]
    return cases


def _api_cases():
    custom = [
        ("versions-agree", _versions),
        ("profile-matches-environment", _profile_matches_env),
        ("result-typecodes", _typecodes),
        ("num-inputs", _num_inputs),
    ]
    return [Case("api", name, kind="custom", fn=fn) for name, fn in custom]


# --------------------------------------------------------------------------
# fused vs baseline in one process


def _profiles_agree(src, n):
    def fn(case, vc, vp):
        data = vc.compile_source(src)
        ref = reference.compile_program(src)
        total = nan_payloads = 0
        for prec in ("d", "f"):
            inputs = Case("profiles", case.id + prec, prec=prec, n=n,
                          inputs=["special"] * ref.num_inputs).build_inputs(ref.num_inputs)
            outs = {}
            for profile in ("fused", "baseline"):
                with _ProfileEnv(profile):
                    with vp.Program.load(data) as prog:
                        if prog.profile != profile:
                            return _result(FAIL, "loaded with profile %r, want %r" % (prog.profile, profile))
                        outs[profile] = prog.run(*inputs)
            fused, base = outs["fused"], outs["baseline"]
            fbytes, bbytes = fused.tobytes(), base.tobytes()
            if fbytes != bbytes:
                size = fused.itemsize
                for i in range(len(fused)):
                    f, b = fused[i], base[i]
                    if fbytes[i * size:(i + 1) * size] == bbytes[i * size:(i + 1) * size]:
                        continue
                    if f != f and b != b:
                        nan_payloads += 1
                        continue
                    return _result(FAIL, "array(%r)[%d]: fused %r, baseline %r" % (prec, i, f, b), BIG, BIG, len(fused))
            total += len(fused)
        msg = "fused and baseline agree on %d elements (float64 and float32)" % total
        if nan_payloads:
            msg += "; %d NaN results differ in sign/payload bits only" % nan_payloads
        return _result(PASS, msg, n=total)
    return fn


def _profiles_cases():
    cases = []
    for name, body in FUSED_PROGRAMS[:10]:
        cases.append(Case("profiles", name, kind="custom", fn=_profiles_agree("in x, y, z\n" + body, 777)))
    rng = random.Random(7)
    for i in range(6):
        cases.append(Case("profiles", "random-%d" % i, kind="custom", fn=_profiles_agree(random_program(rng), 600)))
    return cases


def all_cases():
    cases = []
    for part in (_arith_cases, _func_cases, _nan_cases, _broadcast_cases, _let_cases, _shape_cases,
                 _fused_cases, _fuzz_cases, _profiles_cases, _error_cases, _syntax_cases, _api_cases):
        cases += part()
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise _lane.LaneBroken("duplicate case ids")
    return cases


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        cases = all_cases()
    except Exception as exc:  # the case table itself is broken
        _lane.log("semantic: cannot build the cases: %s" % _lane.exception_text(exc))
        return 2
    if "--list" in argv:
        for case in cases:
            sys.stdout.write(case.id + "\n")
        return 0
    if "-k" in argv:
        i = argv.index("-k")
        if i + 1 >= len(argv):
            _lane.log("usage: semantic.py [--list] [-k SUBSTRING]")
            return 2
        cases = [c for c in cases if argv[i + 1] in c.id]
    try:
        _lane.check_installed()
        import vexl_compiler
        import vexl_plugin
        profile = vexl_plugin.profile()
    except Exception as exc:
        _lane.log("semantic: lane broken: %s" % _lane.exception_text(exc))
        return 2
    _lane.log("semantic: %d cases, profile %s" % (len(cases), profile))
    writer = _lane.CaseWriter("semantic", "semantic")
    try:
        for case in cases:
            with _lane.Timer() as timer:
                try:
                    res = run_case(case, vexl_compiler, vexl_plugin)
                except Exception as exc:
                    res = _result(ERROR, _lane.exception_text(exc))
            tol = case.tol if case.kind == "run" else EXACT
            writer.write(case.id, res["status"], timer.seconds, res["message"], res["max_abs"], res["max_rel"],
                         res["n"], tol[0], tol[1])
            if res["status"] != PASS:
                _lane.log("%s %s: %s" % (res["status"], case.id, res["message"]))
    finally:
        writer.close()
    _lane.log("semantic: " + writer.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
