"""The ``determinism`` cases lane of the vexl verifier.

Usage::

    python determinism.py           # run every case
    python determinism.py --list    # print the case ids
    python determinism.py --child   # internal: the fresh-process half

Every case is a program, a precision and a vector length, with inputs drawn
from a ``random.Random`` seeded by the case id (so every process builds the
same bytes). The lane compiles the program with the installed
``vexl_compiler`` wheel and runs it with the installed ``vexl_plugin`` wheel
under the profile the environment selects, then requires the raw bytes of
the output array (``array.tobytes()``: NaN payloads and signed zeros
included) to be identical across

* 5 runs in this process: three on one loaded program, then one on each of
  two freshly loaded copies of the same bytecode, and
* 1 run in a fresh Python process (this script with ``--child``, started
  once for all cases with the same environment; it prints one
  ``{"id": ..., "sha256": ...}`` line per case).

Every run must also leave its input arrays untouched. Groups:

``run``      programs (folding, multiply-add chains, transcendental
             functions, NaN-producing specials, let-chains) x float64/float32
``size``     one program over lengths around the fused profile's 256-element
             chunks, and a long vector
``threads``  4 threads run the same loaded program concurrently (the library
             releases the GIL), each result must match the sequential one
``compile``  vexlc must emit the same bytecode bytes 5 times and in the
             fresh process

Output: one JSON line per case (format in ``_lane.py``), tier
``determinism``, lane ``$MKRELEASE_LANE`` (default ``determinism``);
``metrics.max_abs_err`` is the largest element difference between any run
and the first (0 when the bytes agree), ``n`` the output length (the
bytecode length for ``compile`` cases), the tolerance is exact (0, 0);
``duration_s`` is the in-process time (the fresh process runs all cases
once, concurrently with this one). Exit status 0 when every case ran, 2 when the lane
could not run.
"""

import array
import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import zlib

import _lane
from _lane import BIG, ERROR, FAIL, PASS

RUNS = 5  # in-process runs per case (plus one in a fresh process)

INF = float("inf")
NAN = float("nan")

_CHAIN = "in x, y\nlet t0 = x + 1\n" + "".join(
    "let t%d = t%d * %s + y\n" % (i, i - 1, "0.5" if i % 2 else "-0.25") for i in range(1, 30)) + "out t29"

#: name -> (source, input kind). Kinds: "unit" (-1..1), "special" (one value
#: in four is 0, -0, +-1, +-Inf, NaN, huge or subnormal).
PROGRAMS = {
    "demo": ("in x, y\nlet t = x * y\nout t + 2.5 * sqrt(abs(x)) - min(x, y) / 3", "unit"),
    "muladd-chain": ("in a, b, c, d\nout a * b + c * d - a * c + b * d - (a * d) * 0.5", "unit"),
    "constant-folding": ("in x, y\nout x * (2 * 3 + 1.5) + (sqrt(2) * log(10) - exp(-1)) * y - clamp(3, 0, 1) * x",
                         "unit"),
    "transcendental": ("in x\nout log(1 + exp(-abs(x))) + exp(x * 0.5) - log(abs(x) + 1e-3)", "unit"),
    "specials-nan": ("in x, y, z\nout z + x * y - min(x, z) * max(y, z) + sqrt(x) / y", "special"),
    "let-chain": (_CHAIN, "unit"),
    "clamp-minmax": ("in x, y\nout clamp(x, -0.5, 0.5) * max(x, y) - min(x, y)", "special"),
}

SPECIALS = [0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, 1e308, -1e308, 5e-324, 1e-40, 3.4e38]


class Case(object):
    """kind "run" (outputs), "threads" (concurrent runs) or "compile"."""

    def __init__(self, group, name, program, prec="d", n=4099, kind="run"):
        self.id = "%s/%s" % (group, name)
        self.program = program
        self.src, self.input_kind = PROGRAMS[program]
        self.prec = prec
        self.n = n
        self.kind = kind

    def inputs(self, num_inputs):
        rng = random.Random(zlib.crc32(self.id.encode("utf-8")))
        vectors = []
        for _ in range(num_inputs):
            if self.input_kind == "special":
                values = [rng.choice(SPECIALS) if rng.random() < 0.25 else rng.uniform(-4.0, 4.0)
                          for _ in range(self.n)]
            else:
                values = [rng.uniform(-1.0, 1.0) for _ in range(self.n)]
            vectors.append(array.array(self.prec, values))
        return vectors


def all_cases():
    cases = []
    for name in PROGRAMS:
        for prec, label in (("d", "f64"), ("f", "f32")):
            cases.append(Case("run", "%s-%s" % (name, label), name, prec))
    for n in (0, 1, 255, 256, 257, 100003):
        cases.append(Case("size", "demo-f64-n%d" % n, "demo", "d", n))
    cases.append(Case("size", "muladd-chain-f32-n65537", "muladd-chain", "f", 65537))
    cases.append(Case("threads", "demo-f64", "demo", "d", 65536, kind="threads"))
    cases.append(Case("threads", "muladd-chain-f32", "muladd-chain", "f", 65536, kind="threads"))
    cases.append(Case("threads", "specials-nan-f64", "specials-nan", "d", 20000, kind="threads"))
    for name in PROGRAMS:
        cases.append(Case("compile", name, name, kind="compile"))
    return cases


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _fingerprint(case, vc, vp, data=None):
    """What a fresh process must reproduce: the bytecode's digest for a
    compile case, the output's digest otherwise (one run)."""
    if data is None:
        data = vc.compile_source(case.src)
    if case.kind == "compile":
        return _sha(data)
    with vp.Program.load(data) as prog:
        return _sha(prog.run(*case.inputs(prog.num_inputs)).tobytes())


def child_main():
    """--child: print {"id", "sha256"} per case, computed from scratch."""
    _lane.check_installed()
    import vexl_compiler
    import vexl_plugin
    for case in all_cases():
        try:
            digest = _fingerprint(case, vexl_compiler, vexl_plugin)
        except Exception as exc:
            digest = "error: " + _lane.exception_text(exc)
        sys.stdout.write(json.dumps({"id": case.id, "sha256": digest}) + "\n")
    sys.stdout.flush()
    return 0


def _max_abs_diff(a, b):
    """Largest element difference of two equally long arrays; NaN vs NaN is
    0 (the bytes decide), NaN vs a number or Inf vs anything else is BIG."""
    worst = 0.0
    for x, y in zip(a, b):
        if x == y or (x != x and y != y):
            continue
        d = abs(x - y)
        worst = BIG if d != d or d == INF else max(worst, d)
    return worst


def _result(status, message, max_abs=0.0, n=0, digest=None):
    return {"status": status, "message": message, "max_abs": max_abs, "n": n, "digest": digest}


def run_case(case, vc, vp):
    """The in-process half of a case. A PASS result carries the digest the
    fresh process must reproduce (see :func:`settle`)."""
    data = vc.compile_source(case.src)
    if case.kind == "compile":
        digests = [_sha(data)] + [_sha(vc.compile_source(case.src)) for _ in range(RUNS - 1)]
        if len(set(digests)) != 1:
            return _result(FAIL, "bytecode digests differ: %s" % ", ".join(d[:16] for d in digests))
        return _result(PASS, "%d compiles (%d bytes)" % (RUNS, len(data)), n=len(data), digest=digests[0])

    progs = [vp.Program.load(data)]
    try:
        inputs = case.inputs(progs[0].num_inputs)
        before = [v.tobytes() for v in inputs]
        if case.kind == "threads":
            outs = _threaded_runs(progs[0], inputs)
        else:
            outs = [progs[0].run(*inputs) for _ in range(3)]
            for _ in range(RUNS - 3):
                progs.append(vp.Program.load(data))
                outs.append(progs[-1].run(*inputs))
    finally:
        for prog in progs:
            prog.close()
    n = len(outs[0])
    if [v.tobytes() for v in inputs] != before:
        return _result(FAIL, "a run modified its input arrays", BIG, n)
    digests = [_sha(o.tobytes()) for o in outs]
    worst = max(_max_abs_diff(outs[0], o) for o in outs)
    if len(set(digests)) != 1:
        return _result(FAIL, "%d distinct outputs over %d in-process runs" % (len(set(digests)), len(outs)), worst, n)
    if case.kind == "threads":
        what = "1 sequential and %d concurrent runs in 4 threads" % (len(outs) - 1)
    else:
        what = "%d runs (2 on fresh loads)" % len(outs)
    return _result(PASS, what, worst, n, digests[0])


def settle(res, fresh):
    """Compare a passing in-process result with the fresh process's digest."""
    if res["status"] != PASS:
        return res
    if fresh != res["digest"]:
        if fresh is None:
            why = "no digest reported"
        elif fresh.startswith("error"):
            why = fresh
        else:
            why = "digest %s..., want %s..." % (fresh[:16], res["digest"][:16])
        return _result(FAIL, "%s, but the fresh process disagrees: %s" % (res["message"], why), BIG, res["n"])
    msg = "%s and a fresh process gave identical bytes (sha256 %s...)" % (res["message"], res["digest"][:16])
    return _result(PASS, msg, res["max_abs"], res["n"], res["digest"])


def _threaded_runs(prog, inputs, threads=4, runs=3):
    """Run prog concurrently; return the sequential output then every
    threaded one."""
    outs = [prog.run(*inputs)]
    results, errors = [], []
    lock = threading.Lock()

    def work():
        try:
            mine = [prog.run(*inputs) for _ in range(runs)]
        except Exception as exc:  # reported below
            with lock:
                errors.append(exc)
            return
        with lock:
            results.extend(mine)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    return outs + results


def _start_child():
    """Start the fresh-process half; it inherits the environment."""
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _child_digests(child, ids):
    """Wait for the child; return id -> digest or an "error: ..." string."""
    out, err = child.communicate()
    digests = {}
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            rec = json.loads(line)
            digests[rec["id"]] = rec["sha256"]
        except (ValueError, KeyError, TypeError):
            continue
    if child.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        why = "error: fresh process exited with status %d%s" % (
            child.returncode, (": " + _lane.sanitize(lines[-1])) if lines else "")
        for case_id in ids:
            digests.setdefault(case_id, why)
    return digests


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--child" in argv:
        try:
            return child_main()
        except Exception as exc:
            _lane.log("determinism child: %s" % _lane.exception_text(exc))
            return 2
    cases = all_cases()
    if "--list" in argv:
        for case in cases:
            sys.stdout.write(case.id + "\n")
        return 0
    try:
        _lane.check_installed()
        import vexl_compiler
        import vexl_plugin
        profile = vexl_plugin.profile()
    except Exception as exc:
        _lane.log("determinism: lane broken: %s" % _lane.exception_text(exc))
        return 2
    _lane.log("determinism: %d cases, profile %s, %d runs each plus a fresh process" % (len(cases), profile, RUNS))
    child = _start_child()  # runs while this process does its own runs
    results = []
    for case in cases:
        with _lane.Timer() as timer:
            try:
                res = run_case(case, vexl_compiler, vexl_plugin)
            except Exception as exc:
                res = _result(ERROR, _lane.exception_text(exc))
        results.append((case, res, timer.seconds))
    fresh = _child_digests(child, [c.id for c in cases])
    writer = _lane.CaseWriter("determinism", "determinism")
    try:
        for case, res, seconds in results:
            res = settle(res, fresh.get(case.id))
            writer.write(case.id, res["status"], seconds, res["message"], res["max_abs"], 0.0, res["n"], 0.0, 0.0)
            if res["status"] != PASS:
                _lane.log("%s %s: %s" % (res["status"], case.id, res["message"]))
    finally:
        writer.close()
    _lane.log("determinism: " + writer.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
