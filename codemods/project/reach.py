"""What a single-file run's script reaches of the project modules it does not convert (XLA003): the
methods it calls whose own code holds what converting them reports (an error at the call), what a class
holds only in methods nothing on the script's path names (off it), the modules an import for its side
effects brings in, and the methods named like project methods that take a plain step (right on one process).
``analysis`` is the file's ProjectAnalysis (not imported here: that module imports this one)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from codemods.engine.nodes import dotted
from codemods.project.branch_classes import branch_classes
from codemods.project.facts import Unported
from codemods.project.holdings import STEP_CAUSES
from codemods.project.module_summary import Found
from codemods.project.receivers import imported_names, used_of

if TYPE_CHECKING:
    import libcst as cst

    from codemods.project.dynamic_loads import Held
    from codemods.project.module_summary import ModuleSummary

# How many of the modules a package imported for its side effects loads by a scan of its folder are read.
_MAX_SCANNED = 40


def unported_uses(analysis: Any) -> None:
    """Project modules this run does not convert whose code that this file uses (imported
    names, attributes of imported modules, and what those reach in their modules, a few
    modules deep) holds what their conversion ports or reports as an error: one finding per
    module and cause, at the import that leads there, unless XLA003 names it already."""
    context = analysis.part.context
    attributes: dict[str, set[str]] = defaultdict(set)
    for local, attribute in analysis.attribute_uses:
        attributes[local].add(attribute)
    named = analysis.named_already()
    at_calls = reached_holdings(analysis)
    uses: list[tuple[cst.CSTNode, ModuleSummary, list[str]]] = []
    star_bound = analysis.facts.imports.star_bound
    for local, (module, name) in analysis.facts.imports.project_names.items():
        if local in star_bound and not analysis.names_itself(local):
            continue  # (``from utils import *`` binds ``gpu``, which the file never names: it never runs)
        # Imports of several modules that bind the name (one per task, in the branches of an ``if``):
        # each is what the file uses where that import runs, named at that import.
        choices = analysis.import_choices.get(local, [])
        imports = (
            [(m, n, node) for m, n, node in choices]
            if len({m for m, _, _ in choices}) > 1
            else [(module, name, analysis.import_nodes.get(local))]
        )
        for module, name, node in imports:
            found = context.lookup(module, name)
            if node is None or found is None or found.summary is None:
                continue
            used = [found.name] if found.name else sorted(attributes[local])
            if "__dict__" in used:  # ``models.__dict__[args.model]``: any of its names
                used = used_of(Found(found.summary, ""))
            uses.append((node, found.summary, used))
    uses += chain_uses(analysis)
    # ``from deepctr_torch.models import *``: the names the file calls that it neither
    # defines nor imports by name.
    bare = {callee for _, callee in analysis.calls if "." not in callee} - analysis.top_level
    for module, star in analysis.star_imports:
        if (whole := context.lookup(module, "")) is not None and whole.summary is not None and not whole.name:
            uses.append((star, whole.summary, [""]))  # (its module-level code runs on the import)
        for name in sorted(bare - analysis.facts.imports.project_names.keys()):
            if (found := context.lookup(module, name)) is not None and found.summary is not None and found.name:
                uses.append((star, found.summary, [found.name]))
    uses += side_effect_uses(analysis, attributes)
    by_module: dict[str, tuple[cst.CSTNode, list[Held]]] = {}
    # A module imported by a name known only at run time holds the training loop where this file has none.
    # (A method of the file's that runs a project's training loop by its name names that loop already; a
    # training loop of the file, also one whose step a project callable takes, is the loop.)
    training = analysis.facts.training
    unfollowed = (
        "" if training.optimizer_steps or training.all_loops or analysis.part.named_training else "dynamic-import"
    )
    reached = [(at, summary, analysis.held_by(summary, ["", *used], 0)) for at, summary, used in uses]
    # The methods this file, or a module its uses reach, may call (``restore_checkpoint`` calling ``model.load``).
    callable_here = callable_names(analysis.part.named_attributes, analysis.summaries.values())
    for at, summary, holding in reached:
        held = [
            h
            for h in holding
            if (h[0], h[1]) not in named
            and not named_at_calls(analysis, h, at_calls)
            and (h[1] != "dynamic-import" or unfollowed)
            and (at in analysis.side_effects or not off_path(analysis, h, callable_here))
            and not (h[1] == "dynamic-import" and (h[0] in analysis.scanned or at in analysis.side_effects))
        ]
        if held:
            by_module.setdefault(summary.path, (at, []))[1].extend(held)
    # A step a module reports only because it cannot tell that its optimizer parameter is one (XLA201's
    # "if this is an optimizer"): a run on the project ports it where a module read here hands it one.
    handed = {(path, name) for s in analysis.summaries.values() for path, name, _, _ in s.hands_optimizers}
    for path, (at, held) in by_module.items():
        held = [(*h[:4], True) if h[1] in STEP_CAUSES and not h[4] and (h[0], h[2]) in handed else h for h in held]
        causes = tuple(dict.fromkeys(cause for _, cause, _, _, _ in held))
        firsts = [next(h for h in held if h[1] == cause) for cause in causes]  # one of each cause first
        examples = tuple(dict.fromkeys((where, name, what) for where, _, name, what, _ in [*firsts, *held]))
        ported = tuple(sorted({ported for *_, ported in held}))
        analysis.part.unported_uses.setdefault(at, []).append(Unported(path, causes, examples, ported))
    if analysis.part.unported_uses:
        analysis.part.unported_module = analysis.module


def chain_uses(analysis: Any) -> list[tuple[cst.CSTNode, ModuleSummary, list[str]]]:
    """``import d3rlpy`` then ``d3rlpy.algos.CQLConfig(...)``: the name at the end of a chain of attributes
    through the package's submodules (``algos``, a module its ``__init__`` imports, re-exporting
    ``CQLConfig`` by a star import), followed as ``from d3rlpy.algos import CQLConfig`` would be, at the
    import of the package."""
    context = analysis.part.context
    project_names = analysis.facts.imports.project_names
    uses: list[tuple[cst.CSTNode, ModuleSummary, list[str]]] = []
    for local, *chain in sorted(analysis.attribute_chains):
        module, name = project_names[local]
        node = analysis.import_nodes.get(local)
        if name or node is None:
            continue  # (an imported class or function: its attributes are its methods, followed as such)
        for attribute in chain:
            found = context.lookup(module, attribute)
            if found is None or found.summary is None:
                break
            if found.name:  # the class or function the chain names (its own attributes are its methods)
                uses.append((node, found.summary, [found.name]))
                break
            module = f"{module}.{attribute}"  # a submodule: the next attribute is one of its names
    return uses


def registry_calls(analysis: Any) -> None:
    """``train_dict[cfg.train.mode](loggers, loaders, model, optimizer, scheduler)``, handed the
    optimizer, in a single-file run of a script that takes no optimizer step itself, where ``import mypkg  # noqa`` brings in
    project modules for their side effects (``@register_train("custom")`` fills the registry): the
    training loop runs in a function of those modules that the run neither follows nor converts.
    A module-level table of the file's own names (``TRAINERS = {"base": Trainer}``) is followed."""
    part = analysis.part
    if analysis.facts.training.optimizer_steps or part.context.others_in_run():
        return
    paths: list[str] = []
    for module, _ in analysis.plain_imports:
        head, _, rest = module.partition(".")
        if rest.split(".")[0] in {a for local, a in analysis.attribute_uses if local == head}:
            continue  # (``myproj.models.build(...)``: what it names is followed)
        found = part.context.lookup(module, "")
        if found is not None and found.summary is not None and not found.name:
            paths.append(found.summary.path)
    if not paths:
        return
    is_optimizer = analysis.facts.training.is_optimizer
    for call, registry in analysis.registry_calls:
        if not any(is_optimizer(dotted(arg.value)) for arg in call.args):
            continue  # (``ACTIVATIONS[name](x)``: it is handed no optimizer, so it trains nothing of this file's)
        if registry.split(".")[0] not in part.name_tables and registry not in analysis.top_level:
            part.registry_calls[call] = (registry, tuple(dict.fromkeys(paths)))


def side_effect_uses(
    analysis: Any, attributes: dict[str, set[str]]
) -> list[tuple[cst.CSTNode, ModuleSummary, list[str]]]:
    """``import myproj.models`` where the file names nothing of that module (an import for its
    side effects: its package registers its model classes for a library's pipeline to build): the
    module as a whole, and the modules its ``__init__`` imports, by name or through a scan of its
    folder (``importlib.import_module(f"myproj.models.{name}")``), each as a whole (what runs their
    classes is out of this file's sight; their own imports of names known only at run time are left out,
    a folder scan of the package's ``__init__`` being followed)."""
    context = analysis.part.context
    uses: list[tuple[cst.CSTNode, ModuleSummary, list[str]]] = []
    for module, node in analysis.plain_imports:
        head, _, rest = module.partition(".")
        if rest.split(".")[0] in attributes.get(head, set()) or (not rest and head in analysis.named_names):
            continue  # (``myproj.models.build(...)``, ``getattr(models, name)``: what it names is followed)
        found = context.lookup(module, "")
        if found is None or found.summary is None or found.name:
            continue
        analysis.side_effects.add(node)
        summary = found.summary
        uses.append((node, summary, [*used_of(found), *imported_names(found)]))
        if not any(cause == "dynamic-import" for _, cause, _, _ in summary.holds):
            continue
        for name in context.loadable_modules(module)[:_MAX_SCANNED]:
            loaded = context.lookup(name, "")
            if loaded is not None and loaded.summary is not None and not loaded.name:
                uses.append((node, loaded.summary, [*used_of(loaded), *imported_names(loaded)]))
                analysis.scanned.add(summary.path)  # (its import by a name known at run time: followed)
    return uses


def callable_names(here: Collection[str], summaries: Iterable[ModuleSummary]) -> set[str]:
    """The attributes this file and the modules it reaches name, but those that a module names only in
    methods that run when a caller names them (``caller_only_names``), unless a name of the set calls
    such a method (followed until nothing is added)."""
    summaries = list(summaries)
    found = set(here)
    for summary in summaries:
        enclosed = {name for _, names in summary.caller_only_names for name in names}
        found |= summary.named_attributes - enclosed
    grew = True
    while grew:
        grew = False
        for summary in summaries:
            for method, names in summary.caller_only_names:
                if method in found and not found.issuperset(names):
                    found.update(names)
                    grew = True
    return found


def off_path(analysis: Any, held: Held, callable_here: set[str]) -> bool:
    """What a class holds only in methods that run when a caller names them (``Agent.load`` with
    ``torch.load(path)``), none of which this file or a module its uses reach names: off the file's path."""
    path, cause, name, _, _ = held
    there = analysis.summaries.get(path)
    methods = there.held_in_methods(name, cause) if there is not None else ()
    return bool(methods) and not any(method in callable_here for method in methods)


def named_at_calls(analysis: Any, held: Held, at_calls: set[tuple[str, str]]) -> bool:
    """What a class holds, of one cause, only in methods whose calls name it already."""
    path, cause, top, _, _ = held
    there = analysis.summaries.get(path)
    if there is None or not top:
        return False
    methods = {name for name, c, _, _ in there.method_findings if c == cause and name.split(".")[0] == top}
    return bool(methods) and all((path, method) in at_calls for method in methods)


def reached_holdings(analysis: Any) -> set[tuple[str, str]]:
    """The calls of methods of project classes in modules this run does not convert whose own code
    holds what converting them ports or reports (``model.fit(...)`` running ``FitMixin.fit``, which
    builds a Trainer over the default fused AdamW): one finding at the call, unless another finding
    of this rule is there (once per method); (module path, method) of those named."""
    part = analysis.part
    others = {
        *part.external_training,
        *part.external_steps,
        *part.external_loops,
        *part.external_amp,
        *part.named_training,
        *part.external_devices,
    }
    methods: set[tuple[str, str]] = set()  # (path, method) a finding names already: once per method
    for call, callee in analysis.calls:
        if call in others or "." not in callee:
            continue
        head = callee.rpartition(".")[0]
        allowed = branch_classes(analysis, call, head)
        if allowed is None:
            founds = analysis.origins(callee)
        else:  # (an instance of one of the classes an ``if`` around the call lets the dict give)
            founds = [f for b in allowed if (f := analysis._find(callee, {**analysis.built_by, head: b})) is not None]
        holding = [
            found
            for found in dict.fromkeys(founds)
            if found.summary is not None
            and found.summary.pending
            and "." in found.name
            and found.summary.held_in(found.name)
        ]
        for found in holding:
            summary = found.summary
            assert summary is not None
            if (summary.path, found.name) in methods:
                continue
            held = summary.held_in(found.name)
            methods.add((summary.path, found.name))
            causes = tuple(dict.fromkeys(cause for cause, _, _ in held))
            examples = tuple(dict.fromkeys((summary.path, found.name, what) for _, what, _ in held))
            ported = tuple(sorted({ported for _, _, ported in held}))
            # Where the receiver may be one of several classes, the other methods the call may run instead.
            others_run = tuple(dict.fromkeys(other.name for other in founds if other.name != found.name))
            part.reached_holdings[call] = (found.name, Unported(summary.path, causes, examples, ported), others_run)
            analysis.summaries.setdefault(summary.path, summary)
            break
    return methods


def plain_step(summary: ModuleSummary, name: str) -> bool:
    """The method ``name`` only takes an optimizer step (no loop of its own: the loop that calls it
    gets the step barrier), without CUDA mixed precision, and its class holds no CUDA device choice
    (its device is the one handed in): on one process it trains on XLA as it is."""
    top = name.split(".")[0]
    return (
        summary.runs_step(name)
        and name not in summary.trainers
        and name not in summary.loop_runners
        and not summary.uses_amp(name)
        and not any(held == top and cause in ("device", "amp", "cuda-only") for held, cause, _, _ in summary.holds)
    )


def amp_elsewhere(summary: ModuleSummary, name: str) -> bool:
    """The method ``Cls.method`` is not one of the methods that hold all of its class's CUDA mixed
    precision, each run only when a caller names it (``FitMixin.fit`` beside an ``old_fit`` with
    a CUDA gradient scaler)."""
    cls, _, method = name.partition(".")
    methods = summary.held_in_methods(cls, "amp") if method and "." not in method else ()
    return bool(methods) and method not in methods
