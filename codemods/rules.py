"""The catalogue of rules: each concern's rules.py holds its rules (code, severity,
summary, why, examples, and whether the tool fixes it or only reports); this module
collects them.

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

from codemods.amp import rules as amp
from codemods.checkpoint import rules as checkpoint
from codemods.compile import rules as compile_
from codemods.containers import rules as containers
from codemods.cuda_only import rules as cuda_only
from codemods.device import rules as device
from codemods.distributed import rules as distributed
from codemods.doctor import rules as doctor
from codemods.engine.rule import SEVERITIES, Example, Rule, Severity, at_least
from codemods.fsdp import rules as fsdp
from codemods.huggingface import rules as huggingface
from codemods.imports import rules as imports
from codemods.launcher import rules as launcher
from codemods.lazy import rules as lazy
from codemods.lightning import rules as lightning
from codemods.notebooks import rules as notebooks
from codemods.project import rules as project
from codemods.release_names import rules as release_names
from codemods.training import rules as training

__all__ = ["RULES", "RULES_BY_CODE", "SEVERITIES", "Example", "Rule", "Severity", "at_least"]

_FAMILIES = (
    amp,
    checkpoint,
    compile_,
    containers,
    cuda_only,
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
    project,
    release_names,
    training,
)
# Listed by code: a family's rules may come from several concerns (XLA0 from imports,
# project, cuda_only and device).
RULES: tuple[Rule, ...] = tuple(
    sorted((rule for family in _FAMILIES for rule in family.RULES), key=lambda rule: rule.code)
)

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
