"""Whether a function's ``init_process_group`` runs only when a launcher's variables are set.

A helper that checks for a launcher (``if "RANK" in os.environ and "WORLD_SIZE" in os.environ:``)
starts the process group only under that check when every way to the start goes through it:
the start is in the branch the check selects (``if "RANK" in os.environ: ...
init_process_group(...)``), or it follows an ``if`` whose other branches all leave the function
(torchvision's ``else: args.distributed = False; return``).  ibot's and DINO's helper starts it
after ``if RANK...: ... elif torch.cuda.is_available(): ... else: sys.exit(1)``: the branch of a
plain run falls through to the start (on the GPU; on XLA, whose port drops the CUDA check,
always), so under torch_xla.launch, which sets none of those variables, the group still starts."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import libcst as cst

from codemods.engine.nodes import walk

# Calls that end the process: a branch that ends in one never reaches what follows the ``if``.
_EXITS = frozenset({"sys.exit", "os._exit"})
_BUILTIN_EXITS = frozenset({"exit", "quit"})


def starts_only_when_launched(
    function: cst.FunctionDef,
    start: cst.Call,
    checks: Mapping[cst.Comparison, bool],
    resolve: Callable[[cst.BaseExpression], str | None],
) -> bool | None:
    """True if ``start`` (in ``function``) runs only where a launcher check in ``checks`` (each
    mapped to whether it holds under a launcher) holds; False if a path without a launcher
    reaches it and every check of the function is in an ``if`` on the way there; None if that
    cannot be told (a check kept in a variable, or an ``if`` inside a loop or a ``try``)."""
    gate = _Gate(checks, resolve)
    if gate.block(_statements(function.body), start):
        return True
    own = {check for check in checks if any(node is check for node in walk(function))}
    return False if own <= gate.seen else None


def _statements(block: cst.BaseSuite) -> tuple[cst.BaseStatement, ...]:
    if type(block) is cst.IndentedBlock:
        return tuple(block.body)
    return (cst.SimpleStatementLine(body=block.body),) if type(block) is cst.SimpleStatementSuite else ()


def _contains(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    return any(sub is target for sub in walk(node))


class _Gate:
    def __init__(
        self, checks: Mapping[cst.Comparison, bool], resolve: Callable[[cst.BaseExpression], str | None]
    ) -> None:
        self.checks = checks
        self.resolve = resolve
        self.seen: set[cst.Comparison] = set()  # the checks in the tests of the ifs on the way

    def block(self, statements: tuple[cst.BaseStatement, ...], start: cst.Call) -> bool:
        for statement in statements:
            if _contains(statement, start):
                return self.containing(statement, start)
            if type(statement) is cst.If and self._checked(statement) and self._not_launched_leave(statement):
                return True
        return False

    def containing(self, statement: cst.BaseStatement, start: cst.Call) -> bool:
        if type(statement) is not cst.If:
            return False  # in a loop, a with, a try: not followed (the caller says None)
        self._checked(statement)
        after_unlaunched = False
        branch: cst.If | cst.Else | None = statement
        while branch is not None:
            test = branch.test if type(branch) is cst.If else None
            if test is not None and _contains(test, start):
                return False
            if _contains(branch.body, start):
                launched = after_unlaunched or (test is not None and self._implies(test, True))
                return launched or self.block(_statements(branch.body), start)
            after_unlaunched |= test is not None and self._implies(test, False)
            branch = branch.orelse if type(branch) is cst.If else None
        return False

    def _checked(self, node: cst.If) -> bool:
        """Whether a test of the ``if`` chain holds a launcher check (those are seen)."""
        found = False
        branch: cst.If | cst.Else | None = node
        while type(branch) is cst.If:
            for sub in walk(branch.test):
                if type(sub) is cst.Comparison and sub in self.checks:
                    self.seen.add(sub)
                    found = True
            branch = branch.orelse
        return found

    def _not_launched_leave(self, node: cst.If) -> bool:
        """Every branch of the chain that a run without a launcher can take leaves the function."""
        after_unlaunched = False
        branch: cst.If | cst.Else | None = node
        while branch is not None:
            test = branch.test if type(branch) is cst.If else None
            only_launched = after_unlaunched or (test is not None and self._implies(test, True))
            if not only_launched and not self._leaves(_statements(branch.body)):
                return False
            after_unlaunched |= test is not None and self._implies(test, False)
            if type(branch) is cst.If and branch.orelse is None:
                return after_unlaunched  # no else: a run without a launcher falls through
            branch = branch.orelse if type(branch) is cst.If else None
        return True

    def _implies(self, test: cst.BaseExpression, launched: bool) -> bool:
        """The test holds only where a launcher was (``launched``), or only where none was."""
        if type(test) is cst.Comparison and test in self.checks:
            return self.checks[test] is launched
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self._implies(test.expression, not launched)
        if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
            return self._implies(test.left, launched) or self._implies(test.right, launched)
        return False

    def _leaves(self, statements: tuple[cst.BaseStatement, ...]) -> bool:
        if not statements:
            return False
        last = statements[-1]
        if type(last) is cst.SimpleStatementLine:
            small = last.body[-1] if last.body else None
            if type(small) in (cst.Return, cst.Raise):
                return True
            call = small.value if isinstance(small, cst.Expr) else None
            return isinstance(call, cst.Call) and self._exits(call.func)
        if type(last) is cst.If:
            branch: cst.If | cst.Else | None = last
            while type(branch) is cst.If:
                if not self._leaves(_statements(branch.body)):
                    return False
                branch = branch.orelse
            return branch is not None and self._leaves(_statements(branch.body))
        return False

    def _exits(self, func: cst.BaseExpression) -> bool:
        if type(func) is cst.Name and func.value in _BUILTIN_EXITS:
            return self.resolve(func) is None  # not rebound by an import
        return self.resolve(func) in _EXITS
