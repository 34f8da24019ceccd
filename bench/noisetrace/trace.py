"""Record call-by-call CPU times of the embedded default's crossover workloads.

Usage (with an interpreter that has the release's wheels installed, as a
lane's virtualenv has them)::

    VENV/bin/python bench/noisetrace/trace.py [--seconds 40] [--out DIR] [WORKLOAD ...]

For each workload (default: all of them) and each profile (``fused``, the
candidate, and ``baseline``, the reference), a fresh process loads the
program as ``backend/verifier/worker.py`` does, warms up for half a second,
then calls ``Program.run`` back to back for ``--seconds``, reading
``time.process_time`` around every call. Each trace is written to
``DIR/WORKLOAD-PROFILE.json``. ``replay.py`` then runs any timing design of
the worker over the same traces, so designs are compared on the same host
behaviour instead of on runs made at different times.
"""

import argparse
import array
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "backend", "verifier"))

import worker  # noqa: E402


def record(name, seconds, path):
    import vexl_compiler
    import vexl_plugin

    w = worker.BY_NAME[name]
    program = vexl_plugin.Program.load(vexl_compiler.compile_source(w.source))
    inputs = w.build_inputs()
    buf = array.array(w.precision, bytes(w.n * array.array(w.precision).itemsize))
    clock = time.process_time
    start = time.perf_counter()
    while time.perf_counter() - start < worker.WARMUP_SECONDS:
        program.run(*inputs, out=buf)
    calls = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        t = clock()
        program.run(*inputs, out=buf)
        calls.append(clock() - t)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"workload": name, "profile": program.profile, "clock": "process_time", "calls": calls}, f)
    os.replace(tmp, path)
    ordered = sorted(calls)
    sys.stderr.write("noisetrace: %s %s: %d calls, fastest %.2f ms, median %.3fx the fastest\n" % (
        name, program.profile, len(calls), 1e3 * ordered[0], ordered[len(ordered) // 2] / ordered[0]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="seconds of calls per trace")
    parser.add_argument("--out", default="bench/out-noisetrace", help="folder for the traces")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # WORKLOAD:PATH, in the child process
    parser.add_argument("workloads", nargs="*", help="workloads (default: all)")
    args = parser.parse_args()
    if args.one:
        name, path = args.one.split(":", 1)
        record(name, args.seconds, path)
        return 0
    names = args.workloads or [w.name for w in worker.WORKLOADS]
    for name in names:
        if name not in worker.BY_NAME:
            sys.stderr.write("noisetrace: unknown workload %r\n" % name)
            return 2
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        for profile in ("fused", "baseline"):
            env = dict(os.environ, VEXL_PROFILE=profile)
            path = os.path.join(args.out, "%s-%s.json" % (name, profile))
            subprocess.run([sys.executable, os.path.abspath(__file__), "--seconds", str(args.seconds),
                            "--one", "%s:%s" % (name, path)], env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
