"""The catalogue of rules, one module per family: code, severity, summary, and whether
the tool fixes it or only reports.

Families follow the pipeline's concerns: XLA0 imports and cross-file notes, XLA1 device,
XLA2 optimizer and mixed precision, XLA3 step barriers and loaders, XLA4 checkpoints,
XLA5 CUDA runtime calls, XLA6 distributed, XLA7 lazy mode (host syncs, recompilation; XLA72 torch.compile),
XLA8 Hugging Face, Accelerate, Lightning and Fabric, XLA9 torch_xla release names; SM1 SageMaker
model-parallel launchers, SM2 Training Compiler launchers, SM3 Dockerfiles; XLN1 what
notebooks hold besides code (shell lines, runtime metadata); XLD is what
``xla-codemod doctor`` sees while a script runs (runtime findings).  A rule with
``fixable=True`` may still report a case it cannot fix; then the finding says so.
This package imports nothing heavy: the command line validates codes with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from codemods.rules import (
    barriers,
    checkpoints,
    compile,
    containers,
    cuda_runtime,
    device,
    distributed,
    doctor,
    fsdp,
    huggingface,
    imports,
    launcher,
    lazy,
    lightning,
    notebooks,
    optimizer,
    release_names,
)
from codemods.rules.base import SEVERITIES, Example, Rule, Severity, at_least

__all__ = ["RULES", "RULES_BY_CODE", "SEVERITIES", "Example", "Rule", "RuleSelection", "Severity", "at_least", "matches"]

RULES: tuple[Rule, ...] = (
    *imports.RULES,
    *device.RULES,
    *optimizer.RULES,
    *barriers.RULES,
    *checkpoints.RULES,
    *cuda_runtime.RULES,
    *distributed.RULES,
    *fsdp.RULES,
    *lazy.RULES,
    *compile.RULES,
    *huggingface.RULES,
    *lightning.RULES,
    *release_names.RULES,
    *notebooks.RULES,
    *launcher.RULES,
    *containers.RULES,
    *doctor.RULES,
)

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}


def matches(code: str, patterns: tuple[str, ...]) -> bool:
    """True if ``code`` is selected by any pattern: a full code or a prefix (XLA1, ALL)."""
    return any(p == "ALL" or code.startswith(p) for p in patterns)


@dataclass(frozen=True)
class RuleSelection:
    """Which rules are on: ``select`` prefixes (default all), minus ``ignore`` prefixes."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()

    def enabled(self, code: str) -> bool:
        return matches(code, self.select) and not matches(code, self.ignore)

    def unknown_patterns(self) -> list[str]:
        return [
            p
            for p in self.select + self.ignore
            if p != "ALL" and not any(code.startswith(p) for code in RULES_BY_CODE)
        ]
