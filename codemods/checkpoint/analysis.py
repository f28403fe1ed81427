"""Checkpoints: ``torch.save`` calls (and whether ``xm.save`` can take their arguments),
saves of whole modules, and ``torch.load`` map locations that name a device (or are
missing).  A ``torch.save`` in a Dataset class (a feature cache
written by ``__getitem__``) saves host data: it is no checkpoint and stays (docs/choices.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis, equivalent_apis
from codemods.checkpoint.cpu_fallbacks import guarded_loads
from codemods.checkpoint.host_data import built_off_device, host_data, input_name, moves, path_key
from codemods.checkpoint.host_saves import HostSaves, saved_arguments
from codemods.checkpoint.private_files import makes_private_file, private_file
from codemods.checkpoint.published_weights import published_weights
from codemods.checkpoint.rules.xla401_xla_save import XLA_SAVE_KEYWORDS
from codemods.checkpoint.written_files import path_chains
from codemods.device.analysis import DeviceAnalysis
from codemods.engine.nodes import (
    arg_value,
    call_args,
    dotted,
    is_cuda_device_string,
    method_name,
    names_the_cpu,
    receiver,
    walk,
)
from codemods.engine.walk import Analysis, Walk, assignments, attributes_named, calls_of

if TYPE_CHECKING:
    from codemods.facts import Facts


# The methods of a module (none an optimizer or a dict has too): a name they are called on holds one.
_MODULE_METHODS = frozenset(
    ("eval", "train", "parameters", "named_parameters", "modules", "named_modules", "children", "forward", "apply")
)

# The calls that give the XLA device, in either target's names.
_XLA_DEVICES = ("torch_xla.device", "torch_xla.core.xla_model.xla_device")

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
        self.tries: list[cst.Try] = []  # cpu_fallbacks.py: a load whose handler loads onto the CPU
        # Every torch.save of the module (Datasets' too): (the file as written, what it saves).
        self.written: list[tuple[str | None, cst.BaseExpression | None]] = []
        self.assigned: dict[str, list[cst.BaseExpression]] = {}  # name chain -> each value bound
        # The same by scope: (the function's qualified name, a plain name) or ("", an attribute chain or a
        # module-level name) -> each value bound, with the scope it is read in.
        self.scoped: dict[tuple[str, str], list[tuple[cst.BaseExpression, str]]] = {}
        # The classes of this file that derive from a Dataset, and per enclosing class
        # whether it is one of them.
        self.dataset_classes: set[str] = set()
        self.in_dataset: list[bool] = []
        # The enclosing classes' names; the Dataset classes that torch.save (a processed cache,
        # ``torch.save(self.collate(items), path)`` in a PyG ``process()``), and each load in one.
        self.class_names: list[str] = []
        self.saving_datasets: set[str] = set()
        self.dataset_loads: list[tuple[cst.Call, str]] = []
        self.dataset_saves: dict[str, list[tuple[cst.BaseExpression | None, str]]] = {}  # with the save's scope
        self.dataset_files: dict[str, set[str | None]] = {}  # the files they save, as written (_file_text)
        # Per Dataset class, the attributes its ``__init__`` binds to its own parameters (``self.data =
        # data``): the data it is built from, read by ``process()``.
        self.dataset_inputs: dict[str, set[str]] = {}
        self.constructions: list[cst.Call] = []  # the calls of a plain name (``Graphs(root, data)``)
        # The names each call's value is bound to (``model, opt = torch.load(f)``), and, per load,
        # the names it binds that no later ``.to(...)``/``.cuda()``/``.cpu()`` moves (module_loads).
        self.bound_by: dict[cst.Call, list[str]] = {}
        self.unmoved: dict[cst.Call, set[str]] = {}
        # What each load's value is bound to: the value a single name takes (the load itself, or a
        # subscript of it: ``model = ckpt["model"]``), by name, or None for a name of a tuple target.
        self.parts: dict[cst.Call, list[tuple[str, cst.BaseExpression | None]]] = {}
        self.subscripted: dict[cst.Call, list[tuple[str, cst.BaseExpression | None]]] = {}  # ``torch.load(p)["model"]``
        self.ifs: set[int] = set()  # the ``if`` statements, by id
        self.assign_of: dict[cst.BaseExpression, cst.Assign] = {}  # each assigned value's statement
        self.bound_at: dict[tuple[cst.Call, str], cst.CSTNode] = {}  # where a load's name is bound
        self.whole: set[cst.Call] = set()  # calls that are the whole value of a single name
        self.load_named: dict[str, cst.Call] = {}  # the name a load's whole value is bound to (``ckpt``)
        self.xla_script = False  # the file asks for the XLA device (a port, run again)
        self.moved_at_once: set[str] = set()  # names bound to a part of a value moved as it is bound
        self.moved: set[str] = set()  # names moved with ``.to(...)``/``.cuda()`` anywhere
        self.module_used: set[str] = set()  # names called, or with a module's method called on them
        self.module_methods: set[str] = set()  # the names with a module's method called on them
        # The names read as a dict, by scope: subscripted by a string (``checkpoint["model_state_dict"]``).
        self.dict_read: set[tuple[str, str]] = set()
        self.load_scopes: dict[cst.Call, str] = {}  # each load's scope
        self.state_dict_roots: set[str] = set()  # the names handed (or subscripted) to load_state_dict
        self.state_dict_calls: list[cst.Call] = []  # ``x.load_state_dict(torch.load(p))``
        self.location_functions: dict[cst.BaseExpression, cst.FunctionDef] = {}  # a map location's function
        self.set_into_modules: set[str] = set()  # the names whose tensors are set into a module
        self.save_functions: dict[cst.Call, cst.FunctionDef | None] = {}  # each torch.save's function
        self.module: cst.Module | None = None
        # The names ``with ... as`` binds to a private file (private_files.py), by scope.
        self.with_files: set[tuple[str, str]] = set()
        # The private files a ``torch.save`` writes, by scope: a load of one reads this process's own data.
        self.private_saves: set[tuple[str, str]] = set()

    def visit_If(self, node: cst.If) -> None:
        self.ifs.add(id(node))

    def _other_branch(self, bound: cst.CSTNode, move: cst.CSTNode) -> bool:
        """The move and the binding are in two branches of one ``if``: the move does not follow it."""
        parents = self.walk.parents
        above: list[int] = []
        key: int | None = id(bound)
        while key is not None:
            above.append(key)
            key = parents.get(key)
        key, over = id(move), set()
        while key is not None:
            over.add(key)
            key = parents.get(key)
        common = next((key for key in above if key in over), None)
        return common in self.ifs

    def visit_Assign(self, node: cst.Assign) -> None:
        self.assign_of[node.value] = node
        if not isinstance(node.value, (cst.Tuple, cst.List)):
            # ``pos, neg = split(edges)``: each name is bound to the value it is unpacked from (what
            # that is made of, its parts are made of).
            for target in node.targets:
                for element in target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else ():
                    if (name := dotted(element.value)) is not None:
                        self._bind(name, node.value)
        if type(node.value) is cst.Call:
            if len(node.targets) == 1 and not isinstance(node.targets[0].target, (cst.Tuple, cst.List)):
                self.whole.add(node.value)
            self.bound_by[node.value] = [
                name
                for target in node.targets
                for part in (
                    target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target]
                )
                if (name := dotted(part.value if isinstance(part, cst.BaseElement) else part)) is not None
            ]
        # ``model = ckpt["model"]`` (``torch.load(p)["model"]``): a part of a load's value, followed as the
        # load's own; ``ckpt["model"].to(device)`` (``torch.load(p).to(device)``): one moved at once.
        value, moved = node.value, False
        while (
            type(value) is cst.Call and method_name(value) in ("to", "cuda") and (held := receiver(value)) is not None
        ):
            value, moved = held, True
        if len(node.targets) != 1 or (name := dotted(node.targets[0].target)) is None:
            return
        kept = None if moved else value
        if moved:
            self.moved_at_once.add(name)
        if type(value) is cst.Subscript:
            base = value.value
            if type(base) is cst.Call:
                self.subscripted.setdefault(base, []).append((name, kept))
            elif (load := self.load_named.get(dotted(base) or "")) is not None:
                self.parts[load].append((name, kept))
                if not moved:
                    self.unmoved[load].add(name)
                    self.bound_at[load, name] = node
        elif moved and type(value) is cst.Call:
            self.subscripted.setdefault(value, []).append((name, None))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if (
            len(node.slice) == 1
            and type(index := node.slice[0].slice) is cst.Index
            and type(index.value) is cst.SimpleString
            and (name := dotted(node.value)) is not None
        ):
            self.dict_read.add((self._scope(), name))

    def visit_Try(self, node: cst.Try) -> None:
        self.tries.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method == "load_state_dict" and node.args:
                handed = node.args[0].value
                while type(handed) is cst.Subscript:
                    handed = handed.value
                if type(handed) is cst.Call:
                    self.state_dict_calls.append(handed)
                elif (root := dotted(handed)) is not None:
                    self.state_dict_roots.add(root)
            elif method in _MODULE_METHODS and (used := dotted(func.value)) is not None:
                self.module_used.add(used)
                self.module_methods.add(used)
                self.part.module_signs.setdefault(used, f"`{used}.{method}()` is called")
        elif (called := dotted(func)) is not None:
            self.module_used.add(called)
            self.part.module_signs.setdefault(called, f"`{called}(...)` is called")
            self.constructions.append(node)
        self._set_into_a_module(node)

    def _set_into_a_module(self, node: cst.Call) -> None:
        """A tensor put into a module where it is (``setattr(submodule, name, state_dict[k])``,
        ``torch.nn.Parameter(value)``, ``module.register_buffer(name, value)``, accelerate's
        ``set_module_tensor_to_device(model, name, device, value=value)``): what it is taken from
        is a state dict, whose tensors go with the module, never a pickled module to move."""
        callee = self.walk.callee
        method = method_name(node)
        if type(node.func) is cst.Name and node.func.value == "setattr":
            value = arg_value(node, 2, "value")
        elif callee in equivalent_apis.TENSOR_CLASSES_OF_NN:
            value = arg_value(node, 0, "data")
        elif method in ("register_buffer", "register_parameter"):
            value = arg_value(node, 1, "tensor" if method == "register_buffer" else "param")
        elif callee is not None and callee.rsplit(".", 1)[-1] == "set_module_tensor_to_device":
            value = arg_value(node, 3, "value")
        else:
            return
        while type(value) is cst.Subscript:
            value = value.value
        if (root := dotted(value)) is not None:
            self.state_dict_roots.add(root)
            self.set_into_modules.add(root)

    @attributes_named("to", "cuda", "cpu")
    def _move(self, node: cst.Attribute) -> None:
        if (moved := dotted(node.value)) is not None:
            self.moved.add(moved)
            for load, names in self.unmoved.items():
                if moved in names and not self._other_branch(self.bound_at.get((load, moved), load), node):
                    names.discard(moved)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        is_dataset = any(
            self.walk.resolve(base.value) in apis.DATASET_BASES or dotted(base.value) in self.dataset_classes
            for base in node.bases
        )
        if is_dataset:
            self.dataset_classes.add(node.name.value)
        self.in_dataset.append(is_dataset)
        self.class_names.append(node.name.value)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.in_dataset.pop()
        self.class_names.pop()

    @calls_of(*_XLA_DEVICES)
    def _xla_device(self, node: cst.Call) -> None:
        self.xla_script = True

    @calls_of("torch.load", *_URL_LOADS)
    def _load(self, node: cst.Call) -> None:
        bound = self.bound_by.get(node, [])
        self.unmoved[node] = set(bound)
        self.load_scopes[node] = self._scope()
        if branches := tuple(
            (cond, in_body)
            for cond in self.walk.conds
            if (in_body := _holds(cond.body, node)) or (cond.orelse is not None and _holds(cond.orelse, node))
        ):
            self.part.load_branches[node] = branches
        single = node in self.whole
        self.parts[node] = [(name, node if single else None) for name in bound]
        if single:
            self.load_named[bound[0]] = node
        for name in bound:
            self.bound_at[node, name] = self.assign_of.get(node, node)
        for name, subscript in self.subscripted.pop(node, ()):
            self.parts[node].append((name, subscript))
            if subscript is not None:  # else moved at once
                self.unmoved[node].add(name)
                self.bound_at[node, name] = self.assign_of.get(subscript, subscript)
        position = 2 if self.walk.callee in _URL_LOADS else 1  # load_state_dict_from_url(url, model_dir, map_location)
        if (location := arg_value(node, position, "map_location")) is not None:
            self.load_locations.append(location)
            self.part.located_loads[location] = node
            if (function := self.walk.enclosing_function) is not None:
                self.location_functions[location] = function
            if self.device.names_a_device(_shown_device(location)) or _storages_onto_cuda(location):
                self.device.mark_load_location(location)  # becomes "cpu": worth running on XLA
        elif (
            node.args
            and not any(a.star for a in node.args)
            and not self._saved_private_file(arg_value(node, 0, "f"))
            and not (position == 2 and published_weights(arg_value(node, 0, "url"), self.module))
        ):
            self.loads_without_location.append(node)
            if self.in_dataset and self.in_dataset[-1]:
                self.dataset_loads.append((node, self.class_names[-1]))

    def _bind(self, name: str, value: cst.BaseExpression) -> None:
        self.assigned.setdefault(name, []).append(value)
        scope = self.walk.qualname if self.walk.enclosing_function is not None else ""
        self.scoped.setdefault(("" if "." in name else scope, name), []).append((value, scope))

    def _cache_values(self, cls: str) -> Callable[[str, str], list[tuple[cst.BaseExpression, str]] | None]:
        """``_values_of`` for what the Dataset class ``cls`` saves, leaving out its reloads of the files it
        saves itself (``self.data, self.slices = torch.load(self.processed_paths[0])`` in ``__init__``, the file
        ``process()`` saves ``(self.data, self.slices)`` to): they hold what the class saved there, nothing new;
        a name bound to any other load (what a file holds) is none that the module builds."""
        files = self.dataset_files.get(cls, set()) - {None}
        reloads = {
            load for load, owner in self.dataset_loads if owner == cls and _file_text(arg_value(load, 0, "f")) in files
        }

        def values(name: str, scope: str) -> list[tuple[cst.BaseExpression, str]] | None:
            found = self._values_of(name, scope)
            if found is not None and reloads:
                found = [(value, at) for value, at in found if value not in reloads]
            if found is not None and any(value in self.unmoved for value, _ in found):  # self.unmoved: every load
                return [(cst.Name("a_loaded_value"), scope)]  # a name bound nowhere: not built here
            return found

        return values

    def _values_of(self, name: str, scope: str) -> list[tuple[cst.BaseExpression, str]] | None:
        """The values bound to ``name`` read in ``scope``: the function's own, else the module's."""
        if "." not in name and (found := self.scoped.get((scope, name))) is not None:
            return found
        return self.scoped.get(("", name))

    @assignments()
    def _assignment(self, name: str, value: cst.BaseExpression) -> None:
        self._bind(name, value)
        function = self.walk.enclosing_function
        if (
            name.startswith("self.")
            and self.in_dataset
            and self.in_dataset[-1]
            and function is not None
            and function.name.value == "__init__"
            and _of_parameters(value, function)
        ):
            self.dataset_inputs.setdefault(self.class_names[-1], set()).add(name)
        if self.in_dataset and self.in_dataset[-1] and function is not None and function.name.value == "__init__":
            # The constructor's parameters, as its own scope reads them (``self.Arow = SparseRowIndexer(A)``): the
            # raw data the Dataset is built from; what ``__init__`` computes of them is followed with no move.
            self.dataset_inputs.setdefault(self.class_names[-1], set()).update(
                input_name(self.walk.qualname, param.name.value)
                for param in function.params.params
                if param.name.value != "self"
            )

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_WithItem(self, node: cst.WithItem) -> None:
        """``with tempfile.TemporaryFile() as f:``: the name of a private file (private_files.py)."""
        if node.asname is not None and makes_private_file(node.item, self.walk.resolve):
            if (name := dotted(node.asname.name)) is not None:
                self.with_files.add((self._scope(), name))

    def _scope(self) -> str:
        return self.walk.qualname if self.walk.enclosing_function is not None else ""

    def _private_file(self, target: cst.BaseExpression | None) -> bool:
        scope = self._scope()
        name = dotted(target) if target is not None else None
        if name is not None and (scope, name) in self.with_files:
            return True
        values = self._values_of(name, scope) if name is not None else None
        return private_file(target, [value for value, _ in values or ()], self.walk.resolve)

    def _saved_private_file(self, target: cst.BaseExpression | None) -> bool:
        """A private file a ``torch.save`` of this scope wrote (a buffer a download filled is not)."""
        name = dotted(target) if target is not None else None
        return name is not None and (self._scope(), name) in self.private_saves and self._private_file(target)

    @calls_of("torch.save")
    def _save(self, node: cst.Call) -> None:
        self.written.append((path_key(arg_value(node, 1, "f")), arg_value(node, 0, "obj")))
        self.save_functions[node] = self.walk.enclosing_function
        target = arg_value(node, 1, "f")
        if self._private_file(target):  # read back by this process alone: it stays (private_files.py)
            if (name := dotted(target) if target is not None else None) is not None:
                self.private_saves.add((self._scope(), name))
            return
        if any(self.in_dataset):  # host data, saved by every process and DataLoader worker
            if self.in_dataset[-1]:
                self.saving_datasets.add(self.class_names[-1])
                self.dataset_saves.setdefault(self.class_names[-1], []).append(
                    (arg_value(node, 0, "obj"), self.walk.qualname)
                )
                self.dataset_files.setdefault(self.class_names[-1], set()).add(_file_text(target))
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

    @calls_of("torch_xla.core.xla_model.save")
    def _xla_save(self, node: cst.Call) -> None:
        """``xm.save(obj, path)`` (the port's own file, converted again): a file the module writes."""
        self.written.append((path_key(arg_value(node, 1, "f")), arg_value(node, 0, "obj")))

    def finish(self) -> None:
        self._host_saves()
        models = self.facts.training.models
        self.part.whole_module_saves = {call for call, saved in self.saved if saved in models}
        for location in self.load_locations:
            if (choice := self._cpu_without_cuda(location)) is not None:
                self.part.host_choices.add(choice)
            elif self.device.names_a_device(_shown_device(location)) or _storages_onto_cuda(location):
                self.part.map_locations.add(location)
            elif any(is_cuda_device_string(n) for n in walk(location)) and not _all_to_the_cpu(location):
                self.part.unported_map_locations.add(location)
        device = self.device.part
        self.part.cuda_script = bool(
            device.strings
            or device.calls
            or device.selections - self.part.host_choices
            or device.ifs
            or device.dot_cuda
        )
        # A Dataset class's load of what the class itself saves (its processed cache, built on the
        # CPU: ``torch.save`` stays as it is there): no CUDA storages, nothing to port.  The parameters
        # of every Dataset's ``__init__`` are raw data (an attribute of the same name another Dataset of
        # the module binds is followed too: the attributes' values are the module's), unless a call of the
        # class in the module hands it a moved value (``Graphs(root, x.cuda())``): then none of its own is.
        for call in self.constructions:
            if (
                (cls := dotted(call.func)) is not None
                and cls in self.dataset_inputs
                and any(moves(arg.value, lambda name: self.assigned.get(name, ())) for arg in call.args)
            ):
                del self.dataset_inputs[cls]
        parameters = {name for names in self.dataset_inputs.values() for name in names if ":" in name}
        cache_loads = {
            load
            for load, cls in self.dataset_loads
            if cls in self.saving_datasets
            and all(
                value is not None
                and built_off_device(
                    value, scope, self._cache_values(cls), self.dataset_inputs.get(cls, set()) | parameters
                )
                for value, scope in self.dataset_saves[cls]
            )
        }
        # ``try: torch.load(p)`` / ``except: torch.load(p, map_location=<the CPU>)``: it loads on XLA as written.
        cache_loads |= guarded_loads(self.tries, self.loads_without_location, self.part.located_loads)
        self.part.unlocated_loads.update(
            load
            for load in self.loads_without_location
            if load not in cache_loads and not self._fresh_file(load) and not self._written_elsewhere(load)
        )
        self._host_data_loads()
        self._pickled_objects()

    def _a_dict(self, name: str, load: cst.Call) -> bool:
        """A name a load's whole value is bound to that the code uses as a dict, not a module: handed
        (or a part of it) to load_state_dict, or read by a string key where it is loaded
        (``checkpoint["model_state_dict"]``) with no module's method called on it (an
        ``nn.ModuleDict`` has string keys too): a call of the same name elsewhere (``checkpoint()``, a
        function of another scope: torchbeast's monobeast) makes it no module."""
        if name in self.state_dict_roots:
            return True
        return (self.load_scopes.get(load, ""), name) in self.dict_read and name not in self.module_methods

    def _host_saves(self) -> None:
        """A save in a function whose tensors cannot be on a device (host_saves.py): no checkpoint
        of device tensors (XLA401 leaves it where one process writes)."""
        self.part.host_saves |= saved_arguments(self.save_functions, self.part.saves, self.module)
        candidates = [(call, fn) for call, fn in self.save_functions.items() if call in self.part.saves and fn]
        if not candidates or self.module is None:
            return
        functions = {s.name.value: s for s in self.module.body if isinstance(s, cst.FunctionDef)}
        saves = HostSaves(functions, self.walk.resolve)
        for call, function in candidates:
            saved = arg_value(call, 0, "obj")
            if saved is not None and function is not None and saves.saved_on_the_host(saved, function):
                self.part.host_saves.add(call)

    def _pickled_objects(self) -> None:
        """What a load's value is used as: a state dict (handed to load_state_dict), a pickled module
        (a model of the file, or a name called or with a module's method called on it), moved to the
        device after the load (the port moves it when nothing does), an optimizer pickled with such a
        module (it holds the CPU parameters the move replaces), or an object holding a module."""
        training = self.facts.training
        optimizers = training.optimizers | {step.optimizer for step in training.optimizer_steps.values()}
        onto_a_device = {self.part.located_loads[location] for location in self.part.map_locations}
        for load, parts in self.parts.items():
            # A name used as a module counts as one when the original loaded onto a device (it meant the
            # module to be there), or the file runs on CUDA (its checkpoints come back there) or on XLA (the
            # port's own file, converted again); else only a model of the file does (one a CPU script loads
            # to export stays where it is), or one the code moves as it binds it (``model =
            # ckpt["model"].to(device)``).
            on_cuda = load in onto_a_device or self.part.cuda_script or self.xla_script
            models = training.models | (self.module_used if on_cuda else self.module_used & self.moved_at_once)
            names = {name for name, _ in parts}
            if load in self.state_dict_calls or names & self.state_dict_roots:
                self.part.state_dict_loads.add(load)
            if names & self.set_into_modules:
                self.part.module_set_loads.add(load)
            unmoved = self.unmoved[load]
            moved_modules = []
            for name, value in parts:
                if name not in models or name in optimizers or name in self.set_into_modules:
                    continue
                if value is load and self._a_dict(name, load):
                    continue
                if name not in unmoved:
                    moved_modules.append(name)
                elif value is not None:
                    self.part.module_moves[value] = (name, load)
                    moved_modules.append(name)
                else:
                    self.part.module_loads.setdefault(load, ())
                    self.part.module_loads[load] += (name,)
            if moved_modules:
                for name, value in parts:
                    if name in optimizers and value is not None:
                        self.part.stale_optimizers[value] = (name, moved_modules[0])
            if load in self.part.state_dict_loads or len(parts) != 1 or parts[0][1] is not load:
                continue
            held = sorted(
                used
                for used in models
                if used.startswith(parts[0][0] + ".") and used not in self.moved and parts[0][0] not in self.moved
            )
            if held and parts[0][0] not in models:
                self.part.object_loads[load] = (parts[0][0], held[0])

    def _cpu_without_cuda(self, location: cst.BaseExpression) -> cst.IfExp | None:
        """``device = None if torch.cuda.is_available() else "cpu"`` in the function, and ``device``
        read nowhere else than in map locations: without CUDA (on XLA) the original already loads onto
        the CPU, where XLA must load; the choice (a selection of the device analysis), else None."""
        function = self.location_functions.get(location)
        if type(location) is not cst.Name or function is None:
            return None
        device = self.device.part
        choices: list[cst.IfExp] = []
        stored: cst.CSTNode | None = None
        for sub in walk(function):
            if type(sub) is cst.Assign and any(
                type(t.target) is cst.Name and t.target.value == location.value for t in sub.targets
            ):
                if len(sub.targets) != 1 or type(sub.value) is not cst.IfExp:
                    return None
                choices.append(sub.value)
                stored = sub.targets[0].target
            elif type(sub) is cst.Name and sub.value == location.value:
                if sub not in self.part.located_loads and sub is not stored:
                    return None
        if len(choices) != 1 or (choice := choices[0]) not in device.selections:
            return None
        test = choice.test
        if device.is_available_call(test):
            without = choice.orelse
        elif (
            type(test) is cst.UnaryOperation
            and type(test.operator) is cst.Not
            and device.is_available_call(test.expression)
        ):
            without = choice.body
        else:
            return None
        return choice if names_the_cpu(without) else None

    def _fresh_file(self, load: cst.Call) -> bool:
        """``torch.load(ckpt)`` where every value of ``ckpt`` is a name made fresh in this run
        (``'out/' + uuid.uuid4().hex + '.pt'``) and the module writes it (``torch.save(...,
        ckpt)``): only this run's own file is read, never one a CUDA run saved, and the tensors it
        holds (the XLA ones, or the CPU ones of xm.save) load where this run is."""
        path = path_key(arg_value(load, 0, "f"))
        values = self.assigned.get(path or "", [])
        return (
            bool(values)
            and any(written == path for written, _ in self.written)
            and all(
                any(type(sub) is cst.Call and self.walk.resolve(sub.func) in _FRESH_NAMES for sub in walk(value))
                for value in values
            )
        )

    def _written_elsewhere(self, load: cst.Call) -> bool:
        """A load of what the project's saves of host data write (written_files.py)."""
        paths = frozenset(
            (chain, file)
            for chain, file in path_chains(arg_value(load, 0, "f"), lambda name: self.assigned.get(name, ()))
            if file is not None  # a folder's file: which one, the path does not say
        )
        return bool(paths) and self.facts.project.context.host_written(paths) is True

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


def _file_text(path: cst.BaseExpression | None) -> str | None:
    """A file argument as written, whitespace left out (``self.processed_paths[0]``), or None."""
    if path is None:
        return None
    return re.sub(r"\s+", "", cst.Module([]).code_for_node(path))


# What a Dataset's ``__init__`` may compute its inputs with (``int(percent) if percent >= 1 else percent``).
_INPUT_BUILTINS = frozenset({"int", "float", "str", "bool", "len", "True", "False", "None"})


def _holds(branch: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(sub is node for sub in walk(branch))


def _of_parameters(value: cst.BaseExpression, function: cst.FunctionDef) -> bool:
    """``value`` reads the function's parameters and nothing else (``self.data = data``, ``self.percent =
    int(percent) if percent >= 1.0 else percent``), and calls no more than a few builtins: no move."""
    params = {param.name.value for param in function.params.params} - {"self"}
    tails = {id(sub.attr) for sub in walk(value) if type(sub) is cst.Attribute}
    read = False
    for sub in walk(value):
        if type(sub) is cst.Call and not (type(sub.func) is cst.Name and sub.func.value in _INPUT_BUILTINS):
            return False
        if type(sub) is cst.Name and id(sub) not in tails:
            if sub.value in params:
                read = True
            elif sub.value not in _INPUT_BUILTINS:
                return False
    return read


# Callables whose result names nothing an earlier run can have made.
_FRESH_NAMES = frozenset({"uuid.uuid1", "uuid.uuid4"})


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


def _shown_device(location: cst.BaseExpression) -> cst.BaseExpression:
    """The device a map location spells as text (``str(self.device)``, ``f"{device}"``: "cuda:0",
    "xla:0" once the device is ported, which torch.load cannot restore onto; ``args.device.type``:
    "xla"), else the location."""
    if type(location) is cst.Attribute and location.attr.value == "type":
        return location.value
    if (
        type(location) is cst.Call
        and type(location.func) is cst.Name
        and location.func.value == "str"
        and len(location.args) == 1
        and not location.args[0].star
        and location.args[0].keyword is None
    ):
        return location.args[0].value
    if type(location) is cst.FormattedString and len(location.parts) == 1:
        part = location.parts[0]
        if type(part) is cst.FormattedStringExpression and part.conversion is None and part.format_spec is None:
            return part.expression
    return location


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
