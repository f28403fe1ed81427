"""Mixed precision's part of the fact sheet: the autocast regions, gradient scalers and
sync-free optimizers the amp analysis finds (analysis.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

from codemods import apis
from codemods.engine.imports import ImportTable

Flavor = Literal["cuda", "xla"]


# "sharded": torch's FSDP scaler (torch.amp.GradScaler's arguments, found_inf agreed on
# over the process group).  "torch_xla_1_13": torch_xla 1.13's autocast, which is
# torch.cuda.amp.autocast (no device argument); "torch_xla": the device-first one of 2.1 on.
Spelling = Literal["cuda_amp", "torch", "torch_xla", "torch_xla_1_13", "sharded"]


@dataclass(frozen=True)
class AutocastCall:
    """One autocast call, its arguments by parameter name (positional ones named)."""

    spelling: Spelling
    flavor: Flavor  # what it runs as: CUDA autocast, or XLA autocast
    arguments: tuple[tuple[str, cst.Arg], ...]
    # The name it is called through (``ac = torch.autocast`` ... ``ac("cuda")``): the
    # callee stays (the name may hold something else too), its arguments change.
    through: str | None = None

    def argument(self, name: str) -> cst.BaseExpression | None:
        return next((arg.value for key, arg in self.arguments if key == name), None)

    @property
    def device(self) -> cst.BaseExpression | None:
        """The device type (torch spellings) or the device (torch_xla spelling)."""
        return self.argument("device" if self.spelling == "torch_xla" else "device_type")


@dataclass(frozen=True)
class ScalerCall:
    """A gradient scaler construction; ``arguments`` leaves out its device argument."""

    spelling: Spelling
    flavor: Flavor
    arguments: tuple[cst.Arg, ...]
    device: cst.BaseExpression | None = None


@dataclass(frozen=True)
class SyncFreeOptimizer:
    """An optimizer under AMP that has a sync-free version."""

    name: str  # SGD, Adam or AdamW
    dropped: tuple[cst.Arg, ...]  # kernel-selection keywords the XLA tensors cannot take
    unpacked: bool  # **kwargs are passed on: they may carry such keywords


@dataclass(repr=False, eq=False)
class AmpFacts:
    table: ImportTable
    autocasts: dict[cst.Call, AutocastCall] = field(default_factory=dict)
    # CUDA-capable autocast calls that unpack their arguments (``torch.cuda.amp.autocast(**kwargs)``):
    # the tool cannot rebuild them, so they stay CUDA autocast (reported).
    unpacked_autocasts: set[cst.Call] = field(default_factory=set)
    # CUDA autocast handed on uncalled (``autocast = torch.cuda.amp.autocast if amp else
    # nullcontext``, ``partial(torch.autocast, ...)``) where no call of it is followed:
    # the reference and what it names.
    autocast_references: dict[cst.BaseExpression, str] = field(default_factory=dict)
    scalers: dict[cst.Call, ScalerCall] = field(default_factory=dict)
    # Names that hold a gradient scaler (``scaler``, ``self.scaler``, a ``scaler`` parameter).
    scaler_names: set[str] = field(default_factory=set)
    # Under AMP: optimizers that become their sync-free versions, and the others.
    syncfree: dict[cst.Call, SyncFreeOptimizer] = field(default_factory=dict)
    other_optimizers: dict[cst.Call, str] = field(default_factory=dict)
    # ``device_type = 'cuda' if 'cuda' in device else 'cpu'`` feeding autocast: the value;
    # and device-type names that already name XLA (converted before).
    device_types: dict[cst.BaseExpression, str] = field(default_factory=dict)
    xla_device_types: set[str] = field(default_factory=set)
    # Names the file moves tensors or models to (``x.to(self.device)``): the device it trains on,
    # which the port makes XLA's; autocast's ``device_type=self.device.type`` follows it.
    moved_to: set[str] = field(default_factory=set)
    # Autocasts whose device type is the ``.device.type`` of a tensor the function is handed
    # (``torch.autocast(device_type=x.device.type)`` in a ``forward``): the device it runs on, 'xla' there.
    tensor_device_types: set[cst.Call] = field(default_factory=set)
    # ``dtype = 'bfloat16' if torch.cuda.is_bf16_supported() else 'float16'``: the value.
    precision_choices: dict[cst.BaseExpression, str] = field(default_factory=dict)
    # The assignments of the values above (their rules' hooks rewrite the value there: another
    # concern may have replaced the value by another kind of expression, a folded choice).
    choosing_assignments: set[cst.Assign | cst.AnnAssign] = field(default_factory=set)
    # Names that switch AMP on (``enabled=use_amp``): flags worth switching on on XLA.
    flags: set[str] = field(default_factory=set)
    # Scalers enabled by a precision name (``enabled=(dtype == 'float16')``).
    precision_scalers: set[cst.Call] = field(default_factory=set)
    # Custom autograd decorators (a bare ``@custom_fwd``, by its Decorator; a call, by its Call)
    # in a CUDA or XLA spelling: what each is (custom_fwd or custom_bwd), what it runs as and its
    # spelling ("cuda_amp", "torch_xla" for torch_xla 1.13's, "torch" for torch.amp's).
    custom_autograd: dict[cst.CSTNode, tuple[str, Flavor, Spelling]] = field(default_factory=dict)
    # The script calls a project callable that trains with mixed precision.
    imported: bool = False
    # Where autocast and scalers are (qualified names of their functions), for other files.
    owners: set[str] = field(default_factory=set)
    # Of those, where the gradient scalers are, and where autocast is entered.
    scaler_owners: set[str] = field(default_factory=set)
    autocast_owners: set[str] = field(default_factory=set)
    # The methods (``Trainer.step``) that own autocast or a scaler, or call such a method of their
    # class on ``self`` (at any depth): what a call of a method of such a class sets up.
    method_owners: set[str] = field(default_factory=set)

    @property
    def active(self) -> bool:
        """The script trains with CUDA mixed precision (autocast or a gradient scaler),
        itself or through a callable of another module."""
        return (
            self.imported
            or any(a.flavor == "cuda" for a in self.autocasts.values())
            or bool(self.autocast_references)
            or any(s.flavor == "cuda" for s in self.scalers.values())
        )

    @property
    def owned_names(self) -> set[str]:
        """Names whose values this concern rewrites (not flags of the device concern)."""
        return set(self.device_types.values()) | set(self.precision_choices.values())

    def is_precision_check(self, node: cst.BaseExpression) -> bool:
        """``torch.cuda.is_bf16_supported()``, or an availability check, in a precision choice."""
        return (
            isinstance(node, cst.Call)
            and not node.args
            and self.table.resolve(node.func) in apis.AVAILABILITY_CHECKS | apis.PRECISION_CHECKS
        )
