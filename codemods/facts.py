"""Analyse: one read-only walk over the parsed script builds its fact sheet.

The fact sheet answers every question the rewrites ask (is this name an optimizer?
is this loop a training loop? may this ``use_cuda`` flag be switched on?), keyed by
the nodes of the parsed module: the rewrite runs as a single traversal over the same
tree, so every rewrite sees the original nodes these facts point at.

One module per concern, each with its part of the sheet and its analysis; the shared
walk (walk.py) hands every node to each analysis in the order below, which is also the
order their results are finished in (later ones may read earlier ones; conclusions that
need every result are drawn in ``settle``).

Launcher scripts and Dockerfiles are other kinds of file with analyses of their own,
outside the shared walk: ``launcher.py`` (SageMaker estimators) and ``dockerfile.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.amp.analysis import AmpAnalysis, AmpFacts
from codemods.checkpoint.analysis import CheckpointAnalysis, CheckpointFacts
from codemods.compile.analysis import CompileAnalysis, CompileFacts
from codemods.cuda_only.analysis import CudaOnlyAnalysis, CudaOnlyFacts
from codemods.device.analysis import DeviceAnalysis, DeviceFacts
from codemods.distributed.analysis import DistributedAnalysis, DistributedFacts
from codemods.distributed.entry import EntryAnalysis, EntryFacts
from codemods.engine.nodes import subtrees_kept
from codemods.engine.walk import Analysis, Walk
from codemods.fsdp.analysis import FsdpAnalysis, FsdpFacts
from codemods.huggingface.analysis import HuggingFaceAnalysis, HuggingFaceFacts
from codemods.imports.analysis import ImportAnalysis, ImportFacts, import_anchor
from codemods.lazy.analysis import LazyAnalysis, LazyFacts
from codemods.lightning.analysis import LightningAnalysis, LightningFacts
from codemods.project.analysis import ProjectAnalysis, ProjectFacts
from codemods.project.summarise import ImportContext
from codemods.training.analysis import TrainingAnalysis, TrainingFacts

__all__ = ["Facts", "analyse"]


@dataclass
class Facts:
    """The fact sheet of one script, one part per concern."""

    imports: ImportFacts = field(default_factory=ImportFacts)
    device: DeviceFacts = field(init=False)
    distributed: DistributedFacts = field(default_factory=DistributedFacts)
    fsdp: FsdpFacts = field(default_factory=FsdpFacts)
    amp: AmpFacts = field(init=False)
    training: TrainingFacts = field(default_factory=TrainingFacts)
    checkpoint: CheckpointFacts = field(default_factory=CheckpointFacts)
    compile: CompileFacts = field(default_factory=CompileFacts)
    cuda_only: CudaOnlyFacts = field(default_factory=CudaOnlyFacts)
    project: ProjectFacts = field(default_factory=ProjectFacts)
    huggingface: HuggingFaceFacts = field(default_factory=HuggingFaceFacts)
    lightning: LightningFacts = field(default_factory=LightningFacts)
    entry: EntryFacts = field(default_factory=EntryFacts)
    lazy: LazyFacts = field(default_factory=LazyFacts)
    # Ids of the nodes the rewrites must visit (the others hold nothing to rewrite or report).
    hot_nodes: set[int] = field(default_factory=set)
    # The parent of each node walked, by ids (where findings are: positions.Positions).
    parents: dict[int, int | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.device = DeviceFacts(self.imports.table)
        self.amp = AmpFacts(self.imports.table)


ANALYSES: list[type[Analysis]] = [
    ImportAnalysis,
    DeviceAnalysis,
    DistributedAnalysis,
    FsdpAnalysis,
    AmpAnalysis,
    HuggingFaceAnalysis,  # before training: Accelerate scripts need no barriers or step rewrites
    LightningAnalysis,  # before training: nor do Lightning and Fabric scripts
    TrainingAnalysis,
    CheckpointAnalysis,
    CompileAnalysis,  # after training: a `.compile()` receiver may be one of its models
    CudaOnlyAnalysis,  # after AMP: sync-free optimizers drop their kernel keywords there
    ProjectAnalysis,
    EntryAnalysis,
    LazyAnalysis,  # after training: it checks every training loop
]


def analyse(module: cst.Module, imports: ImportContext | None = None, distributed: bool = False) -> Facts:
    """The fact sheet of one module; ``distributed``: make it multi-process even if it
    is a one-device script (``convert --distributed``)."""
    facts = Facts(ImportFacts(anchor=import_anchor(module)))
    facts.distributed.requested = distributed
    if imports is not None:
        facts.project.context = imports
    walk = Walk(facts, ANALYSES)
    with subtrees_kept():
        walk.run(module)
        walk.finish()
    facts.hot_nodes = walk.hot
    facts.parents = walk.parents
    return facts
