"""SM107 smp-set-device."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.launcher.rules.programs import _PINNED, _SMP_SCRIPT, _fixed

if TYPE_CHECKING:
    from codemods.launcher.facts import SmpScript
    from codemods.launcher.rules.job import Findings


SMP_SET_DEVICE = Rule(
    code="SM107",
    name="smp-set-device",
    severity="error",
    summary="A PyTorch training script under smdistributed model parallel pins its GPU with "
    "`torch.cuda.set_device(smp.local_rank())`",
    fixable=True,
    why="Without it every process of a host starts on GPU 0 and the partitions do not fit or collide; the call "
    "is added right after `smp.init()`. A module that does not call `smp.init()` is not asked for it: it does not "
    "start model parallel (a helper of such a script, whose script pins the GPU, or code that imports smdistributed "
    "only as an option, as a copy of transformers' Trainer does: `if is_sagemaker_mp_enabled(): import "
    "smdistributed.modelparallel.torch as smp`). A script that calls `smp.init()`, or a module that imports "
    "smdistributed model parallel unconditionally, runs on CUDA GPUs under SageMaker model parallel: it gets only "
    "the launcher checks, and the XLA rules leave it as it is. A module whose every such import is under an `if` or "
    "a `try` and that never calls `smp.init()` has model parallel as one of its options: it is converted and "
    "reported as any other module (its model-parallel path stays as it is; it runs only where the job enables "
    "model parallel, which a job on XLA devices does not), unless it imports torch_xla under a check of its own "
    "too: then its XLA path is its own, and it is left as it is (SM108).",
    examples=lambda: (
        _fixed(
            _SMP_SCRIPT,
            *_PINNED,
            filename="train.py",
            findings=(Expected(5, 1, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),
    ),
    valid=lambda: (
        valid(
            _SMP_SCRIPT + "local_rank = smp.local_rank()\ntorch.cuda.set_device(local_rank)\n", note="through-a-name"
        ),
        valid(
            """
            import tensorflow as tf
            import smdistributed.modelparallel.tensorflow as smp

            smp.init()
            """,
            note="tensorflow",
        ),
        valid(
            """
            import torch
            from transformers.utils import is_sagemaker_mp_enabled

            if is_sagemaker_mp_enabled():
                import smdistributed.modelparallel.torch as smp


            def world_size():
                return smp.dp_size() if is_sagemaker_mp_enabled() else 1
            """,
            note="an import under a check, no smp.init(): model parallel as an option",
        ),
        valid(
            """
            import torch

            try:
                from smdistributed.modelparallel import torch as smp_torch
            except ImportError:
                smp_torch = None


            def rank():
                return smp_torch.rank() if smp_torch is not None else 0
            """,
            note="an import under a try, no smp.init(), spelled from the package",
        ),
        valid(
            """
            import torch
            import smdistributed.modelparallel.torch as smp


            def world_size():
                return smp.dp_size()
            """,
            note="a helper module of a model-parallel script: no smp.init() to pin the GPU after",
        ),
    ),
    invalid=lambda: (
        _fixed(
            _SMP_SCRIPT + 'device = torch.device("cuda")\n',
            *_PINNED,
            filename="train.py",
            findings=(Expected(5, 1, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),
        invalid(
            _SMP_SCRIPT + "torch.cuda.set_device(args.local_rank)\n",
            note="another-device",
            findings=(Expected(5, 1, "`torch.cuda.set_device(args.local_rank)`"),),
        ),
        _fixed(
            """
            import torch as th
            from smdistributed.modelparallel import torch as smp_torch


            def main():
                smp_torch.init()
                model = build()
            """,
            "smp_torch.init()\n",
            "smp_torch.init()\n    th.cuda.set_device(smp_torch.local_rank())\n",
            filename="train.py",
            alias=True,
            findings=(Expected(7, 5, "smp.init() -> th.cuda.set_device(smp_torch.local_rank())"),),
        ),
        _fixed(
            """
            import torch

            if args.model_parallel:
                import smdistributed.modelparallel.torch as smp

                smp.init()
            """,
            "    smp.init()\n",
            "    smp.init()\n    torch.cuda.set_device(smp.local_rank())\n",
            filename="train.py",
            note="an import under a check that calls smp.init(): a model-parallel script",
            findings=(Expected(7, 5, "smp.init() -> torch.cuda.set_device(smp.local_rank())"),),
        ),
    ),
)


def check_smp_script(findings: Findings, script: SmpScript) -> None:
    """The training script of a model-parallel job pins its process's GPU: a set_device call
    that does not take ``smp.local_rank()`` is reported; a missing one added after ``smp.init()``
    (a module that does not call it does not start model parallel: nothing to add there)."""
    import libcst as cst

    from codemods.launcher.facts import SET_DEVICE, SMP_TORCH
    from codemods.launcher.rules.job import Edit

    if any(pinned for _, pinned in script.set_device_calls):
        return
    if not script.inits and not script.set_device_calls:
        return  # it does not start model parallel: the script that calls smp.init() pins the GPU
    if script.set_device_calls:
        call = script.set_device_calls[0][0]
        findings.report(
            SMP_SET_DEVICE,
            call,
            f"`{findings.ctx.code(call)}`: under model parallel each process pins its own GPU "
            "with `torch.cuda.set_device(smp.local_rank())`",
        )
        return
    set_device = findings.ctx.facts.imports.table.local_name_for(SET_DEVICE)
    local_rank = findings.ctx.facts.imports.table.local_name_for(f"{SMP_TORCH}.local_rank")
    message = "torch.cuda.set_device(smp.local_rank()) pins each process to its own GPU"
    if not script.init_statements or set_device is None or local_rank is None:
        findings.report(
            SMP_SET_DEVICE,
            script.import_statement,
            f"no {message.replace(' pins', ': it pins', 1)}: add it right after smp.init()",
        )
        return
    statement = cst.parse_statement(f"{set_device}({local_rank}())\n")

    def insert(line: cst.CSTNode) -> cst.CSTNode:
        return cst.FlattenSentinel([line, statement])  # type: ignore[return-value]  # Edit's build returns a node; a FlattenSentinel (the line and the statement after it) is what libcst expands in its place

    findings.plan(
        script.init_statements[0],
        Edit(
            SMP_SET_DEVICE,
            f"smp.init() -> {{new}}: {message.split(' ', 1)[1]}",
            insert,
            lambda flat: flat.nodes[1],  # type: ignore[attr-defined]  # the replacement is the FlattenSentinel made by insert above
        ),
    )
