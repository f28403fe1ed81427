"""Samplers: each process of a multi-process script must train on its own shard, so the
training loaders get a DistributedSampler (and, when they shuffle, ``set_epoch`` at the
start of each epoch); DistributedSamplers without ``num_replicas``/``rank`` get the XLA
runtime's.  A loader over an iterable-style data set gets none (the DataLoader would
raise): its data set must shard itself, which is reported; so is a loader over a data set
whose class comes from a project module this run cannot read (it may be iterable-style).
The module's iterable-style data set classes go into its summary, for the files that import
them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.distributed.entry import code_owner
from codemods.distributed.facts import IterableData, SamplerPlan
from codemods.distributed.launch import LaunchAnalysis
from codemods.engine.nodes import arg_value, args_by_position, call_args, dotted, is_false, is_true
from codemods.engine.walk import Analysis, Walk, attributes_named, calls_of
from codemods.project.analysis import ProjectAnalysis
from codemods.training.loaders import LoaderAnalysis

if TYPE_CHECKING:
    from codemods.facts import Facts

DISTRIBUTED_SAMPLER = frozenset(
    {"torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler"}
)


class SamplerAnalysis(Analysis):
    facts: Facts

    name = "samplers"
    fills = "distributed"
    reads = ("entry",)
    conclude_reads = ("imports", "launch", "loaders", "training", "huggingface", "project")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        self.sampler_calls: list[tuple[cst.Call, str]] = []
        self.loader_owner: dict[cst.Call, str] = {}
        self.enclosing_for: dict[int, cst.For | None] = {}
        self.loop_function: dict[int, cst.FunctionDef | None] = {}
        self.set_epoch_called = False
        # Classes of the file: their bases (qualified where imported) and whether they define
        # ``__iter__`` and ``__getitem__``.
        self.classes: dict[str, tuple[list[str], bool, bool]] = {}

    # -- walk -------------------------------------------------------------------------------

    def _loop(self, node: cst.For | cst.While) -> None:
        outer = self.walk.loops[-2] if len(self.walk.loops) >= 2 else None
        self.enclosing_for[id(node)] = outer if type(outer) is cst.For else None
        self.loop_function[id(node)] = self.walk.enclosing_function

    visit_For = _loop
    visit_While = _loop

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [
            self.walk.resolve(base.value) or dotted(base.value) or "" for base in node.bases if base.keyword is None
        ]
        methods = {s.name.value for s in node.body.body if type(s) is cst.FunctionDef}
        self.classes[node.name.value] = (bases, "__iter__" in methods, "__getitem__" in methods)

    @attributes_named("set_epoch")
    def _set_epoch_named(self, node: cst.Attribute) -> None:
        self.set_epoch_called = True

    @calls_of(DISTRIBUTED_SAMPLER)
    def _sampler(self, node: cst.Call) -> None:
        self.sampler_calls.append((node, code_owner(self.walk, self.facts.entry.main_guard)))

    @calls_of(apis.DATA_LOADERS)
    def _loader(self, node: cst.Call) -> None:
        self.loader_owner[node] = code_owner(self.walk, self.facts.entry.main_guard)

    # -- results ----------------------------------------------------------------------------

    def conclude(self) -> None:
        self.part.iterable_datasets = {name for name in self.classes if self._iterable_class(name, set())}
        if self.part.multi_process and not self.facts.huggingface.trainer_script:
            self._samplers(self.walk.analysis(LaunchAnalysis).parent)

    def _samplers(self, parent: set[str]) -> None:
        part = self.part
        loaders = self.walk.analysis(LoaderAnalysis)
        for call, owner in self.sampler_calls:
            if owner in parent:
                continue
            given = {name for name, _ in args_by_position(call, ("dataset", "num_replicas", "rank"))}
            missing = tuple(k for k in ("num_replicas", "rank") if k not in given)
            if missing:
                part.samplers[call] = missing
        for loop in self.facts.training.all_loops:
            if type(loop) is not cst.For:
                continue
            loader, name = _iterated_loader(loop)
            call = loader if type(loader) is cst.Call and loader in loaders.made else loaders.call_of(name)  # type: ignore[assignment]  # loaders.call_of returns Call | None; call is checked for None below
            if call is None or self.loader_owner.get(call, "") in parent:
                continue
            keywords = call_args(call)[1]
            if "batch_sampler" in keywords:
                continue
            sampler = keywords.get("sampler")
            if sampler is not None:
                value = sampler.value
                if type(value) is cst.Call and self.walk.resolve(value.func) not in DISTRIBUTED_SAMPLER:
                    part.other_samplers.add(sampler)
                continue
            if call in part.sampler_plans or call in part.iterable_loaders:
                continue
            dataset = arg_value(call, 0, "dataset")
            iterable = self._iterable(dataset, loaders, frozenset()) if dataset is not None else None
            if iterable is not None:
                part.iterable_loaders[call] = iterable
                continue
            shuffle = keywords.get("shuffle")
            positional_shuffle = len([a for a in call.args if a.keyword is None]) > 2
            part.sampler_plans[call] = SamplerPlan(dotted(dataset) if not positional_shuffle else None, shuffle)
            if shuffle is not None and not is_false(shuffle.value) and not self.set_epoch_called:
                self._set_epoch(loop, name, call)

    def _iterable(
        self, value: cst.BaseExpression, loaders: LoaderAnalysis, seen: frozenset[str]
    ) -> IterableData | None:
        """What makes the data set ``value`` iterable-style, or may (None: nothing does, as far
        as the file and the project's summaries show), following the names it is assigned
        from and the methods chained on it (``load_dataset(..., streaming=True).shuffle(...)``)."""
        name = dotted(value)
        if name is not None:
            if name in seen:
                return None
            return next(
                (
                    why
                    for source in loaders.assigned.get(name, ())
                    if (why := self._iterable(source, loaders, seen | {name}))
                ),
                None,
            )
        if type(value) is not cst.Call:
            return None
        callee = self.walk.resolve(value.func)
        if callee is not None and (
            callee in apis.ITERABLE_DATASET_CLASSES or callee.startswith(apis.ITERABLE_DATASET_MODULES)
        ):
            return IterableData(f"`{callee}(...)`")
        streaming = call_args(value)[1].get("streaming")
        if callee in apis.STREAMING_LOADS and streaming is not None and is_true(streaming.value):
            return IterableData(f"`{callee}(..., streaming=True)`")
        if type(value.func) is cst.Name and self._iterable_class(value.func.value, set()):
            return IterableData(f"`{value.func.value}(...)`")
        if (name := dotted(value.func)) is not None and name not in self.classes:
            return self._project_class(name)
        if type(value.func) is cst.Attribute:
            return self._iterable(value.func.value, loaders, seen)
        return None

    def _project_class(self, name: str) -> IterableData | None:
        """A data set class of another module of the project: iterable-style if its summary
        says so; unknown if that module cannot be read here (a run on this file alone)."""
        found = self.walk.analysis(ProjectAnalysis).origin(name)
        if found is None or not found.name:
            return None
        if found.summary is None:
            module = self.facts.imports.project_names.get(name.split(".")[0], ("", ""))[0]
            return IterableData(f"`{name}(...)`", module or name)
        return IterableData(f"`{name}(...)`") if found.name in found.summary.iterable_datasets else None

    def _iterable_class(self, name: str, seen: set[str]) -> bool:
        """A class of the file that derives from an iterable data set (here or in torch and the
        libraries), or defines ``__iter__`` and no ``__getitem__``."""
        if name in seen or name not in self.classes:
            return False
        seen.add(name)
        bases, iterates, indexes = self.classes[name]
        return (iterates and not indexes) or any(
            base in apis.ITERABLE_DATASET_CLASSES
            or base.startswith(apis.ITERABLE_DATASET_MODULES)
            or self._iterable_class(base, seen)
            or self._project_base(base)
            for base in bases
        )

    def _project_base(self, base: str) -> bool:
        """A base class from another module of the project whose summary says it is iterable-style."""
        found = self.walk.analysis(ProjectAnalysis).origin(base)
        return found is not None and found.summary is not None and found.name in found.summary.iterable_datasets

    def _set_epoch(self, loop: cst.For, loader: str | None, call: cst.Call) -> None:
        outer = self.enclosing_for.get(id(loop))
        if loader is not None and outer is not None and type(outer.target) is cst.Name:
            self.part.set_epochs[outer] = (loader, outer.target.value)
            return
        function = self.loop_function.get(id(loop))
        if loader is not None and function is not None and outer is None:
            names = [p.name.value for p in function.params.params]
            epoch = next((n for n in names if "epoch" in n.lower()), None)
            if epoch is not None:
                self.part.set_epochs[function] = (loader, epoch)
                return
        self.part.no_epoch.add(call)


def _iterated_loader(loop: cst.For) -> tuple[cst.BaseExpression, str | None]:
    loader = loop.iter
    if type(loader) is cst.Call and dotted(loader.func) == "enumerate" and loader.args:
        loader = loader.args[0].value
    return loader, dotted(loader)
