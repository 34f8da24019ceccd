"""Tests of the vexl Python packages against real vexlc and libvexl binaries.

Environment:
  VEXLC_PATH           the vexlc executable
  VEXL_LIBRARY         libvexl.so
  VEXL_EXPECT_VERSION  if set, the version both binaries must report

When VEXLC_PATH or VEXL_LIBRARY is unset, the binary bundled in the
installed wheel is used; with neither, the tests that need it are skipped.

Run from anywhere, with only the standard library:
  VEXLC_PATH=.../vexlc VEXL_LIBRARY=.../libvexl.so \\
      python3 -m unittest discover -s backend/python/tests -v

The packages are imported from the installed distributions when present,
otherwise from the source tree next to this directory. Checks of the
installed distribution metadata (entry points, console script) skip when
the wheels are not installed.
"""

import array
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

try:
    import vexl_compiler
    import vexl_plugin
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import vexl_compiler
    import vexl_plugin

from vexl_compiler import _cli



def distribution(name):
    """The installed distribution called name, or None."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def binary(env, dist, locate):
    """The binary named by env, else the one an installed wheel bundles."""
    if os.environ.get(env):
        return os.environ[env]
    if distribution(dist) is None:
        return None
    try:
        path = locate()
    except (OSError, vexl_plugin.VexlError):
        return None
    return path if os.path.isfile(path) else None


VEXLC = binary("VEXLC_PATH", "vexl-compiler", vexl_compiler.vexlc_path)
LIBRARY = binary("VEXL_LIBRARY", "vexl-plugin", vexl_plugin.library_path)
EXPECT_VERSION = os.environ.get("VEXL_EXPECT_VERSION")

needs_vexlc = unittest.skipUnless(VEXLC, "VEXLC_PATH is not set and no vexl-compiler wheel is installed: no vexlc to test")
needs_library = unittest.skipUnless(LIBRARY, "VEXL_LIBRARY is not set and no vexl-plugin wheel is installed: no libvexl to test")

DEMO = """\
# demo
in x, y
let t = x * y
out t + 2.5 * sqrt(abs(x)) - min(x, y) / 3
"""


def demo_reference(x, y):
    return x * y + 2.5 * math.sqrt(abs(x)) - min(x, y) / 3


def package_root():
    """The directory holding vexl_plugin, for subprocesses' PYTHONPATH."""
    return os.path.dirname(os.path.dirname(os.path.abspath(vexl_plugin.__file__)))


class quiet_fds:
    """Send file descriptors 1 and 2 to /dev/null while forwarded vexlc runs."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = [os.dup(1), os.dup(2)]
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)
        return self

    def __exit__(self, *exc):
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)


def run_python(code, **env):
    """Run code in a fresh interpreter with extra environment variables."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root(), full.get("PYTHONPATH")]))
    full.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        check=False,
    )


@needs_vexlc
class CompilerTest(unittest.TestCase):
    def test_vexlc_path_honours_env(self):
        self.assertEqual(vexl_compiler.vexlc_path(), VEXLC)

    def test_version(self):
        if EXPECT_VERSION:
            self.assertEqual(vexl_compiler.version(), EXPECT_VERSION)
        else:
            self.assertTrue(vexl_compiler.version())
        self.assertEqual(vexl_compiler.bytecode_version(), 1)

    def test_compile_source(self):
        data = vexl_compiler.compile_source(DEMO)
        self.assertEqual(data[:4], b"VEXL")
        self.assertEqual(vexl_compiler.compile_source(DEMO), data, "compiling is deterministic")

    def test_compile_error_has_position(self):
        with self.assertRaises(vexl_compiler.CompileError) as ctx:
            vexl_compiler.compile_source("in x\nout x + y\n")
        err = ctx.exception
        self.assertEqual(str(err), "<stdin>:2:9: unknown identifier y")
        self.assertEqual((err.filename, err.line, err.col), ("<stdin>", 2, 9))
        self.assertEqual(err.reason, "unknown identifier y")
        self.assertEqual(err.returncode, 1)

    def test_compile_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "demo.vx")
            with open(src, "w") as f:
                f.write(DEMO)
            out = vexl_compiler.compile_file(src)
            self.assertEqual(out, os.path.join(tmp, "demo.vxb"))
            with open(out, "rb") as f:
                self.assertEqual(f.read(), vexl_compiler.compile_source(DEMO))
            bad = os.path.join(tmp, "bad.vx")
            with open(bad, "w") as f:
                f.write("in x\nout min(x)\n")
            with self.assertRaises(vexl_compiler.CompileError) as ctx:
                vexl_compiler.compile_file(bad, os.path.join(tmp, "bad.vxb"))
            self.assertEqual((ctx.exception.line, ctx.exception.col), (2, 5))
            self.assertFalse(os.path.exists(os.path.join(tmp, "bad.vxb")))

    def test_console_script_entry_point(self):
        # _cli.main is what the vexlc console script calls.
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "demo.vx")
            with open(src, "w") as f:
                f.write(DEMO)
            out = os.path.join(tmp, "demo.vxb")
            self.assertEqual(_cli.main(["-o", out, src]), 0)
            with open(out, "rb") as f:
                self.assertEqual(f.read()[:4], b"VEXL")
            with quiet_fds():
                status = vexl_compiler.main(["--disasm", out])
            self.assertEqual(status, 0)

    def test_console_script_exit_statuses(self):
        proc = subprocess.run(
            [sys.executable, "-m", "vexl_compiler", "--version"],
            env=dict(os.environ, PYTHONPATH=package_root()),
            stdout=subprocess.PIPE,
            universal_newlines=True,
            check=False,
        )
        self.assertEqual(proc.returncode, 0)
        self.assertRegex(proc.stdout, r"^vexlc \S+ \(bytecode v1\)\n$")
        if EXPECT_VERSION:
            self.assertEqual(proc.stdout, "vexlc %s (bytecode v1)\n" % EXPECT_VERSION)
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.vx")
            with open(bad, "w") as f:
                f.write("in x\nout x +\n")
            with quiet_fds():
                usage, compile_error = _cli.main([]), _cli.main([bad])
        self.assertEqual(usage, 2, "usage error")
        self.assertEqual(compile_error, 1, "compile error")

    def test_missing_executable(self):
        saved = os.environ.get(vexl_compiler.VEXLC_PATH_ENV)
        os.environ[vexl_compiler.VEXLC_PATH_ENV] = os.path.join(tempfile.gettempdir(), "no-such-vexlc")
        try:
            with self.assertRaises(vexl_compiler.VexlcNotFound):
                vexl_compiler.compile_source("in x\nout x")
            with quiet_fds():
                status = _cli.main(["--version"])
            self.assertEqual(status, 127)
        finally:
            if saved is None:
                del os.environ[vexl_compiler.VEXLC_PATH_ENV]
            else:
                os.environ[vexl_compiler.VEXLC_PATH_ENV] = saved


@needs_vexlc
@needs_library
class PluginTest(unittest.TestCase):
    def setUp(self):
        os.environ.pop("VEXL_PROFILE", None)

    def load(self, source):
        return vexl_plugin.Program.load(vexl_compiler.compile_source(source))

    def test_library_path_honours_env(self):
        self.assertEqual(vexl_plugin.library_path(), LIBRARY)

    def test_version(self):
        if EXPECT_VERSION:
            self.assertEqual(vexl_plugin.version(), EXPECT_VERSION)
            self.assertEqual(vexl_plugin.version(), vexl_compiler.version(), "paired versions")
        else:
            self.assertTrue(vexl_plugin.version())

    def test_default_profile_is_fused(self):
        self.assertEqual(vexl_plugin.profile(), "fused")
        with self.load("in x\nout x") as prog:
            self.assertEqual(prog.profile, "fused")

    def test_baseline_rollback_in_subprocess(self):
        proc = run_python(
            """
            import vexl_plugin
            print(vexl_plugin.profile())
            """,
            VEXL_PROFILE="baseline",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "baseline\n")

    def test_unknown_profile_is_an_error_in_subprocess(self):
        proc = run_python(
            """
            import vexl_compiler, vexl_plugin
            try:
                vexl_plugin.profile()
            except vexl_plugin.VexlError as e:
                print("profile:", e)
            try:
                vexl_plugin.Program.load(vexl_compiler.compile_source("in x\\nout x"))
            except vexl_plugin.VexlError as e:
                print("load:", e)
            """,
            VEXL_PROFILE="turbo",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        want = 'VEXL_PROFILE=turbo: vm: unknown profile "turbo" (have fused, baseline)'
        self.assertEqual(proc.stdout, "profile: %s\nload: vexl_load: %s\n" % (want, want))

    def test_profiles_agree(self):
        # Bit-identical results under both profiles, compared as hex floats.
        make_inputs = "xs = [0.5 * i - 7.25 for i in range(700)]; ys = [3.0 - 0.125 * i for i in range(700)]"
        namespace = {}
        exec(make_inputs, namespace)
        with self.load(DEMO) as prog:
            fused = [v.hex() for v in prog.run(namespace["xs"], namespace["ys"])]
        proc = run_python(
            """
            import vexl_compiler, vexl_plugin
            %s
            prog = vexl_plugin.Program.load(vexl_compiler.compile_source(%r))
            print(prog.profile)
            print(" ".join(v.hex() for v in prog.run(xs, ys)))
            """ % (make_inputs, DEMO),
            VEXL_PROFILE="baseline",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        profile, values = proc.stdout.splitlines()
        self.assertEqual(profile, "baseline")
        self.assertEqual(values.split(), fused)

    def test_profile_env_read_at_load_time(self):
        # The library reads VEXL_PROFILE through the C getenv at each load,
        # so setting it in-process after loading the library is obeyed.
        os.environ["VEXL_PROFILE"] = "baseline"
        try:
            self.assertEqual(vexl_plugin.profile(), "baseline")
            with self.load("in x\nout x") as prog:
                self.assertEqual(prog.profile, "baseline")
        finally:
            del os.environ["VEXL_PROFILE"]
        self.assertEqual(vexl_plugin.profile(), "fused")

    def test_float64_results(self):
        xs = [1.0, -4.0, 9.0, 16.0, 0.0]
        ys = [2.0, 3.0, -1.0, 0.5, 0.0]
        with self.load(DEMO) as prog:
            self.assertEqual(prog.num_inputs, 2)
            out = prog.run(xs, ys)
        self.assertIsInstance(out, array.array)
        self.assertEqual(out.typecode, "d")
        for x, y, got in zip(xs, ys, out):
            self.assertEqual(got, demo_reference(x, y))

    def test_float32_results(self):
        xs = array.array("f", [1.0, -4.0, 9.0, 16.0, 0.25])
        ys = array.array("f", [2.0, 3.0, -1.0, 0.5, 8.0])
        with self.load(DEMO) as prog:
            out = prog.run(xs, ys)
        self.assertEqual(out.typecode, "f")
        for x, y, got in zip(xs, ys, out):
            self.assertAlmostEqual(got, demo_reference(x, y), delta=1e-5 * max(1.0, abs(got)))

    def test_programs(self):
        cases = [
            ("in x\nout x * 2 + 1", [[1, 2, 3]], [3, 5, 7]),
            ("in a, b\nout min(a, b) - max(a, b)", [[1, 5], [4, 2]], [-3, -3]),
            ("in x\nout clamp(x, -1, 1)", [[-5, 0.5, 7]], [-1, 0.5, 1]),
            ("in x\nlet t = x * x\nout t * t - t", [[2, 3]], [12, 72]),
            ("in x\nout exp(log(x))", [[1.0]], [1.0]),
            ("in x\nout 1 / x", [[0.0]], [math.inf]),
        ]
        for source, inputs, want in cases:
            with self.subTest(source=source):
                with self.load(source) as prog:
                    self.assertEqual(list(prog.run(*inputs)), want)
                    self.assertEqual(list(prog.run(*inputs, typecode="f")), want)

    def test_run_into_out(self):
        xs = array.array("d", [1.0, -4.0, 9.0])
        ys = array.array("d", [2.0, 3.0, -1.0])
        with self.load(DEMO) as prog:
            want = list(prog.run(xs, ys))
            buf = array.array("d", [7.0] * 3)
            got = prog.run(xs, ys, out=buf)
            self.assertIs(got, buf)
            self.assertEqual(list(buf), want)
            buf32 = array.array("f", [0.0] * 3)
            self.assertIs(prog.run(array.array("f", xs), array.array("f", ys), out=buf32), buf32)
            for bad in (array.array("d", [0.0] * 2), array.array("f", [0.0] * 3), [0.0] * 3):
                with self.subTest(out=bad):
                    with self.assertRaises(ValueError):
                        prog.run(xs, ys, out=bad)

    def test_empty_vectors(self):
        with self.load("in x, y\nout x + y") as prog:
            self.assertEqual(list(prog.run([], [])), [])

    def test_run_errors(self):
        with self.load("in x, y\nout x + y") as prog:
            with self.assertRaises(vexl_plugin.VexlError) as ctx:
                prog.run([1.0])
            self.assertIn("program takes 2 inputs (x, y), got 1", str(ctx.exception))
            with self.assertRaises(ValueError):
                prog.run([1.0, 2.0], [1.0])
            with self.assertRaises(ValueError):
                prog.run([1.0], [1.0], typecode="i")
        with self.assertRaises(vexl_plugin.VexlError):
            prog.run([1.0], [2.0])

    def test_corrupt_program_rejected(self):
        data = bytearray(vexl_compiler.compile_source(DEMO))
        data[len(data) // 2] ^= 0x10
        with self.assertRaises(vexl_plugin.VexlError) as ctx:
            vexl_plugin.Program.load(bytes(data))
        self.assertIn("checksum mismatch", str(ctx.exception))
        with self.assertRaises(vexl_plugin.VexlError):
            vexl_plugin.Program.load(b"")

    def test_backend(self):
        backend = vexl_plugin.Backend()
        self.assertEqual(backend.name, "vexl")
        self.assertEqual(backend.version, vexl_plugin.version())
        self.assertEqual(backend.profile, "fused")
        out = backend.compile_and_run("in x, y\nout x * y + 1", [1, 2], [3, 4])
        self.assertEqual(list(out), [4, 9])
        with self.assertRaises(vexl_compiler.CompileError) as ctx:
            backend.compile_and_run("in x\nout sqrt(x, x)", [1])
        self.assertEqual((ctx.exception.line, ctx.exception.col), (2, 5))


class InstalledDistributionTest(unittest.TestCase):
    """Checks that only make sense once the wheels are installed."""

    def test_backend_entry_point(self):
        dist = distribution("vexl-plugin")
        if dist is None:
            self.skipTest("the vexl-plugin wheel is not installed")
        eps = [ep for ep in dist.entry_points if ep.group == "vexl.backends"]
        self.assertEqual([(ep.name, ep.value) for ep in eps], [("vexl", "vexl_plugin:Backend")])
        self.assertIs(eps[0].load(), vexl_plugin.Backend)
        requires = dist.requires or []
        self.assertTrue(any(r.replace(" ", "").startswith("vexl-compiler==") for r in requires), requires)

    def test_console_script(self):
        dist = distribution("vexl-compiler")
        if dist is None:
            self.skipTest("the vexl-compiler wheel is not installed")
        eps = [ep for ep in dist.entry_points if ep.group == "console_scripts"]
        self.assertIn(("vexlc", "vexl_compiler._cli:main"), [(ep.name, ep.value) for ep in eps])
        exe = shutil.which("vexlc")
        self.assertIsNotNone(exe, "vexlc console script is not on PATH")
        out = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, universal_newlines=True, check=True)
        self.assertTrue(out.stdout.startswith("vexlc "))

    def test_bundled_binaries(self):
        if distribution("vexl-compiler") is None or distribution("vexl-plugin") is None:
            self.skipTest("the vexl wheels are not installed")
        saved = {k: os.environ.pop(k, None) for k in ("VEXLC_PATH", "VEXL_LIBRARY")}
        try:
            self.assertTrue(os.path.isfile(vexl_compiler.vexlc_path()))
            self.assertTrue(os.path.isfile(vexl_plugin.library_path()))
        finally:
            for k, v in saved.items():
                if v is not None:
                    os.environ[k] = v


if __name__ == "__main__":
    unittest.main()
