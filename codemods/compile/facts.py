"""torch.compile's part of the fact sheet (found by analysis.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst


@dataclass(repr=False, eq=False)
class CompileFacts:
    # torch.compile(...) and nn.Module.compile(...) calls, each with its statement when
    # that statement does nothing else: ``model = torch.compile(model, ...)`` (the name
    # compiled is the name assigned) or ``model.compile(...)``; else None.
    calls: dict[cst.Call, cst.BaseSmallStatement | None] = field(default_factory=dict)
    # ``@torch.compile`` (not called).
    bare_decorators: set[cst.Decorator] = field(default_factory=set)
    # Every decorator that compiles: ``@torch.compile`` and ``@torch.compile(...)``.
    decorators: set[cst.Decorator] = field(default_factory=set)
    # The lines (and one-line suites) that hold a statement of ``calls`` (one that only compiles).
    compile_only_lines: set[cst.SimpleStatementLine | cst.SimpleStatementSuite] = field(default_factory=set)
    # torch.compile used as a value: ``compile_fn = torch.compile``, ``partial(torch.compile, ...)``.
    references: set[cst.CSTNode] = field(default_factory=set)
    # torch._dynamo.config.* and torch._inductor.config.* references, with their qualified names.
    settings: dict[cst.CSTNode, str] = field(default_factory=dict)
    # TrainingArguments(..., torch_compile=<not False>): the Trainer compiles through
    # Accelerate; the value: its ``torch_compile_backend`` argument, or None.
    trainer_compiles: dict[cst.Call, cst.Arg | None] = field(default_factory=dict)
    # torch._dynamo.optimize(...) calls (the API before torch.compile), with the backend
    # they name ("inductor" when none is given), or None when it is not a string.
    dynamo_optimize: dict[cst.Call, str | None] = field(default_factory=dict)
    # Imports of torch._dynamo or torch._inductor (PyTorch 1.13 has neither).
    compiler_imports: set[cst.CSTNode] = field(default_factory=set)
