"""FSDP's part of the fact sheet (found by analysis.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst


@dataclass(frozen=True)
class FsdpWrap:
    """``FSDP(module, ...)``: its arguments by parameter name (positional ones named)."""

    arguments: tuple[tuple[str, cst.Arg], ...]
    unpacked: tuple[cst.Arg, ...]  # *args / **kwargs: their keywords are unknown


@dataclass(repr=False, eq=False)
class FsdpFacts:
    wraps: dict[cst.Call, FsdpWrap] = field(default_factory=dict)
    # Names bound once to a MixedPrecision(...) call: what a ``mixed_precision=name`` means.
    precision_policies: dict[str, cst.Call] = field(default_factory=dict)
    # Policy functions of this file (given as auto_wrap_policy, maybe through
    # functools.partial or a name) written with torch's ``nonwrapped_numel`` parameter:
    # renamed ``unwrapped_params``, torch_xla's keyword; those that already use that name
    # (the auto_wrap_policy argument) are reported.
    policy_renames: set[cst.FunctionDef] = field(default_factory=set)
    numel_policies: dict[cst.Arg, str] = field(default_factory=dict)
    # ``ModuleWrapPolicy(classes)`` calls: torch_xla's transformer_auto_wrap_policy does the same.
    module_wrap_policies: set[cst.Call] = field(default_factory=set)
    # State-dict and checkpoint code that works on torch's FSDP modules only: what it is.
    state_dicts: dict[cst.CSTNode, str] = field(default_factory=dict)
    # FSDP2's fully_shard(...) calls.
    fully_shards: set[cst.Call] = field(default_factory=set)
    # init_device_mesh(...) calls for a device other than the CPU (FSDP2, tensor parallel).
    device_meshes: set[cst.Call] = field(default_factory=set)
    # An FSDP model handed to a callable of another module that trains it: that module
    # cannot tell its optimizer steps an FSDP model's (they become xm.optimizer_step
    # there); the callable as the finding names it.
    foreign_training: dict[cst.Call, str] = field(default_factory=dict)
    # For other files: the project callables this file hands an FSDP model to, which train it
    # (their module's path, their name); their plain steps are right (training/held_conditions.py).
    trained_elsewhere: set[tuple[str, str]] = field(default_factory=set)
    # The first annotation naming an FSDP class (``model: FSDP``) in a file that may wrap
    # nothing itself: its model is wrapped elsewhere, and its optimizer steps stay plain.
    annotation: cst.Annotation | None = None

    @property
    def active(self) -> bool:
        return bool(self.wraps or self.fully_shards)
