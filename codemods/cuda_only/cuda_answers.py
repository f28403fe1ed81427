"""What the answer of a CUDA query that does not raise changes on an XLA host, where there
is no CUDA device: ``torch.cuda.device_count()`` is 0 there and
``torch.cuda.is_bf16_supported()`` False (torch 2.9: both return without CUDA).

The answer is followed from the call through the expressions that compute with it (with
literal operands it is computed: on XLA, and with one GPU, which is what the port runs: one
device per process), the names and attributes it is stored in, and the functions of the
file it is handed to, to where it is used:

- nothing changes ("none"): it is only printed, or stored where nothing reads it, or every
  test of it comes out as it does with one GPU (``n_gpu > 1``: the script's one-device path
  runs, as the port runs it), or the branches it chooses between only print;
- it chooses another branch or value than a GPU would ("branch"): like a CUDA availability
  check, the code it guards must be checked;
- it breaks the script ("breaks"): the branch it takes raises or exits, an ``assert`` on it
  fails, a division by the count raises, a computation (a batch size, a list of devices)
  gets 0, or it goes where it is not followed (another callable, a return, a subscript).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection
from typing import Any

import libcst as cst

from codemods.apis import prints
from codemods.cuda_only.count_uses import PURE_BUILTINS
from codemods.cuda_only.facts import Answer, Effect
from codemods.cuda_only.module_reads import FUNCTIONS, ModuleReads
from codemods.engine.nodes import walk
from codemods.engine.positions import code_of

_DIVISIONS = (cst.Divide, cst.FloorDivide, cst.Modulo)
_WORSE: dict[Effect, int] = {"none": 0, "branch": 1, "breaks": 2}
UNKNOWN = object()  # a value the answer does not decide (what a GPU says of bfloat16)
_COMPARE: dict[type, Callable[[Any, Any], object]] = {
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.Is: operator.is_,
    cst.IsNot: operator.is_not,
}
_ARITHMETIC: dict[type, Callable[[Any, Any], object]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.Divide: operator.truediv,
    cst.Modulo: operator.mod,
}
_BUILTINS: dict[str, Callable[..., object]] = {"max": max, "min": min, "int": int, "bool": bool, "abs": abs}
_XLA_DEVICES = frozenset({"torch_xla.device", "torch_xla.core.xla_model.xla_device"})
_LOG_METHODS = frozenset({"info", "debug", "warning", "warn", "error", "print", "log", "write"})


Pair = tuple[object, object]  # the value on an XLA host, and with one GPU


class CudaAnswers:
    def __init__(
        self,
        reads: ModuleReads,
        ends_the_process: Callable[[cst.BaseSmallStatement], bool],
        script_alone: bool,
        false_on_xla: Callable[[cst.CSTNode], bool] = lambda node: False,
        cuda_strings: Collection[cst.CSTNode] = (),
    ) -> None:
        """``script_alone``: the file runs as a script and no other file of the run imports it;
        ``false_on_xla``: a part of a test that is False on XLA as the port leaves it (a kept
        availability check); ``cuda_strings``: the CUDA device names the port makes the XLA device."""
        self.cuda_strings = {id(node) for node in cuda_strings}
        self.reads = reads
        self.false_on_xla = false_on_xla
        self.ends_the_process = ends_the_process
        self.script_alone = script_alone

    def of(self, call: cst.Call, on_xla: object, on_one_gpu: object) -> Answer | None:
        """The worst of what the answer of ``call`` does where it goes; None: the call
        never runs on XLA (a test of the same call keeps it from running)."""
        pair = (on_xla, on_one_gpu)
        if self._never_runs(call, pair):
            return None
        if (function := self._unnamed_function(call)) is not None:
            return Answer(
                "none",
                call,
                f"nothing in this script names `{function}`, and no other file of the run imports the script, so this "
                f"run never calls it (code outside the run that calls it gets {on_xla!r})",
            )
        answers = self._follow(call, pair, set())
        return max(answers, key=lambda a: _WORSE[a.effect])

    def _follow(self, node: cst.CSTNode, pair: Pair, seen: set[int]) -> list[Answer]:
        climbed = self._climb(node, pair)
        if isinstance(climbed, Answer):
            return [climbed]
        child, parent, pair = climbed
        if _agrees(pair) and (picked := self._picked_device(parent, child, pair)) is not None:
            return [picked]
        if _agrees(pair):
            return [Answer("none", child, f"`{code_of(child)}` is {pair[0]!r} there, as with one GPU")]
        if isinstance(parent, cst.Arg):
            return self._handed(parent, child, pair, seen)
        if isinstance(parent, (cst.If, cst.While)) and parent.test is child:
            return [self._branch(parent, child, pair)]
        if isinstance(parent, cst.Assert) and parent.test is child:
            if pair[0] is UNKNOWN or bool(pair[0]):
                return [Answer("branch", child, f"`{code_of(child)}` decides whether `assert` fails")]
            return [Answer("breaks", parent, f"`{code_of(parent)}` fails there (AssertionError)")]
        if isinstance(parent, cst.IfExp) and parent.test is child:
            if pair[0] is UNKNOWN:
                return [Answer("branch", child, f"`{code_of(child)}` chooses the value of `{code_of(parent)}`")]
            chosen = parent.body if bool(pair[0]) else parent.orelse
            return [Answer("branch", child, f"`{code_of(parent)}` is `{code_of(chosen)}` there")]
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and parent.value is child:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            return [a for target in targets for a in self._stored(target, parent, pair, seen)]
        if (printed := self._printed_text(parent)) is not None:
            return [Answer("none", printed, f"`{code_of(child)}` is only printed")]
        statement = self.reads.enclosing(child, (cst.BaseSmallStatement, cst.BaseCompoundStatement)) or child
        return [
            Answer("breaks", statement, f"`{code_of(statement).strip()}` uses it in a way the tool does not follow")
        ]

    def _picked_device(self, parent: cst.CSTNode | None, test: cst.CSTNode, pair: Pair) -> Answer | None:
        """A test that comes out on XLA as with one GPU (``torch.cuda.device_count() > 1`` is
        False) but picks the device: the branch it skips there names a CUDA device and the one it
        takes none (``device = "cpu"``), so the model and tensors stay on the CPU on an XLA host,
        which has as many devices as a multi-GPU one."""
        if not isinstance(parent, (cst.If, cst.IfExp)) or parent.test is not test:
            return None
        other = parent.orelse.body if isinstance(parent.orelse, cst.Else) else parent.orelse
        taken, skipped = (parent.body, other) if bool(pair[0]) else (other, parent.body)
        if skipped is None or not self._names_a_device(skipped):
            return None
        if taken is not None and self._names_a_device(taken):
            return None
        return Answer(
            "breaks",
            test,
            f"`{code_of(test)}` is {pair[0]!r} there, so the device it picks (`{code_of(skipped).strip()}`) is "
            "not: the other path runs and the model and tensors stay on the CPU on XLA",
            advice="make the path it takes there pick the XLA device",
        )

    def _names_a_device(self, block: cst.CSTNode) -> bool:
        """A CUDA device name the port makes the XLA device, or the XLA device as it wrote it
        (a second run sees that)."""
        for node in walk(block):
            if id(node) in self.cuda_strings:
                return True
            if isinstance(node, cst.SimpleString) and node.value.strip("'\"").split(":")[0] == "xla":
                return True
            if isinstance(node, cst.Call) and self.reads.resolve(node.func) in _XLA_DEVICES:
                return True
        return False

    def _printed_text(self, parent: cst.CSTNode | None) -> cst.Call | None:
        """The printing or logging call that the text ``parent`` makes of the value goes to
        (``print(f"{n} GPUs")``, ``log.info("{} GPUs".format(n))``): its number only shows
        there.  None: the value is not made text, or the text goes elsewhere."""
        parent_of = self.reads.parent
        if isinstance(parent, cst.FormattedStringExpression):
            text: cst.CSTNode | None = parent_of.get(id(parent))
        elif isinstance(parent, cst.Arg) and isinstance(call := parent_of.get(id(parent)), cst.Call):
            func = call.func
            formats = isinstance(func, cst.Attribute) and func.attr.value == "format"
            if not formats or not isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString)):  # type: ignore[attr-defined]  # narrowed by formats
                return None
            text = call
        else:
            return None
        while isinstance(above := parent_of.get(id(text)), cst.ConcatenatedString):
            text = above
        call = parent_of.get(id(above)) if isinstance(above, cst.Arg) else None
        return call if isinstance(call, cst.Call) and self._logs(call) else None

    def _printed_arithmetic(self, node: cst.BinaryOperation) -> cst.Call | None:
        """The printing or logging call that arithmetic with other values (``batch *
        torch.cuda.device_count()``) goes to, as text or as an argument: only the line shows it."""
        parent_of = self.reads.parent
        top: cst.CSTNode = node
        while True:
            if isinstance(top, cst.BinaryOperation) and isinstance(top.operator, _DIVISIONS):
                return None  # ``n / torch.cuda.device_count()`` raises ZeroDivisionError there
            if not isinstance(above := parent_of.get(id(top)), (cst.BinaryOperation, cst.UnaryOperation)):
                break
            top = above
        if isinstance(above, cst.Arg) and isinstance(call := parent_of.get(id(above)), cst.Call) and self._logs(call):
            return call
        return self._printed_text(above)

    def _climb(self, node: cst.CSTNode, pair: Pair) -> tuple[cst.CSTNode, cst.CSTNode | None, Pair] | Answer:
        """From ``node`` up through the expressions that compute with its value (``not``,
        comparisons and arithmetic with a literal, ``and``/``or``): where it stops, with the
        value there; an Answer where the computation breaks or cannot be followed."""
        parent_of = self.reads.parent
        child, parent = node, parent_of.get(id(node))
        while parent is not None and not _agrees(pair):
            if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
                pair = _each(pair, operator.not_)
            elif isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
                compared = self._compared(parent, child, pair)
                if compared is None:
                    return _breaks(parent, "is compared")
                parent, pair = compared
            elif isinstance(parent, cst.BinaryOperation):
                other = parent.right if parent.left is child else parent.left
                value, apply = _literal(other), _ARITHMETIC.get(type(parent.operator))
                if value is UNKNOWN or apply is None:
                    if (printed := self._printed_arithmetic(parent)) is not None:
                        return Answer("none", printed, f"`{code_of(node)}` is only printed")
                    return _breaks(parent, f"computes with {pair[0]!r}")
                computed = _computed(pair, apply, value, ours_left=parent.left is child)
                if computed is None:
                    return Answer("breaks", parent, f"`{code_of(parent)}` raises ZeroDivisionError")
                pair = computed
            elif isinstance(parent, cst.BooleanOperation):
                conjunction = isinstance(parent.operator, cst.And)
                pair = _each(pair, lambda v: _joined(v, conjunction))  # noqa: B023 - called at once
            else:
                break
            child, parent = parent, parent_of.get(id(parent))
        return child, parent, pair

    def _never_runs(self, node: cst.CSTNode, pair: Pair) -> bool:
        """The read (or the query's call) is in a branch that a test of the same value keeps
        from running on XLA (``init_distributed(rank, num_gpus)`` under ``if num_gpus > 1:``,
        ``4 * torch.cuda.device_count() if torch.cuda.device_count() > 0 else 0``, ``if
        with_cuda and num_gpus > 1:``), or a kept availability check does (``n % count if
        torch.cuda.is_available() else None``)."""
        function = self.reads.enclosing(node, FUNCTIONS)
        text = code_of(node)

        def same(part: cst.CSTNode) -> object:
            if self.false_on_xla(part):
                return False
            return pair[0] if type(part) is type(node) and code_of(part) == text else UNKNOWN

        child = node
        parent = self.reads.parent.get(id(node))
        while parent is not None and parent is not function:
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                value = value_on_xla(parent.test, same)
                if value is not UNKNOWN and bool(value) != (child is parent.body):
                    return True
            child, parent = parent, self.reads.parent.get(id(parent))
        return False

    def _unnamed_function(self, node: cst.CSTNode) -> str | None:
        """The function around ``node`` where no code of the run can call it: a module-level
        function or a method of a class with no base (no framework calls its hooks), not a
        dunder, not decorated, that nothing in the file names (no call, no reference), in a
        script no other file of the run imports."""
        function = self.reads.enclosing(node, (cst.FunctionDef,))
        if not self.script_alone or not isinstance(function, cst.FunctionDef) or function.decorators:
            return None
        name = function.name.value
        if name.startswith("__") or self.reads.names.get(name) or self.reads.attributes.get(name):
            return None
        block = self.reads.parent.get(id(function))
        if isinstance(block, cst.Module):
            return name
        owner = self.reads.parent.get(id(block)) if isinstance(block, cst.IndentedBlock) else None
        if isinstance(owner, cst.ClassDef) and all(code_of(base.value) == "object" for base in owner.bases):
            return f"{owner.name.value}.{name}"
        return None

    def _compared(self, parent: cst.CSTNode, child: cst.CSTNode, pair: Pair) -> tuple[cst.Comparison, Pair] | None:
        """``n > 1`` (or ``1 < n``) with a literal on the other side: the comparison and its pair."""
        comparison = self.reads.parent.get(id(parent)) if isinstance(parent, cst.ComparisonTarget) else parent
        if not isinstance(comparison, cst.Comparison) or len(comparison.comparisons) != 1:
            return None
        target = comparison.comparisons[0]
        apply = _COMPARE.get(type(target.operator))
        ours_left = comparison.left is child
        value = _literal(target.comparator if ours_left else comparison.left)
        if apply is None or value is UNKNOWN:
            return None
        compared = _computed(pair, apply, value, ours_left=ours_left)
        return (comparison, compared) if compared is not None else None

    def _handed(self, arg: cst.Arg, child: cst.CSTNode, pair: Pair, seen: set[int]) -> list[Answer]:
        call = self.reads.parent.get(id(arg))
        if not isinstance(call, cst.Call):
            return [_breaks(arg, "uses it")]
        func = call.func
        name = func.value if isinstance(func, cst.Name) else None
        if self._logs(call):
            return [Answer("none", call, f"`{code_of(child)}` is only printed")]
        if (printed := self._printed_text(arg)) is not None:
            return [Answer("none", printed, f"`{code_of(child)}` is only printed")]
        if name in PURE_BUILTINS and name in _BUILTINS and self.reads.resolve(func) in (None, name, f"builtins.{name}"):
            values = [None if a is arg else _literal(a.value) for a in call.args]
            if UNKNOWN not in values and not any(a.keyword or a.star for a in call.args):
                builtin, at = _BUILTINS[name], call.args.index(arg)
                try:
                    computed = _each(pair, lambda v: builtin(*values[:at], v, *values[at + 1 :]))
                except (TypeError, ValueError):
                    return [_breaks(call, "is handed it")]
                return (
                    self._follow(call, computed, seen)
                    if not _agrees(computed)
                    else [Answer("none", call, f"`{code_of(call)}` is {computed[0]!r} there, as with one GPU")]
                )
        function = self.reads.functions.get(name) if name is not None else None
        if function is not None and id(function) not in seen:
            reads = self.reads.parameter_reads(function, call, arg)
            if reads is not None:
                seen.add(id(function))
                found = [
                    a for read in reads if not self._never_runs(read, pair) for a in self._follow(read, pair, seen)
                ]
                return found or [Answer("none", call, f"`{name}` does not read it where it runs on XLA")]
        return [_breaks(call, "is handed it")]

    def _stored(self, target: cst.BaseExpression, statement: cst.CSTNode, pair: Pair, seen: set[int]) -> list[Answer]:
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return [_breaks(statement, "stores it")]
        if id(target) in seen:
            return []
        seen.add(id(target))
        reads = list(self.reads.later_reads(target, statement))
        found = [a for read in reads if not self._never_runs(read, pair) for a in self._follow(read, pair, seen)]
        if found:
            return found
        if reads:
            return [Answer("none", target, f"`{code_of(target)}` is read only in code that a test False on XLA skips")]
        return [Answer("none", target, f"`{code_of(target)}` is not read")]

    def _branch(self, statement: cst.If | cst.While, test: cst.CSTNode, pair: Pair) -> Answer:
        taken_on_xla = bool(pair[0]) if pair[0] is not UNKNOWN else None
        if taken_on_xla is None:
            return Answer("branch", test, f"`{code_of(test)}` depends on it")
        said = f"`{code_of(test)}` is {taken_on_xla} there"
        other = statement.orelse.body if isinstance(statement.orelse, cst.Else) else statement.orelse
        taken, skipped = (statement.body, other) if taken_on_xla else (other, statement.body)
        if self._ends(taken):
            return Answer("breaks", test, f"{said}, and the branch it takes stops the script")
        if self._only_logs(taken) and self._only_logs(skipped, or_stops=True):
            stops = " (or a stop of the script, which a GPU run may take: XLA goes on)" if self._ends(skipped) else ""
            return Answer("none", test, f"{said}: it only decides what is printed{stops}")
        return Answer("branch", test, said)

    def _ends(self, block: cst.CSTNode | None) -> bool:
        if not isinstance(block, cst.IndentedBlock):
            return False
        return any(
            isinstance(statement, cst.SimpleStatementLine) and any(self.ends_the_process(s) for s in statement.body)
            for statement in block.body
        )

    def _only_logs(self, block: cst.CSTNode | None, or_stops: bool = False) -> bool:
        if block is None:
            return True
        if not isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            return False
        lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
        return all(
            isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
            and all(
                isinstance(small, cst.Pass)
                or (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self._logs(small.value))
                or (or_stops and self.ends_the_process(small))
                for small in line.body
            )
            for line in lines
        )

    def _logs(self, call: cst.Call) -> bool:
        """``print(...)``, ``xm.master_print(...)``, ``logger.info(...)``, ``warnings.warn(...)``:
        a line of output (a logger's method by its name: its object is not resolved)."""
        func = call.func
        if prints(self.reads.resolve(func), func.value if isinstance(func, cst.Name) else None):
            return True
        return isinstance(func, cst.Attribute) and func.attr.value in _LOG_METHODS


def value_on_xla(expr: cst.CSTNode, known: Callable[[cst.CSTNode], object]) -> object:
    """What ``expr`` is on an XLA host, where ``known`` gives what some of its parts are there
    (a CUDA query's answer): literals, ``not``, ``and``/``or``, one comparison and arithmetic
    are computed; UNKNOWN where a part is not known.  An ``and`` with one falsy operand is
    falsy (an ``or`` with one truthy operand truthy) whatever the other one is."""
    value = known(expr)
    if value is not UNKNOWN:
        return value
    value = _literal(expr)
    if value is not UNKNOWN:
        return value
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        inner = value_on_xla(expr.expression, known)
        return UNKNOWN if inner is UNKNOWN else not inner
    if isinstance(expr, cst.BooleanOperation):
        conjunction = isinstance(expr.operator, cst.And)
        operands = (value_on_xla(expr.left, known), value_on_xla(expr.right, known))
        deciding = next((v for v in operands if v is not UNKNOWN and bool(v) is not conjunction), UNKNOWN)
        if deciding is not UNKNOWN or UNKNOWN in operands:
            return deciding
        return operands[1]
    apply: Callable[[Any, Any], object] | None = None
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
        left, right = expr.left, expr.comparisons[0].comparator
        apply = _COMPARE.get(type(expr.comparisons[0].operator))
    elif isinstance(expr, cst.BinaryOperation):
        left, right = expr.left, expr.right
        apply = _ARITHMETIC.get(type(expr.operator))
    if apply is None:
        return UNKNOWN
    operands = (value_on_xla(left, known), value_on_xla(right, known))
    if UNKNOWN in operands:
        return UNKNOWN
    try:
        return apply(*operands)
    except (ZeroDivisionError, TypeError):
        return UNKNOWN


def _breaks(node: cst.CSTNode, verb: str) -> Answer:
    return Answer("breaks", node, f"`{code_of(node)}` {verb}")


def _agrees(pair: Pair) -> bool:
    return pair[0] is not UNKNOWN and pair[1] is not UNKNOWN and pair[0] == pair[1]


def _each(pair: Pair, apply: Callable[[object], object]) -> Pair:
    return (
        UNKNOWN if pair[0] is UNKNOWN else apply(pair[0]),
        UNKNOWN if pair[1] is UNKNOWN else apply(pair[1]),
    )


def _computed(pair: Pair, apply: Callable[[Any, Any], object], literal: object, *, ours_left: bool) -> Pair | None:
    """``ours <op> literal`` (or ``literal <op> ours``) for each value; None: it raises."""
    try:
        return _each(pair, lambda v: apply(v, literal) if ours_left else apply(literal, v))
    except (ZeroDivisionError, TypeError):
        return None


def _joined(value: object, conjunction: bool) -> object:
    """What ``value and other`` (``value or other``) is, as far as ``value`` decides it:
    a falsy operand of ``and`` makes it falsy, a truthy one of ``or`` truthy."""
    if conjunction:
        return False if not value else UNKNOWN
    return True if value else UNKNOWN


def _literal(node: cst.CSTNode) -> object:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return -int(node.expression.value)
    return UNKNOWN
