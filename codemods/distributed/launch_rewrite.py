"""Distributed training, how the processes start and meet (XLA601-XLA603, XLA608, XLA609,
XLA614): multi-GPU launches become XLA multi-process launches.

What each construct becomes is decided by the analyses (distributed/facts.py lists them); this
module only writes it:
  * process groups use the "xla" backend and the ``xla://`` init method, which take
    rank and size from the XLA runtime (XLA601);
  * ``mp.spawn`` becomes the target's launcher, a torchrun-style main guard becomes
    ``_mp_fn(index)`` started by it, and an old ``xmp.spawn`` is upgraded (XLA603);
  * checks that a launcher started the process become True, and asserts of them go (XLA602);
  * Hogwild training is reported (XLA608), and so is what is left (XLA609, XLA614).
What each process then does (its rank, its model's wrapper, its data, its reductions) is
parallel_rewrite.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.distributed.edits import entry_from_spawn, joined, keyword_arg, new_value, replaced
from codemods.distributed.launch import PROCESS_GROUP_DROPPED
from codemods.distributed.rules.xla601_xla_process_group import XLA_PROCESS_GROUP
from codemods.distributed.rules.xla602_xla_ranks import XLA_RANKS
from codemods.distributed.rules.xla603_xla_launch import XLA_LAUNCH
from codemods.distributed.rules.xla608_hogwild import HOGWILD
from codemods.distributed.rules.xla609_distributed_manual import DISTRIBUTED_MANUAL
from codemods.distributed.rules.xla614_module_level_distributed import MODULE_LEVEL_DISTRIBUTED
from codemods.engine.nodemap import NodeMap
from codemods.engine.nodes import (
    args_by_position,
    counterpart,
    fold_true,
    is_true,
    quoted_like,
    string_value,
    walk,
    with_comma,
)
from codemods.engine.positions import code_of
from codemods.engine.rewriter import Concern, Context, StatementLineT
from codemods.targets import ENTRY_FUNCTION, XMP, Api

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.facts import Facts

XMP_SPAWN = f"{XMP}.spawn"
TORCH_XLA_LAUNCH = "torch_xla.launch"
XLA_BACKEND = "torch_xla.distributed.xla_backend"


class LaunchRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        self.part = self.facts.distributed
        self.entry_from_spawn = entry_from_spawn(ctx)
        # MASTER_ADDR/MASTER_PORT lines to write before a statement that starts an env:// process group.
        self.env_setup: NodeMap[list[cst.BaseStatement]] = NodeMap()

    # -- process groups (XLA601) ---------------------------------------------------------

    def _process_group(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        group = self.part.process_groups[original]
        named = dict(group.arguments)
        kept = {"backend": group.keep_backend, "init_method": group.keep_init_method}
        rendezvous = self.ctx.target.rendezvous
        if _ported(named, kept, rendezvous, self._runtime_value):
            return updated
        if rendezvous != "xla://":
            return self._env_process_group(original, updated, group.arguments, kept)

        def build() -> cst.Call | None:
            if not self.ctx.imports.require_package(XLA_BACKEND):
                return None
            backend = named.get("backend")
            if kept["backend"] and backend is not None:
                first = cst.Arg(
                    new_value(original, updated, backend.value), keyword=backend.keyword, equal=backend.equal
                )
            else:
                first = cst.Arg(cst.SimpleString('"xla"'))
            init = named.get("init_method")
            init_value = new_value(original, updated, init.value) if kept["init_method"] and init is not None else None
            args = [first, keyword_arg("init_method", init_value or cst.SimpleString('"xla://"'))]
            for name, arg in group.arguments:
                if name in kept or name in PROCESS_GROUP_DROPPED:
                    if not (name in kept and kept[name]):
                        self._forget_removed(original, updated, arg)
                    continue
                args.append(keyword_arg(name, new_value(original, updated, arg.value)))
            return updated.with_changes(args=joined(args))

        fixed = self.ctx.fix(
            XLA_PROCESS_GROUP,
            original,
            '{new}: the "xla" backend; rank and world size come from the XLA runtime (xla://)',
            build,
        )
        return fixed if fixed is not None else updated

    def _env_process_group(
        self, original: cst.Call, updated: cst.Call, arguments: tuple[tuple[str, cst.Arg], ...], kept: dict[str, bool]
    ) -> cst.BaseExpression:
        """torch 1.13 has no xla:// rendezvous: the env:// store (the default) meets at
        MASTER_ADDR/MASTER_PORT, set just before unless the launcher set them, and rank and
        world size come from the XLA runtime."""
        statement = next((n for n in reversed(self.ctx.ancestors) if isinstance(n, cst.SimpleStatementLine)), None)
        if statement is None:
            self.ctx.report(
                XLA_PROCESS_GROUP,
                original,
                f"{self.ctx.code(original.func)}(...) on one line with other code: use "
                f"{self._env_group_text()} and set MASTER_ADDR/MASTER_PORT before it",
            )
            return updated
        named = dict(arguments)

        def build() -> cst.Call | None:
            environ = self.ctx.imports.expression(Api("os", "environ"))
            rank, world = self.ctx.call("global_ordinal"), self.ctx.call("world_size")
            if environ is None or rank is None or world is None or not self.ctx.imports.require_package(XLA_BACKEND):
                return None
            backend = named.get("backend")
            if kept["backend"] and backend is not None:
                args = [
                    cst.Arg(new_value(original, updated, backend.value), keyword=backend.keyword, equal=backend.equal)
                ]
            else:
                args = [cst.Arg(cst.SimpleString('"xla"'))]
            for name, arg in arguments:
                if name in kept and kept[name] and name != "backend":
                    args.append(keyword_arg(name, new_value(original, updated, arg.value)))
                elif name in kept or name in PROCESS_GROUP_DROPPED:
                    self._forget_removed(original, updated, arg)
                else:
                    args.append(keyword_arg(name, new_value(original, updated, arg.value)))
            args += [keyword_arg("rank", rank), keyword_arg("world_size", world)]
            self.env_setup[statement] = [
                cst.parse_statement(f'{code_of(environ)}.setdefault("{key}", "{value}")\n')
                for key, value in (("MASTER_ADDR", "localhost"), ("MASTER_PORT", "12355"))
            ]
            return updated.with_changes(args=joined(args))

        fixed = self.ctx.fix(
            XLA_PROCESS_GROUP,
            original,
            '{new}: the "xla" backend, rank and world size from the XLA runtime; torch 1.13\'s env:// store meets '
            "at MASTER_ADDR/MASTER_PORT, set before unless the launcher set them (on several hosts: the first "
            "host's address)",
            build,
        )
        return fixed if fixed is not None else updated

    def _runtime_value(self, arg: cst.Arg, concept: str) -> bool:
        """``arg`` is the target's runtime call for ``concept`` (``rank=xm.get_ordinal()``)."""
        value = arg.value
        return (
            isinstance(value, cst.Call)
            and not value.args
            and self.ctx.resolve(value.func) == self.ctx.target.api(concept).qualified_name
        )

    def _env_group_text(self) -> str:
        return (
            f'dist.init_process_group("xla", rank={self.ctx.target.api("global_ordinal").spelled}(), '
            f"world_size={self.ctx.target.api('world_size').spelled}())"
        )

    def _backend_value(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        value = self.part.backend_values[original]
        if value == "xla://":
            value = self.ctx.target.rendezvous
        if string_value(original) == value:
            return updated
        template = next((n for n in walk(original) if isinstance(n, cst.SimpleString)), None)
        return replaced(
            self.ctx,
            XLA_PROCESS_GROUP,
            original,
            updated,
            f"the process group's XLA {'backend' if value == 'xla' else 'init method'}",
            lambda: quoted_like(template, value) if template is not None else cst.SimpleString(f'"{value}"'),
        )

    def _forget_removed(self, original: cst.Call, updated: cst.Call, arg: cst.Arg) -> None:
        """``arg`` goes from the call (with the findings inside it), unless it went before."""
        new = counterpart(original, updated, arg)
        if new is not None:
            self.ctx.forget_removed(arg, new)

    # -- checks that a launcher started the process (XLA602) -------------------------------------

    def _launched_check(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        launched = self.part.launched_checks[original]
        return replaced(
            self.ctx,
            XLA_RANKS,
            original,
            updated,
            "every process is started by the XLA launcher",
            lambda: cst.Name(str(launched)),
        )

    # -- launch and entry point (XLA603) ----------------------------------------------------------

    def _spawn(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        spawn = self.part.spawns[original]
        if original in self.part.guard_spawns and self.entry_from_spawn:
            return self._worker_call(original, updated, spawn.fn, spawn.args)
        if not spawn.joins:
            self.ctx.report(
                DISTRIBUTED_MANUAL,
                original,
                "`join=False`: the XLA launcher always waits for its processes; "
                "start them with torch_xla.launch and wait where the script joined them",
            )
            return updated
        fixed = self.ctx.fix(
            XLA_LAUNCH,
            original,
            f"{self.ctx.code(original.func)}(...) -> {{new}}: the XLA launcher starts one process per device "
            "and passes each its index (nprocs is not needed)",
            lambda: self._launch(original, updated, spawn.fn, spawn.args, spawn.start_method),
            result=lambda node: node.func if isinstance(node, cst.Call) else node,
        )
        return fixed if fixed is not None else updated

    def _worker_call(
        self, original: cst.Call, updated: cst.Call, fn: cst.BaseExpression, args: cst.BaseExpression | None
    ) -> cst.BaseExpression:
        """In ``_mp_fn(index)``, which the platform runs in every process: the worker itself."""

        def build() -> cst.Call:
            new_args = [cst.Arg(cst.Name("index"))]
            values = new_value(original, updated, args) if args is not None else None
            if isinstance(values, cst.Tuple):
                new_args += [
                    cst.Arg(element.value, star="*" if isinstance(element, cst.StarredElement) else "")
                    for element in values.elements
                ]
            elif values is not None:
                new_args.append(cst.Arg(values, star="*"))
            self.ctx.imports.discard(original.func)
            for arg in original.args:
                if arg.value is not fn and arg.value is not args:
                    self._forget_removed(original, updated, arg)
            return cst.Call(func=new_value(original, updated, fn), args=joined(new_args))

        fixed = self.ctx.fix(
            XLA_LAUNCH,
            original,
            f"{self.ctx.code(original.func)}(...) -> {{new}}: in `{ENTRY_FUNCTION}(index)`, which the XLA runtime "
            "calls in each of its processes",
            build,
        )
        return fixed if fixed is not None else updated

    def _launch(
        self,
        original: cst.Call,
        updated: cst.Call,
        fn: cst.BaseExpression,
        args: cst.BaseExpression | None,
        start_method: cst.BaseExpression | None,
    ) -> cst.Call | None:
        """``launch(fn, args=..., start_method=...)`` from what these nodes became."""
        func = self.ctx.imports.expression(self.ctx.target.api("launch"))
        if func is None:
            return None
        new_args = [cst.Arg(new_value(original, updated, fn))]
        if args is not None:
            new_args.append(keyword_arg("args", new_value(original, updated, args)))
        if start_method is not None:
            new_args.append(keyword_arg("start_method", new_value(original, updated, start_method)))
        self.ctx.imports.discard(original.func)
        for arg in original.args:
            if arg.value not in (fn, args, start_method):
                self._forget_removed(original, updated, arg)
        return updated.with_changes(func=func, args=joined(new_args))

    def _xmp_spawn(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """An old ``xmp.spawn(fn, args=..., nprocs=N)`` on the 2.9 target."""
        fn = original.args[0].value if original.args and original.args[0].keyword is None else None
        if fn is None:
            return updated
        positional = [a.value for a in original.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in original.args if a.keyword is not None}
        args = keywords.get("args", positional[1] if len(positional) > 1 else None)
        start = keywords.get("start_method", positional[4] if len(positional) > 4 else None)
        fixed = self.ctx.fix(
            XLA_LAUNCH,
            original,
            f"{self.ctx.code(original.func)}(...) -> {{new}}: torch_xla 2.9's launcher (nprocs is not needed)",
            lambda: self._launch(original, updated, fn, args, start),
            result=lambda node: node.func if isinstance(node, cst.Call) else node,
        )
        return fixed if fixed is not None else updated

    def _torch_xla_launch(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``torch_xla.launch(fn, args=...)`` (torch_xla 2.1 on) on the sagemaker target: torch_xla
        1.13 starts the processes with ``xmp.spawn(fn, args=...)``, the same call without
        ``debug_single_process``."""
        named = dict(args_by_position(original, ("fn", "args", "start_method", "debug_single_process")))
        if "fn" not in named or any(a.star for a in original.args):
            return updated
        args, start = named.get("args"), named.get("start_method")
        debug = named.get("debug_single_process")
        if self.ctx.target.runtime_calls_entry and self.facts.entry.mp_fn is None:
            self.ctx.report(
                XLA_LAUNCH,
                original,
                f"SageMaker's pytorchxla runtime does not run this: it imports the script and calls "
                f"`{ENTRY_FUNCTION}(index)` in each process; define `def {ENTRY_FUNCTION}(index):` that calls "
                f"{self.ctx.code(named['fn'].value)}(index, ...) as the launcher would",
            )
        note = (
            f" (without {self.ctx.code(debug).rstrip(',').strip()}: for one process, pass nprocs=1)"
            if debug is not None
            else ""
        )
        fixed = self.ctx.fix(
            XLA_LAUNCH,
            original,
            f"{self.ctx.code(original.func)}(...) -> {{new}}: torch_xla {self.ctx.target.torch_xla_version}'s "
            f"launcher{note}",
            lambda: self._launch(
                original, updated, named["fn"].value, args.value if args else None, start.value if start else None
            ),
            result=lambda node: node.func if isinstance(node, cst.Call) else node,
        )
        return fixed if fixed is not None else updated

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        """A main guard whose code runs in every process (torchrun style) becomes
        ``_mp_fn(index)``, started by the target's launcher."""
        part = self.part
        spawning = original is part.spawn_guard and self.entry_from_spawn
        if not (original is part.entry_guard or spawning) or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        shared = self.part.guard_globals

        def build() -> cst.FlattenSentinel[cst.BaseStatement] | None:
            launch = self.ctx.call(
                "launch", [with_comma(cst.Arg(cst.Name(ENTRY_FUNCTION))), keyword_arg("args", cst.Tuple([]))]
            )
            if launch is None:
                return None
            body = list(updated.body.body)
            if shared:
                declaration = cst.SimpleStatementLine([cst.Global([cst.NameItem(cst.Name(n)) for n in shared])])
                body = [declaration, *body]
            function = cst.FunctionDef(
                name=cst.Name(ENTRY_FUNCTION),
                params=cst.Parameters([cst.Param(cst.Name("index"))]),
                body=updated.body.with_changes(body=body, footer=()),
                leading_lines=updated.leading_lines,
            )
            # Comment lines that ended the guard's block end the file's code still.
            guard = updated.with_changes(
                body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Expr(launch)])], footer=updated.body.footer),  # type: ignore[attr-defined]  # updated is an If: its body is an IndentedBlock, typed BaseSuite
                leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
            )
            return cst.FlattenSentinel([function, guard])

        fixed = self.ctx.fix(  # type: ignore[misc]  # mypy cannot infer fix()'s ReplacementT from a build returning a FlattenSentinel
            XLA_LAUNCH,
            original,
            f"the main guard's code -> def {ENTRY_FUNCTION}(index): it runs in every process, started by "
            f"{self.ctx.target.api('launch').qualified_name}(...)",
            build,
            result=lambda node: node.nodes[0] if isinstance(node, cst.FlattenSentinel) else node,
        )
        return fixed if fixed is not None else updated

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        setup = self.env_setup.get(original)
        if setup:
            first = setup[0].with_changes(leading_lines=updated.leading_lines)
            return cst.FlattenSentinel([first, *setup[1:], updated.with_changes(leading_lines=())])
        return self._without_launch_asserts(original, updated)

    def _without_launch_asserts(self, original: StatementLineT, updated: StatementLineT) -> StatementLineT:
        """``assert "LOCAL_RANK" in os.environ, msg``: its test became True (every process is
        started by the XLA launcher), so the statement goes (a block left empty keeps a
        ``pass``: Context.drop_statement)."""
        checks = self.part.launched_checks
        if not checks:
            return updated
        to_remove = {
            id(new)
            for old, new in zip(original.body, updated.body)
            if isinstance(old, cst.Assert)
            and isinstance(new, cst.Assert)
            and any(n in checks for n in walk(old.test) if type(n) is cst.Comparison)
            and fold_true(new.test, is_true) is True
        }
        if not to_remove:
            return updated
        for old, new in zip(original.body, updated.body):
            if id(new) not in to_remove:
                continue
            self.ctx.forget_fixes_inside(old)
            statement = old.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            if (
                self.ctx.fix(
                    XLA_RANKS,
                    old,
                    f"removed `{self.ctx.code(statement)}`: every process is started by the XLA launcher",
                    lambda: new,  # noqa: B023 - fix() calls it at once
                )
                is None
            ):
                to_remove.discard(id(new))
            else:
                self.ctx.forget_removed(old, new)
        kept: list[cst.BaseSmallStatement] = [new for new in updated.body if id(new) not in to_remove]
        if kept:
            return updated.with_changes(body=[*kept[:-1], kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
        if isinstance(updated, cst.SimpleStatementSuite):
            return updated.with_changes(body=[cst.Pass()])
        self.ctx.drop_statement(updated)
        return updated

    leave_SimpleStatementSuite = _without_launch_asserts

    # -- dispatch ------------------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        part = self.part
        if original in part.backend_values:
            return self._backend_value(original, updated)
        if original in part.process_groups:
            return self._process_group(original, updated)
        if original in part.spawns:
            return self._spawn(original, updated)
        if original is part.hogwild:
            self.ctx.report(
                HOGWILD,
                original,
                "Hogwild training (a model in shared memory, updated by several "
                "processes at once) cannot run on XLA: device tensors are not shared between processes; "
                "train in one process, or with DDP",
            )
        elif original is part.own_launcher:
            self.ctx.report(
                DISTRIBUTED_MANUAL,
                original,
                f"`{self.ctx.code(original.func)}(...)` starts this script's workers with rank variables in "
                "their environment, and the script starts no process group: a launcher of its own, left "
                + self.ctx.target.advice(f"as it is (no torch_xla.launch). {apis.OWN_LAUNCHER_ADVICE}"),
            )
        elif original in part.external_launch_checks:
            self.ctx.report(
                DISTRIBUTED_MANUAL,
                original,
                f"{part.external_launch_checks[original]} starts the process group only when a launcher's "
                "variables (RANK, WORLD_SIZE, LOCAL_RANK) are set, and that check stays there: "
                + self.ctx.target.advice(
                    "torch_xla.launch sets none of them, so every process would train alone on all the "
                    "data (no process group, no DDP, no sampler). Replace the check there with True (every "
                    "process is started by the XLA launcher), or start this script with torchrun"
                ),
            )
        elif original in part.raw_env_reads:
            self._raw_env_read(original)
        elif self.ctx.target.api("launch").qualified_name != XMP_SPAWN and self.ctx.resolve(original.func) == XMP_SPAWN:
            return self._xmp_spawn(original, updated)
        elif (
            self.ctx.target.api("launch").qualified_name != TORCH_XLA_LAUNCH
            and self.ctx.resolve(original.func) == TORCH_XLA_LAUNCH
        ):
            return self._torch_xla_launch(original, updated)
        return updated

    def _raw_env_read(self, original: cst.CSTNode) -> None:
        self.ctx.report(
            DISTRIBUTED_MANUAL,
            original,
            f"`{self.part.raw_env_reads[original]}` read from the environment: the XLA "
            "launcher does not set it; use the XLA runtime's rank and size (as a number, where this "
            "string is converted)",
        )

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if original in self.part.raw_env_reads:
            self._raw_env_read(original)
        return updated

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        return self._launched_check(original, updated) if original in self.part.launched_checks else updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.BaseExpression:
        return self._backend_value(original, updated) if original in self.part.backend_values else updated

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        return self._backend_value(original, updated) if original in self.part.backend_values else updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self.part.module_level_anchor is not None and self.part.module_level_checked:
            self.ctx.report(
                MODULE_LEVEL_DISTRIBUTED,
                self.part.module_level_anchor,
                "distributed training at module level stays under its launcher check: `python` runs it on "
                "one XLA device, and `torchrun --nproc-per-node=N` one process per device"
                + self.ctx.target.advice(apis.XLA_INIT_METHOD_NOTE),
            )
        elif self.part.module_level_anchor is not None:
            self.ctx.report(
                DISTRIBUTED_MANUAL,
                self.part.module_level_anchor,
                "distributed training at module level: move it "
                f"into a function, call it from `def {ENTRY_FUNCTION}(index):` and start that with "
                "the XLA launcher",
            )
        return updated

    def reference(self, original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        """A call of a multi-GPU API that none of the above handles is reported."""
        parent = self.ctx.parent()
        if qualified not in apis.DISTRIBUTED or not isinstance(parent, cst.Call) or parent.func is not original:
            return updated
        part = self.part
        handled = (part.process_groups, part.spawns, part.ddp_calls, part.data_parallel)
        if part.hogwild is None and not any(parent in table for table in handled):
            self.ctx.report(
                DISTRIBUTED_MANUAL,
                parent,
                f"`{self.ctx.code(parent.func)}` is not ported here: on XLA use the "
                "xla process group, the XLA launcher and one process per device",
            )
        return updated


def _ported(
    named: dict[str, cst.Arg], kept: dict[str, bool], rendezvous: str, runtime_value: Callable[[cst.Arg, str], bool]
) -> bool:
    """The process group already is the XLA one: backend "xla" and init method "xla://"
    (as literals, or variables that hold them), nothing that the xla:// method takes; for
    env:// (torch 1.13), no other init method, and rank and world size from the runtime."""
    backend, init = named.get("backend"), named.get("init_method")
    if backend is None or not (kept["backend"] or string_value(backend.value) == "xla"):
        return False
    if rendezvous != "xla://":
        rank, world = named.get("rank"), named.get("world_size")
        return (
            (init is None or kept["init_method"] or string_value(init.value) == rendezvous)
            and rank is not None
            and runtime_value(rank, "global_ordinal")
            and world is not None
            and runtime_value(world, "world_size")
        )
    return (
        init is not None
        and (kept["init_method"] or string_value(init.value) == "xla://")
        and not PROCESS_GROUP_DROPPED & set(named)
    )
