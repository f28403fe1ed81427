"""What the tool knows about libraries' own device and training APIs: their helpers that pick a
device, their calls whose device defaults to CUDA, their model wrappers, training runners and
entry points that run a training loop (and start a process group), and their objects that read
their rank themselves, each as it behaves on an XLA host.  (The source side's torch APIs live in
apis.py.)"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceHelper:
    """A library's helper that picks a device, as it behaves on an XLA host (checked with
    torch 2.9, torch_xla 2.9, accelerate 1.15, transformers and torch_geometric 2.8's
    source, PJRT_DEVICE=CPU): whether it returns the XLA device, what it returns there,
    and the argument with which the port may replace the call by the target's device."""

    on_xla: bool
    returns: str
    ported_when: str | None = None


# Calls, and ``<constructor>.device`` attributes (``accelerator.device`` of an
# ``Accelerator()``), read by device/values.py.  ``torch.accelerator.current_accelerator()``
# (None, or "cuda" on a CUDA build, on an XLA host) is replaced by the device concern itself.
DEVICE_HELPERS = {
    "torch_geometric.device": DeviceHelper(
        False, 'the CPU on an XLA host: "auto" asks for CUDA, MPS and XPU only', ported_when="auto"
    ),
    "torch.get_default_device": DeviceHelper(False, "the CPU unless the script set another default device"),
    "accelerate.Accelerator.device": DeviceHelper(True, "the XLA device when torch_xla is installed"),
    "accelerate.PartialState.device": DeviceHelper(True, "the XLA device when torch_xla is installed"),
    "transformers.TrainingArguments.device": DeviceHelper(True, "the XLA device when torch_xla is installed"),
    # audiotools/ml/accelerator.py: ``"cpu" if torch.cuda.device_count() == 0 else "cuda"`` (library_apis.LIBRARY_LOOPS).
    "audiotools.ml.Accelerator.device": DeviceHelper(False, "the CPU on an XLA host: torch.cuda.device_count() is 0"),
    "audiotools.ml.accelerator.Accelerator.device": DeviceHelper(
        False, "the CPU on an XLA host: torch.cuda.device_count() is 0"
    ),
}

# Library calls that pick the device into a config instead of returning it, the key they set,
# and what they set it to on an XLA host.  PyG graphgym's ``auto_select_device()``
# (torch_geometric/graphgym/utils/device.py, read at pyg-team/pytorch_geometric 029ad0f, the 2.x
# line) sets ``cfg.accelerator`` to "cuda:N" when ``torch.cuda.is_available()``, else to "cpu";
# PyG 2.0 set ``cfg.device`` the same way.  ``create_model()`` and the loops then move to
# ``torch.device(cfg.accelerator)``: the CPU on an XLA host.
CONFIG_DEVICE_SETTERS = {
    "torch_geometric.graphgym.utils.device.auto_select_device": (
        "cfg.accelerator",
        '"cpu" on an XLA host (CUDA when `torch.cuda.is_available()`, else the CPU; `cfg.device` in PyG 2.0)',
    ),
    "torch_geometric.graphgym.utils.auto_select_device": (
        "cfg.accelerator",
        '"cpu" on an XLA host (CUDA when `torch.cuda.is_available()`, else the CPU; `cfg.device` in PyG 2.0)',
    ),
}


@dataclass(frozen=True)
class CudaDefaultDevice:
    """A library call whose device parameter defaults to CUDA, as its released code reads: the
    parameter's keyword and its first position over the releases (a call with more positional
    arguments may pass it), the keyword whose False switches the CUDA copy off, what the call
    copies there, and the releases that take no such parameter (they copy to CUDA regardless)."""

    keyword: str
    position: int
    switch: str | None
    copies: str
    older: str
    # Names only those older releases have: a file that imports one runs on them, so the
    # keyword would raise TypeError there, and the call is reported instead of fixed.
    older_only: frozenset[str] = frozenset()


# timm's PrefetchLoader copies every batch (and its normalisation constants) to ``device``,
# ``torch.device('cuda')`` by default, in timm 0.9 and 1.0 (timm/data/loader.py, v0.9.0 to
# v1.0.20; first in the 0.8.2dev0 pre-release); timm 0.6 calls ``.cuda(non_blocking=True)``
# with no ``device=``.  ``create_loader(use_prefetcher=True)`` (the default) builds one.
# ``timm.data.Dataset`` and ``DatasetTar`` exist only in old timm (0.4's dataset rework made them
# ImageDataset and its parsers), long before any ``device=``.
_OLD_TIMM = frozenset(f"timm.data.{module}{name}" for module in ("", "dataset.") for name in ("Dataset", "DatasetTar"))
_TIMM_LOADER = CudaDefaultDevice(
    "device",
    29,
    "use_prefetcher",
    "its PrefetchLoader (use_prefetcher=True, the default) copies every batch to device=, which defaults to CUDA",
    "timm 0.6 and older",
    _OLD_TIMM,
)
CUDA_DEFAULT_DEVICES = {
    "timm.data.create_loader": _TIMM_LOADER,
    "timm.data.loader.create_loader": _TIMM_LOADER,
    "timm.data.loader.PrefetchLoader": CudaDefaultDevice(
        "device", 4, None, "it copies every batch to device=, which defaults to CUDA", "timm 0.6 and older", _OLD_TIMM
    ),
}


@dataclass(frozen=True)
class LibraryLoop:
    """A library's model wrapper, training runner, training entry point or process-group start that a project calls,
    as its released code behaves on an XLA host (its code is no module of the project, so nothing
    converts it): the library, what it does there (where the model and the batches end, whether
    its loop ends each optimizer step with a barrier) and what to do instead."""

    library: str
    does: str
    instead: str


# mmcv 1.x (mmcv/parallel/data_parallel.py, distributed.py, scatter_gather.py): MMDataParallel is a
# torch DataParallel, which on a host without CUDA (torch 2.9's data_parallel.py: no device type)
# moves no module and keeps ``device_ids == []``; its forward, train_step and val_step then call
# ``self.scatter(inputs, kwargs, [-1])``, which leaves each tensor where it is.  MMDistributedDataParallel
# is a torch DDP: with no device_ids (or a module not on CUDA) it keeps ``device_ids = None``, its
# train_step scatters to [-1] too and its forward (_run_ddp_forward) and val_step move nothing;
# with CUDA device_ids it copies the inputs to CUDA.
_MM_WRAPPER_INSTEAD = (
    "move the model to the XLA device before the wrap and each batch there before the model runs (a subclass "
    "whose scatter moves what it returns to the XLA device, or the model's train_step and val_step)"
)
_MM_DATA_PARALLEL = LibraryLoop(
    "mmcv",
    "a torch DataParallel: on a host without CUDA it keeps device_ids == [], moves no model, and its "
    "train_step, val_step and forward scatter the inputs to [-1], which leaves every batch where the loader "
    "made it, on the CPU",
    _MM_WRAPPER_INSTEAD,
)
_MM_DISTRIBUTED = LibraryLoop(
    "mmcv",
    "a torch DistributedDataParallel: without CUDA device_ids its train_step scatters the inputs to [-1] and its "
    "forward and val_step pass them as they are, which leaves every batch on the CPU (with CUDA device_ids it "
    "copies them to CUDA, which fails on an XLA host)",
    _MM_WRAPPER_INSTEAD,
)
# mmcv 1.x runners (mmcv/runner/epoch_based_runner.py, iter_based_runner.py, builder.py): run() calls
# the model's train_step, then the hooks; the optimizer steps in OptimizerHook.after_train_iter
# (mmcv/runner/hooks/optimizer.py: zero_grad, backward, clip, ``runner.optimizer.step()``), with no
# barrier anywhere.
_MM_RUNNER = LibraryLoop(
    "mmcv",
    "its run() steps the optimizer in mmcv's OptimizerHook (after_train_iter), which does not end the step on "
    "XLA: the lazy graph grows with every iteration",
    "register a hook whose after_train_iter calls torch_xla.sync() (runner.register_hook(..., priority='LOWEST'))",
)
# OpenMMLab's training entry points (mmseg/apis/train.py, mmpose/apis/train.py, mmdet/apis/train.py,
# 0.x/2.x): they wrap the model in MMDataParallel (``model.cuda(...)`` first in older releases; a
# device that mmcv's get_device makes "cpu" without CUDA in newer ones) or MMDistributedDataParallel,
# then build an mmcv runner and run it.
_MM_ENTRY = LibraryLoop(
    "OpenMMLab",
    "it wraps the model in mmcv's MMDataParallel or MMDistributedDataParallel (after `.cuda()` in older "
    "releases, which fails without CUDA; else the batches stay on the CPU) and runs an mmcv runner, whose "
    "OptimizerHook steps the optimizer with no step barrier",
    "copy the function into the project and port it there: the model and each batch on the XLA device, and a "
    "hook whose after_train_iter calls torch_xla.sync()",
)
# BasicSR (basicsr/train.py, utils/options.py, models/base_model.py, 1.3 and 1.4): train_pipeline parses
# the options (``num_gpu: auto`` -> torch.cuda.device_count(), 0 on an XLA host), builds the model,
# whose BaseModel sets ``self.device = torch.device('cuda' if opt['num_gpu'] != 0 else 'cpu')`` and
# moves the nets and every batch (feed_data) there, and runs its own loop (optimize_parameters per
# iteration) with no barrier.
_BASICSR_PIPELINE = LibraryLoop(
    "BasicSR",
    "it picks the device itself, `cuda` if num_gpu != 0 else the CPU, with num_gpu = torch.cuda.device_count() "
    "(0 on an XLA host): the networks and every batch go to the CPU; and it runs its own training loop, which "
    "ends no step with a barrier",
    "copy the training loop into the project and port it there (a model class whose self.device is the XLA "
    "device, torch_xla.sync() after each optimize_parameters)",
)
# mmcv 1.x's init_dist (mmcv/runner/dist_utils.py), and BasicSR's copy (basicsr/utils/dist_util.py):
# for the launchers "pytorch", "mpi" and "slurm" it calls ``torch.cuda.set_device(rank %
# torch.cuda.device_count())`` (a ZeroDivisionError without CUDA) before init_process_group(backend),
# nccl by default.
_INIT_DIST = (
    "it sets the CUDA device rank % torch.cuda.device_count() (0 on an XLA host: a ZeroDivisionError) and "
    "starts the process group with nccl by default"
)
# mmengine's Runner (mmdet 3.x, mmdet3d 1.x, mmseg 1.x, mmpose 1.x tools/train.py; checked in
# open-mmlab/mmengine 0.8-0.10): Runner.__init__ (and from_cfg, which calls it) runs wrap_model
# (mmengine/runner/runner.py), ``model.to(get_device())``, where get_device (mmengine/device/utils.py) is
# npu, cuda, mlu, mps or dipu, else "cpu", never XLA; BaseModel.train_step
# (mmengine/model/base_model/base_model.py) moves each batch with the model's data_preprocessor to the
# model's device and steps with ``optim_wrapper.update_params``; the train loops (mmengine/runner/loops.py,
# EpochBasedTrainLoop, IterBasedTrainLoop) end no step with a barrier.
_MMENGINE_RUNNER = LibraryLoop(
    "mmengine",
    "its Runner moves the model with model.to(get_device()), and mmengine's get_device is npu, cuda, mlu or "
    "mps, else the CPU, never the XLA device; the data_preprocessor moves each batch to the model's device (the "
    "CPU), and its train loop steps the optimizer (optim_wrapper.update_params) with no step barrier",
    "build the model on the XLA device and train it in a loop of the project's own (each batch on the XLA "
    "device, torch_xla.sync() after each optimizer step); mmengine has no XLA device to select",
)
# audiotools' Accelerator (descriptinc/audiotools, audiotools/ml/accelerator.py, 0.7): ``world_size =
# torch.cuda.device_count()``, ``device = "cpu" if world_size == 0 else "cuda"``; prepare_model does
# ``model.to(self.device)``; local_rank is the LOCAL_RANK variable, else 0.
_AUDIOTOOLS_ACCELERATOR = LibraryLoop(
    "audiotools",
    "its device is the CPU when torch.cuda.device_count() == 0 (always on an XLA host), else CUDA, never "
    "the XLA device: prepare_model moves the model to the CPU, and batches moved to accel.device stay there",
    "move the model (before the optimizer is built) and each batch to torch_xla.device() instead of "
    "prepare_model and accel.device",
)
# stable-baselines3 (DLR-RM/stable-baselines3 2.x: common/utils.py get_device, common/base_class.py,
# on_policy_algorithm.py and off_policy_algorithm.py _setup_model) and sb3-contrib: an algorithm builds
# its policy, whose constructor builds the optimizer, then ``self.policy.to(self.device)``; get_device
# reads ``device="auto"`` (the default) as cuda if available, else the CPU; its learn() runs the loop
# (rollouts, replay buffers on self.device, policy.optimizer.step()) with no barrier.  With
# ``device="xla"`` the move after the optimizer replaces the parameters it holds.  ``PPO.load`` is not
# in the table: loading a trained agent trains nothing.
_SB3_ALGORITHM = LibraryLoop(
    "stable-baselines3",
    "it picks the device itself (`device='auto'`, its default, is CUDA if available, else the CPU, never the "
    "XLA device), builds the policy and its optimizer and then moves the policy (with `device='xla'` after "
    "the optimizer holds the parameters), and its learn() runs its own training loop, which ends no step with "
    "a barrier",
    "train the policy in a loop of the project's own (the policy on torch_xla.device() before its optimizer is "
    "built, each batch on that device, torch_xla.sync() after each optimizer step); stable-baselines3 has no XLA "
    "device to select",
)
_SB3 = ("A2C", "DDPG", "DQN", "PPO", "SAC", "TD3")
_SB3_CONTRIB = {"ars": "ARS", "crossq": "CrossQ", "ppo_mask": "MaskablePPO", "ppo_recurrent": "RecurrentPPO"}
_SB3_CONTRIB |= {"qrdqn": "QRDQN", "tqc": "TQC", "trpo": "TRPO"}
_SB3_NAMES = {
    **{
        f"stable_baselines3.{n}": _SB3_ALGORITHM for a in _SB3 for n in (a, f"{a.lower()}.{a}", f"{a.lower()}." * 2 + a)
    },
    **{f"sb3_contrib.{n}": _SB3_ALGORITHM for m, a in _SB3_CONTRIB.items() for n in (a, f"{m}.{a}")},
}
# torch_ac (lcswillems/torch-ac 1.4.0, the rl-starter-files algorithms: algos/base.py, ppo.py, a2c.py): the
# algorithm moves the model to the device it is handed (``self.acmodel.to(self.device)``) and makes the
# rollouts there, builds its own optimizer over the model's parameters (PPOAlgo Adam, A2CAlgo RMSprop) as
# ``self.optimizer``, and its update_parameters() steps it (for each epoch and batch: backward, clip,
# ``self.optimizer.step()``) with no barrier.  A step post hook that calls the barrier (checked on torch_xla
# 2.9, PJRT_DEVICE=CPU: the parameters are device data again after each step) ends each step.
STEP_HOOK_ADVICE = (
    "after building it, end each of its steps with a barrier: "
    "`algo.optimizer.register_step_post_hook(lambda *args: torch_xla.sync())`"
)
_TORCH_AC_ALGORITHM = LibraryLoop(
    "torch_ac",
    "it moves the model to the device it is handed and builds its own optimizer over the model's parameters "
    "(`.optimizer`), and its update_parameters() steps that optimizer for every epoch and batch with no step "
    "barrier: on XLA the lazy graph grows across every step",
    f"hand it torch_xla.device() and, {STEP_HOOK_ADVICE}",
)
_TORCH_AC_NAMES = {
    f"torch_ac.{n}": _TORCH_AC_ALGORITHM
    for a, m in (("A2CAlgo", "a2c"), ("PPOAlgo", "ppo"))
    for n in (a, f"algos.{a}", f"algos.{m}.{a}")
}
# coqui's Trainer (the ``trainer`` package, coqui-ai/Trainer 0.0.x, read at 7704b0f: trainer/trainer.py,
# trainer/trainer_utils.py, the TTS trainer): ``use_cuda = torch.cuda.is_available()`` (False on an XLA host),
# ``if self.use_cuda: self.model.cuda()`` and batches moved by ``to_cuda`` only with use_cuda; it builds the
# optimizer itself (the model's get_optimizer or the config's) and steps it with a plain ``optimizer.step()``;
# nothing of torch_xla anywhere ("TPU training" is a TODO of its docstring).
_COQUI_TRAINER = LibraryLoop(
    "coqui trainer",
    "it moves the model and every batch to CUDA only when torch.cuda.is_available() (never on an XLA host: both "
    "stay on the CPU), builds the optimizer itself and steps it in fit() with no step barrier",
    "train the model in a loop of the project's own (the model on torch_xla.device() before its optimizer is "
    "built, each batch on that device, torch_xla.sync() after each optimizer step); the Trainer has no XLA "
    "device to select",
)
# detectron2 (facebookresearch/detectron2, read at 02b5c4e: detectron2/engine/defaults.py, train_loop.py,
# modeling/meta_arch/build.py, config/defaults.py; nothing of torch_xla in it): DefaultTrainer's __init__ builds
# the model with build_model, ``model.to(torch.device(cfg.MODEL.DEVICE))`` with ``_C.MODEL.DEVICE = "cuda"``,
# then the optimizer, and trains through SimpleTrainer, or AMPTrainer with SOLVER.AMP.ENABLED; their
# run_step ends in a plain ``self.optimizer.step()`` (AMPTrainer: ``grad_scaler.step``, after
# ``assert torch.cuda.is_available()``), and TrainerBase.train runs before_step, run_step, after_step with
# no barrier.  A hook's after_step runs after each run_step.
_DETECTRON2_INSTEAD = (
    "build the model on the XLA device and train it in a loop of the project's own (each batch on the XLA device, "
    "torch_xla.sync() after each optimizer step); detectron2 has no XLA support"
)
_DETECTRON2_DEFAULT_TRAINER = LibraryLoop(
    "detectron2",
    'it moves the model to torch.device(cfg.MODEL.DEVICE), "cuda" by default (no CUDA on an XLA host: the move '
    "fails), builds the optimizer itself and trains through SimpleTrainer (AMPTrainer with SOLVER.AMP.ENABLED, "
    "which asserts torch.cuda.is_available()), whose run_step steps the optimizer with no step barrier",
    _DETECTRON2_INSTEAD,
)
_DETECTRON2_SIMPLE_TRAINER = LibraryLoop(
    "detectron2",
    "its run_step steps the optimizer with a plain optimizer.step() and its train() ends no step with a barrier: "
    "on XLA the lazy graph grows with every iteration",
    "register a hook whose after_step calls torch_xla.sync() (a detectron2.engine.HookBase subclass, "
    "trainer.register_hooks([...])), with the model on the XLA device (and each batch: run_step hands the model "
    "the batch as the loader made it)",
)
_DETECTRON2_AMP_TRAINER = LibraryLoop(
    "detectron2",
    "its run_step asserts torch.cuda.is_available() (an AssertionError on an XLA host), then runs CUDA autocast "
    "and steps through a CUDA GradScaler",
    "train with detectron2's SimpleTrainer (no CUDA autocast) and a hook whose after_step calls torch_xla.sync()",
)
_DETECTRON2_NAMES = {
    **{f"detectron2.engine.{m}DefaultTrainer": _DETECTRON2_DEFAULT_TRAINER for m in ("", "defaults.")},
    **{f"detectron2.engine.{m}SimpleTrainer": _DETECTRON2_SIMPLE_TRAINER for m in ("", "train_loop.")},
    **{f"detectron2.engine.{m}AMPTrainer": _DETECTRON2_AMP_TRAINER for m in ("", "train_loop.")},
}
_INIT_DIST_INSTEAD = "start the process group with dist.init_process_group('xla', init_method='xla://') instead"
LIBRARY_LOOPS = {
    "mmcv.runner.init_dist": LibraryLoop("mmcv", _INIT_DIST, _INIT_DIST_INSTEAD),
    "mmcv.runner.dist_utils.init_dist": LibraryLoop("mmcv", _INIT_DIST, _INIT_DIST_INSTEAD),
    "basicsr.utils.dist_util.init_dist": LibraryLoop("BasicSR", _INIT_DIST, _INIT_DIST_INSTEAD),
    "mmcv.parallel.MMDataParallel": _MM_DATA_PARALLEL,
    "mmcv.parallel.data_parallel.MMDataParallel": _MM_DATA_PARALLEL,
    "mmcv.parallel.MMDistributedDataParallel": _MM_DISTRIBUTED,
    "mmcv.parallel.distributed.MMDistributedDataParallel": _MM_DISTRIBUTED,
    "mmcv.runner.EpochBasedRunner": _MM_RUNNER,
    "mmcv.runner.epoch_based_runner.EpochBasedRunner": _MM_RUNNER,
    "mmcv.runner.IterBasedRunner": _MM_RUNNER,
    "mmcv.runner.iter_based_runner.IterBasedRunner": _MM_RUNNER,
    "mmcv.runner.build_runner": _MM_RUNNER,
    "mmcv.runner.builder.build_runner": _MM_RUNNER,
    "mmseg.apis.train_segmentor": _MM_ENTRY,
    "mmseg.apis.train.train_segmentor": _MM_ENTRY,
    "mmpose.apis.train_model": _MM_ENTRY,
    "mmpose.apis.train.train_model": _MM_ENTRY,
    "mmdet.apis.train_detector": _MM_ENTRY,
    "mmdet.apis.train.train_detector": _MM_ENTRY,
    "basicsr.train.train_pipeline": _BASICSR_PIPELINE,
    "mmengine.runner.Runner": _MMENGINE_RUNNER,
    "mmengine.runner.runner.Runner": _MMENGINE_RUNNER,
    "mmengine.runner.Runner.from_cfg": _MMENGINE_RUNNER,
    "mmengine.runner.runner.Runner.from_cfg": _MMENGINE_RUNNER,
    "mmengine.registry.RUNNERS.build": _MMENGINE_RUNNER,
    "audiotools.ml.Accelerator": _AUDIOTOOLS_ACCELERATOR,
    "audiotools.ml.accelerator.Accelerator": _AUDIOTOOLS_ACCELERATOR,
    "basicsr.train_pipeline": _BASICSR_PIPELINE,
    "trainer.Trainer": _COQUI_TRAINER,
    "trainer.trainer.Trainer": _COQUI_TRAINER,
    **_SB3_NAMES,
    **_TORCH_AC_NAMES,
    **_DETECTRON2_NAMES,
}
# Packages the tool does not follow that run a training loop on XLA when asked to, and how
# (training/library_steppers.py does not report them then): Composer's Trainer with ``device="tpu"``
# (composer/devices/device_tpu.py, trainer.py: the model moved to the XLA device, each batch through
# ``pl.MpDeviceLoader``); its TPU device raises for a model that is not there yet.
XLA_CAPABLE_LIBRARIES = {
    "composer": "Composer's Trainer runs on XLA when handed device='tpu', with the model on torch_xla.device() "
    "before the optimizer is built (it raises otherwise)",
}
# Library objects that read their rank themselves, unported (the XLA launcher's processes set no
# LOCAL_RANK: torch_xla 2.9's launch calls xmp.spawn, which sets PJRT_LOCAL_PROCESS_RANK): every process
# the launcher starts is their rank 0.  audiotools/ml/accelerator.py: ``local_rank`` is LOCAL_RANK, else 0.
_AUDIOTOOLS_RANK = "audiotools' Accelerator reads its rank from LOCAL_RANK, which the XLA launcher does not set"
LIBRARY_RANKS = {
    "audiotools.ml.Accelerator": _AUDIOTOOLS_RANK,
    "audiotools.ml.accelerator.Accelerator": _AUDIOTOOLS_RANK,
}
# The packages those names come from: a file that names one is read even if it names no torch
# (Real-ESRGAN's train.py only calls basicsr's train_pipeline).
# Composer's Trainer (XLA_CAPABLE_LIBRARIES) too: a file that only builds it with a registry's optimizer
# names no torch (llm-foundry's train loop).
LIBRARY_LOOP_PACKAGES = tuple(sorted({name.split(".", 1)[0] for name in LIBRARY_LOOPS} | set(XLA_CAPABLE_LIBRARIES)))
