"""Analyse: one read-only walk over the parsed script builds its fact sheet
(codemods/facts.py).

One module per concern, each with its part of the sheet and its analysis; the shared
walk (engine/walk.py) hands every node to each analysis, and finishes them, in an order
derived from what each declares it reads (``Analysis.reads``: the ones it reads come
first); conclusions that need every result are drawn in ``conclude``, in an order derived
from ``Analysis.conclude_reads``.  tests/engine/test_analysis_reads.py checks the declarations.

Launcher scripts and Dockerfiles are other kinds of file with analyses of their own,
outside the shared walk: ``launcher.py`` (SageMaker estimators) and ``dockerfile.py``.
"""

from __future__ import annotations

import libcst as cst

from codemods import apis
from codemods.amp.analysis import AmpAnalysis
from codemods.checkpoint.analysis import CheckpointAnalysis
from codemods.compile.analysis import CompileAnalysis
from codemods.cuda_only.analysis import CudaOnlyAnalysis
from codemods.cuda_only.dgl_graphs import DglGraphAnalysis
from codemods.cuda_only.handed_strings import HandedStringAnalysis
from codemods.cuda_only.rules import runtime_apis
from codemods.device.analysis import DeviceAnalysis
from codemods.device.config_devices import ConfigDeviceAnalysis
from codemods.device.flag_choices import FlagChoiceAnalysis
from codemods.device.guarded_moves import GuardedMoveAnalysis
from codemods.device.obligations import ObligationAnalysis
from codemods.device.values import DeviceValueAnalysis
from codemods.distributed.collectives import CollectiveAnalysis
from codemods.distributed.ddp import DdpAnalysis
from codemods.distributed.entry import EntryAnalysis
from codemods.distributed.fallbacks import FallbackAnalysis
from codemods.distributed.launch import LaunchAnalysis
from codemods.distributed.queried_backends import QueriedBackendAnalysis
from codemods.distributed.ranks import RankAnalysis
from codemods.distributed.reduce_ops import ReduceOpAnalysis
from codemods.distributed.samplers import SamplerAnalysis
from codemods.distributed.scatter_inputs import ScatterInputAnalysis
from codemods.engine.hooks import looked_at
from codemods.engine.imports import ImportFacts
from codemods.engine.nodes import subtrees_kept
from codemods.engine.walk import Analysis, Walk, walk_order
from codemods.fsdp.analysis import FsdpAnalysis
from codemods.huggingface.accelerate_deepspeed import AccelerateDeepSpeedAnalysis
from codemods.huggingface.analysis import HuggingFaceAnalysis
from codemods.imports.analysis import ImportAnalysis, expect_imports, import_anchor, imports_after_code
from codemods.lazy.flow import FlowAnalysis
from codemods.lazy.host_reads import HostReadAnalysis
from codemods.lazy.recompilation_sources import RecompilationSourceAnalysis
from codemods.lightning.analysis import LightningAnalysis
from codemods.project.analysis import ProjectAnalysis
from codemods.project.import_context import ImportContext
from codemods.training.analysis import TrainingAnalysis
from codemods.training.library_steppers import LibraryStepperAnalysis
from codemods.training.loaders import LoaderAnalysis

__all__ = ["Facts", "analyse"]
from codemods.facts import Facts

# References the rewrites inspect by themselves (beyond the fact sheet's nodes): the
# source-side tables (codemods/apis.py, cuda_only/rules/runtime_apis.py), any torch.cuda or
# torch.backends API, the torch_xla names of either release, and the names the rules' own
# hooks look at (engine/hooks.py).  The walk marks them so
# the rewrite traversal visits them.
INSPECTED_PREFIXES = (
    "torch.cuda.",
    "torch.backends.",
    "torch_xla.",
    "torch.distributed.",
    "torch.multiprocessing.",
    "torch.nn.parallel.",
    "torch.amp.",
    "torch.accelerator.",
)
INSPECTED_NAMES = frozenset(
    {
        *runtime_apis.CUDA_RUNTIME,
        *apis.DISTRIBUTED,
        *apis.AVAILABILITY_CHECKS,
        *apis.CUDA_TENSOR_TYPES,
        *apis.TORCH_AUTOCAST,
        "torch_xla",
    }
)


def inspected(qualified: str) -> bool:
    """Whether a reference that resolves to ``qualified`` is one the rewrites look at."""
    return qualified in INSPECTED_NAMES or qualified.startswith(INSPECTED_PREFIXES) or looked_at(qualified)


# In the fact sheet's order; the walk takes them in an order derived from what each
# reads (``Analysis.reads``: it comes after those), which keeps this one where it can.
ANALYSES: list[type[Analysis]] = walk_order(
    [
        ImportAnalysis,
        DeviceAnalysis,
        FlagChoiceAnalysis,
        DeviceValueAnalysis,
        ConfigDeviceAnalysis,
        GuardedMoveAnalysis,
        RankAnalysis,
        DdpAnalysis,
        ScatterInputAnalysis,
        QueriedBackendAnalysis,
        LaunchAnalysis,
        SamplerAnalysis,
        FallbackAnalysis,
        ReduceOpAnalysis,
        CollectiveAnalysis,
        FsdpAnalysis,
        AmpAnalysis,
        TrainingAnalysis,
        LibraryStepperAnalysis,
        ObligationAnalysis,
        LoaderAnalysis,
        CheckpointAnalysis,
        CompileAnalysis,
        CudaOnlyAnalysis,
        HandedStringAnalysis,
        DglGraphAnalysis,
        ProjectAnalysis,
        HuggingFaceAnalysis,
        AccelerateDeepSpeedAnalysis,
        LightningAnalysis,
        EntryAnalysis,
        FlowAnalysis,
        HostReadAnalysis,
        RecompilationSourceAnalysis,
    ]
)


def analyse(module: cst.Module, imports: ImportContext | None = None, distributed: bool = False) -> Facts:
    """The fact sheet of one module; ``distributed``: make it multi-process even if it
    is a one-device script (``convert --distributed``)."""
    facts = Facts(ImportFacts(anchor=import_anchor(module), after_code=imports_after_code(module)))
    expect_imports(facts.imports.table, facts.imports.after_code)
    facts.distributed.requested = distributed
    if imports is not None:
        facts.project.context = imports
        facts.imports.star_names_of = imports.star_names
    walk = Walk(facts, ANALYSES, inspected)
    with subtrees_kept():
        walk.run(module)
        walk.finish()
    facts.nodes_to_visit = walk.to_visit
    facts.parents = walk.parents
    return facts
