"""Moves that run only under a CUDA check that stays (XLA119): after the port the move goes to the
XLA device, but the check around it is False on an XLA host, so it never runs there and what it
moves (the model, a batch) stays on the CPU.  The check may be in the ``if`` around the move
(``if self.device.type == "cuda": x = x.cuda()``), held by a name or returned by a property or a
function of the file (``if self.cuda_enabled:``, where ``cuda_enabled`` returns
``self.device.type == "cuda"``), or handed as a flag to a function that moves only if its
parameter is true (``prepare_sample(samples, cuda_enabled=self.cuda_enabled)``, where
``prepare_sample`` moves ``if cuda_enabled:``; of the file, or of another module of the project by
its summary's ``flag_moves``).  A move is ``.cuda()``, ``.to(device)`` or a call of a function that
moves (the device facts' ``choosers``, or a project module's ``devices``).  The checks whose
guarded code moves nothing (cuDNN flags, CUDA seeding, pinned memory) stay XLA105's warnings."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device.analysis import DeviceAnalysis
from codemods.device.facts import negated_check
from codemods.device.unseen_flags import cuda_env_read, env_guard, env_tainted, handed_flag, handed_message
from codemods.engine.nodes import (
    arg_value,
    args_by_position,
    call_args,
    dotted,
    method_name,
    receiver,
    string_value,
    walk,
)
from codemods.engine.walk import Analysis, Walk
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.facts import Facts

_CODE = cst.Module([])
_NEVER_RUNS = "on XLA that move never runs, and what it moves stays on the CPU"
_DDP_PARAMETERS = ("module", "device_ids", "output_device")
_INIT_PROCESS_GROUP = "torch.distributed.init_process_group"


def _code(node: cst.CSTNode) -> str:
    return " ".join(_CODE.code_for_node(node).split())


@dataclass(frozen=True, repr=False)
class _Move:
    node: cst.Call
    scope: str
    # The conditions around it that it runs under when they are true (``if``'s body, a
    # conditional expression's value), innermost last.
    conds: tuple[cst.If | cst.IfExp, ...]
    elses: tuple[cst.If | cst.IfExp, ...]  # those it runs under when they are false
    helper: str | None = None  # the function it calls, which may move (decided at the end)
    project: bool = False


class GuardedMoveAnalysis(Analysis):
    facts: Facts

    name = "guarded_moves"
    reads = ("imports", "device", "project")
    conclude_reads = ("device", "project", "flag_choices", "device_values")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.device
        self.moves: list[_Move] = []
        self.returns: dict[str, list[cst.BaseExpression]] = defaultdict(list)  # function -> what it returns
        self.assigned: dict[tuple[str, str], list[cst.BaseExpression]] = defaultdict(list)  # (scope, name) -> values
        self.params: dict[str, list[str]] = {}  # function -> positional parameters, without self
        self.keyword_only: dict[str, list[str]] = {}
        self.calls: list[tuple[cst.Call, str, str]] = []  # (call, callee as written, scope)
        self.kept: set[cst.CSTNode] = set()
        # DistributedDataParallel constructions under a condition: (call, scope, conditions); and
        # the nodes of their device arguments (``device_ids=[dist_util.dev()]`` moves nothing).
        self.ddp_wraps: list[tuple[cst.Call, str, tuple[cst.If | cst.IfExp, ...]]] = []
        self.ddp_device_args: set[int] = set()
        self.ddp_elses: set[int] = set()  # conditions with a DDP wrap in their ``else``: wrapped either way
        # Process-group starts under a condition (the port makes them start the xla group), and
        # the conditions with a start in their ``else`` (a group starts either way).
        self.group_starts: list[tuple[cst.Call, str, tuple[cst.If | cst.IfExp, ...]]] = []
        self.group_elses: set[int] = set()
        self.env_reads: set[int] = set()  # reads of CUDA_VISIBLE_DEVICES (device/unseen_flags.py)
        self.switches: set[str] = set()  # the file's command-line switches, without dashes

    # -- walk -------------------------------------------------------------------------------

    def _scope(self) -> str:
        return self.walk.qualname if self.walk.enclosing_function is not None else ""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        if params and params[0] in ("self", "cls") and self.walk.class_depth:
            params = params[1:]
        self.params[self.walk.qualname] = params
        self.keyword_only[self.walk.qualname] = [p.name.value for p in node.params.kwonly_params]

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and self.walk.enclosing_function is not None:
            self.returns[self.walk.qualname].append(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if (name := dotted(target.target)) is not None:
                scope = "" if "." in name else self._scope()
                self.assigned[(scope, name)].append(node.value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if cuda_env_read(node, self.walk.resolve):
            self.env_reads.add(id(node))

    def visit_Call(self, node: cst.Call) -> None:
        if cuda_env_read(node, self.walk.resolve):
            self.env_reads.add(id(node))
        if method_name(node) == "add_argument":
            self.switches.update(s.lstrip("-") for a in node.args if (s := string_value(a.value)) is not None)
        if id(node) in self.ddp_device_args:
            return
        if self.walk.callee in apis.DDP_CLASSES:
            self.ddp_device_args.update(
                id(sub)
                for name, arg in args_by_position(node, _DDP_PARAMETERS)
                if name in ("device_ids", "output_device")
                for sub in walk(arg.value)
            )
            conds, elses = self._conds(node)
            self.ddp_elses.update(id(cond) for cond in elses)
            if conds:
                self.ddp_wraps.append((node, self._scope(), conds))
            return
        if self.walk.callee == _INIT_PROCESS_GROUP:
            conds, elses = self._conds(node)
            self.group_elses.update(id(cond) for cond in elses)
            if conds:
                self.group_starts.append((node, self._scope(), conds))
            return
        method = method_name(node)
        if (method == "cuda" and receiver(node) is not None) or (method == "to" and self._to_a_device(node)):
            conds, elses = self._conds(node)
            if conds or elses:
                self.moves.append(_Move(node, self._scope(), conds, elses))
            return
        func = dotted(node.func)
        if func is None:
            return
        project = func.split(".")[0] in self.facts.imports.project_names
        if self.walk.callee is not None and not project:
            return
        self.calls.append((node, func, self._scope()))
        conds, elses = self._conds(node)
        if conds or elses:  # a call of a function that may move (decided at the end)
            self.moves.append(_Move(node, self._scope(), conds, elses, func, project))

    def _to_a_device(self, node: cst.Call) -> bool:
        device = arg_value(node, 0, "device")
        if device is None or string_value(device) == "cpu":
            return False
        if string_value(device) is not None:
            return True
        if type(device) is cst.Call and self.walk.resolve(device.func) == "torch.device":
            return True
        return self.walk.analysis(DeviceAnalysis).names_a_device(device)

    def _conds(self, node: cst.CSTNode) -> tuple[tuple[cst.If | cst.IfExp, ...], tuple[cst.If | cst.IfExp, ...]]:
        """The conditions around ``node`` it runs under when they are true, and when they are false."""
        conds = self.walk.conds
        if not conds:
            return (), ()
        parents = self.walk.parents
        chain: list[int] = []
        key: int | None = id(node)
        while key is not None:
            chain.append(key)
            key = parents.get(key)
        found: list[cst.If | cst.IfExp] = []
        elses: list[cst.If | cst.IfExp] = []
        for cond in conds:
            if type(cond) is not cst.If and type(cond) is not cst.IfExp:
                continue
            index = chain.index(id(cond)) if id(cond) in chain else -1
            child = chain[index - 1] if index > 0 else None
            if child is not None and child == id(cond.body):
                found.append(cond)
            elif child is not None and child == id(cond.orelse):
                elses.append(cond)
        return tuple(found), tuple(elses)

    def _kept_check_around(
        self, conds: tuple[cst.If | cst.IfExp, ...], scope: str, elses: set[int]
    ) -> cst.CSTNode | None:
        """The innermost of ``conds`` (the conditions around a call) that tests a CUDA check the
        port keeps; None if there is none, or if a condition also has such a call in its ``else``
        (the call runs either way)."""
        if any(id(cond) in elses for cond in conds):
            return None
        return next((c for cond in reversed(conds) if (c := self._check_in(cond.test, scope)) is not None), None)

    # -- results ----------------------------------------------------------------------------

    def conclude(self) -> None:
        device = self.part
        ported = (device.type_checks, device.tensor_checks)
        self.kept = {
            *device.kept_availability_checks,
            *(c for c in device.cuda_checks if not any(c in checks for checks in ported) and not negated_check(c)),
        }
        if not self.kept and not self.moves and not self.calls:
            return
        for call, scope, conds in self.ddp_wraps:
            if (check := self._kept_check_around(conds, scope, self.ddp_elses)) is not None:
                device.guarded_ddp.setdefault(
                    call,
                    (
                        check,
                        f"`{_code(call.func)}` wraps the model only under `{_code(check)}`, which stays and is False on "
                        "an XLA host after the port: there the other path runs, without DDP, so nothing all-reduces the "
                        "gradients across processes (a file that wraps its model in DDP keeps its optimizer steps "
                        "plain) and with more than one device each process trains its own replica; drop the check (or "
                        "make it hold on XLA) so that DDP wraps the model there",
                    ),
                )
        for call, scope, conds in self.group_starts:
            if (check := self._kept_check_around(conds, scope, self.group_elses)) is not None:
                device.guarded_groups.setdefault(
                    check,
                    f"`{_code(check)}` stays and is False on an XLA host after the port, and the process group "
                    f"starts only under it (`{_code(call.func)}(...)`): there no process group starts, "
                    'so a DistributedDataParallel then raises ValueError ("Default process group has not been '
                    'initialized") and no collective reduces anything across the processes; drop the check (or '
                    "make it hold on XLA) so that the xla process group starts there",
                )
        project = self.walk.analysis(ProjectAnalysis)
        moves = [
            move
            for move in self.moves
            if (move.helper is None or self._moves(move.helper, move.scope, move.project, project))
            and move.node not in self.part.location_moves
        ]
        # ``if device_type == "cuda": x = x.pin_memory().to(device) else: x = x.to(device)``: moved either way
        both_ways = {id(cond) for move in moves for cond in move.elses}
        for move in moves:
            for cond in reversed(move.conds):
                if id(cond) in both_ways:
                    break
                if self.kept and (check := self._check_in(cond.test, move.scope)) is not None:
                    if _of_self(check, residency=True) and _of_self(move.node.func):
                        self.part.own_swaps.add(check)
                    else:
                        self.part.guarded_moves.setdefault(check, self._message(check, move, cond))
                    break
                if type(cond) is cst.If and (param := self._param(cond.test, move.scope)) is not None:
                    device.flag_moves.add(param)
        self._unseen_flags(moves, both_ways)
        self._handed_flags(project)

    def _unseen_flags(self, moves: list[_Move], both_ways: set[int]) -> None:
        """Moves under a flag read from ``CUDA_VISIBLE_DEVICES``, or under a parameter's flag that a
        file this run does not convert sets beside a CUDA check (device/unseen_flags.py)."""
        tainted = env_tainted(self.assigned, self.env_reads) if self.env_reads else {}
        context = self.facts.project.context
        alone: bool | None = None  # no file of the run imports this one (asked once)
        for move in moves:
            for cond in reversed(move.conds):
                if id(cond) in both_ways or cond.test in self.part.guarded_moves:
                    break
                if self.env_reads and (
                    found := env_guard(
                        cond.test,
                        move.scope,
                        self.assigned,
                        self.env_reads,
                        tainted,
                        move.node,
                        negated=_in_else(cond, move.node),
                    )
                ):
                    self.part.guarded_moves[cond.test] = found
                    break
                flag = handed_flag(cond.test, move.scope, self.params, self.keyword_only, self.assigned, self.switches)
                if flag is None:
                    continue
                if alone is None:
                    alone = context.converted() and context.launched_importer(False) == ("", None)
                setter = context.cuda_checked(flag[1], handed=True) if alone else None
                if setter is not None:
                    self.part.guarded_moves[cond.test] = handed_message(flag[0], move.node, setter)
                    break

    def _moves(self, helper: str, scope: str, in_project: bool, project: ProjectAnalysis) -> bool:
        if in_project:
            found = project.origin(helper)
            return found is not None and found.summary is not None and found.summary.chooses_device(found.name)
        return self._local(helper, scope) in self.part.choosers

    def _local(self, func: str, scope: str) -> str:
        """The qualified name of the function of the file ``func`` calls from ``scope``:
        ``helper``, ``self.helper`` (a method of the class ``scope`` is in)."""
        if func.startswith("self.") and "." in scope:
            return f"{scope.split('.')[0]}.{func.removeprefix('self.')}"
        return func

    def _flag_of(self, func: str, scope: str, project: ProjectAnalysis) -> Iterator[tuple[int, str]]:
        """The parameters of the function ``func`` (called from ``scope``) that it moves only if true."""
        local = self._local(func, scope)
        for function, index, param in sorted(self.part.flag_moves):
            if function in (local, f"{local}.__init__"):
                yield index, param
        found = project.origin(func) if func.split(".")[0] in self.facts.imports.project_names else None
        if found is not None and found.summary is not None:
            yield from found.summary.flag_moves_of(found.name)

    def _choice_of(self, func: str, scope: str, project: ProjectAnalysis) -> Iterator[tuple[int, str]]:
        """The parameters of the function ``func`` (called from ``scope``) that it picks the device with."""
        local = self._local(func, scope)
        for function, index, param in sorted(self.part.flag_choices):
            if function in (local, f"{local}.__init__"):
                yield index, param
        found = project.origin(func) if func.split(".")[0] in self.facts.imports.project_names else None
        if found is not None and found.summary is not None:
            yield from found.summary.flag_choices_of(found.name)

    def _handed_flags(self, project: ProjectAnalysis) -> None:
        """A flag handed to a function that moves only if it is true: a parameter of the caller
        handed on makes the caller one such function too; a CUDA check handed is XLA119's."""
        grew = True
        while grew:
            grew = False
            for call, func, scope in self.calls:
                for index, param in list(self._flag_of(func, scope, project)):
                    handed = _argument(call, index, param)
                    if handed is None:
                        continue
                    if (mine := self._param(handed, scope)) is not None and mine not in self.part.flag_moves:
                        self.part.flag_moves.add(mine)
                        grew = True
        if not self.kept:
            return
        for call, func, scope in self.calls:
            for index, param in self._flag_of(func, scope, project):
                handed = _argument(call, index, param)
                if handed is not None and (check := self._check_in(handed, scope)) is not None:
                    self.part.guarded_moves.setdefault(
                        check,
                        f"{self._claim(check)}, and it is handed to `{func}` as `{param}` (`{_short(call, func)}`), which "
                        f"moves to the device only if `{param}` is true: {_NEVER_RUNS}; {self._advice(check)}",
                    )
        for call, func, scope in self.calls:
            for index, param in self._choice_of(func, scope, project):
                handed = _argument(call, index, param)
                if handed is not None and (check := self._check_in(handed, scope)) is not None:
                    self.part.guarded_moves.setdefault(
                        check,
                        f"{self._claim(check)}, and it is handed to `{func}` as `{param}` (`{_short(call, func)}`), which "
                        f"picks the device with `{param}` (the XLA device after the port where it is true): on XLA it "
                        f"is False, so the device picked there is the CPU and what moves to it stays there; "
                        f"{self._advice(check)}",
                    )
        for call, func, scope in self.calls:
            if "." not in func or self._followed(func, scope, project):
                continue
            for keyword, arg in call_args(call)[1].items():
                check = self._check_in(arg.value, scope)
                if check is not None and check not in self.part.guarded_moves:
                    self.part.unfollowed_flags.setdefault(
                        check,
                        (
                            func.rsplit(".", 1)[-1],
                            keyword,
                            f"{self._claim(check)}, and it is handed as `{keyword}` to `{func}` "
                            f"(`{func}(..., {keyword}={_code(arg.value)})`), which this file does not show",
                            f"{_NEVER_RUNS}; {self._advice(check)}",
                        ),
                    )

    def _followed(self, func: str, scope: str, project: ProjectAnalysis) -> bool:
        """The tool knows what calling ``func`` runs: a function or class of the file, or of a
        module of the project."""
        local = self._local(func, scope)
        if local in self.params or f"{local}.__init__" in self.params:
            return True
        return func.split(".")[0] in self.facts.imports.project_names and project.origin(func) is not None

    def _param(self, test: cst.BaseExpression, scope: str) -> tuple[str, int, str] | None:
        """``test`` is a parameter of the function ``scope``: (function, index, parameter)."""
        if type(test) is not cst.Name or not scope:
            return None
        if test.value in self.params.get(scope, []):
            return scope, self.params[scope].index(test.value), test.value
        if test.value in self.keyword_only.get(scope, []):
            return scope, -1, test.value
        return None

    def _check_in(self, test: cst.BaseExpression, scope: str, seen: frozenset[str] = frozenset()) -> cst.CSTNode | None:
        """The CUDA check that stays which makes ``test`` (in ``scope``) False on XLA: the test,
        a side of an ``and``, a name assigned only such checks, or a property or function of the
        file that returns only such checks."""
        if test in self.kept:
            return test
        if type(test) is cst.Comparison and self.part.is_available_call(test):  # shutil.which("nvidia-smi") is not None
            return self._check_in(test.left, scope, seen)
        if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
            return self._check_in(test.left, scope, seen) or self._check_in(test.right, scope, seen)
        name = dotted(test.func) if type(test) is cst.Call and not test.args else dotted(test)
        if name is None or name in seen:
            return None
        seen = seen | {name}
        values = self.assigned.get(("" if "." in name else scope, name)) or self.assigned.get(("", name), [])
        if not values:
            values = self.returns.get(self._local(name, scope), [])
        checks = [self._check_in(value, scope, seen) for value in values]
        return checks[0] if checks and all(c is not None for c in checks) else None

    def _claim(self, check: cst.CSTNode) -> str:
        unproven = self.part.unproven_checks.get(check)
        if unproven is None:
            return f"`{_code(check)}` is False on an XLA host after the port"
        value = self.part.unproven_values.get(unproven)
        shown = "" if value is None else f": `{unproven} = {value}`"
        return (
            f"`{_code(check)}` is False on an XLA host only if `{unproven}` is the XLA device there (this file "
            f"does not show what it holds{shown})"
        )

    def _advice(self, check: cst.CSTNode) -> str:
        if type(check) is cst.Comparison:
            return "make the check hold for the XLA device (compare with 'xla' too), or move on every path"
        return "drop the check (or make it hold on XLA) so that the move runs there, or move on every path"

    def _message(self, check: cst.CSTNode, move: _Move, cond: cst.If | cst.IfExp) -> str:
        where = "" if cond.test is check else f" (`{_code(cond.test)}`)"
        return (
            f"{self._claim(check)}, and `{_code(move.node)}` moves to the device only under it{where}: "
            f"{_NEVER_RUNS}; {self._advice(check)}"
        )


def _of_self(node: cst.CSTNode, residency: bool = False) -> bool:
    """``node`` is reached from ``self``: a move of the module's own parts (``self.one_unet_in_gpu(unet)``,
    ``self.unets.cuda``), or with ``residency``, where the module's own parameters are
    (``next(self.parameters()).is_cuda``, ``self.weight.is_cuda``). A module that swaps its parts between
    devices only where its parameters already are on CUDA skips the swap on XLA, its parameters already
    on the XLA device (or, never moved, on the CPU, where the original skips it too): nothing stays behind."""
    if residency:
        if type(node) is not cst.Attribute or node.attr.value != "is_cuda":
            return False
        node = node.value
    while True:
        if type(node) is cst.Name:
            return node.value == "self"
        if type(node) is cst.Attribute:
            node = node.value
        elif type(node) is cst.Call:
            if dotted(node.func) in ("next", "iter") and node.args:
                node = node.args[0].value
            else:
                node = node.func
        else:
            return False


def _short(call: cst.Call, func: str) -> str:
    code = _code(call)
    return code if len(code) <= 80 else f"{func}(...)"


def _argument(call: cst.Call, index: int, param: str) -> cst.BaseExpression | None:
    positional, keywords = call_args(call)
    if param in keywords:
        return keywords[param].value
    plain = [a for a in positional if not a.star]
    return plain[index].value if 0 <= index < len(plain) and len(plain) == len(positional) else None


def _in_else(cond: cst.CSTNode, node: cst.CSTNode) -> bool:
    """``node`` runs in the ``else`` of ``cond`` (an ``if`` or an ``if ... else`` expression)."""
    orelse = getattr(cond, "orelse", None)
    return orelse is not None and any(sub is node for sub in walk(orelse))
