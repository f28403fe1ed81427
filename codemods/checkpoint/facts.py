"""Checkpointing's part of the fact sheet (found by analysis.py)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import libcst as cst


@dataclass(repr=False, eq=False)
class CheckpointFacts:
    # torch.save calls: None when xm.save can take its arguments, else why not.
    saves: dict[cst.Call, str | None] = field(default_factory=dict)
    # Of those, the saves whose tensors cannot be on a device (host_saves.py: a preprocessing script's
    # ``feat.cpu()``, a DataLoader's batch, the state of a module built on the CPU and never moved): where
    # one process writes, torch.save stays (xm.save would only move device tensors, and there are none).
    host_saves: set[cst.Call] = field(default_factory=set)
    # torch.save calls that save a whole module object rather than its state_dict().
    whole_module_saves: set[cst.Call] = field(default_factory=set)
    # torch.load map_location values that name a CUDA or XLA device: XLA cannot restore
    # storages onto its device, so they load on the CPU (load_state_dict copies them over).
    map_locations: set[cst.BaseExpression] = field(default_factory=set)
    # map_location values that mention CUDA in a shape the tool does not rewrite (dicts).
    unported_map_locations: set[cst.BaseExpression] = field(default_factory=set)
    # torch.load calls without a map_location, in every file a run converts: a checkpoint
    # saved from a CUDA run (this script's, or a pretrained one the project ships) holds CUDA
    # storages, which load nowhere without CUDA; one saved on the CPU loads the same.
    unlocated_loads: set[cst.Call] = field(default_factory=set)
    # Of those, loads of a file the module writes itself with torch.save of host data (a list of
    # ids; checkpoint/host_data.py): no CUDA storages, it loads the same anywhere.  The port still adds
    # the map location (harmless); a single-file run does not name them as a checkpoint (XLA003).
    host_data_loads: set[cst.Call] = field(default_factory=set)
    # torch.load calls whose result is bound to a model of the file (a pickled module, not its
    # state_dict) that nothing moves after the load: with the only map location XLA loads to
    # (the CPU) it stays there, away from the batches the port moves (XLA403 reports it).
    module_loads: dict[cst.Call, tuple[str, ...]] = field(default_factory=dict)
    # ``device = None if torch.cuda.is_available() else "cpu"`` (a device analysis' selection) whose name the
    # function reads only as map locations: without CUDA it loads onto the CPU, as XLA must; the selection
    # stays, the locations are not ported (no finding).
    host_choices: set[cst.IfExp] = field(default_factory=set)
    # Each map location -> its load.
    located_loads: dict[cst.BaseExpression, cst.Call] = field(default_factory=dict)
    # torch.load calls whose value (or a part of it) is handed to load_state_dict: the tensors come back
    # on the CPU and load_state_dict copies them to the model's device.
    state_dict_loads: set[cst.Call] = field(default_factory=set)
    # Of those, the loads whose tensors are set into a module as they are (``setattr(submodule, name,
    # state_dict[k])``, ``torch.nn.Parameter(state_dict[k])``: transformers' low_cpu_mem_usage load): they
    # stay on the CPU there and go with the module when it is moved; the port moves none of them.
    module_set_loads: set[cst.Call] = field(default_factory=set)
    # A pickled module a single name takes from a load (``model = torch.load(p)``, ``model = ckpt["model"]``)
    # that nothing moves after: the value it is bound to -> (the name, the load).  The port moves it to the
    # XLA device (XLA403), as the original's map location (or its CUDA storages) placed it on the device.
    module_moves: dict[cst.BaseExpression, tuple[str, cst.Call]] = field(default_factory=dict)
    # An optimizer taken from the same load as a module that is moved after it (``optimizer =
    # ckpt["optimizer"]``): the value it is bound to -> (its name, the module's).  It holds the pickled
    # CPU parameters, which a move to XLA replaces with new ones: it would step nothing (XLA403 reports it).
    stale_optimizers: dict[cst.BaseExpression, tuple[str, str]] = field(default_factory=dict)
    # A load bound to a name whose attribute is used as a module (``gru = torch.load(p)``, then
    # ``gru.model.eval()``) that nothing moves: -> (the name, the module's chain).  Its modules stay on
    # the CPU (XLA403 reports it: the tool cannot move what a pickled object holds).
    object_loads: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    # What shows that a name holds a module, for XLA403's messages (names not in it are models of the
    # file): the first call of it (``checkpoint(...)``) or of a module's method on it (``net.eval()``).
    module_signs: dict[str, str] = field(default_factory=dict)
    # The file used CUDA: its own runs saved the checkpoints it loads on CUDA.
    cuda_script: bool = False
    # Each load under an ``if`` (statement or expression): the conditions, each with True where the load is
    # in its body, False in its else (``if torch.cuda.is_available(): torch.load(p)``).
    load_branches: dict[cst.Call, tuple[tuple[cst.If | cst.IfExp, bool], ...]] = field(default_factory=dict)

    def never_on_xla(self, load: cst.Call | None, kept_checks: Collection[cst.CSTNode]) -> bool:
        """``load`` is in a branch that never runs on XLA as the port leaves it: the body of a condition
        that a CUDA availability check it keeps makes False there (``kept_checks``: the device facts'
        ``kept_availability_checks``; XLA105 reports the check), or the else of one it makes True."""
        return load is not None and any(
            _on_xla(cond.test, kept_checks) is (not in_body) for cond, in_body in self.load_branches.get(load, ())
        )


def _on_xla(test: cst.BaseExpression, kept_checks: Collection[cst.CSTNode]) -> bool | None:
    """What ``test`` is on an XLA host where a kept availability check is False: None where it
    depends on something else."""
    if test in kept_checks:
        return False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = _on_xla(test.expression, kept_checks)
        return None if inner is None else not inner
    if type(test) is cst.BooleanOperation:
        left, right = _on_xla(test.left, kept_checks), _on_xla(test.right, kept_checks)
        deciding = type(test.operator) is cst.Or  # True decides an ``or``, False an ``and``
        if deciding in (left, right):
            return deciding
        return None if None in (left, right) else not deciding
    return None
