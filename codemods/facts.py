"""Analyse: one read-only walk over the parsed script builds its fact sheet.

The fact sheet answers every question the rewrites ask (is this name an optimizer?
is this loop a training loop? may this ``use_cuda`` flag be switched on?), keyed by
the nodes of the parsed module: the rewrite runs as a single traversal over the same
tree, so every rewrite sees the original nodes these facts point at.

One module per concern, each with its part of the sheet and its analysis; the shared
walk (engine/walk.py) hands every node to each analysis, and finishes them, in an order
derived from what each declares it reads (``Analysis.reads``: the ones it reads come
first); conclusions that need every result are drawn in ``settle``, in an order derived
from ``Analysis.settle_reads``.  tests/engine/test_analysis_reads.py checks the declarations.

Launcher scripts and Dockerfiles are other kinds of file with analyses of their own,
outside the shared walk: ``launcher.py`` (SageMaker estimators) and ``dockerfile.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods import apis
from codemods.amp.analysis import AmpAnalysis, AmpFacts
from codemods.checkpoint.analysis import CheckpointAnalysis, CheckpointFacts
from codemods.compile.analysis import CompileAnalysis, CompileFacts
from codemods.cuda_only import source_apis
from codemods.cuda_only.analysis import CudaOnlyAnalysis, CudaOnlyFacts
from codemods.cuda_only.handed_strings import HandedStringAnalysis
from codemods.device.analysis import DeviceAnalysis, DeviceFacts
from codemods.device.obligations import ObligationAnalysis, ObligationFacts
from codemods.device.values import DeviceValueAnalysis, DeviceValueFacts
from codemods.distributed.ddp import DdpAnalysis
from codemods.distributed.entry import EntryAnalysis, EntryFacts
from codemods.distributed.facts import DistributedFacts
from codemods.distributed.fallbacks import FallbackAnalysis
from codemods.distributed.launch import LaunchAnalysis
from codemods.distributed.ranks import RankAnalysis
from codemods.distributed.reduce_ops import ReduceOpAnalysis
from codemods.distributed.samplers import SamplerAnalysis
from codemods.engine.imports import ImportFacts
from codemods.engine.nodes import subtrees_kept
from codemods.engine.walk import Analysis, Walk, walk_order
from codemods.fsdp.analysis import FsdpAnalysis, FsdpFacts
from codemods.huggingface.analysis import HuggingFaceAnalysis, HuggingFaceFacts
from codemods.imports.analysis import ImportAnalysis, expect_imports, import_anchor, imports_after_code
from codemods.lazy.flow import FlowAnalysis
from codemods.lazy.host_reads import HostReadAnalysis, HostReadFacts
from codemods.lazy.recompilation_sources import RecompilationFacts, RecompilationSourceAnalysis
from codemods.lightning.analysis import LightningAnalysis, LightningFacts
from codemods.project.analysis import ProjectAnalysis, ProjectFacts
from codemods.project.summarise import ImportContext
from codemods.training.analysis import TrainingAnalysis, TrainingFacts
from codemods.training.loaders import LoaderAnalysis, LoaderFacts

__all__ = ["Facts", "analyse"]


@dataclass(repr=False, eq=False)
class Facts:
    """The fact sheet of one script, one part per concern."""

    imports: ImportFacts = field(default_factory=ImportFacts)
    device: DeviceFacts = field(init=False)
    device_values: DeviceValueFacts = field(default_factory=DeviceValueFacts)
    obligations: ObligationFacts = field(default_factory=ObligationFacts)
    distributed: DistributedFacts = field(default_factory=DistributedFacts)
    fsdp: FsdpFacts = field(default_factory=FsdpFacts)
    amp: AmpFacts = field(init=False)
    training: TrainingFacts = field(default_factory=TrainingFacts)
    loaders: LoaderFacts = field(default_factory=LoaderFacts)
    checkpoint: CheckpointFacts = field(default_factory=CheckpointFacts)
    compile: CompileFacts = field(default_factory=CompileFacts)
    cuda_only: CudaOnlyFacts = field(default_factory=CudaOnlyFacts)
    project: ProjectFacts = field(default_factory=ProjectFacts)
    huggingface: HuggingFaceFacts = field(default_factory=HuggingFaceFacts)
    lightning: LightningFacts = field(default_factory=LightningFacts)
    entry: EntryFacts = field(default_factory=EntryFacts)
    host_reads: HostReadFacts = field(default_factory=HostReadFacts)
    recompilation: RecompilationFacts = field(default_factory=RecompilationFacts)
    # Ids of the nodes the rewrites must visit (the others hold nothing to rewrite or report).
    hot_nodes: set[int] = field(default_factory=set)
    # The parent of each node walked, by ids (where findings are: positions.Positions).
    parents: dict[int, int | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.device = DeviceFacts(self.imports.table)
        self.amp = AmpFacts(self.imports.table)


# References the rewrites inspect by themselves (beyond the fact sheet's nodes): the
# source-side tables (codemods/apis.py, cuda_only/source_apis.py), any torch.cuda or
# torch.backends API, and the torch_xla names of either release.  The walk marks them so
# the rewrite traversal visits them.
INSPECTED_PREFIXES = (
    "torch.cuda.", "torch.backends.", "torch_xla.", "torch.distributed.", "torch.multiprocessing.",
    "torch.nn.parallel.", "torch.amp.", "torch.accelerator.", *source_apis.THIRD_PARTY_MODULES,
)
INSPECTED_NAMES = frozenset(
    {
        *source_apis.CUDA_RUNTIME, *apis.DISTRIBUTED, *source_apis.THIRD_PARTY, *apis.AVAILABILITY_CHECKS,
        *apis.CUDA_TENSOR_TYPES, *apis.TORCH_AUTOCAST, "torch_xla",
    }
)


def inspected(qualified: str) -> bool:
    """Whether a reference that resolves to ``qualified`` is one the rewrites look at."""
    return qualified in INSPECTED_NAMES or qualified.startswith(INSPECTED_PREFIXES)


# In the fact sheet's order; the walk takes them in an order derived from what each
# reads (``Analysis.reads``: it comes after those), which keeps this one where it can.
ANALYSES: list[type[Analysis]] = walk_order([
    ImportAnalysis,
    DeviceAnalysis,
    DeviceValueAnalysis,
    RankAnalysis,
    DdpAnalysis,
    LaunchAnalysis,
    SamplerAnalysis,
    FallbackAnalysis,
    ReduceOpAnalysis,
    FsdpAnalysis,
    AmpAnalysis,
    TrainingAnalysis,
    ObligationAnalysis,
    LoaderAnalysis,
    CheckpointAnalysis,
    CompileAnalysis,
    CudaOnlyAnalysis,
    HandedStringAnalysis,
    ProjectAnalysis,
    HuggingFaceAnalysis,
    LightningAnalysis,
    EntryAnalysis,
    FlowAnalysis,
    HostReadAnalysis,
    RecompilationSourceAnalysis,
])


def analyse(module: cst.Module, imports: ImportContext | None = None, distributed: bool = False) -> Facts:
    """The fact sheet of one module; ``distributed``: make it multi-process even if it
    is a one-device script (``convert --distributed``)."""
    facts = Facts(ImportFacts(anchor=import_anchor(module), after_code=imports_after_code(module)))
    expect_imports(facts.imports.table, facts.imports.after_code)
    facts.distributed.requested = distributed
    if imports is not None:
        facts.project.context = imports
    walk = Walk(facts, ANALYSES, inspected)
    with subtrees_kept():
        walk.run(module)
        walk.finish()
    facts.hot_nodes = walk.hot
    facts.parents = walk.parents
    return facts
