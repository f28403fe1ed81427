"""Lazy mode's parts of the fact sheet: host reads (host_reads.py) and recompilation
sources (recompilation_sources.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

ReadKind = Literal["logging", "control", "accumulation", "value"]


@dataclass(frozen=True)
class HostRead:
    """A read of a device value to the host inside a training loop."""

    kind: ReadKind
    # What the closure receives instead (evaluated now): the receiver of ``t.item()``,
    # or the device expression itself for ``print(t)``, ``f"{t}"``, ``float(t)``.
    value: cst.BaseExpression
    # Under an ``if`` within the loop (``if (step + 1) % save_steps == 0:``): not every step.
    conditional: bool = False


@dataclass(frozen=True)
class StepClosure:
    """A logging statement to run in ``xm.add_step_closure``: its reads, in order."""

    reads: tuple[cst.CSTNode, ...]
    loop: cst.CSTNode
    blocked: str | None = None  # why it cannot be moved (None: it can)
    # The read values (name chains) that the step changes in place after the statement
    # (``loss += w * reg``, ``loss.add_(...)``, ``loss[0] = ...``): the closure gets a copy.
    changed_later: frozenset[str] = frozenset()


@dataclass(repr=False, eq=False)
class HostReadFacts:
    # Reads of device values to the host inside training loops.
    reads: dict[cst.CSTNode, HostRead] = field(default_factory=dict)
    # Implicit reads: tests on a device value (``if loss < best:``, ``while t.sum() > 0``).
    device_tests: set[cst.CSTNode] = field(default_factory=set)
    # Logging statements (cst.Expr) whose reads move into a step closure.
    step_closures: dict[cst.Expr, StepClosure] = field(default_factory=dict)
    # Evaluation loops that carry device state across iterations: loop -> the names.
    carried_state: dict[cst.CSTNode, tuple[str, ...]] = field(default_factory=dict)
    # Those of them that read nothing to the host (a sampling loop under no_grad, ``for t in
    # reversed(range(1000)): img = step(net(img))``): the whole loop is one graph.
    unread_carried: set[cst.CSTNode] = field(default_factory=set)
    # The file's functions and methods whose every return reads a number to the host
    # (``def get_step(self): return self.step.item()``), qualified (``Net.get_step``): a call of
    # one gives a Python number, in this module and in the project's others (their summaries).
    host_returns: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class SlicedData:
    """A device tensor sliced with a per-step Python integer."""

    name: str
    varying: bool  # the slice changes every step (the others only move with their data)
    device: cst.BaseExpression | None  # fix: slice on the host, then move to this device
    reason: str = ""  # why it is not fixed


@dataclass(repr=False, eq=False)
class RecompilationFacts:
    # Subscripts of device-resident data with a per-step index (and, where the data is
    # kept on the host instead, every other subscript of it), and the moves that made
    # it device-resident: ``x.to(device)`` -> ``x``.
    sliced_data: dict[cst.Subscript, SlicedData] = field(default_factory=dict)
    host_data_moves: dict[cst.Call, str] = field(default_factory=dict)
    # Per-step Python numbers in shapes and static arguments: node -> the number's name.
    static_arguments: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Data-dependent output shapes: node -> the operation.
    dynamic_shapes: dict[cst.CSTNode, str] = field(default_factory=dict)
    # DataLoaders that feed a training loop and keep a short last batch.
    short_last_batch: set[cst.Call] = field(default_factory=set)
