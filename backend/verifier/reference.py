"""A pure-Python reference implementation of the vexl language.

This module is the oracle the verifier lanes compare the released wheels
against. It is written from the language description (``backend/src/README.md``)
and the upstream Go sources (``lang/``, ``vm/vm.go``), but shares no code with
them and imports nothing outside the standard library. It never imports the
``vexl_compiler`` or ``vexl_plugin`` packages.

Two halves:

``compile_program(src, file="<stdin>")``
    Lexes, parses and checks a program exactly like ``vexlc``: the same
    grammar, the same limits and the same ``FILE:LINE:COL: message`` compile
    errors (1-based line, byte column), raised as :class:`CompileError`. The
    result is a :class:`Program` (an expression tree per ``let`` and for
    ``out``).

``Program.run(inputs, precision)``
    Evaluates the program element by element with Python floats
    (IEEE 754 binary64). The semantics mirror the upstream stack
    interpreter, the documented behaviour of every profile:

    * ``+ - * /`` and unary ``-`` are IEEE 754 operations; ``x / 0`` is
      +-Inf (NaN for ``0 / 0``), never an exception. Every product is rounded
      before it is added (there is no fused multiply-add).
    * ``sqrt``, ``exp`` and ``log`` follow IEEE/C99: ``sqrt(-1)`` and
      ``log(-1)`` are NaN, ``log(0)`` is -Inf, ``exp`` overflows to +Inf.
    * ``min``/``max`` are Go's built-ins: NaN if either argument is NaN,
      ``min(-0, +0) = -0`` and ``max(-0, +0) = +0``.
      ``clamp(x, lo, hi) = min(max(x, lo), hi)``.
    * float32 (``precision="f"``): constants are rounded to float32 once,
      and the result of every operation is rounded to float32
      (round-to-nearest-even; a value beyond the float32 range becomes
      +-Inf). ``sqrt``, ``exp`` and ``log`` are computed in float64 on the
      float32 argument and then rounded, which is what the runtime does. For
      ``+ - * /`` and ``sqrt`` computing in binary64 and rounding to binary32
      gives the correctly rounded binary32 result (53 >= 2*24 + 2), so the
      reference is exact for them.

    ``exp`` and ``log`` come from the C library through :mod:`math`, while the
    runtime uses Go's ``math`` package; the two may differ in the last bit,
    which is why the lanes compare transcendental results with a tolerance and
    everything else exactly.

Evaluation is column-wise (each node is computed for all elements at once),
which is the same function as element-wise evaluation because every operation
is element-wise, and keeps long vectors affordable in pure Python.
"""

import math
import struct

__all__ = [
    "CompileError",
    "Program",
    "compile_program",
    "round_f32",
    "MAX_INPUTS",
    "MAX_STACK",
]

# Limits of bytecode format version 1 (backend/src/bytecode/bytecode.go).
MAX_SOURCE_SIZE = 1 << 20
MAX_NESTING = 200
MAX_INPUTS = 16
MAX_NAME_LEN = 64
MAX_TEMPS = 255
MAX_CONSTS = 4096
MAX_STACK = 64
MAX_CODE_BYTES = 1 << 16

_INF = float("inf")
_NAN = float("nan")


class CompileError(Exception):
    """A program the reference refuses, formatted like vexlc's errors."""

    def __init__(self, file, line, col, msg):
        super().__init__("%s:%d:%d: %s" % (file, line, col, msg))
        self.file = file
        self.line = line
        self.col = col
        self.reason = msg


# --------------------------------------------------------------------------
# Arithmetic

_F32 = struct.Struct("<f")


def round_f32(x):
    """Round a Python float to the nearest float32 (ties to even).

    Values beyond the float32 range become +-Inf (struct refuses them, a C or
    Go conversion does not); NaN stays NaN.
    """
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(_INF, x)


def _signbit(x):
    return math.copysign(1.0, x) < 0


def _add(a, b):
    return a + b


def _sub(a, b):
    return a - b


def _mul(a, b):
    return a * b


def _div(a, b):
    if b == 0.0:
        if a != a or a == 0.0:
            return _NAN
        return _INF if _signbit(a) == _signbit(b) else -_INF
    return a / b


def _neg(a):
    return -a


def _sqrt(a):
    if a != a or a < 0.0:
        return _NAN
    return math.sqrt(a)  # sqrt(-0.0) is -0.0, sqrt(inf) is inf


def _abs(a):
    return math.fabs(a)


def _exp(a):
    if a != a:
        return a
    try:
        return math.exp(a)
    except OverflowError:
        return _INF


def _log(a):
    if a != a or a < 0.0:
        return _NAN
    if a == 0.0:
        return -_INF
    return math.log(a)


def _min(a, b):
    """Go's min for floats: NaN wins, -0 is smaller than +0."""
    if a != a or b != b:
        return _NAN
    if a == b:
        return a if _signbit(a) else b
    return a if a < b else b


def _max(a, b):
    """Go's max for floats: NaN wins, +0 is larger than -0."""
    if a != a or b != b:
        return _NAN
    if a == b:
        return b if _signbit(a) else a
    return a if a > b else b


def _clamp(a, lo, hi):
    return _min(_max(a, lo), hi)


#: Operation name -> (arity, float64 function).
OPERATIONS = {
    "add": (2, _add),
    "sub": (2, _sub),
    "mul": (2, _mul),
    "div": (2, _div),
    "neg": (1, _neg),
    "sqrt": (1, _sqrt),
    "abs": (1, _abs),
    "exp": (1, _exp),
    "log": (1, _log),
    "min": (2, _min),
    "max": (2, _max),
    "clamp": (3, _clamp),
}

# Built-in functions of the language: name -> arity.
_BUILTINS = {"sqrt": 1, "abs": 1, "exp": 1, "log": 1, "min": 2, "max": 2, "clamp": 3}


def _rounded(fn):
    """Wrap a float64 operation so that its result is rounded to float32."""

    def op(*args):
        return round_f32(fn(*args))

    return op


_OPS64 = {name: fn for name, (_, fn) in OPERATIONS.items()}
_OPS32 = {name: _rounded(fn) for name, fn in _OPS64.items()}


# --------------------------------------------------------------------------
# Lexer

# Token kinds.
EOF, NEWLINE, IDENT, NUMBER, IN, LET, OUT = "eof", "newline", "ident", "number", "in", "let", "out"
_PUNCT = {
    ord(","): "comma",
    ord("="): "assign",
    ord("+"): "plus",
    ord("-"): "minus",
    ord("*"): "star",
    ord("/"): "slash",
    ord("("): "lparen",
    ord(")"): "rparen",
}
_KEYWORDS = {"in": IN, "let": LET, "out": OUT}


class _Token(object):
    __slots__ = ("kind", "text", "line", "col", "num")

    def __init__(self, kind, text, line, col, num=0.0):
        self.kind, self.text, self.line, self.col, self.num = kind, text, line, col, num

    def describe(self):
        """Name the token for an error message, like the Go compiler."""
        if self.kind == EOF:
            return "end of file"
        if self.kind == NEWLINE:
            return "end of line"
        if self.kind in (IN, LET, OUT):
            return 'keyword "%s"' % self.text
        if self.kind == IDENT:
            return 'name "%s"' % self.text
        if self.kind == NUMBER:
            return "number %s" % self.text
        return _go_quote(self.text)


def _is_letter(c):
    return c == 0x5F or 0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A


def _is_digit(c):
    return 0x30 <= c <= 0x39


def _go_quote(text):
    """strconv.Quote for the plain ASCII texts the lexer produces."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_quote_rune(ch):
    """Go's %q of a rune (strconv.QuoteRune)."""
    specials = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}
    cp = ord(ch)
    if ch in ("'", "\\"):
        body = "\\" + ch
    elif cp in specials:
        body = specials[cp]
    elif ch.isprintable():
        body = ch
    elif cp < 0x80:
        body = "\\x%02x" % cp
    elif cp < 0x10000:
        body = "\\u%04x" % cp
    else:
        body = "\\U%08x" % cp
    return "'" + body + "'"


def _decode_rune(src, i):
    """The rune starting at src[i], or U+FFFD for invalid UTF-8 (like Go)."""
    for k in range(1, 5):
        try:
            return src[i:i + k].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return "\ufffd"


def _scan_number(src, i):
    """End of the number literal at src[i]: digits, fraction, exponent."""
    n = len(src)

    def digits(j):
        while j < n and _is_digit(src[j]):
            j += 1
        return j

    j = digits(i)
    if j < n and src[j] == 0x2E:
        j = digits(j + 1)
    if j < n and src[j] in (0x65, 0x45):
        k = j + 1
        if k < n and src[k] in (0x2B, 0x2D):
            k += 1
        if k < n and _is_digit(src[k]):
            j = digits(k)
    return j


def _lex(file, src):
    toks = []
    line, line_start, depth = 1, 0, 0
    n = len(src)

    def error_at(off, msg):
        return CompileError(file, line, off - line_start + 1, msg)

    i = 0
    while i < n:
        c = src[i]
        col = i - line_start + 1
        if c == 0x0A:
            if depth == 0 and toks and toks[-1].kind != NEWLINE:
                toks.append(_Token(NEWLINE, "\n", line, col))
            i += 1
            line, line_start = line + 1, i
        elif c in (0x20, 0x09, 0x0D):
            i += 1
        elif c == 0x23:  # '#'
            while i < n and src[i] != 0x0A:
                i += 1
        elif _is_letter(c):
            j = i
            while j < n and (_is_letter(src[j]) or _is_digit(src[j])):
                j += 1
            text = src[i:j].decode("ascii")
            toks.append(_Token(_KEYWORDS.get(text, IDENT), text, line, col))
            i = j
        elif _is_digit(c) or (c == 0x2E and i + 1 < n and _is_digit(src[i + 1])):
            j = _scan_number(src, i)
            text = src[i:j].decode("ascii")
            if j < n and (_is_letter(src[j]) or _is_digit(src[j]) or src[j] == 0x2E):
                while j < n and (
                    _is_letter(src[j]) or _is_digit(src[j]) or src[j] == 0x2E
                    or (src[j] in (0x2B, 0x2D) and src[j - 1] in (0x65, 0x45))
                ):
                    j += 1
                raise error_at(i, "malformed number %s" % _go_quote(src[i:j].decode("ascii")))
            value = float(text)
            if math.isinf(value):
                raise error_at(i, "number %s out of range" % text)
            toks.append(_Token(NUMBER, text, line, col, value))
            i = j
        else:
            kind = _PUNCT.get(c)
            if kind is None:
                raise error_at(i, "unexpected character %s" % _go_quote_rune(_decode_rune(src, i)))
            if kind == "lparen":
                depth += 1
            elif kind == "rparen" and depth > 0:
                depth -= 1
            toks.append(_Token(kind, chr(c), line, col))
            i += 1
    toks.append(_Token(EOF, "", line, n - line_start + 1))
    return toks


# --------------------------------------------------------------------------
# Parser. Syntax nodes are tuples whose first two items are the kind and the
# (line, col) position of the node's first token:
#   ("num", pos, value)  ("ident", pos, name)  ("neg", pos, x)
#   ("bin", pos, op, x, y)  ("call", pos, name, [args])


class _Parser(object):
    def __init__(self, file, toks):
        self.file, self.toks, self.i, self.depth = file, toks, 0, 0

    def peek(self):
        return self.toks[self.i]

    def next(self):
        t = self.toks[self.i]
        if t.kind != EOF:
            self.i += 1
        return t

    def error(self, line, col, msg):
        return CompileError(self.file, line, col, msg)

    def unexpected(self, t, want):
        return self.error(t.line, t.col, "unexpected %s, expected %s" % (t.describe(), want))

    def program(self):
        stmts, out = [], None
        while True:
            t = self.peek()
            if t.kind == EOF:
                return stmts, (t.line, t.col)
            if t.kind == NEWLINE:
                self.next()
                continue
            if out is not None:
                raise self.error(t.line, t.col, "statement after out (out must be the last statement, see %d:%d)" % out)
            s = self.statement()
            t = self.peek()
            if t.kind not in (NEWLINE, EOF):
                raise self.unexpected(t, "end of line")
            stmts.append(s)
            if s[0] == OUT:
                out = s[1]

    def statement(self):
        """Return (kind, (line, col), names, expr)."""
        t = self.next()
        pos = (t.line, t.col)
        if t.kind == IN:
            names = []
            while True:
                name = self.next()
                if name.kind != IDENT:
                    raise self.unexpected(name, "input name")
                names.append(name)
                if self.peek().kind != "comma":
                    return (IN, pos, names, None)
                self.next()
        if t.kind == LET:
            name = self.next()
            if name.kind != IDENT:
                raise self.unexpected(name, "name")
            eq = self.next()
            if eq.kind != "assign":
                raise self.unexpected(eq, '"="')
            return (LET, pos, [name], self.expr())
        if t.kind == OUT:
            return (OUT, pos, [], self.expr())
        if t.kind == IDENT and self.peek().kind == "assign":
            raise self.error(t.line, t.col, "unexpected %s, expected in, let or out (did you mean let %s = ...?)"
                             % (t.describe(), t.text))
        raise self.unexpected(t, "in, let or out")

    def enter(self, t):
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(t.line, t.col, "expression nested too deeply (limit %d)" % MAX_NESTING)

    def expr(self):
        x = self.term()
        while self.peek().kind in ("plus", "minus"):
            op = self.next()
            x = ("bin", x[1], "add" if op.kind == "plus" else "sub", x, self.term())
        return x

    def term(self):
        x = self.unary()
        while self.peek().kind in ("star", "slash"):
            op = self.next()
            x = ("bin", x[1], "mul" if op.kind == "star" else "div", x, self.unary())
        return x

    def unary(self):
        t = self.peek()
        if t.kind != "minus":
            return self.primary()
        self.next()
        self.enter(t)
        x = self.unary()
        self.depth -= 1
        return ("neg", (t.line, t.col), x)

    def primary(self):
        t = self.next()
        pos = (t.line, t.col)
        if t.kind == NUMBER:
            return ("num", pos, t.num)
        if t.kind == IDENT:
            if self.peek().kind != "lparen":
                return ("ident", pos, t.text)
            self.next()
            self.enter(t)
            args = []
            if self.peek().kind == "rparen":
                self.next()
            else:
                while True:
                    args.append(self.expr())
                    sep = self.next()
                    if sep.kind == "rparen":
                        break
                    if sep.kind != "comma":
                        raise self.unexpected(sep, '"," or ")"')
            self.depth -= 1
            return ("call", pos, t.text, args)
        if t.kind == "lparen":
            self.enter(t)
            x = self.expr()
            r = self.next()
            if r.kind != "rparen":
                raise self.unexpected(r, '")"')
            self.depth -= 1
            return x
        raise self.unexpected(t, "expression")


# --------------------------------------------------------------------------
# Name resolution and checks (the code generator's rules), producing
# evaluation trees:
#   ("const", value)  ("input", index)  ("temp", index)  (op, arg, ...)

# Encoded size of each instruction kind, in bytes (opcode + operand).
_SIZE_INPUT, _SIZE_CONST, _SIZE_LOAD, _SIZE_STORE, _SIZE_OP = 2, 3, 2, 2, 1


def _left_spine(x):
    """Split a left-nested chain of binary nodes (a + b + c + ...), which may
    be arbitrarily long, into its nodes from the top down and the leftmost
    operand, so that it can be walked without deep recursion. Other nesting
    is bounded by MAX_NESTING."""
    spine = []
    while x[0] == "bin":
        spine.append(x)
        x = x[3]
    return spine, x


def _stack_need(x):
    kind = x[0]
    if kind == "neg":
        return 1 if x[2][0] == "num" else _stack_need(x[2])
    if kind == "bin":
        spine, leaf = _left_spine(x)
        need = _stack_need(leaf)
        for node in reversed(spine):
            need = max(need, 1 + _stack_need(node[4]))
        return need
    if kind == "call":
        need = 0
        for i, arg in enumerate(x[3]):
            need = max(need, i + _stack_need(arg))
        return max(need, 1)
    return 1


def _start(x):
    return _left_spine(x)[1][1]


def _is_zero_literal(x):
    if x[0] == "num":
        return x[2] == 0.0
    if x[0] == "neg":
        return _is_zero_literal(x[2])
    return False


class _Generator(object):
    def __init__(self, file):
        self.file = file
        self.inputs = {}  # name -> (index, pos)
        self.temps = {}  # name -> (index, pos)
        self.consts = set()  # distinct constants, by bit pattern
        self.size = 0

    def error(self, pos, msg):
        return CompileError(self.file, pos[0], pos[1], msg)

    def emit(self, pos, size):
        self.size += size
        if self.size > MAX_CODE_BYTES:
            raise self.error(pos, "program too large (more than %d bytes of code)" % MAX_CODE_BYTES)

    def constant(self, pos, value):
        bits = struct.pack("<d", value)
        if bits not in self.consts:
            if len(self.consts) == MAX_CONSTS:
                raise self.error(pos, "too many distinct constants (limit %d)" % MAX_CONSTS)
            self.consts.add(bits)
        self.emit(pos, _SIZE_CONST)
        return ("const", value)

    def check_new_name(self, name):
        pos = (name.line, name.col)
        if name.text in _BUILTINS:
            raise self.error(pos, "cannot use function name %s as a variable name" % name.text)
        if name.text in self.inputs:
            raise self.error(pos, "%s already declared as an input at %d:%d" % ((name.text,) + self.inputs[name.text][1]))
        if name.text in self.temps:
            raise self.error(pos, "%s already declared by let at %d:%d" % ((name.text,) + self.temps[name.text][1]))

    def declare_inputs(self, names):
        for name in names:
            pos = (name.line, name.col)
            if name.text in self.inputs:
                raise self.error(pos, "duplicate input %s" % name.text)
            self.check_new_name(name)
            if len(self.inputs) == MAX_INPUTS:
                raise self.error(pos, "too many inputs (limit %d)" % MAX_INPUTS)
            if len(name.text) > MAX_NAME_LEN:
                raise self.error(pos, "input name longer than %d bytes" % MAX_NAME_LEN)
            self.inputs[name.text] = (len(self.inputs), pos)

    def statement_expr(self, x):
        need = _stack_need(x)
        if need > MAX_STACK:
            raise self.error(_start(x), "expression too complex: needs a stack of %d values (limit %d)" % (need, MAX_STACK))
        return self.expr(x)

    def expr(self, x):
        kind, pos = x[0], x[1]
        if kind == "num":
            return self.constant(pos, x[2])
        if kind == "ident":
            name = x[2]
            if name in self.inputs:
                self.emit(pos, _SIZE_INPUT)
                return ("input", self.inputs[name][0])
            if name in self.temps:
                self.emit(pos, _SIZE_LOAD)
                return ("temp", self.temps[name][0])
            if name in _BUILTINS:
                raise self.error(pos, "%s is a function; call it as %s(...)" % (name, name))
            raise self.error(pos, "unknown identifier %s" % name)
        if kind == "neg":
            if x[2][0] == "num":
                # A negative literal is a constant, not a negation.
                return self.constant(pos, -x[2][2])
            arg = self.expr(x[2])
            self.emit(pos, _SIZE_OP)
            return ("neg", arg)
        if kind == "bin":
            # The same order as the recursive code generator: every division
            # of the left spine is checked (top down) before any operand is
            # compiled; then the leftmost operand, then each right operand
            # and its operation, bottom up.
            spine, leaf = _left_spine(x)
            for node in spine:
                if node[2] == "div" and _is_zero_literal(node[4]):
                    raise self.error(_start(node[4]), "division by literal zero")
            tree = self.expr(leaf)
            for node in reversed(spine):
                right = self.expr(node[4])
                self.emit(_start(node[4]), _SIZE_OP)
                tree = (node[2], tree, right)
            return tree
        # call
        name, args = x[2], x[3]
        arity = _BUILTINS.get(name)
        if arity is None:
            if name in self.inputs:
                raise self.error(pos, "%s is an input, not a function" % name)
            if name in self.temps:
                raise self.error(pos, "%s is a variable, not a function" % name)
            raise self.error(pos, "unknown function %s" % name)
        if len(args) != arity:
            raise self.error(pos, "%s expects %d argument%s, got %d"
                             % (name, arity, "" if arity == 1 else "s", len(args)))
        evaluated = tuple(self.expr(arg) for arg in args)
        self.emit(pos, _SIZE_OP)
        return (name,) + evaluated


def compile_program(src, file="<stdin>"):
    """Compile vexl source (str or bytes) to a :class:`Program`.

    Raises :class:`CompileError` with vexlc's message for an invalid program.
    """
    if isinstance(src, str):
        src = src.encode("utf-8")
    if len(src) > MAX_SOURCE_SIZE:
        raise CompileError(file, 1, 1, "source is %d bytes, limit %d" % (len(src), MAX_SOURCE_SIZE))
    parser = _Parser(file, _lex(file, src))
    stmts, end = parser.program()
    gen = _Generator(file)
    temps, out, out_pos = [], None, None
    for kind, pos, names, x in stmts:
        if kind == IN:
            gen.declare_inputs(names)
        elif kind == LET:
            name = names[0]
            gen.check_new_name(name)
            if len(gen.temps) == MAX_TEMPS:
                raise gen.error(pos, "too many let statements (limit %d)" % MAX_TEMPS)
            # Compiled before the name exists: let t = t + 1 is an error.
            tree = gen.statement_expr(x)
            gen.temps[name.text] = (len(temps), (name.line, name.col))
            temps.append(tree)
            gen.emit(pos, _SIZE_STORE)
        else:
            out, out_pos = gen.statement_expr(x), pos
    if out is None:
        raise gen.error(end, "missing out statement (a program ends with: out EXPRESSION)")
    if not gen.inputs:
        raise gen.error(out_pos, "no inputs declared (declare them with: in NAME, ...)")
    names = [name for name, _ in sorted(gen.inputs.items(), key=lambda item: item[1][0])]
    return Program(names, temps, out)


# --------------------------------------------------------------------------
# Evaluation


class Program(object):
    """A checked vexl program: input names, ``let`` trees and the ``out`` tree."""

    def __init__(self, inputs, temps, out):
        self.inputs = list(inputs)
        self.temps = list(temps)
        self.out = out

    @property
    def num_inputs(self):
        return len(self.inputs)

    def run(self, inputs, precision="d"):
        """Evaluate over the input vectors and return the output as a list.

        ``inputs`` holds one sequence of numbers per declared input, all of
        the same length (for ``precision="f"`` they should already be float32
        values, e.g. read from an ``array('f')``; they are rounded again,
        which changes nothing for such values). ``precision`` is ``"d"``
        (float64) or ``"f"`` (float32).
        """
        if precision not in ("d", "f"):
            raise ValueError("precision must be 'd' or 'f', not %r" % (precision,))
        if len(inputs) != len(self.inputs):
            raise ValueError("program takes %d inputs, got %d" % (len(self.inputs), len(inputs)))
        n = len(inputs[0])
        for i, v in enumerate(inputs):
            if len(v) != n:
                raise ValueError("input %d has %d elements, input 0 has %d" % (i, len(v), n))
        ops = _OPS32 if precision == "f" else _OPS64
        if precision == "f":
            columns = [[round_f32(float(x)) for x in v] for v in inputs]
        else:
            columns = [[float(x) for x in v] for v in inputs]
        env = _Env(columns, ops, precision)
        for tree in self.temps:
            env.temps.append(env.eval(tree))
        result = env.eval(self.out)
        if isinstance(result, list):
            return result
        return [result] * n


_BINARY = ("add", "sub", "mul", "div")


class _Env(object):
    """Column-wise evaluation: a value is a list (one float per element) or a
    float (a constant, broadcast to every element)."""

    def __init__(self, columns, ops, precision):
        self.columns = columns
        self.ops = ops
        self.precision = precision
        self.temps = []

    def eval(self, tree):
        kind = tree[0]
        if kind == "const":
            return round_f32(tree[1]) if self.precision == "f" else tree[1]
        if kind == "input":
            return self.columns[tree[1]]
        if kind == "temp":
            return self.temps[tree[1]]
        if kind in _BINARY:
            # Walk a left-nested chain (x + 1 + 2 + ...) iteratively.
            spine = []
            while tree[0] in _BINARY:
                spine.append(tree)
                tree = tree[1]
            value = self.eval(tree)
            for node in reversed(spine):
                value = self.apply(node[0], [value, self.eval(node[2])])
            return value
        return self.apply(kind, [self.eval(arg) for arg in tree[1:]])

    def apply(self, kind, args):
        """Apply an operation to evaluated arguments (lists or constants)."""
        fn = self.ops[kind]
        if not any(isinstance(a, list) for a in args):
            return fn(*args)
        n = next(len(a) for a in args if isinstance(a, list))
        args = [a if isinstance(a, list) else [a] * n for a in args]
        return list(map(fn, *args))
