"""Distributed training (XLA601-XLA609): multi-GPU scripts become XLA multi-process scripts.

What each construct becomes is decided by the analyses (distributed/facts.py lists them); this
module only writes it:
  * process groups use the "xla" backend and the ``xla://`` init method, which take
    rank and size from the XLA runtime (XLA601);
  * ranks and sizes are read from the runtime in the launched processes (XLA602);
  * ``mp.spawn`` becomes the target's launcher, a torchrun-style main guard becomes
    ``_mp_fn(index)`` started by it, and an old ``xmp.spawn`` is upgraded (XLA603);
  * DistributedDataParallel stays, without ``device_ids``/``output_device``: on the
    ``xla`` backend it all-reduces gradients itself, so the optimizer step stays plain
    and gradients are reduced exactly once (XLA604);
  * ``nn.DataParallel`` goes, with the ``.module`` accesses of what it wrapped (XLA605);
  * training data gets a DistributedSampler from the runtime's rank and size (XLA606);
  * without DDP, mixed-precision steps all-reduce their gradients (XLA607);
  * Hogwild training is reported (XLA608), and so is what is left (XLA609);
  * a print that only the master process runs becomes ``xm.master_print`` (XLA610);
  * an all-reduce with ``ReduceOp.AVG``, which the xla process group refuses, becomes
    ``xm.all_reduce("sum", [t], scale=1.0 / world size)``; other uses are reported (XLA615).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.distributed.entry import ENTRY_FUNCTION
from codemods.distributed.facts import SamplerPlan
from codemods.distributed.launch import PROCESS_GROUP_DROPPED
from codemods.distributed.rules.xla601_xla_process_group import XLA_PROCESS_GROUP
from codemods.distributed.rules.xla602_xla_ranks import XLA_RANKS
from codemods.distributed.rules.xla603_xla_launch import XLA_LAUNCH
from codemods.distributed.rules.xla604_ddp_device_ids import DDP_DEVICE_IDS
from codemods.distributed.rules.xla605_data_parallel import DATA_PARALLEL
from codemods.distributed.rules.xla606_distributed_sampler import DISTRIBUTED_SAMPLER
from codemods.distributed.rules.xla607_amp_gradient_all_reduce import AMP_GRADIENT_ALL_REDUCE
from codemods.distributed.rules.xla608_hogwild import HOGWILD
from codemods.distributed.rules.xla609_distributed_manual import DISTRIBUTED_MANUAL
from codemods.distributed.rules.xla610_master_print import MASTER_PRINT
from codemods.distributed.rules.xla614_module_level_distributed import MODULE_LEVEL_DISTRIBUTED
from codemods.distributed.rules.xla615_average_all_reduce import AVERAGE_ALL_REDUCE
from codemods.distributed.rules.xla617_iterable_dataset_shards import ITERABLE_DATASET_SHARDS
from codemods.distributed.rules.xla618_process_group_fallback import PROCESS_GROUP_FALLBACK
from codemods.engine.nodemap import NodeMap
from codemods.engine.nodes import (
    KEYWORD_EQUAL,
    args_by_position,
    counterpart,
    fold_true,
    is_true,
    lone_call,
    parse_dotted,
    quoted_like,
    string_value,
    walk,
    with_comma,
    with_keyword,
    without_args,
)
from codemods.engine.positions import code_of
from codemods.engine.rewriter import Concern, Context, NodeT, StatementLineT
from codemods.engine.rule import Rule
from codemods.targets import XMP, Api

if TYPE_CHECKING:
    from codemods.facts import Facts

XMP_SPAWN = f"{XMP}.spawn"
TORCH_XLA_LAUNCH = "torch_xla.launch"
XLA_BACKEND = "torch_xla.distributed.xla_backend"
SAMPLER = Api("torch.utils.data.distributed", "DistributedSampler")
_CONCEPT_WORDS = {
    "global_ordinal": "global rank",
    "local_ordinal": "local rank",
    "world_size": "world size",
    "local_process_count": "processes on this host",
}


class DistributedRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        self.part = part = self.facts.distributed
        # Where the platform calls _mp_fn, a spawning main guard becomes it: what the guard
        # reads runs in the workers, from the XLA runtime.
        self.entry_from_spawn = part.spawn_guard is not None and ctx.target.runtime_calls_entry
        in_guard = {id(n) for n in walk(part.spawn_guard)} if self.entry_from_spawn else set()  # type: ignore[arg-type]
        # MASTER_ADDR/MASTER_PORT lines to write before a statement that starts an env:// process group.
        self.env_setup: NodeMap[list[cst.BaseStatement]] = NodeMap()
        self.worker_reads = {
            node: concept
            for node, concept in (*part.parent_reads.items(), *part.launcher_counts.items())
            if id(node) in in_guard
        }

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
                    _new_value(original, updated, backend.value), keyword=backend.keyword, equal=backend.equal
                )
            else:
                first = cst.Arg(cst.SimpleString('"xla"'))
            init = named.get("init_method")
            init_value = _new_value(original, updated, init.value) if kept["init_method"] and init is not None else None
            args = [first, _keyword("init_method", init_value or cst.SimpleString('"xla://"'))]
            for name, arg in group.arguments:
                if name in kept or name in PROCESS_GROUP_DROPPED:
                    if not (name in kept and kept[name]):
                        self._vanish(original, updated, arg)
                    continue
                args.append(_keyword(name, _new_value(original, updated, arg.value)))
            return updated.with_changes(args=_joined(args))

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
                    cst.Arg(_new_value(original, updated, backend.value), keyword=backend.keyword, equal=backend.equal)
                ]
            else:
                args = [cst.Arg(cst.SimpleString('"xla"'))]
            for name, arg in arguments:
                if name in kept and kept[name] and name != "backend":
                    args.append(_keyword(name, _new_value(original, updated, arg.value)))
                elif name in kept or name in PROCESS_GROUP_DROPPED:
                    self._vanish(original, updated, arg)
                else:
                    args.append(_keyword(name, _new_value(original, updated, arg.value)))
            args += [_keyword("rank", rank), _keyword("world_size", world)]
            self.env_setup[statement] = [
                cst.parse_statement(f'{code_of(environ)}.setdefault("{key}", "{value}")\n')
                for key, value in (("MASTER_ADDR", "localhost"), ("MASTER_PORT", "12355"))
            ]
            return updated.with_changes(args=_joined(args))

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
        return self._replace(
            XLA_PROCESS_GROUP,
            original,
            updated,
            f"the process group's XLA {'backend' if value == 'xla' else 'init method'}",
            lambda: quoted_like(template, value) if template is not None else cst.SimpleString(f'"{value}"'),
        )

    def _replace(
        self, rule: Rule, original: NodeT, updated: NodeT, why: str, build: Callable[[], cst.BaseExpression | None]
    ) -> cst.BaseExpression:
        """``original`` -> what ``build`` makes (what was inside it is gone, findings too)."""
        fixed = self.ctx.fix(rule, original, f"{self.ctx.code(original)} -> {{new}}: {why}", build)
        if fixed is None:
            return updated  # type: ignore[return-value]
        self.ctx.vanish(original, updated)
        return fixed

    def _vanish(self, original: cst.Call, updated: cst.Call, arg: cst.Arg) -> None:
        """``arg`` goes from the call (with the findings inside it), unless it went before."""
        new = counterpart(original, updated, arg)
        if new is not None:
            self.ctx.vanish(arg, new)

    # -- ranks and sizes (XLA602) -----------------------------------------------------------

    def _runtime_read(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        concept = self.part.runtime_reads.get(original) or self.worker_reads[original]
        why = f"the {_CONCEPT_WORDS[concept]} from the XLA runtime" + self._per_host_caveat([concept])
        return self._replace(XLA_RANKS, original, updated, why, lambda: self.ctx.call(concept))

    def _per_host_caveat(self, concepts: list[str]) -> str:
        """A release without a per-host process count writes its world size for it: right on
        one host only (torch_xla 1.13's xm.xrt_world_size() counts hosts x devices)."""
        target = self.ctx.target
        if "local_process_count" not in concepts or target.api("local_process_count") != target.api("world_size"):
            return ""
        return (
            f"; torch_xla {target.torch_xla_version} has no per-host count: "
            f"{target.api('world_size').spelled}() counts the devices of every host (hosts x devices), so this is "
            "right on one host only: on a multi-instance job divide it by the number of hosts"
        )

    def _launched_check(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        launched = self.part.launched_checks[original]
        return self._replace(
            XLA_RANKS,
            original,
            updated,
            "every process is started by the XLA launcher",
            lambda: cst.Name(str(launched)),
        )

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """Workers that received a CUDA device count from the launching process read
        the XLA one when they start."""
        rereads = self.part.rereads.get(original)
        if not rereads or not isinstance(updated.body, cst.IndentedBlock):
            return updated

        def build() -> cst.FunctionDef | None:
            lines: list[cst.BaseStatement] = []
            for param, concept in rereads:
                call = self.ctx.call(concept)
                if call is None:
                    return None
                lines.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(param))], call)]))
            body = list(updated.body.body)
            at = 1 if body and _is_docstring(body[0]) else 0  # type: ignore[arg-type]
            return updated.with_changes(body=updated.body.with_changes(body=[*body[:at], *lines, *body[at:]]))

        names = ", ".join(f"`{param}`" for param, _ in rereads)
        fixed = self.ctx.fix(
            XLA_RANKS,
            original,
            f"{names} read from the XLA runtime when `{original.name.value}` starts: the launching process "
            "passed a CUDA device count" + self._per_host_caveat([concept for _, concept in rereads]),
            build,
        )
        return fixed if fixed is not None else updated

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
            values = _new_value(original, updated, args) if args is not None else None
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
                    self._vanish(original, updated, arg)
            return cst.Call(func=_new_value(original, updated, fn), args=_joined(new_args))

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
        new_args = [cst.Arg(_new_value(original, updated, fn))]
        if args is not None:
            new_args.append(_keyword("args", _new_value(original, updated, args)))
        if start_method is not None:
            new_args.append(_keyword("start_method", _new_value(original, updated, start_method)))
        self.ctx.imports.discard(original.func)
        for arg in original.args:
            if arg.value not in (fn, args, start_method):
                self._vanish(original, updated, arg)
        return updated.with_changes(func=func, args=_joined(new_args))

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
        if original in part.master_prints:
            return self._master_print(original, updated)
        spawning = original is part.spawn_guard and self.entry_from_spawn
        if not (original is part.entry_guard or spawning) or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        shared = self.part.guard_globals

        def build() -> cst.FlattenSentinel[cst.BaseStatement] | None:
            launch = self.ctx.call(
                "launch", [with_comma(cst.Arg(cst.Name(ENTRY_FUNCTION))), _keyword("args", cst.Tuple([]))]
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
                body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Expr(launch)])], footer=updated.body.footer),  # type: ignore[attr-defined]
                leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
            )
            return cst.FlattenSentinel([function, guard])

        fixed = self.ctx.fix(  # type: ignore[misc]
            XLA_LAUNCH,
            original,
            f"the main guard's code -> def {ENTRY_FUNCTION}(index): it runs in every process, started by "
            f"{self.ctx.target.api('launch').qualified_name}(...)",
            build,
            result=lambda node: node.nodes[0] if isinstance(node, cst.FlattenSentinel) else node,
        )
        return fixed if fixed is not None else updated

    def _master_print(self, original: cst.If, updated: cst.If) -> cst.BaseStatement:
        """``if rank == 0: print(...)`` -> ``xm.master_print(...)`` (XLA610)."""
        call = lone_call(updated.body.body[0]) if isinstance(updated.body, cst.IndentedBlock) else None
        if call is None or not (isinstance(call.func, cst.Name) and call.func.value == "print"):
            return updated  # another rewrite changed it (a step closure)

        def build() -> cst.SimpleStatementLine | None:
            master_print = self.ctx.replace_callee(call, call, "master_print")
            if master_print is None:
                return None
            return cst.SimpleStatementLine([cst.Expr(master_print)], leading_lines=updated.leading_lines)

        fixed = self.ctx.fix(
            MASTER_PRINT,
            original,
            f"`if {self.ctx.code(original.test)}: print(...)` -> {{new}}: prints on the master process only",
            build,
        )
        if fixed is None:
            return updated
        self.ctx.vanish(original.test, updated.test)
        return fixed

    # -- DistributedDataParallel (XLA604), DataParallel (XLA605) ----------------------------------------

    def _ddp(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        dropped, _ = self.part.ddp_calls[original]
        if not dropped:
            return updated
        names = ", ".join(sorted({arg.keyword.value if arg.keyword else "device_ids" for arg in dropped}))

        def build() -> cst.Call:
            doomed = []
            for arg in dropped:
                if (new := counterpart(original, updated, arg)) is not None:
                    self.ctx.vanish(arg, new)
                    doomed.append(updated.args.index(new))
            return updated.with_changes(args=without_args(list(updated.args), doomed))

        fixed = self.ctx.fix(
            DDP_DEVICE_IDS,
            original,
            f"{names} removed from {self.ctx.code(original.func)}(...): it wraps the model on this process's XLA "
            "device and all-reduces gradients over the xla backend (the optimizer step stays plain: reduced once)",
            build,
        )
        return fixed if fixed is not None else updated

    def _ddp_input(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        fixed = self.ctx.fix(
            DDP_DEVICE_IDS,
            original,
            f"{self.ctx.code(original)} -> {{new}}: DDP moved inputs to the GPU of device_ids; on XLA they are made "
            "on the device",
            lambda: (
                (device := self.ctx.device())
                and updated.with_changes(args=with_keyword(list(updated.args), "device", device))
            ),
        )
        return fixed if fixed is not None else updated

    def _data_parallel(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.part.data_parallel[original]:
            self.ctx.report(
                DATA_PARALLEL,
                original,
                f"`{self.ctx.code(original.func)}` drives several GPUs from one process: "
                "remove it (and its `.module` accesses) and start one process per device",
            )
            return updated
        wrapped = updated.args[0].value if updated.args else None
        if wrapped is None:
            return updated
        fixed = self.ctx.fix(
            DATA_PARALLEL,
            original,
            f"{self.ctx.code(original)} -> {{new}}: one process drives one XLA device (DataParallel has no XLA meaning)",
            lambda: wrapped,
        )
        if fixed is None:
            return updated
        self.ctx.subsume(original)
        self.ctx.imports.discard(original.func)
        return fixed

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        part = self.part
        if original in part.dp_statements:
            fixed = self.ctx.fix(
                DATA_PARALLEL,
                original,
                f"removed `{self.ctx.code(original.with_changes(leading_lines=()))}`: one process "
                "drives one XLA device "
                "(DataParallel has no XLA meaning)",
                lambda: cst.RemovalSentinel.REMOVE,
            )
            if fixed is not None:
                self.ctx.vanish(original, original)
                self.ctx.drop_statement(updated)
                return updated
        optimizer = part.gradient_reduces.get(original)
        if optimizer is not None:
            return self._gradient_reduce(original, updated, optimizer)
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
        doomed = {
            id(new)
            for old, new in zip(original.body, updated.body)
            if isinstance(old, cst.Assert)
            and isinstance(new, cst.Assert)
            and any(n in checks for n in walk(old.test) if type(n) is cst.Comparison)
            and fold_true(new.test, is_true) is True
        }
        if not doomed:
            return updated
        for old, new in zip(original.body, updated.body):
            if id(new) not in doomed:
                continue
            self.ctx.subsume(old)
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
                doomed.discard(id(new))
            else:
                self.ctx.vanish(old, new)
        kept: list[cst.BaseSmallStatement] = [new for new in updated.body if id(new) not in doomed]
        if kept:
            return updated.with_changes(body=[*kept[:-1], kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
        if isinstance(updated, cst.SimpleStatementSuite):
            return updated.with_changes(body=[cst.Pass()])
        self.ctx.drop_statement(updated)
        return updated

    leave_SimpleStatementSuite = _without_launch_asserts

    def _module_access(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        fixed = self.ctx.fix(
            DATA_PARALLEL,
            original,
            f"{self.ctx.code(original)} -> {{new}}: the model is no longer wrapped in DataParallel",
            lambda: updated.value,
        )
        return fixed if fixed is not None else updated

    # -- data (XLA606) -----------------------------------------------------------------------------

    def _sampler_ranks(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        missing = self.part.samplers[original]

        def build() -> cst.Call | None:
            args = list(updated.args)
            for keyword in missing:
                call = self.ctx.call("world_size" if keyword == "num_replicas" else "global_ordinal")
                if call is None:
                    return None
                args = with_keyword(args, keyword, call)
            return updated.with_changes(args=args)

        fixed = self.ctx.fix(
            DISTRIBUTED_SAMPLER,
            original,
            f"{self.ctx.code(original.func)}: {' and '.join(missing)} from the XLA runtime",
            build,
        )
        return fixed if fixed is not None else updated

    def _loader_sampler(self, original: cst.Call, updated: cst.Call, plan: SamplerPlan) -> cst.BaseExpression:
        if plan.dataset is None or any(arg.star for arg in original.args):
            # Unpacked arguments may hold a shuffle=True, which a sampler excludes.
            self.ctx.report(
                DISTRIBUTED_SAMPLER,
                original,
                "training DataLoader without a DistributedSampler: give it "
                "`sampler=DistributedSampler(dataset, num_replicas=<world size>, rank=<global rank>)`, "
                "or every process trains on the same data",
            )
            return updated

        def build() -> cst.Call | None:
            sampler = self.ctx.imports.call(SAMPLER, [cst.Arg(parse_dotted(plan.dataset))])  # type: ignore[arg-type]
            world, rank = self.ctx.call("world_size"), self.ctx.call("global_ordinal")
            if sampler is None or world is None or rank is None:
                return None
            sampler_args = with_keyword(with_keyword(list(sampler.args), "num_replicas", world), "rank", rank)
            shuffle = (
                _new_value(original, updated, plan.shuffle.value) if plan.shuffle is not None else cst.Name("False")
            )
            sampler_args = with_keyword(sampler_args, "shuffle", shuffle)
            args = list(updated.args)
            if plan.shuffle is not None and (shuffled := counterpart(original, updated, plan.shuffle)) is not None:
                index = args.index(shuffled)
                args[index] = shuffled.with_changes(value=cst.Name("False"))
            return updated.with_changes(args=with_keyword(args, "sampler", sampler.with_changes(args=sampler_args)))

        fixed = self.ctx.fix(
            DISTRIBUTED_SAMPLER,
            original,
            "training DataLoader: a DistributedSampler from the XLA world size and rank gives each process its "
            "share of the data (the loader's shuffle moves to the sampler)",
            build,
        )
        return fixed if fixed is not None else updated

    def _iterable_loader(self, original: cst.Call) -> None:
        data = self.part.iterable_loaders[original]
        rank, world = (self.ctx.target.api(concept).qualified_name for concept in ("global_ordinal", "world_size"))
        shard = (
            f"with rank {rank}() of {world}(): `split_dataset_by_node(dataset, rank, world_size)` (Hugging Face "
            "datasets), `wds.split_by_node` (webdataset), `.sharding_filter()` (torchdata), or "
            "`itertools.islice(stream, rank, None, world_size)` in your own `__iter__`"
        )
        if data.unread_module is not None:
            message = (
                f"training DataLoader over {data.made_by}, a class of `{data.unread_module}`, which this run does not "
                "read: the tool cannot tell whether it is iterable-style (which refuses a sampler), so no "
                "DistributedSampler was added and every process reads all the data. Convert the project to let it "
                f"tell; if it is map-style, pass `sampler=DistributedSampler(dataset, num_replicas={world}(), "
                f"rank={rank}())`; if it is iterable-style, shard it by process {shard}"
            )
        else:
            message = (
                f"training DataLoader over an iterable-style data set ({data.made_by}): it takes no sampler, so no "
                "DistributedSampler was added and every process reads the whole stream. Shard it in the data set by "
                f"process, {shard}"
            )
        self.ctx.report(ITERABLE_DATASET_SHARDS, original, message)

    def leave_ExceptHandler(self, original: cst.ExceptHandler, updated: cst.ExceptHandler) -> cst.ExceptHandler:
        fallback = self.part.group_fallbacks.get(original)
        if fallback is not None:
            failing, ddp = fallback
            self.ctx.report(
                PROCESS_GROUP_FALLBACK,
                original,
                f"if this `except` runs, the script goes on without a process group, and `{self.ctx.code(ddp.func)}(...)` "
                'then raises ValueError ("Default process group has not been initialized"). On XLA it can run: '
                f"`{self.ctx.code(failing)}` in the `try` raises KeyError when the XLA launcher starts the processes "
                "(it sets none of torchrun's variables). Read it with os.environ.get(...), or drop it if nothing else "
                "needs it, let the `except` re-raise, or wrap the model in DDP only when dist.is_initialized()",
            )
        return updated

    def _set_epoch(self, original: cst.For | cst.FunctionDef, updated: cst.BaseStatement) -> cst.BaseStatement:
        loader, epoch = self.part.set_epochs[original]
        body = getattr(updated, "body", None)
        if not isinstance(body, cst.IndentedBlock):
            return updated

        def build() -> cst.BaseStatement:
            call = cst.parse_statement(f"{loader}.sampler.set_epoch({epoch})\n")
            statements = list(body.body)
            at = 1 if isinstance(original, cst.FunctionDef) and statements and _is_docstring(statements[0]) else 0
            return updated.with_changes(body=body.with_changes(body=[*statements[:at], call, *statements[at:]]))

        fixed = self.ctx.fix(
            DISTRIBUTED_SAMPLER,
            original,
            f"{loader}.sampler.set_epoch({epoch}) each epoch: the sampler shuffles differently "
            "every epoch, the same way in every process",
            build,
        )
        return fixed if fixed is not None else updated

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.BaseStatement:
        return self._set_epoch(original, updated) if original in self.part.set_epochs else updated

    # -- mixed precision without DDP (XLA607) ------------------------------------------------------

    def _gradient_reduce(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, optimizer: str
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        def build() -> cst.FlattenSentinel[cst.BaseStatement] | None:
            fetch = self.ctx.call("fetch_gradients", [cst.Arg(parse_dotted(optimizer))])
            world = self.ctx.call("world_size")
            reduce_ = self.ctx.imports.expression(self.ctx.target.api("all_reduce"))
            if fetch is None or world is None or reduce_ is None:
                return None
            code = code_of
            line = cst.parse_statement(f'{code(reduce_)}("sum", {code(fetch)}, scale=1.0 / {code(world)})\n')
            return cst.FlattenSentinel([updated, line])

        fixed = self.ctx.fix(  # type: ignore[misc]
            AMP_GRADIENT_ALL_REDUCE,
            original,
            "gradients all-reduced after the scaled backward pass ({new}): without DDP nothing else averages "
            "them over the processes",
            build,
            result=lambda node: node.nodes[1] if isinstance(node, cst.FlattenSentinel) else node,
        )
        return fixed if fixed is not None else updated

    # -- reduce ops the xla process group refuses (XLA615) -------------------------------------------

    def _average_reduce(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        def build() -> cst.Call | None:
            reduce_ = self.ctx.imports.expression(self.ctx.target.api("all_reduce"))
            world = self.ctx.call("world_size")
            if reduce_ is None or world is None:
                return None
            tensor = next(
                a
                for i, a in enumerate(updated.args)
                if (a.keyword is None and i == 0) or (a.keyword is not None and a.keyword.value == "tensor")
            ).value
            scale = cst.BinaryOperation(cst.Float("1.0"), cst.Divide(), world)
            return cst.Call(
                reduce_,
                [
                    with_comma(cst.Arg(cst.SimpleString('"sum"'))),
                    with_comma(cst.Arg(cst.List([cst.Element(tensor)]))),
                    _keyword("scale", scale),
                ],
            )

        return self._replace(
            AVERAGE_ALL_REDUCE,
            original,
            updated,
            "the xla process group has no ReduceOp.AVG (ValueError: Invalid reduce op); "
            "the sum scaled by the world size is the same average, in place",
            build,
        )

    # -- dispatch ------------------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        part = self.part
        if original in part.backend_values:
            return self._backend_value(original, updated)
        if original in part.runtime_reads or original in self.worker_reads:
            return self._runtime_read(original, updated)
        if original in part.per_process_counts:
            return self._replace(
                XLA_RANKS,
                original,
                updated,
                "the devices this process drives: one XLA device per process (the count guards a DataParallel wrap, "
                f"which goes; the processes on the host are {self.ctx.target.api('local_process_count').spelled}())",
                lambda: cst.Integer("1"),
            )
        if original in part.process_groups:
            return self._process_group(original, updated)
        if original in part.spawns:
            return self._spawn(original, updated)
        if original in part.ddp_calls:
            return self._ddp(original, updated)
        if original in part.data_parallel:
            return self._data_parallel(original, updated)
        if original in part.samplers:
            return self._sampler_ranks(original, updated)
        if original in part.sampler_plans:
            return self._loader_sampler(original, updated, part.sampler_plans[original])
        if original in part.iterable_loaders:
            self._iterable_loader(original)
        if original in part.ddp_inputs:
            return self._ddp_input(original, updated)
        if original in part.average_reduces:
            return self._average_reduce(original, updated)
        if original in part.launcher_counts:
            # A CUDA count that only feeds the workers, which read the XLA one themselves
            # (XLA602): nothing to report on it.
            self.ctx.vanish(original, updated)
        elif original is part.hogwild:
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
        elif original in part.parent_reads:
            self._parent_read(original)
        elif original in part.unreduced_backwards:
            self.ctx.report(
                AMP_GRADIENT_ALL_REDUCE,
                original,
                "scaled backward pass whose optimizer step is elsewhere: all-reduce "
                "the gradients before stepping (xm.all_reduce('sum', xm._fetch_gradients(optimizer), "
                "scale=1.0 / world size))",
            )
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

    def _parent_read(self, original: cst.CSTNode) -> None:
        concept = self.part.parent_reads[original]
        self.ctx.report(
            DISTRIBUTED_MANUAL,
            original,
            f"`{self.ctx.code(original)}` reads the {_CONCEPT_WORDS[concept]} in the "
            "process that starts the others: the XLA runtime may not be used there; read it in the workers",
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original in self.part.unsupported_reduce_ops:
            self.ctx.report(
                AVERAGE_ALL_REDUCE,
                original,
                f"`{self.ctx.code(original)}`: the xla process group refuses this "
                "reduce op (ValueError: Invalid reduce op); reduce with ReduceOp.SUM and divide by the "
                "world size, or " + self.ctx.target.advice('xm.all_reduce("sum", [t], scale=1.0 / xr.world_size())'),
            )
        if original in self.part.runtime_reads or original in self.worker_reads:
            return self._runtime_read(original, updated)
        if original in self.part.module_accesses:
            return self._module_access(original, updated)
        if original in self.part.parent_reads:
            self._parent_read(original)
        return updated

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
        return self._runtime_read(original, updated) if original in self.part.runtime_reads else updated

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


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=KEYWORD_EQUAL)


def _joined(args: list[cst.Arg]) -> list[cst.Arg]:
    """The arguments on one line, separated by ", "."""
    return (
        [with_comma(arg) for arg in args[:-1]] + [args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
        if args
        else []
    )


def _new_value(original: cst.Call, updated: cst.Call, value: cst.BaseExpression) -> cst.BaseExpression:
    """What the argument ``value`` of ``original`` became in ``updated``."""
    new = counterpart(original, updated, next(arg for arg in original.args if arg.value is value))
    return new.value if new is not None else value


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
