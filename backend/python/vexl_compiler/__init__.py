"""Python front end of the vexl compiler.

The ``vexl-compiler`` wheel ships this package together with the ``vexlc``
executable at ``vexl_compiler/bin/vexlc`` (``vexlc.exe`` on Windows); every
function here runs that executable. Set the ``VEXLC_PATH`` environment variable to use another one.

>>> from vexl_compiler import compile_source
>>> program = compile_source("in x, y\\nout x * y + 1\\n")   # bytes of a .vxb
"""

import os
import re
import subprocess

__all__ = [
    "CompileError",
    "VexlcNotFound",
    "bytecode_version",
    "compile_file",
    "compile_source",
    "main",
    "version",
    "vexlc_path",
]

#: Environment variable that overrides the bundled executable.
VEXLC_PATH_ENV = "VEXLC_PATH"

_EXE = "vexlc.exe" if os.name == "nt" else "vexlc"
_ERROR_RE = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")
_VERSION_RE = re.compile(r"^vexlc (?P<version>\S+) \(bytecode v(?P<bytecode>\d+)\)$")


def _distribution_version():
    """Return the installed vexl-compiler distribution version, if any."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        return metadata.version("vexl-compiler")
    except metadata.PackageNotFoundError:
        return None


#: Version of the installed ``vexl-compiler`` distribution, or
#: ``"0+unknown"`` when the package is used from a source tree. The version
#: of the executable itself is :func:`version`.
__version__ = _distribution_version() or "0+unknown"


class VexlcNotFound(FileNotFoundError):
    """The vexlc executable is missing."""


class CompileError(Exception):
    """vexlc refused a program.

    ``message`` is vexlc's first error line (``FILE:LINE:COL: message``);
    ``filename``, ``line``, ``col`` and ``reason`` are parsed from it when it
    has that form (``line`` and ``col`` are then ints, else None).
    ``returncode`` and ``stderr`` are vexlc's.
    """

    def __init__(self, message, returncode, stderr):
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.stderr = stderr
        self.filename = self.line = self.col = None
        self.reason = message
        match = _ERROR_RE.match(message)
        if match:
            self.filename = match.group("file")
            self.line = int(match.group("line"))
            self.col = int(match.group("col"))
            self.reason = match.group("msg")


def vexlc_path():
    """Return the path of the vexlc executable.

    ``$VEXLC_PATH`` if set, else the executable bundled in this package.
    Raises VexlcNotFound if that file does not exist.
    """
    path = os.environ.get(VEXLC_PATH_ENV)
    if not path:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", _EXE)
    if not os.path.isfile(path):
        raise VexlcNotFound(
            "vexlc not found at %s (set %s to override)" % (path, VEXLC_PATH_ENV)
        )
    return path


def _run(args, stdin=None):
    return subprocess.run(
        [vexlc_path()] + list(args),
        input=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )


def _raise_for(proc):
    stderr = proc.stderr.decode("utf-8", "replace")
    lines = stderr.strip().splitlines()
    raise CompileError(lines[0] if lines else "vexlc exited with status %d" % proc.returncode,
                       proc.returncode, stderr)


def compile_source(src):
    """Compile vexl source text and return the bytecode as bytes.

    Errors raise CompileError; its file name is ``<stdin>``.
    """
    if isinstance(src, str):
        src = src.encode("utf-8")
    proc = _run(["-o", "-", "-"], stdin=src)
    if proc.returncode != 0:
        _raise_for(proc)
    return proc.stdout


def compile_file(path, out=None):
    """Compile the source file ``path`` and return the output path.

    The output defaults to ``path`` with ``.vx`` replaced by ``.vxb``
    (vexlc's own default).
    """
    path = os.fspath(path)
    if out is None:
        base = path[:-3] if path.endswith(".vx") else path
        out = base + ".vxb"
    out = os.fspath(out)
    proc = _run(["-o", out, path])
    if proc.returncode != 0:
        _raise_for(proc)
    return out


def _version_match():
    proc = _run(["--version"])
    text = proc.stdout.decode("utf-8", "replace").strip()
    match = _VERSION_RE.match(text)
    if proc.returncode != 0 or not match:
        raise RuntimeError("unexpected output from vexlc --version: %r" % text)
    return match


def version():
    """Return the version of the vexlc executable, e.g. ``"0.3.0"``."""
    return _version_match().group("version")


def bytecode_version():
    """Return the bytecode format version vexlc writes, e.g. ``1``."""
    return int(_version_match().group("bytecode"))


def main(argv=None):
    """Run vexlc with ``argv`` (default: ``sys.argv[1:]``); return its status."""
    from vexl_compiler._cli import main as cli_main

    return cli_main(argv)
