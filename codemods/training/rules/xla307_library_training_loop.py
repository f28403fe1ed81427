"""XLA307 library-training-loop: a call of a library's model wrapper, training runner or training
entry point (``library_apis.LIBRARY_LOOPS``: mmcv's MMDataParallel and runners, OpenMMLab's ``train_*``
functions, BasicSR's ``train_pipeline``) whose code decides, on an XLA host, where the model and the
batches go or how the optimizer steps, and which no conversion of the project reaches.  Reported at
the call; a project's own function or class of the same name is the project's code, followed as
such.  Beyond the table, a call of any package the tool does not follow that is handed an optimizer
no code the tool sees steps (``facts.training.library_steppers``) is reported too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import library_apis
from codemods.engine.hooks import on_calls, on_references, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid
from codemods.training.rules.hooked_runner_cases import hooked_runner_invalid, hooked_runner_valid
from codemods.training.rules.library_algorithm_cases import torch_ac_invalid, torch_ac_valid
from codemods.training.rules.library_stepper_cases import (
    IGNITE,
    IGNITE_PORTED,
    POUTYNE,
    library_stepper_invalid,
    library_stepper_valid,
)
from codemods.training.rules.library_trainer_cases import detectron2_invalid, detectron2_valid
from codemods.training.rules.unresolved_callee_cases import unresolved_callee_invalid, unresolved_callee_valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts
    from codemods.training.facts import LibraryStepper

_WRAPPER = (
    "`MMDataParallel` (mmcv): a torch DataParallel: on a host without CUDA it keeps device_ids == [], moves no "
    "model, and its train_step, val_step and forward scatter the inputs to [-1], which leaves every batch where "
    "the loader made it, on the CPU"
)
_UNFOLLOWED = (
    "which no code the tool sees steps: the library runs its steps, on a device it chooses and with no step "
    "barrier, which the port can neither add nor prove: port that loop by hand (xm.optimizer_step(optimizer) and "
    "torch_xla.sync() each step, the model and each batch on torch_xla.device()) or use a framework that runs on "
    "XLA (Lightning, Accelerate, the Transformers Trainer)"
)
_UNPROVEN = (
    "each step needs the step barrier (xm.optimizer_step(optimizer), then torch_xla.sync()) and each batch on "
    "torch_xla.device(): port that code by hand, or run the tool on a tree that holds it"
)
_RUNNER = (
    "mmcv's OptimizerHook (after_train_iter), which does not end the step on XLA: the lazy graph grows with every "
    "iteration: register a hook whose after_train_iter calls torch_xla.sync() (runner.register_hook(..., "
    "priority='LOWEST'))"
)
# mmcv's runner, built directly and run; its near variant built over an optimizer the file builds.
_EPOCH_RUNNER = """
from mmcv.runner import EpochBasedRunner

runner = EpochBasedRunner(model, optimizer=optimizer, work_dir=".")
runner.run(loaders, [("train", 1)])
"""
_RUNNER_BUILT_OVER_AN_OPTIMIZER = substituted(
    _EPOCH_RUNNER,
    ("from mmcv", "import torch\nfrom mmcv"),
    ("\nrunner = ", "\noptimizer = torch.optim.SGD(model.parameters(), lr=0.01)\nrunner = "),
    ('runner.run(loaders, [("train", 1)])\n', ""),
)

LIBRARY_TRAINING_LOOP = Rule(
    code="XLA307",
    name="library-training-loop",
    severity="error",
    summary="A library's model wrapper, training runner, training entry point or process-group start that puts "
    "the model or the batches on the CPU, steps the optimizer with no barrier, or sets a CUDA device, on an XLA "
    "host (mmcv's MMDataParallel, runners and init_dist, OpenMMLab's train_* functions, mmengine's Runner, BasicSR's "
    "train_pipeline, audiotools' Accelerator, stable-baselines3's and torch_ac's algorithms, coqui's Trainer, detectron2's trainers), or any package the tool does not follow, or callable "
    "it cannot find (a name only an unread star import may bind, a project module whose file is missing), that is "
    "handed an optimizer no code of the project steps",
    fixable=False,
    why="Obligations 1, 3 and 4 of a port are proven from the project's code; some projects hand their model, "
    "their batches or their whole training loop to a library, whose code the port never sees or changes. The "
    "libraries the tool knows are one table (`library_apis.LIBRARY_LOOPS`), checked against their released code, each "
    "with what it does on an XLA host and what to do instead. mmcv 1.x's `MMDataParallel` is a torch "
    "DataParallel: without CUDA, torch 2.9's DataParallel moves no module and keeps `device_ids == []`, and "
    "mmcv's `train_step`, `val_step` and `forward` then scatter the inputs to `[-1]`, which leaves each batch "
    "on the CPU while a model the port moved is on the XLA device (a model the project left to the wrapper "
    "stays on the CPU). `MMDistributedDataParallel` (a torch DDP) scatters to `[-1]` too without CUDA "
    "`device_ids`, and copies to CUDA with them. mmcv's `EpochBasedRunner` and `IterBasedRunner` (built "
    "directly or by `build_runner`) step the optimizer in `OptimizerHook.after_train_iter`, with no barrier: the "
    "lazy graph grows with every iteration; a hook of the project's whose `after_train_iter` calls the step "
    "barrier ends it. So does a runner class of the project's own (a subclass of mmcv's `BaseRunner`, "
    "`EpochBasedRunner` or `IterBasedRunner`, or one registered with `@RUNNERS.register_module()` over a copied "
    "base) whose loop calls `self.call_hook('after_train_iter')`, reported at that call unless the loop ends its "
    "iterations with the barrier itself. OpenMMLab's entry points (`mmseg.apis.train_segmentor`, `mmpose.apis.train_model`, "
    "`mmdet.apis.train_detector`) do both; a project that carries its own copy of them (a `mmseg/` package of "
    "its own) has them converted and checked as project code, and this rule says nothing of the call. BasicSR's "
    "`train_pipeline` picks the device itself (`cuda` if `num_gpu` else the CPU, with `num_gpu: auto` read as "
    "`torch.cuda.device_count()`, 0 on an XLA host) and runs its own loop with no barrier: the project's model "
    "classes it builds are converted, but the networks and batches the library moves go to the CPU. Each is "
    "an error at the project's call (not in a test file: a unit test's runner trains nothing); a file that "
    "calls one is read even when it names no torch. mmengine's `Runner` (built directly, by `Runner.from_cfg` "
    "or by `RUNNERS.build`; the trainer of mmdet 3.x, mmdet3d, mmseg 1.x and mmpose 1.x) moves the model with "
    "`model.to(get_device())`, and mmengine's `get_device()` is npu, cuda, mlu or mps, else the CPU, never the "
    "XLA device; the model's data_preprocessor moves each batch to the model's device, and its train loops step "
    "the optimizer with no barrier. audiotools' `Accelerator` (`ml.Accelerator()`) picks the CPU when "
    "`torch.cuda.device_count()` is 0, as on every XLA host, else CUDA: `prepare_model` moves the model there "
    "and `accel.device` is the batches' device. mmcv's `init_dist` (and BasicSR's copy) sets the CUDA "
    "device `rank % torch.cuda.device_count()`, a ZeroDivisionError on an XLA host, before it starts an nccl "
    "process group: start the group with the XLA backend instead. A stable-baselines3 (or sb3-contrib) algorithm "
    "(`PPO(...)`, `SAC(...)`) reads `device='auto'`, its default, as CUDA if available, else the CPU, builds the "
    "policy's optimizer before it moves the policy, and trains in its own `learn()` loop with no barrier: an error "
    "at the call, or at the first of them in a dict the project builds them from (`ALGOS[name](...)`); "
    "`PPO.load(path)`, and a dict the file reads only as `ALGOS[name].load(...)`, are not reported (they load "
    "an agent to evaluate it). torch_ac's `PPOAlgo` and `A2CAlgo` (torch_ac 1.4.0, the rl-starter-files "
    "algorithms) move the model to the device they are handed and make the rollouts there, build their own "
    "optimizer over its parameters (`algo.optimizer`: Adam, RMSprop) and step it in `update_parameters()`, for "
    "every epoch and batch, with no barrier: the model and the batches are on the XLA device when the project "
    "hands it that device, but the lazy graph grows across every step; an optimizer step post hook that calls the "
    "barrier (`algo.optimizer.register_step_post_hook(lambda *args: torch_xla.sync())`, checked on torch_xla 2.9: "
    "the parameters are device data again after each step; torch 1.13 has no step hooks, so on the sagemaker "
    "target the optimizer's `step` is wrapped) ends each step. coqui's `trainer.Trainer` (the TTS trainer) moves "
    "the model and each batch to CUDA only when `torch.cuda.is_available()`, else leaves both on the CPU, builds "
    "the optimizer itself and steps it in `fit()` with no barrier (nothing of torch_xla in it): an error at the "
    "call, unless the project holds a `trainer` module of its own. detectron2's `DefaultTrainer` (built directly or, "
    "as in AdelaiDet's tools/train_net.py, through a subclass: an error at the base) moves the model to "
    '`torch.device(cfg.MODEL.DEVICE)`, `"cuda"` by default, which fails on an XLA host, builds the optimizer itself '
    "and trains through `SimpleTrainer`, whose `run_step` ends in a plain `optimizer.step()` and whose loop ends no "
    "step with a barrier (a hook's `after_step`, run after each `run_step`, can call it); `AMPTrainer` asserts "
    "`torch.cuda.is_available()` in its `run_step`; nothing in detectron2 names torch_xla. Beyond the table, an optimizer the file builds "
    "over a model's parameters, or binds from a call of a function of the file that returns one it builds, or of a "
    "project function of another module that builds one over an argument's parameters (`optimizer = "
    "build_optimizer(model, cfg)`), or hands by the keyword `optimizer=` or `optimizers=` however it was built (a "
    "registry's builder), that no code the tool sees steps (no `.step()` on it or on a name bound from it, "
    "not handed to the project's code, to a method of a value the tool cannot tell or to a followed package's "
    "call, not returned), handed to a call of a package the tool does not follow (neither the standard library "
    "nor `apis.FOLLOWED_PACKAGES`: `poutyne.Model(net, optimizer, loss)`, `composer.Trainer(optimizers=...)`, or a "
    "method of an object one built: torchnet's `engine = Engine()` then `engine.train(h, loader, epochs, optimizer)`; "
    "nor a name "
    "whose head is a folder or module of the project: below), is stepped by that library, on a device it chooses and with no step barrier: the port cannot prove "
    "obligations 1 and 4, so it is an error at that call. So is such an optimizer handed to a callable the tool can "
    "find nowhere, in a run on the whole project as in one on the file: a name the file calls and never binds (nor "
    "a builtin) that only a star import of a module the tool cannot read may bind (SEAL's `sys.path.append(...)` and "
    "`from main import *` of pytorch_DGCNN, cloned beside the project, then `loop_dataset(graphs, classifier, "
    "idxes, optimizer=optimizer)`: the finding names those imports; not the standard library's nor a followed "
    "package's star import), or a name imported from a module of the project whose file is missing (`from "
    "train.train_x import train_epoch` with `train/` a folder of the project): no run reads or converts that code, "
    "so the step barrier, the XLA optimizer step and the device of the batches it makes are unproven; a name that "
    "says it only sets the learning rate, saves, loads, logs or prints (`adjust_learning_rate(optimizer, epoch)`) "
    "is not one, and a module of the project that holds the name is the project's code, followed as such. Composer's Trainer with no `device=` is one: its "
    "`get_device(None)` is the GPU when CUDA is available, else the CPU; with `device='tpu'` (or `DeviceTPU()`) it "
    "moves the model to the XLA device and loads each batch through `pl.MpDeviceLoader`, which ends each step, and "
    "it is not reported. A call whose name says it only schedules the learning rate, saves, loads or logs is not "
    "one, nor a file whose training Lightning, Accelerate or the Transformers "
    "Trainer drives (their rules port it).",
    examples=lambda: (
        invalid(
            """
            from mmcv.parallel import MMDataParallel

            model = MMDataParallel(model.cuda(0), device_ids=[0])
            """,
            """
            from mmcv.parallel import MMDataParallel
            import torch_xla

            model = MMDataParallel(model.to(torch_xla.device()), device_ids=[0])
            """,
            findings=(Expected(4, 9, _WRAPPER),),
        ),
    ),
    valid=lambda: (
        valid(
            substituted(POUTYNE, ("model.fit_generator(train_loader, epochs=5)", "optimizer.step()")),
            substituted(
                POUTYNE,
                ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n"),
                ("model.fit_generator(train_loader, epochs=5)", "xm.optimizer_step(optimizer)"),
            ),
            note="an-unfollowed-library-handed-an-optimizer-the-file-steps",
        ),
        valid(IGNITE, IGNITE_PORTED, note="ignites-trainer-handed-the-device"),
        valid(
            """
            from stable_baselines3 import PPO

            ALGOS = {"ppo": PPO}
            model = PPO.load("agent.zip", device="auto")
            agent = ALGOS["ppo"].load("agent.zip")
            action, _ = model.predict(obs, deterministic=True)
            """,
            note="sb3-agent-only-loaded-for-evaluation",
        ),
        *library_stepper_valid(),
        *unresolved_callee_valid(),
        *detectron2_valid(),
        *hooked_runner_valid(),
        valid(
            """
            import torch
            from poutyne import Model

            def build(network):
                optimizer = torch.optim.SGD(network.parameters(), lr=0.01)
                model = Model(network, optimizer, "cross_entropy")
                return model, optimizer
            """,
            note="an-optimizer-a-factory-returns",
        ),
        valid(
            """
            import torch
            import lightning as L

            optimizer = torch.optim.Adam(model.parameters())
            fabric = L.Fabric(accelerator="cuda")
            model, optimizer = fabric.setup(model, optimizer)
            """,
            """
            import torch
            import lightning as L

            optimizer = torch.optim.Adam(model.parameters())
            fabric = L.Fabric(accelerator="tpu")
            model, optimizer = fabric.setup(model, optimizer)
            """,
            note="an-optimizer-handed-to-a-followed-framework",
        ),
        valid(
            """
            import torch

            class MMDataParallel(torch.nn.Module):
                def __init__(self, module, device_ids=None):
                    super().__init__()
                    self.module = module

            model = MMDataParallel(model, device_ids=[0])
            """,
            note="a-class-of-the-same-name-defined-in-the-file",
        ),
        valid(
            """
            from mmcv.runner import get_dist_info

            rank, world_size = get_dist_info()
            """,
            note="an-mmcv-helper-that-runs-no-loop",
        ),
        valid(
            """
            from mmengine.runner import load_checkpoint

            load_checkpoint(model, "model.pth", map_location="cpu")
            """,
            note="an-mmengine-helper-that-runs-no-loop",
        ),
        valid(
            """
            def train_pipeline(root):
                return root

            train_pipeline(".")
            """,
            note="a-function-of-the-same-name-defined-in-the-file",
        ),
        *torch_ac_valid(),
    ),
    invalid=lambda: (
        invalid(
            POUTYNE,
            note="an-optimizer-handed-to-an-unfollowed-library",
            findings=(
                Expected(
                    6,
                    9,
                    "`Model` (poutyne, a package the tool does not follow) is handed the optimizer `optimizer`, "
                    f"{_UNFOLLOWED}",
                ),
            ),
        ),
        invalid(
            """
            import torch
            import composer

            class Trainer:
                def __init__(self, net, loader):
                    self.net = net
                    self.opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
                    self.trainer = composer.Trainer(model=net, optimizers=[self.opt], train_dataloader=loader)

                def train(self):
                    print(self.opt)
                    self.trainer.fit()

            Trainer(Net(), loader).train()
            """,
            target="sagemaker",
            note="a-library-trainer-built-over-an-attribute-optimizer-sagemaker",
            findings=(
                Expected(
                    8,
                    24,
                    "`composer.Trainer` (composer, a package the tool does not follow) is handed the optimizer "
                    "`self.opt`, which no code the tool sees steps: the library runs its steps, on a device it "
                    "chooses and with no step barrier, which the port can neither add nor prove: port that loop by "
                    "hand (xm.optimizer_step(optimizer) and xm.mark_step() each step, the model and each batch on "
                    "xm.xla_device())",
                ),
            ),
        ),
        invalid(
            _RUNNER_BUILT_OVER_AN_OPTIMIZER,
            note="an-optimizer-handed-to-a-runner-of-the-table-reported-once",
            findings=(Expected(5, 10, "`EpochBasedRunner` (mmcv): its run() steps the optimizer"),),
        ),
        invalid(
            substituted(IGNITE, (", device=device)", ")")),
            substituted(IGNITE_PORTED, (", device=device)", ")")),
            note="ignites-trainer-handed-no-device",
            findings=(
                Expected(8, 11, "`create_supervised_trainer` (ignite, a package the tool does not follow) is handed"),
            ),
        ),
        invalid(
            substituted(POUTYNE, ("from poutyne import Model", "import poutyne as pt"), ("= Model(", "= pt.Model(")),
            alias=True,
            note="an-unfollowed-library-through-a-module-alias",
            findings=(Expected(6, 9, "`pt.Model` (poutyne, a package the tool does not follow) is handed"),),
        ),
        invalid(
            """
            import torch
            from mmcv.parallel import MMDataParallel as DP

            model = build_model(cfg)
            if torch.cuda.is_available():
                model = DP(model, device_ids=[0])
            """,
            alias=True,
            note="a-model-left-to-the-wrapper-through-an-alias",
            findings=(
                Expected(6, 13, "`DP` (mmcv): a torch DataParallel: on a host without CUDA it keeps device_ids"),
            ),
        ),
        invalid(
            """
            import mmcv.parallel as mp

            model = mp.MMDistributedDataParallel(model, broadcast_buffers=False)
            """,
            target="sagemaker",
            alias=True,
            note="a-distributed-wrapper-through-a-module-alias",
            findings=(
                Expected(
                    3,
                    9,
                    "`mp.MMDistributedDataParallel` (mmcv): a torch DistributedDataParallel: without CUDA "
                    "device_ids its train_step scatters the inputs to [-1] and its forward",
                ),
            ),
        ),
        invalid(
            """
            from mmcv.runner import build_runner

            runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer))
            runner.run(data_loaders, cfg.workflow)
            """,
            note="a-runner-built-from-a-config",
            findings=(Expected(3, 10, f"`build_runner` (mmcv): its run() steps the optimizer in {_RUNNER}"),),
        ),
        invalid(
            _EPOCH_RUNNER,
            target="sagemaker",
            note="a-runner-built-directly-sagemaker",
            findings=(
                Expected(
                    3,
                    10,
                    "`EpochBasedRunner` (mmcv): its run() steps the optimizer in mmcv's OptimizerHook "
                    "(after_train_iter), which does not end the step on XLA: the lazy graph grows with every "
                    "iteration: register a hook whose after_train_iter calls xm.mark_step()",
                ),
            ),
        ),
        invalid(
            """
            from mmcv.runner import init_dist

            def main(args, cfg):
                if args.launcher == "none":
                    distributed = False
                else:
                    distributed = True
                    init_dist(args.launcher, **cfg.dist_params)
            """,
            note="mmcv-init-dist",
            findings=(
                Expected(
                    8,
                    9,
                    "`init_dist` (mmcv): it sets the CUDA device rank % torch.cuda.device_count() (0 on an XLA "
                    "host: a ZeroDivisionError)",
                ),
            ),
        ),
        invalid(
            """
            from mmseg.apis import train_segmentor

            train_segmentor(model, datasets, cfg, distributed=False, validate=True)
            """,
            note="an-openmmlab-entry-point",
            findings=(
                Expected(
                    3,
                    1,
                    "`train_segmentor` (OpenMMLab): it wraps the model in mmcv's MMDataParallel or "
                    "MMDistributedDataParallel",
                ),
            ),
        ),
        invalid(
            """
            from mmengine.config import Config
            from mmengine.runner import Runner

            runner = Runner.from_cfg(Config.fromfile("configs/model.py"))
            runner.train()
            """,
            note="mmengine-runner-from-a-config",
            findings=(
                Expected(
                    4,
                    10,
                    "`Runner.from_cfg` (mmengine): its Runner moves the model with model.to(get_device()), and "
                    "mmengine's get_device is npu, cuda, mlu or mps, else the CPU, never the XLA device",
                ),
            ),
        ),
        invalid(
            """
            from mmengine.registry import RUNNERS
            from mmengine import runner as mr

            if "runner_type" in cfg:
                runner = RUNNERS.build(cfg)
            else:
                runner = mr.Runner(model=model, work_dir=".", train_dataloader=loader, optim_wrapper=wrapper)
            runner.train()
            """,
            target="sagemaker",
            alias=True,
            note="mmengine-runner-built-or-through-a-module-alias-sagemaker",
            findings=(
                Expected(5, 14, "`RUNNERS.build` (mmengine): its Runner moves the model"),
                Expected(
                    7,
                    14,
                    "`mr.Runner` (mmengine): its Runner moves the model with model.to(get_device()), and mmengine's "
                    "get_device is npu, cuda, mlu or mps, else the CPU, never the XLA device; the data_preprocessor "
                    "moves each batch to the model's device (the CPU), and its train loop steps the optimizer "
                    "(optim_wrapper.update_params) with no step barrier: build the model on the XLA device and "
                    "train it in a loop of the project's own (each batch on the XLA device, xm.mark_step() after",
                ),
            ),
        ),
        invalid(
            """
            import torch
            from audiotools import ml

            with ml.Accelerator() as accel:
                model = accel.prepare_model(Net())
                optimizer = torch.optim.AdamW(model.parameters())
            """,
            alias=True,
            note="audiotools-accelerator",
            findings=(
                Expected(
                    4,
                    6,
                    "`ml.Accelerator` (audiotools): its device is the CPU when torch.cuda.device_count() == 0 "
                    "(always on an XLA host), else CUDA, never the XLA device",
                ),
            ),
        ),
        invalid(
            """
            import argbind
            from audiotools import ml

            Accelerator = argbind.bind(ml.Accelerator, without_prefix=True)

            with Accelerator() as accel:
                pass
            """,
            target="sagemaker",
            note="audiotools-accelerator-handed-to-a-binder-sagemaker",
            findings=(Expected(4, 28, "`ml.Accelerator` (audiotools): its device is the CPU"),),
        ),
        invalid(
            """
            import os.path as osp
            from basicsr.train import train_pipeline

            import myproject.models  # noqa: F401

            if __name__ == "__main__":
                train_pipeline(osp.abspath(osp.join(__file__, osp.pardir)))
            """,
            note="basicsr-pipeline-in-a-file-without-torch",
            findings=(
                Expected(
                    7,
                    5,
                    "`train_pipeline` (BasicSR): it picks the device itself, `cuda` if num_gpu != 0 else the CPU, "
                    "with num_gpu = torch.cuda.device_count() (0 on an XLA host)",
                ),
            ),
        ),
        invalid(
            """
            from stable_baselines3 import PPO

            def train(args, env):
                model = PPO("MlpPolicy", env, device=args.device)
                model.learn(total_timesteps=10_000)
            """,
            note="sb3-algorithm-built-and-learning",
            findings=(Expected(4, 13, "`PPO` (stable-baselines3): it picks the device itself (`device='auto'`"),),
        ),
        invalid(
            """
            import stable_baselines3 as sb3

            sb3.sac.SAC("MlpPolicy", env).learn(1000)
            """,
            target="sagemaker",
            note="sb3-algorithm-through-a-module-alias-sagemaker",
            findings=(Expected(3, 1, "`sb3.sac.SAC` (stable-baselines3): it picks the device itself"),),
        ),
        invalid(
            """
            from sb3_contrib import TQC
            from stable_baselines3 import A2C, PPO

            ALGOS = {"a2c": A2C, "ppo": PPO, "tqc": TQC}
            model = ALGOS[args.algo](env=env, device=args.device)
            model.learn(args.n_timesteps)
            """,
            note="sb3-algorithms-in-a-dict-built-by-name",
            findings=(Expected(4, 17, "`A2C` (stable-baselines3): it picks the device itself"),),
        ),
        *torch_ac_invalid(),
        *library_stepper_invalid(),
        *unresolved_callee_invalid(),
        *detectron2_invalid(),
        *hooked_runner_invalid(),
    ),
)


@on_calls(LIBRARY_TRAINING_LOOP, names=frozenset(library_apis.LIBRARY_LOOPS))
def _library_loop(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.Call:
    """The call of a library's wrapper, runner or entry point: an error that says what it does on
    XLA, unless the name is the project's own (its copy of ``mmseg.apis``: converted as code) or the
    file is a test."""
    _report(ctx, original.func, callee)
    return updated


@on_references(LIBRARY_TRAINING_LOOP, names=frozenset(library_apis.LIBRARY_LOOPS))
def _library_loop_handed_on(
    ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str
) -> cst.CSTNode:
    """The class or function handed to a call that builds the callable the project calls
    instead (``argbind.bind(ml.Accelerator)``, ``functools.partial(Runner, ...)``): the same
    error, at the argument."""
    import libcst as cst

    parent = ctx.parent()
    if isinstance(parent, cst.Arg):
        _report(ctx, original, qualified)
    elif isinstance(parent, cst.DictElement) and parent.value is original and _first_in_table(ctx):
        _report(ctx, original, qualified)  # ``ALGOS = {"ppo": PPO, ...}``, built as ``ALGOS[name](...)``
    return updated


def _first_in_table(ctx: Context[Facts]) -> bool:
    """The value being left is the first of its dict's values that names a table entry: one
    error for a dict of them."""
    import libcst as cst

    table = ctx.ancestors[-3] if len(ctx.ancestors) >= 3 else None
    if not isinstance(table, cst.Dict):
        return False
    for element in table.elements:
        if isinstance(element, cst.DictElement) and ctx.resolve(element.value) in library_apis.LIBRARY_LOOPS:
            return element is ctx.parent() and not _only_loaded(ctx, table)
    return False


def _only_loaded(ctx: Context[Facts], table: cst.Dict) -> bool:
    """The file reads the dict bound at module level only as ``NAME[key].attribute`` (``ALGOS[algo].load(path)``:
    an agent loaded to be evaluated), never calls ``NAME[key](...)``."""
    import libcst as cst

    bound = ctx.ancestors[-4] if len(ctx.ancestors) >= 4 else None
    if isinstance(bound, cst.Assign) and len(bound.targets) == 1:
        target: cst.BaseExpression = bound.targets[0].target
    elif isinstance(bound, cst.AnnAssign):
        target = bound.target
    else:
        return False
    if not isinstance(target, cst.Name) or bound.value is not table:
        return False
    name, loaded = target.value, False
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(ctx.ancestors[0], None)]
    while stack:
        node, parent = stack.pop()
        if type(node) is cst.Subscript and type(node.value) is cst.Name and node.value.value == name:
            if type(parent) is cst.Call and parent.func is node:
                return False
            loaded = loaded or type(parent) is cst.Attribute
        stack.extend((child, node) for child in node.children)
    return loaded


def _report(ctx: Context[Facts], named: cst.CSTNode, callee: str) -> None:
    context = ctx.facts.project.context
    if context.test_file() or context.owns(callee):
        return  # a unit test's runner trains nothing; the project's own copy is converted
    loop = library_apis.LIBRARY_LOOPS[callee]
    ctx.report(
        LIBRARY_TRAINING_LOOP,
        named,
        ctx.target.advice(f"`{ctx.code(named)}` ({loop.library}): {loop.does}: {loop.instead}"),
    )


@reports_facts(LIBRARY_TRAINING_LOOP, nodes=lambda facts: facts.training.hooked_runner_steps)
def _hooked_runner_step(ctx: Context[Facts], original: cst.Call) -> str:
    """A loop of the project's own mmcv runner class whose step is mmcv's OptimizerHook
    (training/hooked_runners.py): the loop is converted as code, but no step the tool sees is in it."""
    runner = ctx.facts.training.hooked_runner_steps[original]
    return ctx.target.advice(
        f"`{ctx.code(original)}` in `{runner}`, an mmcv runner class, runs the hooks where mmcv's OptimizerHook "
        "steps the optimizer, and nothing in this loop ends the step on XLA: the lazy graph grows with every "
        "iteration: call torch_xla.sync() after it in this loop, or register a hook whose after_train_iter calls "
        "torch_xla.sync() (runner.register_hook(..., priority='LOWEST'))"
    )


@reports_facts(LIBRARY_TRAINING_LOOP, nodes=lambda facts: facts.training.library_steppers)
def _unfollowed_library(ctx: Context[Facts], original: cst.Call) -> str:
    """A call of a package the tool does not follow, handed an optimizer that no code the tool
    sees steps (training/library_steppers.py): that library runs the steps."""
    stepper = ctx.facts.training.library_steppers[original]
    if not stepper.package:
        return ctx.target.advice(_unresolved(ctx, original, stepper))
    capable = library_apis.XLA_CAPABLE_LIBRARIES.get(stepper.package)
    return ctx.target.advice(
        f"`{ctx.code(original.func)}` ({stepper.package}, a package the tool does not follow) is handed the "
        f"optimizer `{stepper.optimizer}`, {_UNFOLLOWED}{f'; {capable}' if capable else ''}"
    )


def _unresolved(ctx: Context[Facts], original: cst.Call, stepper: LibraryStepper) -> str:
    """A callable the tool can find nowhere (training/unresolved_callees.py), handed the optimizer."""
    called = ctx.code(original.func)
    if stepper.stars:
        stars = " or ".join(f"`{ctx.code(star)}`" for star in stepper.stars)
        which = "that module" if len(stepper.stars) == 1 else "those modules"
        where = f"the file never binds `{called}`: only {stars} may, and the tool cannot read {which}"
    else:
        where = f"it comes from `{stepper.missing}`, a module of the project whose file is missing"
    return (
        f"`{called}` is handed the optimizer `{stepper.optimizer}`, which no code the tool sees steps, and the tool "
        f"cannot find `{called}` ({where}): no run reads or converts its code, so the training step it runs and "
        f"the batches it makes are unproven on XLA: {_UNPROVEN}"
    )
