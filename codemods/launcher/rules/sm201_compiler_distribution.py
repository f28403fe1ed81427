"""SM201 compiler-distribution."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule
from codemods.launcher.rules.programs import _PYTORCHXLA, _compiled, _compiled_pytorchxla, _fixed, _valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.launcher.rules.job import Job


COMPILER_DISTRIBUTION = Rule(
    code="SM201",
    name="compiler-distribution",
    severity="error",
    summary='Training Compiler on several GPUs or instances needs `distribution={"pytorchxla": {"enabled": True}}`',
    fixable=True,
    why="Without the pytorchxla runtime a compiled job starts one process per instance: it trains on one GPU, "
    "and instances beyond the first repeat the same work. Added for PyTorch >= 1.12 (PyTorch estimator) and "
    "PyTorch >= 1.11 (Hugging Face estimator).",
    examples=lambda: (
        _fixed(
            _compiled("ml.p3.16xlarge", "4.21.1", "1.11.0"),
            "TrainingCompilerConfig())",
            f"TrainingCompilerConfig(), {_PYTORCHXLA})",
            findings=(Expected(4, 112, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
    ),
    valid=lambda: (
        _valid(_compiled("ml.p3.2xlarge", "4.21.1", "1.11.0"), note="one-gpu"),
        _valid(_compiled_pytorchxla("4.21.1", "1.11.0"), note="already-there"),
    ),
    invalid=lambda: (
        _fixed(
            """
            from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

            estimator = HuggingFace(
                entry_point="train.py",
                instance_type="ml.p3.16xlarge",
                instance_count=1,
                transformers_version="4.21.1",
                pytorch_version="1.11.0",
                compiler_config=TrainingCompilerConfig(),
            )
            """,
            "TrainingCompilerConfig(),\n",
            f"TrainingCompilerConfig(),\n    {_PYTORCHXLA},\n",
            findings=(Expected(10, 5, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
        _fixed(
            """
            from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

            PyTorch(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                    framework_version="1.13.1", compiler_config=TrainingCompilerConfig())
            """,
            "TrainingCompilerConfig())",
            f"TrainingCompilerConfig(), {_PYTORCHXLA})",
            note="several-instances",
            findings=(Expected(4, 79, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
        _fixed(
            """
            import sagemaker.huggingface
            from sagemaker.huggingface.training_compiler.config import TrainingCompilerConfig as Compiler

            compiler = Compiler()
            sagemaker.huggingface.HuggingFace("train.py", instance_type="ml.g5.48xlarge",
                                              transformers_version="4.21.1", pytorch_version="1.11.0",
                                              compiler_config=compiler,)
            """,
            "compiler_config=compiler,",
            "compiler_config=compiler,\n" + " " * 34 + _PYTORCHXLA + ",",
            alias=True,
            findings=(Expected(8, 35, 'compiler_config on several GPUs -> distribution={"pytorchxla"'),),
        ),
    ),
)


def add_pytorchxla(job: Job) -> None:
    """A compiled job on several GPUs gets ``distribution={"pytorchxla": {"enabled": True}}``;
    reported when the call may already give a distribution."""
    import libcst as cst

    from codemods.launcher.rules.job import Edit

    call = job.estimator.call
    if job.estimator.hidden is not None or "distribution" in job.estimator.arguments:
        job.findings.report(
            COMPILER_DISTRIBUTION,
            call,
            'compiler_config on several GPUs needs distribution={"pytorchxla": '
            '{"enabled": True}}: without it the compiled job uses one GPU per instance',
        )
        return
    value = cst.parse_expression('{"pytorchxla": {"enabled": True}}')
    argument = cst.Arg(
        value,
        keyword=cst.Name("distribution"),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    job.findings.plan(
        call,
        Edit(
            COMPILER_DISTRIBUTION,
            'compiler_config on several GPUs -> distribution={"pytorchxla": {"enabled": True}}: '
            "starts one compiled process per GPU",
            lambda node: _append_argument(node, argument),  # type: ignore[arg-type]  # Edit's build takes any node: the one planned here is ``call``, a Call
            lambda node: node.args[-1],  # type: ignore[attr-defined]  # the replacement is _append_argument's Call: Edit's anchor takes any node
        ),
    )


def _append_argument(call: cst.Call, argument: cst.Arg) -> cst.Call:
    """``call`` with ``argument`` last, laid out like the arguments before it (one per
    line stays one per line; a trailing comma stays trailing)."""
    import libcst as cst

    args = list(call.args)
    if not args:
        return call.with_changes(args=[argument])
    last = args[-1]
    separator = (
        args[-2].comma
        if len(args) > 1 and isinstance(args[-2].comma, cst.Comma)
        else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    if isinstance(last.comma, cst.Comma):
        args[-1] = last.with_changes(comma=separator)
        return call.with_changes(args=[*args, argument.with_changes(comma=last.comma)])
    args[-1] = last.with_changes(comma=separator)
    return call.with_changes(args=[*args, argument])
