"""ctypes binding of the vexl runtime library (libvexl).

The ``vexl-plugin`` wheel ships this package together with the shared
library of its platform: ``vexl_plugin/lib/libvexl.so`` on Linux,
``libvexl.dylib`` on macOS, ``vexl.dll`` on Windows. Set the
``VEXL_LIBRARY`` environment variable to load another one.

>>> import array, vexl_plugin, vexl_compiler
>>> prog = vexl_plugin.Program.load(vexl_compiler.compile_source("in x\\nout x * 2"))
>>> prog.run([1, 2, 3])
array('d', [2.0, 4.0, 6.0])

The evaluation profile is chosen by the library when a program is loaded:
``fused`` by default, ``VEXL_PROFILE=baseline`` to roll back. An unknown
``VEXL_PROFILE`` makes :func:`profile` and :meth:`Program.load` raise
VexlError.
"""

import array
import ctypes
import os
import sys
import threading

__all__ = ["Backend", "Program", "VexlError", "library_path", "profile", "version"]

#: Environment variable that overrides the bundled library.
VEXL_LIBRARY_ENV = "VEXL_LIBRARY"

#: File name of the bundled library on this platform.
if sys.platform == "darwin":
    _LIBNAME = "libvexl.dylib"
elif os.name == "nt":
    _LIBNAME = "vexl.dll"
else:
    _LIBNAME = "libvexl.so"

_lock = threading.Lock()
_lib = None


class VexlError(Exception):
    """A call into libvexl failed; the message is vexl_last_error()."""


def library_path():
    """Return the path of the library: ``$VEXL_LIBRARY`` or the bundled one."""
    path = os.environ.get(VEXL_LIBRARY_ENV)
    if path:
        return path
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", _LIBNAME)


def _library():
    """Load the library once and declare its functions."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        path = library_path()
        if not os.path.isfile(path):
            raise VexlError("libvexl not found at %s (set %s to override)" % (path, VEXL_LIBRARY_ENV))
        lib = ctypes.CDLL(path)
        f64p = ctypes.POINTER(ctypes.c_double)
        f32p = ctypes.POINTER(ctypes.c_float)
        signatures = {
            "vexl_version": ([], ctypes.c_char_p),
            "vexl_profile": ([], ctypes.c_char_p),
            "vexl_last_error": ([], ctypes.c_char_p),
            "vexl_load": ([ctypes.c_void_p, ctypes.c_size_t], ctypes.c_longlong),
            "vexl_num_inputs": ([ctypes.c_longlong], ctypes.c_int),
            "vexl_run_f64": ([ctypes.c_longlong, ctypes.POINTER(f64p), ctypes.c_int, f64p, ctypes.c_size_t], ctypes.c_int),
            "vexl_run_f32": ([ctypes.c_longlong, ctypes.POINTER(f32p), ctypes.c_int, f32p, ctypes.c_size_t], ctypes.c_int),
            "vexl_free": ([ctypes.c_longlong], None),
        }
        for name, (argtypes, restype) in signatures.items():
            fn = getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = restype
        _lib = lib
        return lib


def _decode(raw):
    return raw.decode("utf-8", "replace") if raw is not None else ""


def _last_error(lib, what):
    return VexlError(_decode(lib.vexl_last_error()) or "%s failed" % what)


def version():
    """Return the library version, e.g. ``"0.3.0"``."""
    return _decode(_library().vexl_version())


def profile():
    """Return the profile programs are loaded with now (``"fused"`` by default).

    Raises VexlError if ``VEXL_PROFILE`` names no profile.
    """
    lib = _library()
    name = _decode(lib.vexl_profile())
    if not name:
        raise _last_error(lib, "vexl_profile")
    return name


# Typecodes accepted for each precision, and the ctypes element types.
_PRECISIONS = {
    "d": (ctypes.c_double, "vexl_run_f64"),
    "f": (ctypes.c_float, "vexl_run_f32"),
}


class Program:
    """A compiled vexl program loaded into the library.

    Use :meth:`load`; release it with :meth:`close` or a ``with`` block
    (it is also released when garbage collected).
    """

    def __init__(self, handle, lib):
        self._handle = handle
        self._lib = lib
        self.num_inputs = lib.vexl_num_inputs(handle)
        self.profile = None

    @classmethod
    def load(cls, data):
        """Load compiled bytecode (``bytes``-like); raise VexlError if invalid."""
        lib = _library()
        data = bytes(data)
        active = _decode(lib.vexl_profile())
        handle = lib.vexl_load(data, len(data))
        if handle <= 0:
            raise _last_error(lib, "vexl_load")
        prog = cls(handle, lib)
        prog.profile = active or None
        return prog

    def close(self):
        """Release the program; further runs raise VexlError."""
        handle, self._handle = self._handle, 0
        if handle > 0:
            self._lib.vexl_free(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def run(self, *inputs, typecode=None, out=None):
        """Evaluate the program over the input vectors.

        Each input is an ``array.array('d')``/``array.array('f')`` or any
        sequence of numbers; all must have the same length. The result is an
        ``array.array`` of that length. It is float32 (``'f'``) when every
        input is an ``array('f')``, float64 (``'d'``) otherwise; pass
        ``typecode='d'`` or ``'f'`` to choose. Pass ``out``, an
        ``array.array`` of that type and length, to have the result written
        into it (and returned) instead of a new array: repeated runs then
        allocate nothing.
        """
        if self._handle <= 0:
            raise VexlError("program is closed")
        if typecode is None:
            all_f32 = inputs and all(isinstance(v, array.array) and v.typecode == "f" for v in inputs)
            typecode = "f" if all_f32 else "d"
        if typecode not in _PRECISIONS:
            raise ValueError("typecode must be 'd' or 'f', not %r" % (typecode,))
        ctype, fname = _PRECISIONS[typecode]
        vectors = []
        for v in inputs:
            if not (isinstance(v, array.array) and v.typecode == typecode):
                v = array.array(typecode, v)
            vectors.append(v)
        n = len(vectors[0]) if vectors else 0
        for i, v in enumerate(vectors):
            if len(v) != n:
                raise ValueError("input %d has %d elements, input 0 has %d" % (i, len(v), n))
        if out is None:
            out = array.array(typecode, bytes(n * ctypes.sizeof(ctype)))
        elif not (isinstance(out, array.array) and out.typecode == typecode and len(out) == n):
            raise ValueError("out must be an array('%s') of %d elements" % (typecode, n))
        ptr = ctypes.POINTER(ctype)

        def address(a):
            return ctypes.cast(a.buffer_info()[0], ptr) if len(a) else ptr()

        ptrs = (ptr * max(len(vectors), 1))(*[address(v) for v in vectors])
        rc = getattr(self._lib, fname)(self._handle, ptrs, len(vectors), address(out), n)
        if rc != 0:
            raise _last_error(self._lib, fname)
        return out


class Backend:
    """The vexl backend, as registered in the ``vexl.backends`` entry-point
    group (``vexl = vexl_plugin:Backend``).

    It pairs this library with the vexl_compiler package of the same release.
    """

    #: Backend name.
    name = "vexl"

    @property
    def version(self):
        """The library version."""
        return version()

    @property
    def profile(self):
        """The profile programs are loaded with now."""
        return profile()

    def compile(self, source):
        """Compile source text with vexl_compiler and load it."""
        from vexl_compiler import compile_source

        return Program.load(compile_source(source))

    def compile_and_run(self, source, *inputs, typecode=None):
        """Compile ``source``, run it over ``inputs`` and return the result."""
        with self.compile(source) as prog:
            return prog.run(*inputs, typecode=typecode)

    def __repr__(self):
        return "<vexl backend %s>" % library_path()
