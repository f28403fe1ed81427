"""Runs a script on torch_xla for the executed tests: ``python xla_runner.py SCRIPT``.

After each ``step N loss V`` line it prints ``XLA_COMPILES <count>``: how many graphs
XLA has compiled so far, so a test can see whether a training loop reaches a steady
state.  At the end it prints ``XLA_EXECUTIONS <count>`` (graphs run on the device),
``XLA_AUTOCAST <device type> <dtype> <matmul dtype>`` for each distinct autocast context
the script entered (the matmul dtype: what a matmul of XLA tensors gives inside it, so
the context was really active), ``XLA_OPTIMIZER <class>`` for each optimizer class
that stepped, ``XLA_STEPPED_DEVICES <device types>``: where the parameters those
optimizers stepped live (an optimizer built before its model moved to XLA steps CPU
tensors that nothing uses), ``XLA_LARGEST_GRAPH <nodes>``: the largest graph synced
(among the metric's recent samples), which grows with the iterations of a loop that
accumulates device state without a barrier, and, when the script used torch.compile,
``DYNAMO_GRAPHS <count> <backends>``: how many graphs dynamo captured and the backends it
compiled them with.
"""

from __future__ import annotations

import builtins
import runpy
import sys

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from in_process import run_launchers_in_process
from torch.optim.optimizer import register_optimizer_step_post_hook


def _count(metric: str) -> int:
    data = met.metric_data(metric)
    return int(data[0]) if data else 0


def _record_autocast_and_optimizers() -> tuple[set[tuple[str, str, str]], set[str], set[str]]:
    contexts: set[tuple[str, str, str]] = set()
    optimizers: set[str] = set()
    stepped_devices: set[str] = set()
    enter = torch.amp.autocast_mode.autocast.__enter__

    def recording_enter(self):  # type: ignore[no-untyped-def]
        result = enter(self)
        if self._enabled:
            ones = torch.ones(2, 2, device=torch_xla.device())
            contexts.add((self.device, str(self.fast_dtype), str((ones @ ones).dtype)))
        return result

    torch.amp.autocast_mode.autocast.__enter__ = recording_enter

    def record_step(optimizer, args, kwargs):  # type: ignore[no-untyped-def]
        optimizers.add(f"{type(optimizer).__module__}.{type(optimizer).__qualname__}")
        stepped_devices.update(p.device.type for group in optimizer.param_groups for p in group["params"])

    register_optimizer_step_post_hook(record_step)
    return contexts, optimizers, stepped_devices


def _record_compile_backends() -> list[str]:
    """The backend of each graph dynamo hands over, by name ("openxla", "inductor"...)."""
    import torch._dynamo.backends.registry as registry

    backends: list[str] = []
    lookup = registry.lookup_backend

    def recording_lookup(compiler_fn):  # type: ignore[no-untyped-def]
        found = lookup(compiler_fn)
        name = compiler_fn if isinstance(compiler_fn, str) else getattr(compiler_fn, "__name__", str(compiler_fn))

        def counted(gm, example_inputs, **kwargs):  # type: ignore[no-untyped-def]
            backends.append(name)
            return found(gm, example_inputs, **kwargs)

        return counted

    registry.lookup_backend = recording_lookup
    return backends


def main() -> None:
    contexts, optimizers, stepped_devices = _record_autocast_and_optimizers()
    backends = _record_compile_backends()
    run_launchers_in_process()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, script.rpartition("/")[0] or ".")
    plain_print = builtins.print

    def print_with_compiles(*args: object, **kwargs: object) -> None:
        plain_print(*args, **kwargs)  # type: ignore[call-overload]
        if args and str(args[0]).startswith("step "):
            plain_print(f"XLA_COMPILES {_count('CompileTime')}", flush=True)

    builtins.print = print_with_compiles
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        builtins.print = plain_print
    # Executions run asynchronously: the last one may still be under way (seen on a
    # loaded machine: one execution short), so wait for them before counting.
    xm.wait_device_ops()
    print(f"XLA_EXECUTIONS {_count('ExecuteTime')}", flush=True)
    sizes = met.metric_data("TensorsGraphSize")
    if sizes:
        print(f"XLA_LARGEST_GRAPH {int(max(value for _, value in sizes[2]))}", flush=True)
    for context in sorted(contexts):
        print("XLA_AUTOCAST", *context, flush=True)
    for optimizer in sorted(optimizers):
        print("XLA_OPTIMIZER", optimizer, flush=True)
    if backends:
        print("DYNAMO_GRAPHS", len(backends), *sorted(set(backends)), flush=True)
    if stepped_devices:
        print("XLA_STEPPED_DEVICES", *sorted(stepped_devices), flush=True)


if __name__ == "__main__":
    main()
