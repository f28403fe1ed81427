"""Samplers: each process of a multi-process script must train on its own shard, so the
training loaders get a DistributedSampler (and, when they shuffle, ``set_epoch`` at the
start of each epoch); DistributedSamplers without ``num_replicas``/``rank`` get the XLA
runtime's."""

from __future__ import annotations

import libcst as cst

from codemods import apis
from codemods.distributed.entry import code_owner
from codemods.distributed.facts import SamplerPlan
from codemods.distributed.launch import LaunchAnalysis
from codemods.engine.nodes import arg_value, args_by_position, call_args, dotted, is_false
from codemods.engine.walk import Analysis, Walk, attributes_named, calls_of
from codemods.training.loaders import LoaderAnalysis

DISTRIBUTED_SAMPLER = frozenset(
    {"torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler"}
)


class SamplerAnalysis(Analysis):
    name = "samplers"
    fills = "distributed"
    reads = ("entry",)
    settle_reads = ("launch", "loaders", "training", "huggingface")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.distributed
        self.sampler_calls: list[tuple[cst.Call, str]] = []
        self.loader_owner: dict[cst.Call, str] = {}
        self.enclosing_for: dict[int, cst.For | None] = {}
        self.loop_function: dict[int, cst.FunctionDef | None] = {}
        self.set_epoch_called = False

    # -- walk -------------------------------------------------------------------------------

    def _loop(self, node: cst.For | cst.While) -> None:
        outer = self.walk.loops[-2] if len(self.walk.loops) >= 2 else None
        self.enclosing_for[id(node)] = outer if type(outer) is cst.For else None
        self.loop_function[id(node)] = self.walk.enclosing_function

    visit_For = _loop
    visit_While = _loop

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

    def settle(self) -> None:
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
            call = loader if type(loader) is cst.Call and loader in loaders.made else loaders.call_of(name)  # type: ignore[assignment]
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
            if call in part.sampler_plans:
                continue
            dataset = arg_value(call, 0, "dataset")
            shuffle = keywords.get("shuffle")
            positional_shuffle = len([a for a in call.args if a.keyword is None]) > 2
            part.sampler_plans[call] = SamplerPlan(
                dotted(dataset) if not positional_shuffle else None, shuffle
            )
            if shuffle is not None and not is_false(shuffle.value) and not self.set_epoch_called:
                self._set_epoch(loop, name, call)

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
