"""Runs one training script for ``smoke.py --execute`` and says what it did.

    python scripts/smoke_runner.py eager|xla LOSS_REGEX SCRIPT [ARGS...]

The script runs in this process (``runpy``, as ``python SCRIPT ARGS`` would run it: its
folder first on ``sys.path``, ``__name__ == "__main__"``), so what it does can be seen:

* after each printed line that matches LOSS_REGEX: ``SMOKE_COMPILES <count>``, the graphs
  XLA compiled so far (xla mode), so a harness can see whether the loop settles;
* at the end, one line ``SMOKE_RESULT <json>``: how it ended (``exit``: the exit code it
  asked for, or 1 with ``error`` for an exception), graphs compiled and executed (xla),
  optimizer steps and the device types of the parameters those optimizers stepped, and
  the device types of the tensors ``backward()`` was called on (the losses).

``torch.multiprocessing.spawn`` with one process and ``torch_xla.launch`` run their
function in this process (one device), so a launched script is seen too.  Never
imported by the tool: only this runner imports torch.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import runpy
import sys
import traceback


def main() -> None:
    mode, loss_regex, script, *args = sys.argv[1:]
    loss_line = re.compile(loss_regex)
    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook

    def count(metric: str) -> int:
        return 0

    if mode == "xla":
        import torch_xla
        import torch_xla.debug.metrics as met

        def count(metric: str) -> int:
            data = met.metric_data(metric)
            return int(data[0]) if data else 0

        launch = torch_xla.launch

        def launch_here(fn, args=(), start_method="spawn", debug_single_process=False):  # type: ignore[no-untyped-def]
            print("SMOKE_LAUNCHED torch_xla.launch", flush=True)
            return launch(fn, args=args, start_method=start_method, debug_single_process=True)

        torch_xla.launch = launch_here

    import torch.multiprocessing

    spawn = torch.multiprocessing.spawn

    def spawn_one(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):  # type: ignore[no-untyped-def]
        if nprocs != 1:
            return spawn(fn, args, nprocs, join, daemon, start_method)
        print("SMOKE_LAUNCHED torch.multiprocessing.spawn", flush=True)
        fn(0, *args)
        return None

    torch.multiprocessing.spawn = spawn_one

    steps = [0]
    stepped: set[str] = set()
    losses: set[str] = set()

    def record_step(optimizer, step_args, step_kwargs):  # type: ignore[no-untyped-def]
        steps[0] += 1
        stepped.update(p.device.type for group in optimizer.param_groups for p in group["params"])

    register_optimizer_step_post_hook(record_step)
    backward = torch.Tensor.backward

    def recording_backward(self, *b_args, **b_kwargs):  # type: ignore[no-untyped-def]
        losses.add(self.device.type)
        return backward(self, *b_args, **b_kwargs)

    torch.Tensor.backward = recording_backward

    plain_print = builtins.print

    def print_with_compiles(*p_args: object, **p_kwargs: object) -> None:
        plain_print(*p_args, **p_kwargs)  # type: ignore[call-overload]
        if mode == "xla" and p_kwargs.get("file") in (None, sys.stdout):
            sep = p_kwargs.get("sep")  # None: print's default
            text = (sep if isinstance(sep, str) else " ").join(map(str, p_args))
            if loss_line.search(text):
                plain_print(f"SMOKE_COMPILES {count('CompileTime')}", flush=True)

    builtins.print = print_with_compiles
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    result: dict[str, object] = {"exit": 0}
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        code = stop.code
        result["exit"] = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            result["error"] = str(code)
    except BaseException as error:
        traceback.print_exc()
        result["exit"] = 1
        result["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
    finally:
        builtins.print = plain_print
    if mode == "xla":
        try:
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()  # executions run asynchronously: count them all
        except Exception:
            pass
    result.update(
        compiles=count("CompileTime"),
        executions=count("ExecuteTime"),
        optimizer_steps=steps[0],
        stepped_devices=sorted(stepped),
        loss_devices=sorted(losses),
    )
    sys.stdout.flush()
    plain_print("SMOKE_RESULT " + json.dumps(result), flush=True)
    sys.exit(result["exit"] if isinstance(result["exit"], int) else 1)


if __name__ == "__main__":
    main()
