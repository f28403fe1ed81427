"""The fact sheet: one part per concern, each declared in its concern's ``facts.py``.

The fact sheet answers every question the rewrites ask (is this name an optimizer?
is this loop a training loop? may this ``use_cuda`` flag be switched on?), keyed by
the nodes of the parsed module: the rewrite runs as a single traversal over the same
tree, so every rewrite sees the original nodes these facts point at.  The analyses
fill it (codemods/analyse.py) and read each other's parts through it: it imports no
analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codemods.amp.facts import AmpFacts
from codemods.checkpoint.facts import CheckpointFacts
from codemods.compile.facts import CompileFacts
from codemods.cuda_only.facts import CudaOnlyFacts
from codemods.device.facts import DeviceFacts, DeviceValueFacts, ObligationFacts
from codemods.distributed.facts import DistributedFacts, EntryFacts
from codemods.engine.imports import ImportFacts
from codemods.fsdp.facts import FsdpFacts
from codemods.huggingface.facts import HuggingFaceFacts
from codemods.lazy.facts import HostReadFacts, RecompilationFacts
from codemods.lightning.facts import LightningFacts
from codemods.project.facts import ProjectFacts
from codemods.training.facts import LoaderFacts, TrainingFacts

__all__ = ["Facts"]


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
    nodes_to_visit: set[int] = field(default_factory=set)
    # The parent of each node walked, by ids (where findings are: positions.Positions).
    parents: dict[int, int | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.device = DeviceFacts(self.imports.table)
        self.amp = AmpFacts(self.imports.table)
