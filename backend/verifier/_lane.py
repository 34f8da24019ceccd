"""Shared plumbing of the verifier's ``cases`` lanes (semantic, determinism).

A ``cases`` lane writes one JSON object per line, one line per case, to the
file named by ``$MKRELEASE_CASES`` (appended to, flushed after every case, so
a lane that dies leaves the cases it finished), or to standard output when
that variable is unset. Each line has exactly these fields::

    {"lane": "<$MKRELEASE_LANE or the lane's default>",
     "id": "<group>/<name>",
     "status": "PASS" | "FAIL" | "ERROR" | "SKIP",
     "tier": "<semantic | determinism>",
     "metrics": {"max_abs_err": x, "max_rel_err": y, "n": elements},
     "tolerance": {"abs": a, "rel": r},
     "duration_s": seconds,
     "message": "..."}

Every number is finite (an infinite or NaN error is written as
:data:`BIG`), and messages are scrubbed of anything that looks like a
filesystem path: the evidence is rejected if it names a private path.

The exit status of a lane is 0 when every case ran, whatever the verdicts (the
verdict is mkrelease's), and 2 when the lane itself could not run.
"""

import json
import math
import os
import re
import sys
import time

#: Written instead of an infinite or NaN error, so that JSON stays finite.
BIG = 1.7976931348623157e308

PASS, FAIL, ERROR, SKIP = "PASS", "FAIL", "ERROR", "SKIP"

# An absolute path (or ~/...) after a separator: /usr/..., '/tmp/x', ~/x.
_PATH_RE = re.compile(r"""(?:(?<=^)|(?<=[\s'"(=:,\[<]))(?:~(?=/)|[A-Za-z]:\\|/(?=[A-Za-z0-9_.~-]))[^\s'"),\]>]*""")


class LaneBroken(Exception):
    """The lane cannot run at all (not a case failure)."""


def sanitize(text, limit=400):
    """Return ``text`` on one line, paths replaced by ``<path>``, shortened."""
    text = _PATH_RE.sub("<path>", str(text))
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def finite(x):
    """A finite, non-negative float for the JSON metrics."""
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return BIG
    return min(abs(x), BIG)


def exception_text(exc):
    """``Type: message`` of an exception, sanitised (never a traceback)."""
    return sanitize("%s: %s" % (type(exc).__name__, exc))


def check_installed():
    """Make sure the wheels under test are installed distributions.

    The lanes must test the installed ``vexl-compiler`` and ``vexl-plugin``
    wheels, never the packages of a source tree. Returns their versions;
    raises LaneBroken otherwise.
    """
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        raise LaneBroken("Python 3.8 or newer is required")
    versions = {}
    for dist in ("vexl-compiler", "vexl-plugin"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            raise LaneBroken("the %s distribution is not installed" % dist)
    try:
        import vexl_compiler
        import vexl_plugin  # noqa: F401
    except ImportError as exc:
        raise LaneBroken("cannot import the vexl packages: %s" % exception_text(exc))
    if vexl_compiler.__version__ == "0+unknown":
        raise LaneBroken("vexl_compiler is imported from a source tree, not from the installed wheel")
    return versions


class CaseWriter(object):
    """Writes the case records of one lane."""

    def __init__(self, default_lane, tier):
        self.lane = os.environ.get("MKRELEASE_LANE") or default_lane
        self.tier = tier
        self.counts = {PASS: 0, FAIL: 0, ERROR: 0, SKIP: 0}
        path = os.environ.get("MKRELEASE_CASES")
        if path:
            self._out = open(path, "a", encoding="utf-8")
            self._close = True
        else:
            self._out = sys.stdout
            self._close = False

    def write(self, case_id, status, duration, message="", max_abs=0.0, max_rel=0.0, n=0,
              tol_abs=0.0, tol_rel=0.0):
        """Write one case line."""
        if status not in self.counts:
            raise ValueError("bad status %r" % (status,))
        record = {
            "lane": self.lane,
            "id": case_id,
            "status": status,
            "tier": self.tier,
            "metrics": {"max_abs_err": finite(max_abs), "max_rel_err": finite(max_rel), "n": int(n)},
            "tolerance": {"abs": finite(tol_abs), "rel": finite(tol_rel)},
            "duration_s": round(max(0.0, float(duration)), 6),
            "message": sanitize(message),
        }
        self._out.write(json.dumps(record, allow_nan=False) + "\n")
        self._out.flush()
        self.counts[status] += 1

    def close(self):
        if self._close:
            self._out.close()

    def summary(self):
        """One line for stderr: the counts per status."""
        return ", ".join("%d %s" % (self.counts[s], s) for s in (PASS, FAIL, ERROR, SKIP))


class Timer(object):
    """``with Timer() as t: ...`` then ``t.seconds``."""

    def __enter__(self):
        self._start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._start
        return False


def log(msg):
    """A progress line on stderr (never stdout: it may carry the records)."""
    sys.stderr.write(sanitize(msg, limit=2000) + "\n")
    sys.stderr.flush()
