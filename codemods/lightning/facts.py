"""Lightning's part of the fact sheet: its Trainer and Fabric (found by analysis.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

Kind = Literal["trainer", "fabric"]


@dataclass(frozen=True)
class Setting:
    """One accelerator, strategy or precision value that selects CUDA: what it becomes
    on XLA (None: it has no XLA form), where it is read, and why when it cannot go."""

    parameter: str
    kind: Kind
    new: str | None
    why: str = ""
    source: str = ""  # "" the argument itself, else the name or flag it comes from
    # A choice by a CUDA availability check (``"gpu" if torch.cuda.is_available() else "cpu"``,
    # keyed by the whole conditional): its CUDA branch, whose XLA value the whole becomes.
    chosen: str = ""


@dataclass(repr=False, eq=False)
class LightningFacts:
    constructions: dict[cst.Call, Kind] = field(default_factory=dict)
    # The literal values to change (or report), keyed by the literal (or by the conditional
    # that picks one by a CUDA availability check: ``Setting.chosen``).
    settings: dict[cst.BaseExpression, Setting] = field(default_factory=dict)
    # Arguments the tool cannot follow (computed values), and Lightning 1.x arguments: reported.
    unknown: dict[cst.Arg, str] = field(default_factory=dict)
    # Lightning 0.x and 1.x Trainer arguments, with the arguments of the same call that only
    # Lightning 0.x takes (empty: the call may be Lightning 1.x's).
    legacy: dict[cst.Arg, tuple[str, ...]] = field(default_factory=dict)
    modules: set[str] = field(default_factory=set)
    # ``Trainer.from_argparse_args(args)`` (Lightning 1.x; Lightning 2 removed it), whose
    # accelerator comes from the command line: the launchers that name the file and pass
    # one, with the Lightning flags they pass (``run.sh``, ``--accelerator gpu --precision bf16``).
    from_command_line: dict[cst.Call, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # Of those, the calls whose arguments come from a dict the script edits (``opt =
    # argparse.Namespace(**config)``): the dict's name, and its edits of the accelerator, in the
    # order of the code (``config["accelerator"] = "ddp"``, ``del config["accelerator"]`` with the
    # condition it is under), which override what the command line passes.
    edited_accelerator: dict[cst.Call, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # ``Trainer(accelerator=args.accelerator)`` whose flag's default the port changes but a launcher
    # passes a CUDA value on its command line: the launchers, with what they pass (``--accelerator gpu``).
    launched: dict[cst.Arg, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # The ``optimizer_idx`` parameter of a LightningModule's ``training_step`` (Lightning 1.x's
    # automatic optimization over several optimizers; Lightning 2 raises on it), with the class.
    optimizer_indices: dict[cst.Param, str] = field(default_factory=dict)
    # LightningModules whose ``configure_optimizers`` returns an optimizer their ``__init__`` is
    # handed (``self.opt = opt``): (class, the parameter's index without self, its name, the attribute).
    optimizer_receivers: set[tuple[str, int, str, str]] = field(default_factory=set)
    # Optimizers built over a module's parameters before Lightning moves it, that a
    # LightningModule of the file is handed and returns from ``configure_optimizers``: the
    # construction, with the class and the attribute it keeps the optimizer in.
    prebuilt_optimizers: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    # ``fabric.backward(loss)`` and the like on a Fabric made elsewhere.
    fabric_used: bool = False

    @property
    def drives_training(self) -> bool:
        """Lightning runs the training: no barriers, loaders, optimizer steps or launches
        of the tool's own."""
        return bool(self.constructions or self.modules or self.fabric_used or self.from_command_line)
