"""The verify probe: runs a training script inside the interpreter that has torch and
records what ``xla-codemod verify`` judges, as JSON lines.

``python probe.py --mode xla|reference --events FILE --steps N [--graphs PREFIX]
[--user-root DIR] [--timeout S] -- SCRIPT [ARGS...]``

``xla`` runs the port on torch_xla with the doctor's probe installed as well (its step
barrier events and torch_xla's graph file, which ``xla-codemod doctor``'s analysis
reads); ``reference`` runs the original with torch alone.  Both runs get the same start:

* seeds: ``random``, ``numpy`` and ``torch`` seeded with 0 before the script runs (a
  script that seeds itself does so in both runs alike; DataLoader shuffling draws from
  torch's generator, so the data order is the same);
* dropout off: ``F.dropout`` and its variants return their input, and
  ``F.scaled_dot_product_attention`` runs with ``dropout_p=0``: the XLA device draws other
  random numbers than the CPU, so a random layer would make the losses part at once.

Recorded (kinds of event):

* ``module_call``: the first calls of each top-level module with parameters (one called
  outside any other module's forward): where it was made and called, its parameters'
  devices, its tensor inputs' devices, the autocast dtype in force;
* ``optimizer_first_step``: before an optimizer's first step (a global pre-hook: the step
  may crash), its parameters' devices and how many of them the called modules hold (again
  after the step when no module had been called before it: an L-BFGS closure);
* ``optimizer_step``: each optimizer step (a global post-hook), where it was called, the
  step barriers and compiled graphs so far and, on XLA, the size of the pending graph of
  one stepped parameter;
* ``cuda_call``: a ``torch.cuda`` function, ``Tensor.cuda`` or ``Module.cuda`` called from
  the script's own code;
* ``losses``: per optimizer step, the values ``backward()`` was called on since the step
  before (unscaled, when a GradScaler scaled them), read after the run so that reading
  them adds no graph to the steps measured;
* ``finished``: how the run ended (the doctor's fields on XLA).

The run stops after N optimizer steps: the post-hook raises the doctor's ``StopScript``.
``torch.multiprocessing.spawn`` with one process, ``xmp.spawn`` and ``torch_xla.launch``
run their function in this process (one device).  ``scripts/smoke_runner.py`` uses the
same recorders.

This file must not import ``codemods`` (the interpreter may be another environment):
it loads the doctor's probe from its file.  Only the standard library, torch, torch_xla.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib.util
import os
import random
import sys
import time
import types
from collections.abc import Callable
from typing import Any

CUDA_QUERIES = frozenset(
    {
        # torch.cuda functions that are safe without a GPU: availability checks and lazy seeding
        "is_available",
        "device_count",
        "is_initialized",
        "manual_seed",
        "manual_seed_all",
        "seed",
        "seed_all",
        "is_bf16_supported",
        "get_rng_state_all",
        "set_rng_state_all",
    }
)
CALLS_RECORDED = 3  # calls of each top-level module whose inputs are recorded
NO_LIMIT = 10**9


def _load_doctor_probe() -> types.ModuleType:
    loaded = sys.modules.get("codemods.doctor.probe")
    if loaded is not None:
        return loaded
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "doctor", "probe.py")
    spec = importlib.util.spec_from_file_location("_xla_codemod_doctor_probe", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


doctor = _load_doctor_probe()


def seed_everything(seed: int = 0) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    with contextlib.suppress(ImportError):
        import numpy

        numpy.random.seed(seed)


def disable_dropout() -> None:
    """Random layers become the identity (see the module's docstring)."""
    import torch.nn.functional as F

    def identity(name: str) -> Callable[..., Any]:
        def dropout(input: Any, *args: Any, **kwargs: Any) -> Any:  # replaces torch.nn.functional's dropout functions
            return input

        dropout.__name__ = name
        return dropout

    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        if hasattr(F, name):
            setattr(F, name, identity(name))
    attention = F.scaled_dot_product_attention

    def attention_without_dropout(*args: Any, **kwargs: Any) -> Any:  # replaces torch's scaled_dot_product_attention
        if len(args) > 4:
            args = (*args[:4], 0.0, *args[5:])
        kwargs.pop("dropout_p", None)
        return attention(*args, **kwargs)

    F.scaled_dot_product_attention = attention_without_dropout


def run_in_this_process() -> None:
    """``torch.multiprocessing.spawn`` with one process calls its function here."""
    import torch.multiprocessing

    spawn = torch.multiprocessing.spawn

    def spawn_one(  # replaces torch.multiprocessing.spawn (its signature)
        fn: Callable[..., object],
        args: tuple[Any, ...] = (),
        nprocs: int = 1,
        join: bool = True,
        daemon: bool = False,
        start_method: str = "spawn",
    ) -> Any:
        if nprocs != 1:
            return spawn(fn, args, nprocs, join, daemon, start_method)
        fn(0, *args)
        return None

    torch.multiprocessing.spawn = spawn_one


def _tensors(value: object, depth: int = 0) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 2:
        return []
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item, depth + 1)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item, depth + 1)]
    return []


def _devices(tensors: list[Any]) -> dict[str, int]:
    return dict(collections.Counter(t.device.type for t in tensors))


class Recorder:
    """Optimizer steps, the tensors ``backward()`` ran on, modules, CUDA calls.

    ``on_step(index)`` is called after each optimizer step has been recorded (the probe
    stops the run there)."""

    def __init__(self, emit: Callable[..., None], user_code: Any, xla: bool) -> None:
        self.emit = emit
        self.user_code = user_code
        self.xla = xla
        self.steps = 0
        self.stepped_devices: set[str] = set()
        self.loss_devices: set[str] = set()
        self.losses: list[list[Any]] = []  # per step, the detached tensors
        self.loss_place: list[object] | None = None
        self._pending_losses: list[Any] = []
        self._scaled: dict[int, Any] = {}
        self._optimizers: dict[int, dict[str, Any]] = {}  # id -> key, made
        self._modules: dict[int, dict[str, Any]] = {}  # id -> key, made, params, calls
        self._made: dict[int, list[object]] = {}  # id(module) -> where it was made
        self._depth = 0
        self._cuda_seen: set[tuple[str, str, int]] = set()
        self.barriers: Callable[[], int] = lambda: 0
        self.compiles: Callable[[], int] = lambda: 0
        self.pending_graph_size: Callable[[Any], int] = lambda tensor: 0
        self.on_step: Callable[[int], None] = lambda index: None

    # -- where things happen -------------------------------------------------------------

    def _made_at(self, obj: object, frame: types.FrameType | None) -> list[object] | None:
        """The user line that made ``obj``: above the ``__init__`` frames of ``obj`` itself."""
        while frame is not None and frame.f_code.co_name == "__init__" and frame.f_locals.get("self") is obj:
            frame = frame.f_back
        where = self.user_code.frame(frame)
        return [where[0], where[1]] if where else None

    def _here(self, frame: types.FrameType | None) -> list[object] | None:
        where = self.user_code.frame(frame)
        return [where[0], where[1]] if where else None

    # -- installation --------------------------------------------------------------------

    def install(self) -> None:
        import torch
        from torch.nn.modules import module as nn_module
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        recorder = self
        module_init = torch.nn.Module.__init__

        def recording_module_init(module: Any, *args: Any, **kwargs: Any) -> None:  # replaces torch.nn.Module.__init__
            module_init(module, *args, **kwargs)
            recorder._made[id(module)] = recorder._made_at(module, sys._getframe(1)) or []

        torch.nn.Module.__init__ = recording_module_init

        optimizer_init = torch.optim.Optimizer.__init__

        # Replaces torch.optim.Optimizer.__init__.
        def recording_optimizer_init(optimizer: Any, *args: Any, **kwargs: Any) -> None:
            optimizer_init(optimizer, *args, **kwargs)
            if id(optimizer) not in recorder._optimizers:
                made = recorder._made_at(optimizer, sys._getframe(1))
                recorder._optimizers[id(optimizer)] = {
                    "key": len(recorder._optimizers) + 1,
                    "made": made,
                    "object": optimizer,
                }

        torch.optim.Optimizer.__init__ = recording_optimizer_init
        register_optimizer_step_pre_hook(self._stepping)
        register_optimizer_step_post_hook(self._stepped)
        nn_module.register_module_forward_pre_hook(self._forward_pre)
        nn_module.register_module_forward_hook(self._forward_post, always_call=True)

        backward = torch.Tensor.backward

        def recording_backward(tensor: Any, *args: Any, **kwargs: Any) -> Any:  # replaces torch.Tensor.backward
            recorder._backward(tensor, sys._getframe(1))
            return backward(tensor, *args, **kwargs)

        torch.Tensor.backward = recording_backward

        scale = torch.amp.GradScaler.scale

        def recording_scale(scaler: Any, outputs: Any) -> Any:  # replaces torch.amp.GradScaler.scale
            scaled = scale(scaler, outputs)
            if isinstance(outputs, torch.Tensor) and scaled is not outputs:
                recorder._scaled[id(scaled)] = outputs
            return scaled

        torch.amp.GradScaler.scale = recording_scale
        self._install_cuda_recorders()

    def _install_cuda_recorders(self) -> None:
        import torch

        for name, value in list(vars(torch.cuda).items()):
            if (
                name.startswith("_")
                or name in CUDA_QUERIES
                or not isinstance(value, types.FunctionType)
                or not getattr(value, "__module__", "").startswith("torch.cuda")
            ):
                continue
            setattr(torch.cuda, name, self._cuda_call(f"torch.cuda.{name}()", value))
        torch.Tensor.cuda = self._cuda_call(".cuda()", torch.Tensor.cuda)
        torch.nn.Module.cuda = self._cuda_call(".cuda()", torch.nn.Module.cuda)

    def _cuda_call(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def call(*args: Any, **kwargs: Any) -> Any:  # wraps torch's .cuda() methods
            caller = sys._getframe(1)
            if recorder.user_code(caller.f_code.co_filename):
                key = (label, caller.f_code.co_filename, caller.f_lineno)
                if key not in recorder._cuda_seen:
                    recorder._cuda_seen.add(key)
                    recorder.emit("cuda_call", api=label, file=key[1], line=key[2])
            return function(*args, **kwargs)

        call.__name__ = getattr(function, "__name__", label)
        call.__doc__ = getattr(function, "__doc__", None)
        return call

    # -- hooks ---------------------------------------------------------------------------

    def _forward_pre(self, module: Any, args: object) -> None:  # a torch forward pre-hook
        self._depth += 1
        if self._depth != 1:
            return None
        known = self._modules.get(id(module))
        if known is None:
            params = list(module.parameters())
            if not params:
                return None
            known = self._modules[id(module)] = {
                "key": len(self._modules) + 1,
                "params": {id(p) for p in params},
                "calls": 0,
                "object": module,
            }
        if known["calls"] >= CALLS_RECORDED:
            return None
        known["calls"] += 1
        import torch

        inputs = _tensors(args)
        device_type = inputs[0].device.type if inputs else "cpu"
        autocast = None
        with contextlib.suppress(Exception):
            if torch.is_autocast_enabled(device_type):
                autocast = str(torch.get_autocast_dtype(device_type)).replace("torch.", "")
        self.emit(
            "module_call",
            module=known["key"],
            name=type(module).__name__,
            made=self._made.get(id(module)),
            called=self._here(sys._getframe(1)),
            call=known["calls"],
            param_devices=_devices(list(module.parameters())),
            input_devices=_devices(inputs),
            autocast=autocast,
        )
        return None

    def _forward_post(self, module: Any, args: object, output: object) -> None:  # a torch forward hook
        self._depth = max(0, self._depth - 1)
        return None

    def _backward(self, tensor: Any, frame: types.FrameType) -> None:
        self.loss_devices.add(tensor.device.type)
        loss = self._scaled.pop(id(tensor), tensor)
        if loss.numel() == 1:
            self._pending_losses.append(loss.detach())
            if self.loss_place is None:
                self.loss_place = self._here(frame)

    def _optimizer(self, optimizer: Any) -> dict[str, Any]:
        return self._optimizers.setdefault(
            id(optimizer), {"key": len(self._optimizers) + 1, "made": None, "object": optimizer}
        )

    def _stepping(self, optimizer: Any, args: object, kwargs: object) -> None:
        """Before an optimizer's first step (which may crash): its parameters, and how many of
        them the modules called so far hold.  An optimizer whose step calls the model (an
        L-BFGS closure) is described again after that step."""
        known = self._optimizer(optimizer)
        if not known.get("described"):
            known["described"] = True
            self._describe(optimizer, known, sys._getframe(1))

    def _describe(self, optimizer: Any, known: dict[str, Any], frame: types.FrameType) -> None:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        ids = {id(p) for p in params}
        modules = list(self._modules.values())
        known["before_any_call"] = not modules
        self.emit(
            "optimizer_first_step",
            optimizer=known["key"],
            made=known["made"],
            place=self._here(frame),
            params=len(params),
            param_devices=_devices(params),
            called_modules=[m["key"] for m in modules],
            stepped_modules=[m["key"] for m in modules if ids & m["params"]],
            in_called_modules=sum(1 for i in ids if any(i in m["params"] for m in modules)),
        )

    def _stepped(self, optimizer: Any, args: object, kwargs: object) -> None:  # a torch optimizer step hook
        self.steps += 1
        params = [p for group in optimizer.param_groups for p in group["params"]]
        self.stepped_devices.update(p.device.type for p in params)
        known = self._optimizer(optimizer)
        if known.pop("before_any_call", False):
            self._describe(optimizer, known, sys._getframe(1))
        event: dict[str, object] = {
            "index": self.steps,
            "optimizer": known["key"],
            "place": self._here(sys._getframe(1)),
            "barriers": self.barriers(),
            "compiles": self.compiles(),
        }
        if self.xla and params:
            event["pending_graph"] = self.pending_graph_size(params[0])
        self.emit("optimizer_step", **event)
        self.losses.append(self._pending_losses)
        self._pending_losses = []
        self.on_step(self.steps)

    def loss_values(self) -> list[list[float]]:
        values = []
        for step in self.losses:
            values.append([float(t.float().cpu()) for t in step])
        return values

    def loss_dtypes(self) -> list[str]:
        return sorted({str(t.dtype).replace("torch.", "") for step in self.losses for t in step})


# events and user_code are the doctor probe's Events and UserCode: that module is loaded
# from its file at run time, so they cannot be named here.
def install_xla(recorder: Recorder, events: Any, graphs_prefix: str, user_code: Any) -> Any:
    """The doctor's probe (barriers, graphs, host reads) and what the recorder reads on XLA."""
    import torch_xla
    import torch_xla.debug.metrics as met

    probe = doctor.Probe(events, graphs_prefix, NO_LIMIT, user_code)
    probe.install()

    def compiles() -> int:
        data = met.metric_data("CompileTime")
        return int(data[0]) if data else 0

    def pending_graph_size(tensor: Any) -> int:
        """IR nodes pending for the tensor: grows step after step without a barrier."""
        return len(torch_xla._XLAC._get_xla_tensors_text([tensor]).splitlines())

    recorder.barriers = lambda: probe.steps
    recorder.compiles = compiles
    recorder.pending_graph_size = pending_graph_size
    return probe


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="probe.py")
    parser.add_argument("--mode", choices=("xla", "reference"), required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--graphs", default="")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--user-root", default="")
    parser.add_argument("--timeout", type=float, default=0.0)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    events = doctor.Events(options.events)
    xla = options.mode == "xla"
    try:
        import torch

        if xla:
            import torch_xla
            import torch_xla.debug.metrics
    except Exception as error:  # an ImportError, or an install that fails to load
        events.emit("unavailable", error=f"{type(error).__name__}: {error}", python=sys.executable)
        return int(doctor.UNAVAILABLE)

    user_code = doctor.UserCode(os.path.join(options.user_root, "_") if options.user_root else options.script)
    recorder = Recorder(events.emit, user_code, xla)
    probe = install_xla(recorder, events, options.graphs, user_code) if xla else None
    run_in_this_process()
    recorder.install()
    seed_everything()
    disable_dropout()

    def stop_at_limit(index: int) -> None:
        if index >= options.steps:
            raise doctor.StopScript("steps")

    recorder.on_step = stop_at_limit
    events.emit(
        "started",
        mode=options.mode,
        python=sys.executable,
        torch=torch.__version__,
        torch_xla=torch_xla.__version__ if xla else None,
        time=time.monotonic(),
    )
    outcome = doctor.run_script(options.script, options.args, options.timeout)
    recorder.on_step = lambda index: None
    finished: dict[str, object] = {"optimizer_steps": recorder.steps}
    if probe is not None:
        import torch_xla.core.xla_model as xm
        import torch_xla.debug.metrics as met

        with contextlib.suppress(Exception):  # the last step's graph may still be running
            xm.wait_device_ops()
        finished.update(
            steps=probe.steps,
            metrics=probe.metrics(),
            reads=probe.take_reads(),
            graphs_bytes=probe.graphs_bytes(),
            fallback_ops=sorted(met.executed_fallback_ops()),
        )
    try:
        events.emit("losses", values=recorder.loss_values(), dtypes=recorder.loss_dtypes(), place=recorder.loss_place)
    except Exception as error:  # a loss that cannot be read back: said, not fatal
        events.emit("losses", values=[], dtypes=[], place=recorder.loss_place, error=f"{type(error).__name__}: {error}")
    events.emit("finished", time=time.monotonic(), **finished, **outcome)
    sys.stdout.flush()
    sys.stderr.flush()
    doctor._exit_soon()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
