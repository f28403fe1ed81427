"""Checkpoints: ``torch.save`` calls (and whether ``xm.save`` can take their arguments),
saves of whole modules, and ``torch.load`` map locations that name a device (or are
missing).  A ``torch.save`` in a Dataset class (a feature cache
written by ``__getitem__``) saves host data: it is no checkpoint and stays (docs/choices.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.checkpoint.host_data import host_data, path_key
from codemods.checkpoint.rules.xla401_xla_save import XLA_SAVE_KEYWORDS
from codemods.device.analysis import DeviceAnalysis
from codemods.engine.nodes import arg_value, call_args, dotted, is_cuda_device_string, method_name, receiver, walk
from codemods.engine.walk import Analysis, Walk, assignments, attributes_named, calls_of

if TYPE_CHECKING:
    from codemods.facts import Facts


# torch.hub's loaders of a checkpoint at a URL: torch.load's map_location, third.
_URL_LOADS = ("torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url")


class CheckpointAnalysis(Analysis):
    facts: Facts

    name = "checkpoint"
    reads = ("device", "training")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.checkpoint
        self.device = walk.analysis(DeviceAnalysis)
        self.saved: list[tuple[cst.Call, str | None]] = []  # each save, and the name it saves
        self.load_locations: list[cst.BaseExpression] = []
        self.loads_without_location: list[cst.Call] = []
        # Every torch.save of the module (Datasets' too): (the file as written, what it saves).
        self.written: list[tuple[str | None, cst.BaseExpression | None]] = []
        self.assigned: dict[str, list[cst.BaseExpression]] = {}  # name chain -> each value bound
        # The classes of this file that derive from a Dataset, and per enclosing class
        # whether it is one of them.
        self.dataset_classes: set[str] = set()
        self.in_dataset: list[bool] = []
        # The names each call's value is bound to (``model, opt = torch.load(f)``), and, per load,
        # the names it binds that no later ``.to(...)``/``.cuda()`` moves (module_loads).
        self.bound_by: dict[cst.Call, list[str]] = {}
        self.unmoved: dict[cst.Call, set[str]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        if type(node.value) is cst.Call:
            self.bound_by[node.value] = [
                name
                for target in node.targets
                for part in (
                    target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target]
                )
                if (name := dotted(part.value if isinstance(part, cst.BaseElement) else part)) is not None
            ]

    @attributes_named("to", "cuda")
    def _move(self, node: cst.Attribute) -> None:
        if (moved := dotted(node.value)) is not None:
            for names in self.unmoved.values():
                names.discard(moved)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        is_dataset = any(
            self.walk.resolve(base.value) in apis.DATASET_BASES or dotted(base.value) in self.dataset_classes
            for base in node.bases
        )
        if is_dataset:
            self.dataset_classes.add(node.name.value)
        self.in_dataset.append(is_dataset)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.in_dataset.pop()

    @calls_of("torch.load", *_URL_LOADS)
    def _load(self, node: cst.Call) -> None:
        self.unmoved[node] = set(self.bound_by.get(node, ()))
        position = 2 if self.walk.callee in _URL_LOADS else 1  # load_state_dict_from_url(url, model_dir, map_location)
        if (location := arg_value(node, position, "map_location")) is not None:
            self.load_locations.append(location)
            if self.device.names_a_device(location) or _storages_onto_cuda(location):
                self.device.mark_device_code()  # becomes "cpu": worth running on XLA
        elif node.args and not any(a.star for a in node.args):
            self.loads_without_location.append(node)

    @assignments()
    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        self.assigned.setdefault(name, []).append(value)

    @calls_of("torch.save")
    def _save(self, node: cst.Call) -> None:
        self.written.append((path_key(arg_value(node, 1, "f")), arg_value(node, 0, "obj")))
        if any(self.in_dataset):  # host data, saved by every process and DataLoader worker
            return
        keywords = call_args(node)[1]
        unknown = sorted(set(keywords) - set(XLA_SAVE_KEYWORDS))
        if any(a.star for a in node.args):
            self.part.saves[node] = "its arguments are unpacked"
        elif unknown:
            self.part.saves[node] = f"xm.save takes no {', '.join(unknown)}"
        else:
            self.part.saves[node] = None
        self.saved.append((node, dotted(arg_value(node, 0, "obj"))))

    def finish(self) -> None:
        models = self.facts.training.models
        self.part.whole_module_saves = {call for call, saved in self.saved if saved in models}
        for location in self.load_locations:
            if self.device.names_a_device(location) or _storages_onto_cuda(location):
                self.part.map_locations.add(location)
            elif any(is_cuda_device_string(n) for n in walk(location)) and not _all_to_the_cpu(location):
                self.part.unported_map_locations.add(location)
        device = self.device.part
        self.part.cuda_script = bool(
            device.strings or device.calls or device.selections or device.ifs or device.dot_cuda
        )
        self.part.unlocated_loads.update(self.loads_without_location)
        self._host_data_loads()
        for load, names in self.unmoved.items():
            if loaded_models := sorted(names & models):
                self.part.module_loads[load] = tuple(loaded_models)

    def _host_data_loads(self) -> None:
        """Loads of a file that the module itself writes with host data only (host_data.py)."""
        reloads = frozenset(self.loads_without_location)
        for load in self.loads_without_location:
            path = path_key(arg_value(load, 0, "f"))
            saved = [value for written, value in self.written if written == path]
            if (
                path is not None
                and saved
                and all(value is not None and host_data(value, self.assigned, reloads) for value in saved)
            ):
                self.part.host_data_loads.add(load)


def _all_to_the_cpu(location: cst.BaseExpression) -> bool:
    """A dict map location that sends every device it names to the CPU (``{"cuda:0": "cpu"}``): it loads
    without CUDA, the tensors on the CPU for load_state_dict to copy over."""
    return (
        isinstance(location, cst.Dict)
        and bool(location.elements)
        and all(
            isinstance(element, cst.DictElement)
            and isinstance(element.value, cst.SimpleString)
            and element.value.evaluated_value == "cpu"
            for element in location.elements
        )
    )


def _storages_onto_cuda(location: cst.BaseExpression) -> bool:
    """``lambda storage, loc: storage.cuda()`` (``.cuda(loc)``, ``.cuda(args.gpu)``): a map location
    that moves every storage onto a CUDA device."""
    if type(location) is not cst.Lambda or not location.params.params:
        return False
    body = location.body
    return (
        type(body) is cst.Call
        and method_name(body) == "cuda"
        and dotted(receiver(body)) == location.params.params[0].name.value
    )
