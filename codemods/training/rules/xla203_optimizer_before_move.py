"""XLA203 optimizer-before-move: an optimizer built over a model's parameters before the model moves
to the XLA device steps stale CPU copies (moving a module to XLA replaces its Parameter objects).
The moves that can go before the optimizer are made by the device rewrite; this module's hooks
report a model that builds its own optimizer and is moved afterwards, and a module moved off the
device and back while an optimizer holds its parameters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.training.rules.caller_moved_optimizers import caller_moved_optimizer_valid
from codemods.training.rules.filled_group_cases import filled_group_invalid, filled_group_valid
from codemods.training.rules.folded_device_cases import folded_device_valid
from codemods.training.rules.holder_move_cases import holder_move_valid
from codemods.training.rules.init_moved_optimizers import init_moved_optimizer_valid
from codemods.training.rules.init_moves import init_move_valid
from codemods.training.rules.library_builder_cases import library_builder_invalid, library_builder_valid
from codemods.training.rules.looked_up_classes import looked_up_valid
from codemods.training.rules.looked_up_round_trips import looked_up_round_trip_valid
from codemods.training.rules.loop_moved_optimizers import loop_moved_valid
from codemods.training.rules.method_optimizers import method_optimizer_valid
from codemods.training.rules.module_cast_cases import module_cast_invalid, module_cast_valid
from codemods.training.rules.optimizer_before_move_cases import optimizer_before_move_invalid
from codemods.training.rules.own_optimizers import own_optimizer_valid
from codemods.training.rules.programs import (
    HANDED_IN_MODELS,
    HANDED_IN_MODELS_PORTED,
    MOVED_IN_INIT,
    MOVED_IN_INIT_PORTED,
)
from codemods.training.rules.returned_optimizer_cases import returned_optimizer_valid
from codemods.training.rules.round_trip_rebuilds import round_trip_rebuild_valid
from codemods.training.rules.round_trips import round_trip_valid
from codemods.training.rules.split_optimizer_cases import split_optimizer_invalid, split_optimizer_valid
from codemods.training.rules.stale_parameter_list_cases import stale_parameter_list_valid
from codemods.training.rules.wrapped_models import wrapped_model_valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


OPTIMIZER_BEFORE_MOVE = Rule(
    code="XLA203",
    name="optimizer-before-move",
    severity="error",
    summary="An optimizer built before its model moves to the XLA device gets the moved parameters",
    fixable=True,
    why="Moving a module to an XLA device replaces its Parameter objects (on CUDA they are kept), so an "
    "optimizer built from `model.parameters()` before the move updates stale CPU copies: the model silently "
    "trains nothing (with a gradient scaler: 'No inf checks were recorded for this optimizer'). The model is "
    "moved first, also when the later move is in another function or in a callable of another project file "
    "that the model is handed to (a trainer class, also a subclass whose `__init__` hands the model on to its "
    "base's: `super().__init__(opt, model, optimizer=optimizer)`, the base in another module), and when a function builds the optimizer from the model. "
    "This is obligation 2 of a port (the optimizer holds the parameters as they are after the move), followed "
    "through submodules (`model.vision.parameters()`), parameter groups, the model's own methods, parameters "
    "collected into a name first (`params = list(model.parameters())`; not a cast or mode that returns the module, "
    "`model = model.half()`, which binds the model again), parameter groups a loop over the model's parameters "
    "fills (faster-rcnn's `for key, value in dict(fasterRCNN.named_parameters()).items(): params += "
    "[{'params': [value], ...}]`, also `params.append(...)`; the move is written into the loop's iterable, and the "
    "model may come from a call the tool does not know as a module class, `fasterRCNN = vgg16(classes)`, when the "
    "function moves it later; groups filled again after the move for the same optimizer name give no finding) "
    "and functions of the file or the project "
    "that collect them, for a model built or handed in (a parameter, a key of `**kwargs`, a name bound to one: "
    "`self.model = model`, also `self.policy, self.qf = policy, qf`, also moved by another method of the class, after `__init__` built the optimizer, from the parameter's parameters or the attribute's) "
    "and through a loop variable (`for m in self.modules: m.to(device)`, each element of a literal list or tuple, of a "
    "name bound to one, or of what a property or method of the class returns: `return [self.policy, self.qf]`, also a "
    "list it builds and appends to, an RL agent's `torch_to_device`; a holder's method that moves each module it holds through a "
    "loop over `self.__dict__` or `vars(self)`, `.items()` or `.values()`, U-ViT's `TrainState.to`, moves every attribute "
    "its class binds or declares as a dataclass field, and an optimizer built in the holder's arguments is built before it) "
    "and over a loop variable that walks a model's submodules (`for ind, (unet, lr) in enumerate(zip(self.imagen.unets, lrs))`: "
    "`Adam(unet.parameters())` is over `self.imagen`) "
    "and through a module built over the model (`ModelWithLoss(model, loss).to(device)`, also when a trainer "
    "class builds it and another of its methods moves it: moving it moves the model); where the later move may go to the CPU, or runs only under a condition the port keeps (`if use_cuda: model.cuda()` after the optimizer, not around it; not an availability check the port drops nor a flag it switches on) or in the class's own `cuda` method (it runs only where a caller asks for CUDA: `if args.use_cuda: learner.cuda()`), so that a move put first would run on the CPU path too, an error at the optimizer names the move "
    "(and says when its module is not converted in this run; XLA213 names what the tool could not follow): "
    "build the optimizer after the move, or move the model first to the XLA device (in a file that uses Accelerate "
    "the message says why `accelerator.prepare` does not repair it: it maps the optimizer's parameters from the model's "
    "as it finds them, already moved, so an optimizer built before the script's own move keeps the CPU copies; an "
    "optimizer built before `prepare` moves the model is fine and gets no finding when it is prepared in the same "
    "call as the model, `accelerator.prepare(model, optimizer)`: Accelerate re-points only the optimizers of that "
    "call at the moved parameters; an `accelerator.prepare` that moves a model apart from the optimizers built over "
    "its parameters before it (prepared alone before it, `optimizer = accelerator.prepare(optimizer)`, or not at all, "
    "or held by a module class of the file whose `__init__` prepares the optimizer it is handed on its own, "
    "audiolm-pytorch's `OptimizerWithWarmupSchedule`) is reported at that call, naming them: they step the stale CPU "
    "copies; a device picked on a flag "
    "that holds only an availability check, `self.use_cuda = torch.cuda.is_available()` then "
    "`torch.device('cuda:0' if self.use_cuda else 'cpu')`, is the XLA device on every path once XLA104 switches the "
    "flag on, so that model is moved first; not where the flag also guards CUDA-only code, which XLA104 leaves). "
    "An optimizer built in a method over an attribute that `__init__` bound to a model it was handed "
    "(`self.model = model`) and did not move, before the same method moves it (`self.optimizer = Adam(self.model"
    ".parameters())`, then `self.model.to(self.device)`: DIG's `TrainModel.train`), is reported at the optimizer, "
    "ported as for a parameter where the move goes to the XLA device on every path (moves of other methods are "
    "not followed here: they may run before it). A class whose `__init__` is handed both a model and an optimizer (a "
    "parameter named like one) and moves the model itself (torchdrug's `Engine.__init__`: `task = task.cuda(self.device)`, then "
    "`self.optimizer = optimizer`) is reported at that move, where no file of the run calls it (a caller in the run "
    "is followed: XLA203 at its optimizer moves the model first, and a caller that built the optimizer after moving "
    "the model needs nothing; a function handed both, `train(model, optimizer, device)`, often moves again what its "
    "caller moved before building the optimizer, and is not reported): its callers build the optimizer over the parameters the model had before, so it steps "
    "stale CPU copies; not where it binds the optimizer again after the move (`self.optimizer = type(optimizer)"
    "(task.parameters(), **optimizer.defaults)`, in `__init__` or another method of the class), sets or adds its "
    "groups (`optimizer.param_groups[0]['params'] = ...`, `add_param_group`), or hands it to a call together with "
    "the model (`accelerator.prepare(task, optimizer)`); `optimizer.load_state_dict(...)` keeps the optimizer's own "
    "Parameter objects, so it repairs nothing. "
    "A module class whose "
    "`__init__` builds an optimizer over the instance's own parameters (`self.optim = Adam(self.parameters())`, "
    "a GAN's generator, an RL agent), in this file or another module of the project, and whose instance the "
    "caller moves afterwards (`G = Generator(**cfg).to(device)`, or through a callable of the file or of the project "
    "that moves what it is handed: `model = to_gpu(Net())`, `to_gpu(model)`; Module.to moves in place, so the "
    "instance moves whatever the callable returns) is reported at the move, naming the class and "
    "the attribute: there is no safe port (the constructor does not know the device, other instances may stay "
    "on the CPU, and rebuilding the optimizer would drop its state and groups), so build the optimizer after the "
    "move or move the module in `__init__` before building it. An `__init__` that does so (`self.model = "
    "self.model.to(device)`, then `Adam(self.model.parameters())`) strands nothing when the caller moves the "
    "instance again: a move to the device the parameters are on keeps them. An instance whose optimizers hold only the "
    "parameters of modules handed to its constructor (`self.net = net`, then `SGD(self.net.parameters())` or "
    "`self.net.get_optimizer()`), built after the caller moved each of them to the device (`net = Net().cuda()`), "
    "gets no finding: its optimizers hold the moved parameters, which moving the instance keeps. The same holds for optimizers `__init__` builds over the modules the instance registers (`self.gen`, `setattr(self, name, module)` in a loop over a dict, `nn.ModuleDict(nets)`: `{name: Adam(m.parameters()) for name, m in nets.items()}`); where `__init__` itself moves the instance afterwards (`self.to(self.device)`), that move is reported, naming the optimizers' attributes (move the module first, once its submodules are set, or build the optimizers after the move); optimizers over modules the instance does not register (handed in, kept in a plain dict) get no finding. The optimizers a class builds through its methods and helpers are followed too: `__init__` calling a method of the class or of a base class (of another module too) that binds one over the instance's parameters (`compile()`: `self.optimizer = get_optimizer(name, self.parameters(), lr)`) and then one that moves the instance (`model_to_device()`: `self.to(self.device)`) is reported at that call, naming both; an optimizer built by a helper handed `self.parameters()` (a project class: `tools.Optimizer(\"model\", self.parameters(), lr)`) or by a submodule `__init__` builds (an agent's world model) strands the instance the caller moves, and so does one the caller builds through a method (`model.compile(lr)`, then `model.cuda()` or `model.model_to_device()`). An instance moved before the method builds the optimizer, or whose optimizer is built again after the move (`self.compile(lr)` again, `agent.opt = Adam(agent.parameters())`), gets no finding. The class is followed through a module that "
    "`__import__(config['model'])` picks at run time (the modules of the file's folder that define it); an "
    "instance built with a flag that returns from `__init__` before the optimizer (`no_optim=True`, also in "
    "a dict it unpacks), a callable that moves what it is handed to the CPU, and a file that trains nothing (a "
    "sampling script) get no finding. A subclass that runs its base's `__init__` (it defines none, or "
    "calls `super().__init__(...)` and moves nothing) builds what that `__init__` builds. An instance of a class "
    "the tool cannot tell, looked up by its name (`algorithm_class = algorithms.get_algorithm_class(name)` "
    "with `return globals()[name]`, `getattr(algorithms, name)`), moved after it is built, is reported at the "
    "move naming the classes of that module that build their optimizer in `__init__` (else the project's "
    "classes whose methods it calls, where those methods train): it may be any of them. Classes that build "
    "it lazily, after moving themselves, or take it from outside give no finding. An optimizer that a factory "
    "builds over a model and returns with it (`return tokenizer, model, optimizer`; the factory reached "
    "directly, through a dict of factories, `FACTORIES[kind](cfg)`, or a router handed such a dict) strands the "
    "model's parameters when the caller moves it afterwards, itself or through a callable of the project that "
    "moves what it is handed (`setup_for_distributed_mode(model, optimizer, device)`): reported at that move; "
    "an optimizer built again after the move, or a factory that moved the model first, gives no finding, nor an "
    "optimizer the caller discards (`encoder, _ = build(cfg, inference_only=True)`, or a name it reads nowhere "
    "else). The factory may build it through a chain of helpers (`get_optimizer(model, lr)` doing `groups = "
    "param_groups(model, wd)` and `return grouped_optimizer(groups, lr)`, of the file or of the project) and bind "
    "it through a conditional (`optimizer = get_optimizer(model) if not inference_only else None`). Optimizer "
    "classes of libraries count as torch.optim's do: transformers' `AdamW` (gone from transformers 5, still named "
    "by older code) and `Adafactor`, and the classes of `timm.optim`, `apex.optimizers` and `bitsandbytes.optim` "
    "(whose CUDA kernels XLA004 reports); so do the builders of libraries handed the module, mmcv's "
    "`build_optimizer(model, cfg.optimizer)` and mmengine's `build_optim_wrapper(model, cfg)`, before a move also "
    "written inside a wrapper's call (`MMDataParallel(model.cuda(), device_ids=...)`): the model is moved first, "
    "`build_optimizer(model.to(device), cfg.optimizer)`. In a run that does not convert the callable's module, XLA003 names that "
    "module instead (converted on its own, the script keeps the callable's CUDA code). A module an optimizer "
    "steps that is moved to the CPU and back after the optimizer is built (`torch.save(self.encoder.cpu(), path)` "
    "then `self.encoder.to(self.device)`, in one function or method, the move back also through a callable that "
    "moves what it is handed) is reported at the move to the CPU. So is a callable of the project handed the module that "
    'does both itself, through helpers too (`move_all(torch.device("cpu"), policy)`, then `move_all(device, policy)`), '
    "and a class built with it whose methods move what `__init__` kept (a rollout sampler's `collect` taking "
    "`self.policy` to the CPU and back, in another module): reported where it is called or built. A module looked up on the instance by a name built at run time "
    "(`net = getattr(self, 'net' + name)`, then `net.module.cpu()` and `net.cuda()`) may be any attribute the "
    "name's prefix starts (`self.netG`, `self.netD`): reported at the move to the CPU where the class's optimizers "
    "step one, and, where the method is a base's (of this file or another module: CUT's `BaseModel.save_networks`), "
    "at each optimizer of the subclass over such an attribute. On CUDA `.cpu()` and "
    "`.cuda()` swap each parameter's data in place, on XLA each move makes new Parameter objects, so the optimizer keeps stepping the "
    "old ones and the module stops training. It is not ported: what runs between the two moves may need the module "
    "on the CPU, and saving its `state_dict()` instead of the module changes what a later load gets; save a CPU copy "
    "(`copy.deepcopy(module).cpu()`, or the state dict, which xm.save moves to the CPU), or build the optimizer "
    "again after the move back (then there is no finding, when the rebuild runs after every round trip: after the "
    "move back in its block, or in a block around it; one under another `if`, `if step == milestone:` beside the "
    "save's `if step % save_steps == 0:`, runs once and leaves the later round trips reported). A name bound to a "
    "new model before the move (`model = Net()` again) moves another module: the first one's optimizer gets no "
    "finding, but `torch.jit.script(model)` and `torch.compile(model)` return a module over the same parameters, "
    "where `model` is (moved first, no finding at the optimizer; on the CPU, moved later, reported). Parameter lists a "
    "module class collects in `__init__` (`self.params1 = list(self.convs.parameters())`, in this file or another "
    "module of the project) hold the Parameters as they were before the caller moved the instance: an optimizer "
    "built over them after the move (`Adam([{'params': model.params1}, ...])`) is reported there, naming the "
    "assignment (not ported: collect the lists again after the move, `model.params1 = "
    "list(model.convs.parameters())`, or build the groups from `model.convs.parameters()`); an attribute that "
    "holds the submodule (`self.part = self.convs`, then `model.part.parameters()`) gives no finding.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=0.1)
            model.to(device)
            """,
            findings=(
                Expected(6, 29, "the optimizer is built while `model` is on the CPU and `model.to(device)` moves"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = torch.nn.Linear(2, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            other = torch.nn.Linear(2, 2)
            other = other.to(device)
            other_optimizer = torch.optim.SGD(other.parameters(), lr=0.1)
            """,
            note="moved-first",
        ),
        valid(
            """
            import torch

            model = Net().to(device)
            params = list(model.encoder.parameters())
            params += list(model.decoder.parameters())
            params.extend(model.head.parameters())
            optimizer = torch.optim.Adam(params, lr=1e-3)
            losses = []
            losses.append(model.head.weight.sum())
            """,
            note="parameters-collected-in-steps-after-the-move",
        ),
        valid(
            """
            import torch

            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="never-moved",
        ),
        valid(
            """
            import torch

            class Trainer:
                def __init__(self, model, gpu_id):
                    self.model = model.cuda(gpu_id)

            def main():
                model = torch.nn.Linear(3, 1)
                trainer = Trainer(model, 0)
                optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            class Trainer:
                def __init__(self, model, gpu_id):
                    self.model = model.to(torch_xla.device())

            def main():
                model = torch.nn.Linear(3, 1)
                trainer = Trainer(model, 0)
                optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.1)
            """,
            note="the-trainer-moves-it-first",
        ),
        valid(
            HANDED_IN_MODELS,
            HANDED_IN_MODELS_PORTED,
            note="handed-in-models-moved-first-or-never-here",
        ),
        valid(
            """
            import torch


            def fit(model, dtype):
                optimizer = torch.optim.SGD([{"params": model.backbone.parameters()}], lr=0.1)
                model.to(torch.bfloat16)
                model.to(memory_format=torch.channels_last)
                model.to(dtype)
                return optimizer
            """,
            note="casts-keep-the-parameters",
        ),
        valid(
            MOVED_IN_INIT,
            MOVED_IN_INIT_PORTED,
            note="init-moves-first-methods-build-after",
        ),
        *folded_device_valid(),
        *wrapped_model_valid(),
        *own_optimizer_valid(),
        *method_optimizer_valid(),
        *round_trip_valid(),
        *round_trip_rebuild_valid(),
        *looked_up_round_trip_valid(),
        *init_move_valid(),
        *holder_move_valid(),
        *init_moved_optimizer_valid(),
        *caller_moved_optimizer_valid(),
        *looked_up_valid(),
        *returned_optimizer_valid(),
        *stale_parameter_list_valid(),
        *loop_moved_valid(),
        *module_cast_valid(),
        *split_optimizer_valid(),
        *filled_group_valid(),
        *library_builder_valid(),
    ),
    invalid=lambda: (
        *optimizer_before_move_invalid(),
        *module_cast_invalid(),
        *split_optimizer_invalid(),
        *filled_group_invalid(),
        *library_builder_invalid(),
    ),
)


@reports_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.moved_own_optimizers)
def _moved_own_optimizer(ctx: Context[Facts], original: cst.Call) -> str:
    """No safe port: the constructor does not know the device, other instances of the
    class may stay on the CPU, and rebuilding the optimizer after the move would drop
    any state or groups the class gave it."""
    stranded = ctx.facts.training.moved_own_optimizers[original]
    cls = stranded.constructor.rsplit(".", 1)[-1]
    where = "to the XLA device" if stranded.xla else "to a device that may be the XLA device"
    through = f" through {stranded.through}" if stranded.through else ""
    # ``self.world.opt``, the optimizer of a submodule that built its own: over that submodule's parameters
    holder = ".".join([stranded.model, *stranded.attribute.split(".")[:-1]])
    if stranded.candidates:  # a class looked up by its name
        shown = [f"`{name}`" for name in stranded.candidates[:4]]
        more = len(stranded.candidates) - len(shown)
        classes = ", ".join(shown[:-1]) + (" or " if len(shown) > 1 and not more else ", " if more else "") + shown[-1]
        classes += f" and {more} more" if more else ""
        return (
            f"`{ctx.code(original)}` moves `{stranded.model}` {where}{through} after the `__init__` of {classes}"
            f"{stranded.origin}, classes that `{stranded.constructor}` may be (looked up by name), built "
            f"`self.{stranded.attribute}` "
            "over the instance's own parameters: moving a module to XLA replaces its Parameter objects, so "
            f"`{stranded.model}.{stranded.attribute}` steps the stale CPU copies and training changes nothing; "
            f"build the optimizer after the move (e.g. `{stranded.model}.{stranded.attribute} = ...` over "
            f"`{holder}.parameters()`), or move the module in `__init__` before it builds the optimizer"
        )
    return (
        f"`{ctx.code(original)}` moves `{stranded.model}` {where}{through} after "
        f"{stranded.built_by or f'`{cls}.__init__`{stranded.origin}'} built `self.{stranded.attribute}` over the "
        "instance's own parameters: moving a module "
        f"to XLA replaces its Parameter objects, so `{stranded.model}.{stranded.attribute}` steps the stale CPU "
        f"copies and training changes nothing; build the optimizer after the move (e.g. `{stranded.model}."
        f"{stranded.attribute} = ...` over `{holder}.parameters()`), or "
        + (
            f"move the module before {stranded.built_by.split(' in ')[0]}"
            if stranded.built_by
            else f"move the module in `{cls}.__init__` before it builds the optimizer"
        )
    )


@reports_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.stale_parameter_lists)
def _stale_parameter_list(ctx: Context[Facts], original: cst.Call) -> str:
    """Not ported: the lists are the class's (other instances may stay on the CPU), and which
    submodules they collect is the class's choice; the caller builds the groups again."""
    stale = ctx.facts.training.stale_parameter_lists[original]
    cls = stale.constructor.rsplit(".", 1)[-1]
    where = "to the XLA device" if stale.xla else "to a device that may be the XLA device"
    lists = " and ".join(f"`{stale.model}.{attribute}`" for attribute in stale.attributes)
    modules = " and ".join(f"`{stale.model}{module.removeprefix('self')}.parameters()`" for module in stale.modules)
    again = stale.written[0].replace("self.", f"{stale.model}.")
    many = len(stale.attributes) > 1
    return (
        f"the optimizer is built over {lists}, which `{cls}.__init__`{stale.origin} collected "
        f"(`{'`; `'.join(stale.written)}`) before `{stale.model}` moved {where}: moving a module to XLA replaces "
        f"its Parameter objects, so {'they hold' if many else 'it holds'} the stale CPU copies and training changes "
        f"nothing; collect {'them' if many else 'it'} again after the move (`{again}`), or build the optimizer's "
        f"groups from the moved model ({modules})"
    )


@reports_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.moved_returned_optimizers)
def _moved_returned_optimizer(ctx: Context[Facts], original: cst.Call) -> str:
    """Not ported: the optimizer is built in the factory, which other callers may use on the CPU."""
    stranded = ctx.facts.training.moved_returned_optimizers[original]
    where = "to the XLA device" if stranded.xla else "to a device that may be the XLA device"
    through = f" through {stranded.through}" if stranded.through else ""
    return (
        f"`{ctx.code(original)}` moves `{stranded.model}` {where}{through} after `{stranded.factory}`"
        f"{stranded.origin} built `{stranded.optimizer}` over its parameters and returned both: moving a module "
        f"to XLA replaces its Parameter objects, so `{stranded.optimizer}` steps the stale CPU copies and training "
        f"changes nothing; build the optimizer after the move (again over `{stranded.model}.parameters()`, or in "
        "the factory once it has moved the model)"
    )


@reports_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.moved_after_init_optimizers)
def _moved_after_init_optimizers(ctx: Context[Facts], original: cst.Call) -> str:
    """Not ported: what ``__init__`` does between the optimizers and the move may need the
    module where it is (the device may be set there, children registered)."""
    moved = ctx.facts.training.moved_after_init_optimizers[original]
    optimizers = " and ".join(f"`self.{attribute}`" for attribute in moved.attributes)
    where = "to the XLA device" if moved.xla else "to a device that may be the XLA device"
    return (
        f"`{ctx.code(original)}` moves the `{moved.cls}` instance{moved.moved_by} {where} after "
        f"`{moved.cls}.__init__` built {optimizers}{moved.built_by} over its parameters (or its submodules'): "
        "moving a module to XLA replaces its Parameter "
        f"objects, so {optimizers} {'hold' if len(moved.attributes) > 1 else 'holds'} the stale CPU copies and "
        "training changes nothing; move the module first "
        f"(`{ctx.code(original)}` before the optimizers are built, once its submodules are set) or build the "
        "optimizers after the move"
    )


@reports_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.round_trips)
def _round_trip(ctx: Context[Facts], original: cst.Call) -> str:
    """Reported, not fixed: code between the two moves may need the module on the CPU, and
    saving ``state_dict()`` instead of the module changes what a later load returns."""
    trip = ctx.facts.training.round_trips[original]
    moves = (
        f"hands `{trip.module}`, whose parameters `{trip.optimizer}` steps, to {trip.back}, which moves it off the "
        "XLA device and back (in its methods, for a class)"
        if trip.handed
        else f"moves `{trip.module}`{f' ({trip.looked_up})' if trip.looked_up else ''}, whose parameters "
        f"`{trip.optimizer}` steps, off the XLA device, and {trip.back} moves it back"
    )
    return (
        f"`{ctx.code(original)}` {moves}: on XLA each move replaces the module's Parameter objects "
        "(on CUDA they keep them), so the optimizer steps the old ones and the module stops training; save a "
        f"CPU copy without moving the module (`copy.deepcopy({trip.module}).cpu()`, or its `state_dict()`, "
        "which xm.save moves to the CPU), or build the optimizer again after the move back"
    )


@reports_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.inherited_round_trips)
def _inherited_round_trip(ctx: Context[Facts], original: cst.Call) -> str:
    """Reported at the optimizer: the base's method serves every subclass, and what runs between
    its two moves may need the module on the CPU (as for a round trip written in one scope)."""
    trip = ctx.facts.training.inherited_round_trips[original]
    where = f" ({trip.where})" if trip.where else ""
    return (
        f"`{trip.optimizer}` steps the parameters of `{trip.module}`, which the inherited `{trip.method}`{where} "
        f"may move off the XLA device and back ({trip.trip}): on XLA each move replaces the module's Parameter "
        "objects (on CUDA they keep them), so the optimizer steps the old ones and the module stops training "
        "after that call; save a CPU copy there without moving the module (its `state_dict()`, which xm.save "
        "moves to the CPU), or build the optimizer again after it"
    )


@on_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.optimizer_before_move)
def _move_before_optimizer(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``model.parameters()`` -> ``model.to(device).parameters()``, and
    ``create_optimizer(model, ...)`` -> ``create_optimizer(model.to(device), ...)``:
    Module.to moves in place and returns the module, and a later move to the same
    device keeps the parameters, so the optimizer holds the ones that train."""
    import libcst as cst

    early = ctx.facts.training.optimizer_before_move[original]
    built = (
        "the optimizer is built"
        if early.argument is None
        else f"`{ctx.code(original.func)}` collects the optimizer's parameters"
        if early.collects
        else f"`{ctx.code(original.func)}` builds an optimizer"
    )
    on_cpu = f"`{early.model}`, handed in, may be on the CPU" if early.handed_in else f"`{early.model}` is on the CPU"
    # Accelerate's ``prepare`` remaps an optimizer's parameters only from those of the model as it
    # finds it (accelerate 1.15 ``_switch_parameters``): a model moved before it keeps the stale copies.
    accelerate = (
        " (Accelerate's `prepare` does not repair it: it maps the optimizer's parameters from the model's as it "
        "finds them, and a model already on the XLA device when prepared has its new ones)"
        if ctx.facts.huggingface.accelerators
        else ""
    )
    if not early.fixable:
        ctx.report(
            OPTIMIZER_BEFORE_MOVE,
            original,
            f"{built} while {on_cpu}, and {early.moved_by} moves the model later to a "
            "device that may be the CPU: moving a module to XLA replaces its parameters, so build the "
            f"optimizer after the move{accelerate}",
        )
        return updated

    def moved(model: cst.BaseExpression) -> cst.BaseExpression | None:
        device = ctx.device()
        if device is None:
            return None
        return cst.Call(func=cst.Attribute(value=model, attr=cst.Name("to")), args=[cst.Arg(device)])

    def build() -> cst.Call | None:
        if early.argument is None:
            if not isinstance(updated.func, cst.Attribute) or (model := moved(updated.func.value)) is None:
                return None
            return updated.with_changes(func=updated.func.with_changes(value=model))
        args = list(updated.args)
        positional = [i for i, a in enumerate(original.args) if a.keyword is None and not a.star]
        at = (
            next(
                (i for i, a in enumerate(original.args) if a.keyword is not None and a.keyword.value == early.argument),
                None,
            )
            if isinstance(early.argument, str)
            else positional[early.argument]
        )
        if at is None or (model := moved(args[at].value)) is None:
            return None
        args[at] = args[at].with_changes(value=model)
        return updated.with_changes(args=args)

    return ctx.fix_or_keep(
        updated,
        OPTIMIZER_BEFORE_MOVE,
        original,
        f"{built} while {on_cpu} and {early.moved_by} moves the model later; moving a "
        f"module to XLA replaces its parameters{accelerate}, so move it first: {{new}}",
        build,
    )


@on_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.handed_optimizer_moves)
def _handed_optimizer_move(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """Not ported: the callable cannot rebuild an optimizer its caller built (its class,
    groups and state are the caller's); it stands unless a file of the run hands it one."""
    from codemods.training.held_conditions import StandsUnlessOptimizerHandedTo

    moved = ctx.facts.training.handed_optimizer_moves[original]
    where = "to the XLA device" if moved.xla else "to a device that may be the XLA device"
    callable_name = moved.handed.callable
    ctx.report(
        OPTIMIZER_BEFORE_MOVE,
        original,
        f"`{ctx.code(original)}` moves `{moved.model}` {where}, and is handed an optimizer as "
        f"`{moved.optimizer}` (no file of this run calls `{callable_name}` with one): if the caller built it over "
        f"`{moved.model}`'s parameters before handing it, the move replaces those Parameter objects (moving a module "
        f"to XLA does), so `{moved.optimizer}` steps the stale CPU copies and training changes nothing; have callers move the model to the XLA device before building the optimizer, "
        f"or build the optimizer after this move (e.g. from `{moved.model}.parameters()`)",
        held=StandsUnlessOptimizerHandedTo(moved.handed),
    )
    return updated


@on_facts(OPTIMIZER_BEFORE_MOVE, nodes=lambda facts: facts.training.split_prepares)
def _split_prepare(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """Not ported: which call should prepare the optimizer (and whether a wrapper holding it
    can be handed instead) is the script's layout; Accelerate's own check does not see it."""
    split = ctx.facts.training.split_prepares[original]
    if split.receiver not in ctx.facts.huggingface.accelerators:
        return updated
    models = " and ".join(f"`{m}`" for m in split.models)
    plain = [f"`{name}`" for name, _, holder in split.stale if holder is None]
    held = [
        f"`{name}` (an instance of `{holder}`, which prepares its optimizer on its own)"
        for name, _, holder in split.stale
        if holder
    ]
    named = " and ".join([*plain, *held])
    many = len(split.stale) > 1
    ctx.report(
        OPTIMIZER_BEFORE_MOVE,
        original,
        f"`{split.receiver}.prepare` moves {models} to the XLA device, but the optimizer{'s' if many else ''} "
        f"{named}, built over {'their' if len(split.models) > 1 else 'its'} parameters before (`{split.stale[0][1]}`), "
        f"{'are' if many else 'is'} not prepared in this call: moving a module to XLA replaces its Parameter objects, "
        "and Accelerate re-points only the optimizers prepared in the same call as the model at the moved ones, so "
        f"{'they step' if many else 'it steps'} the stale CPU copies and training changes nothing; prepare "
        f"{'them' if many else 'it'} in this call, `{split.receiver}.prepare(model, optimizer, ...)` (the optimizer "
        f"itself, not an object holding it), or build {'them' if many else 'it'} after it",
    )
    return updated
