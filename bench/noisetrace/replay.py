"""Replay the verifier worker's timing design over recorded call traces.

Usage::

    python3 bench/noisetrace/replay.py [--dir bench/out-noisetrace] [--design NAME=TIMING,TIMED,MIN,MAX ...]

Each trace (from ``trace.py``) is one process's call-by-call CPU times. A
virtual worker starts at a point of the trace, warms up for the worker's
``WARMUP_SECONDS`` of calls, chooses its calls per timing and its rounds
with ``worker.timing_calls`` and ``worker.timing_rounds``, and makes its
steps with ``worker.fastest_steps``, each timing the sum of the next
``calls`` recorded calls: the worker's own code, fed by the trace instead of
the clock. Virtual workers start a third of a worker apart, all through the
trace. Each worker makes the embedded default's 12 steps, and its robust
CV is computed as mkrelease computes it: drop the first 2 steps (the lane's
warm-ups) and the slowest remaining one, then 1.4826 * MAD / median.

Designs: ``worker`` (the constants in worker.py), ``cap-45s`` and
``cap-12s`` (the same with its rounds past TIMED_SECONDS stopped after 45 s
or 12 s of timings, as before), ``all-steps`` (its rounds past
TIMED_SECONDS made over every step, with the 12 s cap, and judged without
the lane's warm-ups, as first designed), ``rounds-only`` (the worker's
design without the rounds past TIMED_SECONDS while the steps disagree),
``previous`` (5 rounds of timings of at least 0.1 s), and any given with
``--design``: TIMING_SECONDS, TIMED_SECONDS, MIN_ROUNDS, MAX_ROUNDS, and
optionally SETTLED_CV and MAX_TIMED_SECONDS.
"""

import argparse
import glob
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "backend", "verifier"))

import worker  # noqa: E402

# The embedded default's throughput lane (release.toml): 12 steps, the
# first 2 of them warm-ups.
STEPS = 12
WARMUPS = 2


class Design(object):
    """A timing design: the worker's constants."""

    def __init__(self, name, timing_seconds, timed_seconds, min_rounds, max_rounds, settled=None, max_timed=0.0,
                 warmups=WARMUPS, retime_all=False):
        self.name = name
        self.timing_seconds = timing_seconds
        self.timed_seconds = timed_seconds
        self.min_rounds = min_rounds
        self.max_rounds = max_rounds
        self.settled = settled  # None: no rounds past the first ones
        self.max_timed = max_timed
        self.warmups = warmups  # the warm-ups the settled check drops
        self.retime_all = retime_all  # extra rounds over every step

    @classmethod
    def parse(cls, text):
        """NAME=TIMING,TIMED,MIN,MAX[,SETTLED,MAX_TIMED]"""
        name, sep, values = text.partition("=")
        parts = values.split(",")
        if not sep or not name or len(parts) not in (4, 6):
            raise ValueError("--design %r: want NAME=TIMING,TIMED,MIN,MAX[,SETTLED,MAX_TIMED]" % text)
        d = cls(name, float(parts[0]), float(parts[1]), int(parts[2]), int(parts[3]))
        if len(parts) == 6:
            d.settled, d.max_timed = float(parts[4]), float(parts[5])
        return d


# The worker's MAX_TIMED_SECONDS before slow spells longer than it were
# recorded; the designs of that time keep it.
CAP_12_SECONDS = 12.0
# The worker's MAX_TIMED_SECONDS before a CI run met a slow spell longer
# than it.
CAP_45_SECONDS = 45.0



def capped(name, max_timed):
    """The worker's design with its rounds past TIMED_SECONDS stopped after
    max_timed seconds of timings."""
    return Design(name, worker.TIMING_SECONDS, worker.TIMED_SECONDS, worker.MIN_ROUNDS, worker.MAX_ROUNDS,
                  worker.SETTLED_CV, max_timed)


WORKER = capped("worker", worker.MAX_TIMED_SECONDS)
# The first design with rounds past TIMED_SECONDS: over every step, while
# the robust CV of all the steps (the lane's warm-ups not dropped) was above
# SETTLED_CV.
ALL_STEPS = Design("all-steps", worker.TIMING_SECONDS, worker.TIMED_SECONDS, worker.MIN_ROUNDS, worker.MAX_ROUNDS,
                   worker.SETTLED_CV, CAP_12_SECONDS, warmups=0, retime_all=True)
CAP_12S = capped("cap-12s", CAP_12_SECONDS)
CAP_45S = capped("cap-45s", CAP_45_SECONDS)
# The worker's design without the rounds past TIMED_SECONDS.
ROUNDS_ONLY = Design("rounds-only", worker.TIMING_SECONDS, worker.TIMED_SECONDS, worker.MIN_ROUNDS, worker.MAX_ROUNDS)
# Before this design: 5 rounds of timings of at least 0.1 s, whatever they last.
PREVIOUS = Design("previous", 0.1, 0.0, 5, 5)


class _EndOfTrace(Exception):
    pass


def robust_cv(steps):
    """A worker's robust CV as mkrelease computes it, with the lane's warm-ups."""
    return worker.settled_cv(steps, WARMUPS)


def replay(calls, design):
    """The robust CVs of virtual workers through the trace, and their timed seconds."""
    prefix = [0.0]
    for c in calls:
        prefix.append(prefix[-1] + c)
    out, timed = [], []
    start = 0
    while True:
        # warm-up: calls until WARMUP_SECONDS of them
        pos, fastest = start, None
        while pos < len(calls) and (fastest is None or prefix[pos] - prefix[start] < worker.WARMUP_SECONDS):
            fastest = calls[pos] if fastest is None else min(fastest, calls[pos])
            pos += 1
        n = worker.timing_calls(fastest, design.timing_seconds)
        rounds = worker.timing_rounds(fastest, n, STEPS, design.timed_seconds, design.min_rounds, design.max_rounds)
        if pos + n * rounds * STEPS > len(calls):
            break
        cursor = [pos]

        def timing():
            p = cursor[0]
            if p + n > len(calls):
                raise _EndOfTrace()
            cursor[0] = p + n
            return prefix[p + n] - prefix[p]

        try:
            steps = worker.fastest_steps(timing, STEPS, rounds, design.settled, design.max_timed, design.warmups,
                                         design.retime_all)
        except _EndOfTrace:
            break
        out.append(robust_cv(steps))
        timed.append(prefix[cursor[0]] - prefix[pos])
        start += max(1, (cursor[0] - start) // 3)
    return out, timed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", default="bench/out-noisetrace", help="folder of traces")
    parser.add_argument("--bound", type=float, default=0.10, help="robust CV bound")
    parser.add_argument("--design", action="append", default=[], help="NAME=TIMING,TIMED,MIN,MAX")
    args = parser.parse_args()
    designs = [WORKER, CAP_45S, CAP_12S, ALL_STEPS, ROUNDS_ONLY, PREVIOUS]
    try:
        designs += [Design.parse(d) for d in args.design]
    except ValueError as exc:
        sys.stderr.write("replay: %s\n" % exc)
        return 2
    paths = sorted(glob.glob(os.path.join(args.dir, "*.json")))
    if not paths:
        sys.stderr.write("replay: no traces in %s (record them with trace.py)\n" % args.dir)
        return 2
    traces = []
    for p in paths:
        with open(p) as f:
            t = json.load(f)
        t["file"] = os.path.basename(p)
        traces.append(t)
    print("| trace | " + " | ".join("%s: worst (workers)" % d.name for d in designs) + " |")
    print("| --- |" + " ---: |" * len(designs))
    totals = {d.name: ([], []) for d in designs}
    for t in traces:
        cells = []
        for design in designs:
            cvs, timed = replay(t["calls"], design)
            totals[design.name][0].extend(cvs)
            totals[design.name][1].extend(timed)
            cells.append("%.2f %% (%d)" % (100 * max(cvs), len(cvs)) if cvs else "-")
        print("| %s | %s |" % (t["file"], " | ".join(cells)))
    print()
    print("| design | workers | median | p90 | worst | above %.0f %% | timed s per worker |" % (100 * args.bound))
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for design in designs:
        name = design.name
        cvs, timed = sorted(totals[name][0]), totals[name][1]
        if not cvs:
            print("| %s | 0 | | | | | |" % name)
            continue
        print("| %s | %d | %.2f %% | %.2f %% | %.2f %% | %d | %.1f |" % (
            name, len(cvs), 100 * cvs[len(cvs) // 2], 100 * cvs[int(0.9 * len(cvs))], 100 * cvs[-1],
            sum(1 for x in cvs if x > args.bound), statistics.mean(timed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
