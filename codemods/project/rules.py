"""XLA003: setup that lives in another file of the project.  Its hooks report what the project
facts name: the calls that hand setup to, or take it from, a module that still needs converting,
and, as the rewrite leaves the module, what the file uses of the modules a run does not convert
(each file is converted on its own terms)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts
    from codemods.project.facts import Unported

CROSS_FILE = Rule(
    code="XLA003",
    name="cross-file",
    severity="error",
    summary="Setup that comes from another file must be converted there",
    fixable=False,
    why="Each file is converted on its own terms: when the device or the optimizer comes from, or goes to, "
    "a function of another file of the project, the code there (device choice, training loop) still runs on "
    "CUDA terms until that file is converted too. A run on a single file follows what the file uses of the "
    "project modules the run does not convert (imported names, attributes of imported modules, chains of "
    "attributes through a package's submodules, `import d3rlpy` then `d3rlpy.algos.CQLConfig(...)`, followed as "
    "`from d3rlpy.algos import CQLConfig` would be, and what their "
    "functions and classes call in their modules, or hand on by name: `block = Block` then `block(a, b)`, "
    "`make_layers(Block, ...)`, or look up in a module-level dict or list of classes: a factory's "
    "`return TRAINERS[args.trainer](...)`, or in a dict a function builds, `klass = {'compression': "
    "CompressionSolver}[cfg.solver]` then `klass(cfg)`, each of its classes; or of modules, any name of them: `FORMATS[name].parse_args(...)`; a few "
    "modules deep; a name a package re-exports from its submodule of the same name, `from helpers.Runner import "
    "Runner` in helpers/__init__.py, is the class there, as Python binds it, not the submodule): when that code holds what converting it "
    "would port or report as an error (a CUDA device choice, an `assert torch.cuda.is_available()` (it fails on "
    "an XLA host: AssertionError), `.cuda()`, a default tensor type on CUDA, a "
    "training loop or optimizer step, an evaluation or inference loop over the device with no barrier (said as "
    "such: no optimizer step; pytorch-ddpm's Inception loop in score/both.py; a name that imports of several "
    "modules bind, one per branch, `from tasks.<task>.get_trainer import get_trainer`, is followed to each, at its "
    "own import), CUDA mixed precision, CUDA-only APIs, a checkpoint load without a CPU map "
    "location, a Hugging Face Trainer built over the default fused AdamW or with fp16, torch_xla names of "
    "another release (`xm.xrt_world_size()` on 2.9: XLA901, XLA902), but not a reload of host data the module saves itself: XLA403; an `importlib.import_module(name)` of a "
    "name not written there, Palette's `create_model`, when the file takes no optimizer step itself and has no "
    "training loop (one that calls a project's step function is the loop): its training "
    "loop is in a module no single-file run can follow; not code no XLA host reaches, after an `if not "
    "torch.cuda.is_available(): ...; return` the conversion keeps: a DataParallel class's `self.module.cuda(...)` "
    "past its early return without CUDA, nor the body of an `if` whose test the conversion keeps and that is False "
    "without CUDA (a kept availability check, or a name the function binds only to one or to False: YOLOP's `cuda = "
    "False if cpu_request else torch.cuda.is_available()`, then `if cuda: ng = torch.cuda.device_count()`); not a "
    "PyTorch Geometric Dataset's reload of the processed cache it saves itself of data it builds on the CPU (XLA403: "
    "DIG's `self.data, self.slices = torch.load(self.processed_paths[0])`); "
    'not a device a tensor\'s own CUDA check picks (`torch.device("cuda") if '
    'x.is_cuda else torch.device("cpu")` in a loss: unconverted, it picks the CPU for an XLA tensor, and torch_xla '
    "uploads what goes there where it meets that tensor), nor moves such a check skips (`if x.is_cuda: labels = "
    "labels.cuda()`) whose values only meet XLA tensors where torch_xla takes a CPU tensor (arithmetic, a host read, "
    "0-dim elements of a 1-D tensor in comparisons), while a CUDA tensor type it chooses is held where the project's "
    "conversion reports it (`dtype = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor` whose CPU tensor "
    "reaches `torch.max` with a device tensor: 'Expected XLA tensor'); not code in a method that runs only when a caller names it, of a "
    "plain class (no base but `object`, a torch module or container, a data set, or classes of its module) "
    "or of a LightningModule when it is no Lightning hook (no public name of LightningModule nor a hook family: `on_*`, "
    "`*_step`, `*_epoch_end`, `*_dataloader`, `configure_*`; minDALL-E's `ImageGPT.sample`), "
    "and named nowhere else in its module, that neither the file nor the module it imports names (a name named only "
    "in such methods counts where one of them is named: `self.decoder.generate(x)` in `sample` names `generate` "
    "for a file that calls `sample`): a "
    "`load` with `torch.load(path)` where the script only saves is off its path), the finding is at the import that "
    "leads there, once per module, naming the function or class and the code, and saying what converting the "
    "project (`xla-codemod convert .` at its root) does with it: ports it, ports part of it and reports the rest, "
    "or only reports it (Apex, sparse tensors, a typed CUDA constructor kept as a value: errors there to fix by "
    "hand). A call of a method of a class of such a module whose own code holds it (`model.fit(...)` running a "
    "mixin's `fit` that builds `TrainingArguments(fp16=use_amp)` and a Trainer) is the finding's place instead, "
    "naming the method and its code. An import that the file names nothing of (`import myproj.models`, for the "
    "registry its package fills) reaches the whole module, and the modules its `__init__` imports, by name or "
    'by a scan of its folder (`importlib.import_module(f"myproj.models.{name}")`): a library\'s pipeline '
    "builds their classes. A call of a method of such a module that runs its training loop, itself or through the methods it "
    'calls (a trainer\'s `train` calling `self.run_epoch("train", ...)`), is an error at the call: that loop '
    "needs the step barrier and `xm.optimizer_step`. The file's own `importlib.import_module(name)` of a name known only at run time (`MODEL = "
    "importlib.import_module(FLAGS.model)` with the models' folder put on `sys.path`, "
    '`importlib.import_module(f"model.{model_name}")`, and the same name built for `__import__` or an `exec` of an import '
    'statement: `exec(f"from model.{kind}.{name} import {name}")`, its text written there or bound to a name just above) loads a project module that a run on the file neither '
    "follows nor converts: where the modules it may load (the one a flag's string default names, else those of "
    "the package its name starts with, else those of the folders the file's imports search) hold such code, "
    "(with what those modules import from the project: `MODEL.get_loss` where the loaded module does `from "
    "loss_helper import get_loss`), the finding is at the call, naming them, one example of each module first. "
    "A module that reaches such an import (a method of its class that runs the `exec`) names the project package "
    "it imports from. In a single-file run, a function looked up in a registry at run time and handed the optimizer "
    "(`train_dict[cfg.train.mode](loggers, loaders, model, optimizer, scheduler)`), in a script that takes "
    "no optimizer step itself and imports project modules for their side effects (`import mypkg  # noqa`, whose "
    'modules register functions with `@register_train("custom")`), is an error at the call: the training step and '
    "loop live in a registered function the run neither follows nor converts; a run on the project converts them. "
    "A method called on a value whose class the tool cannot tell (`model.fit(...)` with `model = "
    "getattr(model_zoo, name)(...)`, a model a registry builds) that is named like methods of the project's "
    "classes that take a training step or run a training loop, in modules the run does not convert, is an error "
    "at the call, naming them (not for a name that torch's modules, optimizers and tensors define: `train`, "
    "`step`; nor for one that Python's containers define, `update`, unless a call the tool cannot tell built "
    "the value: `algorithm = algorithm_class(...)`, `agent = make_agent(cfg)` returning "
    "`hydra.utils.instantiate(cfg)`, or `agent = hydra.utils.instantiate(cfg.agent)` itself); where every such method only takes a plain optimizer step (no loop of its "
    "own, no CUDA mixed precision) in a class that chooses no CUDA device (its device is handed in), the loop "
    "that calls it gets the step barrier and on one process it trains on XLA as it is: an error only where the "
    "script runs several processes without DDP; a class whose base (of its module, or imported from another) "
    "chooses the device its methods use (`self.device = torch.device('cuda')` in `BaseModel.__init__`) chooses "
    "it too: an error naming that base and its module. Where the value comes from a project factory that picks "
    "its class among modules it imports by a name known only at run time (`getattr(importlib.import_module("
    "f'pkg.models.{name}'), opt['model_type'])(opt)`, over a scan of the folder's `*_model.py`), the finding says "
    "that no run on one file can tell which, and names the folder they are looked for in. A loop whose training step runs in a callable of another module gets the step barrier here; the "
    "finding names that callable when its step is wrong on XLA as it is: it scales the gradients (a CUDA "
    "gradient scaler), or the script runs several processes without DDP (a plain `optimizer.step()` does not "
    "reduce the gradients across them); on one process the plain step, closed by the loop's barrier, computes "
    "what `xm.optimizer_step` does. An optimizer such a module builds over parameters that a later move "
    "to the device replaces (what XLA203 or XLA213 reports there: an agent's `__init__` building it over the modules "
    "it is handed, which its `torch_to_device` moves) is named at the import as a cause of its own, also where the "
    "call of its plain step is covered: the optimizer steps the old CPU copies and nothing trains, whatever loop "
    "drives it. A call of a callable of such a module that sets up CUDA mixed precision "
    "is an error at the call, naming what it holds (its gradient scaler, its autocast); a method of what a "
    "project function returns (`train_stats = train_one_epoch(...)`, then `train_stats.items()`) is not that "
    "function's code, and of a class's methods only those that enter autocast or use the scaler (themselves or "
    "through a method they call on `self`) set it up: not a load, save or flag method. An instance of one of the "
    "classes of a dict (`model = model_config[name](config)`) under an `if` that tests that key (`name in ['mf']`) "
    "is one of the classes those keys give; where it may still be several, a finding at its method call names the "
    "methods it may run by its class. Modules whose used code is device-agnostic (it takes the "
    "device as a parameter) get nothing, and a run on the whole project converts them instead. A star import of a "
    "project module (`from net import *`) binds that module's names here, its imports included: `torch` from its "
    "`import torch` is torch, its CUDA checks are ported as with `import torch`; what a single-file run follows "
    "through it is its top-level code and the names this file calls or reads, not the helpers it never names "
    "(`gpu()` holding `tensor.cuda()`, unused: off the path); a package that re-exports a module so "
    "(`utils/__init__.py`: `from .other import *`, with no torch of its own) leads `from utils import device` to "
    "that module's device choice, and a script of a copy without a root marker whose imports are found only in a "
    "folder above its own (`scripts/train.py`, run as `python -m scripts.train`) reads that folder's modules. A "
    "`torch.manual_seed` a module holds (XLA515) is said as what it is: it runs on XLA, but the draws made on the "
    "device ignore that seed. Where the tool cannot read that "
    "module, a CUDA check on a `torch` that only the star import may bind (`torch.cuda.is_available()`) is left "
    "as written, and is an error at the check: on an XLA host it is False, so what branches on it stays off the "
    "device. A module-level table of classes or functions (`TASKS = {'detection': DetSolver}`, called as "
    "`TASKS[task](cfg).fit()`, or an empty dict filled by item assignments: `REGISTRY['q'] = QLearner`) is a use "
    "of each of its values, and a name bound to such a call (`learner = REGISTRY[name](...)`) is an instance of "
    "one of them: a loop calling its training method drives that method's step.",
    examples=lambda: (
        invalid(
            """
            import torch
            from helpers import train_one_epoch

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_one_epoch(model, loader, optimizer)
            """,
            findings=(Expected(5, 1, "the optimizer goes to `train_one_epoch` in another module of the project"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            def get_device():
                return torch.device("cpu")

            device = get_device()
            """,
            note="defined-here",
        ),
        valid(
            """
            import torch
            import torch_xla

            def train_one_epoch(model, loader, optimizer, loss_scaler):
                for x in loader:
                    with torch.autocast("xla", dtype=torch.bfloat16):
                        loss = model(x)
                    loss_scaler(loss, optimizer, parameters=model.parameters())
                    torch_xla.sync()
            """,
            note="step-wrapper-passed-in-names-no-file",
        ),
        valid(
            """
            import torch
            from net import *

            use_cuda = torch.cuda.is_available()
            """,
            note="torch-imported-by-name-beside-a-star-import",
        ),
        valid(
            """
            from torch import *

            n = torch.cuda.device_count()
            """,
            note="a-star-import-of-torch-binds-no-torch",
        ),
        # An ``exec`` of code that imports nothing, and the ``eval`` that builds the class an ``exec`` of an
        # import bound, load no module (an ``exec`` of an import does: tests/project/
        # test_runtime_imports_and_registries.py).
        valid(
            """
            import torch

            def build(conf, name):
                code = f"print({name!r})"
                exec(code)
                return eval(f"{name}(conf)")
            """,
            note="exec-of-code-that-imports-nothing",
        ),
        valid(
            """
            import builtins as b
            import torch

            def build(conf, name):
                b.exec(f"x = {name}")
                return eval(f"{name}(conf)")
            """,
            target="sagemaker",
            note="exec-of-code-that-imports-nothing-sagemaker",
        ),
        # A registry call in a script that takes its optimizer step itself: the step is here.
        valid(
            """
            import torch
            from registry import train_dict

            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_dict["custom"](model, optimizer)
            model(torch.randn(2, 4)).sum().backward()
            optimizer.step()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm
            from registry import train_dict

            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_dict["custom"](model, optimizer)
            model(torch.randn(2, 4)).sum().backward()
            xm.optimizer_step(optimizer)
            """,
            note="registry-call-in-a-script-that-steps",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from helpers import get_device

            device = get_device()
            """,
            findings=(Expected(4, 10, "the device comes from `get_device` in another module of the project"),),
        ),
        invalid(
            """
            import torch
            from engine import train_one_epoch

            optimizer = torch.optim.AdamW(params)
            for epoch in range(10):
                train_one_epoch(model, loader, optimizer, epoch)
            """,
            note="training-step-in-another-file",
            findings=(Expected(6, 5, "the optimizer goes to `train_one_epoch` in another module of the project"),),
        ),
        invalid(
            """
            import torch
            from .utils import pick_device as pd

            device = pd()
            """,
            note="relative-import",
            alias=True,
            findings=(Expected(4, 10, "the device comes from `pd` in another module of the project"),),
        ),
        # ``torch`` only a star import of a project module that this run cannot read may bind
        # (a run on the project reads it: tests/project/test_star_imports.py).
        invalid(
            """
            from net import *

            use_cuda = torch.cuda.is_available()
            if use_cuda:
                model.cuda()
            """,
            """
            from net import *
            import torch_xla

            use_cuda = torch.cuda.is_available()
            if use_cuda:
                model.to(torch_xla.device())
            """,
            note="torch-from-an-unread-star-import",
            findings=(Expected(4, 12, "names `torch`, which only `from net import *` may bind"),),
        ),
        invalid(
            """
            from .net import *

            n = torch.cuda.device_count()
            """,
            note="torch-from-an-unread-relative-star-import",
            alias=True,
            findings=(Expected(3, 5, "names `torch`, which only `from .net import *` may bind"),),
        ),
        invalid(
            """
            from .net import *

            n = torch.cuda.device_count()
            """,
            target="sagemaker",
            note="torch-from-an-unread-relative-star-import-sagemaker",
            alias=True,
            findings=(Expected(3, 5, "names `torch`, which only `from .net import *` may bind"),),
        ),
    ),
)

RULES = (CROSS_FILE,)

# What each family's errors are (the causes project/holdings.py finds), as a finding on the
# importing file says it; and what the code does on an XLA host while it stays as it is.
CAUSES: dict[str, tuple[str, str]] = {
    "device": (
        "a CUDA device choice",
        "it picks CUDA (no device there: it crashes) or the CPU (training leaves the XLA device)",
    ),
    "cuda-assert": (
        "an assert that CUDA is available",
        "it fails (AssertionError: there is no CUDA there)",
    ),
    "step": (
        "a training loop or optimizer step on CUDA terms",
        "its steps run without the step barrier and the XLA optimizer step (the pending graph grows every step)",
    ),
    "stale-optimizer": (
        "an optimizer built over parameters that a later move to the device replaces",
        "moving a module to XLA makes new Parameter objects, so the optimizer steps the old CPU copies and the "
        "model trains nothing (whatever loop drives the step)",
    ),
    "eval-loop": (
        "an evaluation or inference loop over the device on CUDA terms (no optimizer step)",
        "the loop has no step barrier: where an iteration reads no value to the host, its operations pile up into "
        "one pending graph across the iterations (a long loop traces and compiles a graph that grows with it)",
    ),
    "amp": ("CUDA mixed precision", "its CUDA gradient scaler and autocast do not run on the XLA device"),
    "cuda-only": (
        "code that does not run on XLA (CUDA-only APIs, sparse tensors, compiled extension ops)",
        "it crashes or leaves the XLA device",
    ),
    "seed": (
        "a seed of the CPU generator alone (`torch.manual_seed`)",
        "the draws it makes on the XLA device ignore that seed (a seed sweep changes nothing there; re-seeding does not replay a draw)",
    ),
    "dynamic-import": (
        "an import of a module named only at run time (by a config or the command line), which a run on this "
        "file cannot follow (and this file takes no optimizer step itself)",
        "the training loop is most likely in the module it imports, which stays on CUDA terms",
    ),
    "checkpoint": (
        "a checkpoint load without a CPU map location",
        "a checkpoint saved from a CUDA run holds CUDA storages, which raise where it is loaded without CUDA",
    ),
    "release-names": (
        "torch_xla names that the target's torch_xla release does not have (code written for another release)",
        "it raises AttributeError or ImportError where it reaches them",
    ),
    "trainer": (
        "a Hugging Face Trainer or model set up for CUDA (the default fused AdamW, fp16, a CUDA device_map)",
        "the Trainer's optimizer or mixed precision raises on the XLA device, or the model loads off it",
    ),
}

_EXAMPLES = 3  # code a finding shows of what a module holds
# What converting the project does with what the modules hold, by Unported.ported.
_PROJECT_RUN = {
    (True,): "would port it",
    (False,): "would not port it: it reports it there as an error to fix by hand",
    (False, True): "would port part of it and report the rest there as errors to fix by hand",
}


def _holdings(found: Unported, here: str | None) -> tuple[str, str, str]:
    """What a finding says of what modules hold: their causes, the consequences on an XLA host,
    and up to _EXAMPLES of the code (each with its module, unless it is ``here``)."""
    causes = ", ".join(CAUSES[cause][0] for cause in found.causes)
    consequences = "; ".join(CAUSES[cause][1] for cause in found.causes)
    held = "; ".join(
        (f"`{name}`" if name else "module-level code") + ("" if path == here else f" in {path}") + f" has {what}"
        for path, name, what in found.held[:_EXAMPLES]
    )
    more = len(found.held) - _EXAMPLES
    return causes, consequences, held + (f"; and {more} more" if more > 0 else "")


@on_facts(
    CROSS_FILE,
    nodes=lambda facts: [facts.project.unported_module] if facts.project.unported_module is not None else [],
)
def _unported_uses(ctx: Context[Facts], original: cst.Module, updated: cst.Module) -> cst.Module:
    """What the file uses of each module the run does not convert, at the import that leads
    there, unless a finding of the device obligations names that module already."""
    named = ctx.facts.obligations.named_modules
    for node, unported in ctx.facts.project.unported_uses.items():
        for found in unported:
            if found.path in named or all(path in named for path, _, _ in found.held):
                continue
            causes, consequences, held = _holdings(found, here=found.path)
            ctx.report(
                CROSS_FILE,
                node,
                f"what this file uses of {found.path}, which this run does not convert, holds {causes} ({held}): "
                f"on an XLA host {consequences}; converting the project (`xla-codemod convert .` at its root) "
                + _PROJECT_RUN[found.ported]
                + (_library_loop(ctx, original) if "step" in found.causes else ""),
            )
    return updated


def _library_loop(ctx: Context[Facts], module: cst.Module) -> str:
    """Where the file hands the training to a library's loop (BasicSR's ``train_pipeline``,
    XLA307): converting the project ports the steps of its model classes, but the loop that
    drives them is the library's, which no conversion reaches: they keep no step barrier."""
    import libcst as cst

    from codemods import library_apis
    from codemods.engine.nodes import walk

    for node in walk(module):
        if type(node) is not cst.Call or (callee := ctx.resolve(node.func)) not in library_apis.LIBRARY_LOOPS:
            continue
        if not ctx.facts.project.context.owns(callee):
            return (
                f" except the steps' barrier: the loop that runs them is `{ctx.code(node.func)}`'s "
                f"({library_apis.LIBRARY_LOOPS[callee].library}), which no conversion of the project reaches (XLA307 says "
                "what to do)"
            )
    return ""


@on_facts(CROSS_FILE, nodes=lambda facts: facts.project.reached_holdings)
def _reached_holdings(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """A call of a method of a project class, in a module the run does not convert, whose own code
    holds what converting it ports or reports as an error."""
    method, found, others = ctx.facts.project.reached_holdings[original]
    if found.path in ctx.facts.obligations.named_modules:
        return updated  # (a finding of the device obligations names that module already)
    causes, consequences, held = _holdings(found, here=found.path)
    runs = f"runs `{method}`"
    if others:  # (the receiver may be one of several classes: no one of them is what runs)
        receiver = ctx.code(original.func).rpartition(".")[0]
        runs = f"runs, by the class of `{receiver}`, {_named((method, *others))}: `{method}`"
    ctx.report(
        CROSS_FILE,
        original,
        f"`{ctx.code(original.func)}` {runs} in {found.path}, which this run does not convert, and it holds "
        f"{causes} ({held}): on an XLA host {consequences}; converting the project (`xla-codemod convert .` at its "
        "root) " + _PROJECT_RUN[found.ported],
    )
    return updated


@on_facts(CROSS_FILE, nodes=lambda facts: facts.project.dynamic_loads)
def _dynamic_load(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """An ``importlib.import_module(name)`` of a name known only at run time, in a run that
    does not convert the project modules it may load, where those hold what converting them
    ports or reports as an error."""
    load = ctx.facts.project.dynamic_loads[original]
    found = load.held
    if load.default is not None:
        what = f"`{load.default}` by default ({', '.join(load.paths)})"
    else:
        shown = ", ".join(load.paths[:_EXAMPLES])
        more = load.candidates - min(len(load.paths), _EXAMPLES)
        where = f"the modules of the `{load.package}` package" if load.package else "the modules on its path"
        what = f"one of {where}: {shown}" + (f" and {more} more" if more > 0 else "")
    causes, consequences, held = _holdings(found, here=None)
    ctx.report(
        CROSS_FILE,
        original,
        f"`{ctx.code(original)}` loads a module of the project named at run time, {what}, which a run on this file "
        f"neither follows nor converts: it holds {causes} ({held}): on an XLA host {consequences}; converting the "
        "project (`xla-codemod convert .` at its root) " + _PROJECT_RUN[found.ported],
    )
    return updated


@on_facts(CROSS_FILE, nodes=lambda facts: facts.project.registry_calls)
def _registry_call(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """A function looked up in a registry that project modules imported for their side effects fill,
    in a single-file run of a script that takes no optimizer step itself."""
    registry, paths = ctx.facts.project.registry_calls[original]
    ctx.report(
        CROSS_FILE,
        original,
        f"`{ctx.code(original.func)}` runs a function looked up in the registry `{registry}` at run time, which "
        f"a run on this file cannot follow: the project modules this file imports for their side effects "
        f"({_named(paths, quoted=False)}) may register it, and its training step and loop stay on CUDA terms there "
        "(no step barrier, no XLA optimizer step, no move to the XLA device); converting the project "
        "(`xla-codemod convert .` at its root) converts the registered functions",
    )
    return updated


def _named(names: tuple[str, ...], quoted: bool = True) -> str:
    """``a``, ``a and b``, ``a, b and 1 more``: the first two of ``names``."""
    shown = [f"`{name}`" if quoted else name for name in names[:2]]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "") if more else " and ".join(shown)


def _steps_to_port(facts: Facts) -> set[cst.Call]:
    """The loop's steps run by another module's callable that are wrong on XLA as they are: one
    that scales its gradients (its CUDA scaler), or any in a script that runs several processes
    without DDP (its plain optimizer step does not reduce the gradients across them).  On one
    process a plain step, which the loop's barrier closes, computes what xm.optimizer_step does."""
    reduces = _unreduced(facts)
    return {call for call in facts.project.external_steps if reduces or call in facts.project.scaled_steps}


def _unreduced(facts: Facts) -> bool:
    """The script runs several processes without DDP: a plain optimizer step does not reduce the
    gradients across them (xm.optimizer_step does)."""
    return facts.distributed.multi_process and not facts.distributed.ddp


def _named_to_report(facts: Facts) -> set[cst.Call]:
    """The calls of methods named like project methods that train, in modules the run does not
    convert, that are wrong on XLA as they are: a training loop (it needs the step barrier), a step
    with CUDA mixed precision or in a class that chooses a CUDA device, or any step in a script that
    runs several processes without DDP.  A plain step of a class whose device is handed in, which the
    loop's barrier closes, computes on one process what xm.optimizer_step does."""
    reduces = _unreduced(facts)
    return {call for call, named in facts.project.named_training.items() if reduces or not named.plain}


@on_facts(
    CROSS_FILE,
    nodes=lambda facts: {
        *facts.project.external_training,
        *_steps_to_port(facts),
        *facts.project.external_loops,
        *facts.project.external_amp,
        *_named_to_report(facts),
        *facts.project.hidden_checks,
        *facts.project.external_devices,
    },
)
def _external_setup(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """A call that hands the optimizer, the training step or loop, mixed precision or the
    device to another module that still needs converting, or a CUDA check whose ``torch`` only
    an unread star import may bind."""
    project = ctx.facts.project
    if original in project.external_training:
        callee, path = project.external_training[original]
        where = f"{path}, which still needs converting" if path else "another module of the project"
        ctx.report(
            CROSS_FILE,
            original,
            f"the optimizer goes to `{callee}` in {where}: convert it too (its training loop needs the step "
            "barrier and xm.optimizer_step)",
        )
    elif original in project.external_steps:
        what = (
            "its gradient scaler must become the XLA one"
            if original in project.scaled_steps
            else "its optimizer step must become xm.optimizer_step, which reduces the gradients across the processes"
        )
        ctx.report(
            CROSS_FILE,
            original,
            f"the training step runs in {project.external_steps[original]}: this loop gets the step barrier; "
            f"convert that code too ({what})",
        )
    elif original in project.external_loops:
        ctx.report(
            CROSS_FILE,
            original,
            f"`{ctx.code(original.func)}` runs a training loop in {project.external_loops[original]}, which "
            "still needs converting: convert it too (its loop needs the step barrier and xm.optimizer_step)",
        )
    elif original in project.external_amp:
        path, parts = project.external_amp[original]
        held = " and ".join(parts)
        ctx.report(
            CROSS_FILE,
            original,
            f"`{ctx.code(original.func)}` sets up CUDA mixed precision in {path}, which still needs converting: "
            f"convert it too (its {held} must become the XLA {'ones' if len(parts) > 1 else 'one'})",
        )
    elif original in project.named_training:
        named = project.named_training[original]
        names, paths = named.names, named.paths
        receiver = ctx.code(original.func).rpartition(".")[0]
        one = len(names) == 1
        runs = ("takes a training step" if one else "take training steps") if named.steps else "run" + "s" * one
        runs += "" if named.steps else " a training loop" if one else " training loops"
        wrong = (
            "their plain optimizer step does not reduce the gradients across this script's processes "
            "(xm.optimizer_step does)"
            if named.plain
            else "the device choice and the optimizer step are not ported"
        )
        why = "the tool cannot tell the class of"
        if named.factory is not None:
            function, code, path, folder = named.factory
            why = (
                f"`{receiver}` comes from `{function}`, which picks its class among modules it imports by a name "
                f"known only at run time ({code} in {path}): no run on one file can tell which modules of {folder} "
                "it loads, nor the class of"
            )
        inherited = ""
        if named.inherited is not None:
            base, path, cause, what = named.inherited
            paths = (*paths, path) if path not in paths else paths
            inherited = f"; its base `{base}` in {path} has {what}, {CAUSES[cause][0]} that its methods run with"
        ctx.report(
            CROSS_FILE,
            original,
            f"{why} `{receiver}`, and {_named(names)} of the project, named "
            f"like `{ctx.code(original.func)}`, {runs} in {_named(paths, quoted=False)}, which this run does not "
            f"convert: on an XLA host {'it runs' if one else 'they run'} there on CUDA terms ({wrong}{inherited}); "
            "convert the project (`xla-codemod convert .` at its root), which follows it",
        )
    elif original in project.hidden_checks:
        star = ctx.code(project.hidden_checks[original])
        ctx.report(
            CROSS_FILE,
            original,
            f"`{ctx.code(original)}` names `torch`, which only `{star}` may bind, and the tool could not read "
            "that module: the CUDA check is left as written, so on an XLA host it is False and the code that branches "
            "on it stays off the XLA device; import torch by name here, or run the tool on the project folder",
        )
    else:
        path = project.external_devices[original]
        if path:
            where, todo = f"{path}, which still needs converting", "convert it too"
        else:  # a single file, or a module that could not be read
            where = "another module of the project that this run does not read"
            todo = "run the tool on the project folder to follow it"
        ctx.report(
            CROSS_FILE,
            original,
            f"the device comes from `{ctx.code(original.func)}` in {where}: {todo}, and check it returns "
            "the XLA device",
        )
    return updated
