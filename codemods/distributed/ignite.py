"""PyTorch-Ignite's launchers (XLA616): idist.Parallel, idist.initialize and idist.spawn
take the backend that decides where the processes train.  For torch_xla 1.13 a native
backend literal ("nccl", "gloo", "mpi") becomes ignite's XLA backend ("xla-tpu"); torch_xla
2.9 has no names that backend can run on, so there every launcher is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.distributed.rules.xla616_ignite_backend import IGNITE_BACKEND
from codemods.engine.nodes import is_none, quoted_like, string_value
from codemods.engine.rewriter import Concern

if TYPE_CHECKING:
    from codemods.facts import Facts

# What ignite's "xla-tpu" backend needs and torch_xla 2.9 lacks, and what to do instead.
_NO_XLA_BACKEND = (
    'ignite\'s "xla-tpu" backend reads ranks with xm.get_ordinal and xm.xrt_world_size, which torch_xla 2.7 '
    "removed, so on torch_xla {version} it fails at its first rank query; start the processes with "
    "torch_xla.launch (or one process, with torch_xla.device()) and read ranks from torch_xla.runtime, "
    "or convert with --target sagemaker for torch_xla 1.13"
)
_SERIAL = (
    "with no backend idist runs the function in this one process, and idist.device() (which auto_model and "
    "auto_dataloader use) is CUDA or the CPU, never the XLA device"
)


class IgniteRewrite(Concern):
    facts: Facts

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        launchers = self.facts.distributed.ignite_launchers
        if original not in launchers:
            return updated
        backend = launchers[original]
        target = self.ctx.target
        xla = target.ignite_xla_backend
        value = None if backend is None or backend.star else backend.value
        literal = string_value(value) if value is not None else None
        at: cst.CSTNode = value if value is not None else backend if backend is not None else original
        if xla is None:
            serial = backend is None or is_none(value)
            self.ctx.report(
                IGNITE_BACKEND,
                at,
                (f"{_SERIAL}; " if serial else "") + _NO_XLA_BACKEND.format(version=target.torch_xla_version),
            )
            return updated
        if literal == xla:
            return updated
        if literal in apis.IGNITE_NATIVE_BACKENDS:
            index = original.args.index(backend)

            def build() -> cst.Call:
                arg = updated.args[index]
                args = [
                    *updated.args[:index],
                    arg.with_changes(value=quoted_like(arg.value, xla)),
                    *updated.args[index + 1 :],
                ]
                return updated.with_changes(args=args)

            return self.ctx.fix_or_keep(
                updated,
                IGNITE_BACKEND,
                at,
                f'ignite backend {self.ctx.code(at)} -> "{xla}": with {self.ctx.code(at)} the processes train on '
                "CUDA (or the CPU), not on the XLA device",
                build,
            )
        if backend is None or is_none(value):
            message = f'{_SERIAL}: pass backend="{xla}"'
        elif literal is not None:
            message = f'ignite backend {self.ctx.code(at)} trains on CUDA or the CPU: make it "{xla}" on the XLA device'
        else:
            message = (
                f"ignite's backend comes from `{self.ctx.code(at)}`: make it "
                f'"{xla}" on the XLA device (with "nccl", "gloo" or no backend the processes train on '
                "CUDA or the CPU)"
            )
        self.ctx.report(IGNITE_BACKEND, at, message)
        return updated
