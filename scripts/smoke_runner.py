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
function in this process (one device), so a launched script is seen too.  The script
runs, and its optimizer steps and losses are recorded, by the package's own pieces:
the doctor's ``run_script`` and the recorder of ``xla-codemod verify``'s probe
(``codemods/verify/probe.py``, loaded from its file).  Never imported by the tool: only
this runner imports torch.
"""

from __future__ import annotations

import builtins
import importlib.util
import json
import re
import sys
import types
from pathlib import Path

# The package's probe of `xla-codemod verify`, loaded from its file: the script's
# interpreter may not have the tool installed, and the runner's folder is not the package's.
VERIFY_PROBE = Path(__file__).resolve().parent.parent / "codemods" / "verify" / "probe.py"


def _verify_probe() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("_xla_codemod_verify_probe", VERIFY_PROBE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    mode, loss_regex, script, *args = sys.argv[1:]
    loss_line = re.compile(loss_regex)
    probe = _verify_probe()

    def count(metric: str) -> int:
        return 0

    if mode == "xla":
        import torch_xla
        import torch_xla.debug.metrics as met

        def count(metric: str) -> int:
            data = met.metric_data(metric)
            return int(data[0]) if data else 0

        launch = torch_xla.launch

        def launch_here(fn, args=(), start_method="spawn", debug_single_process=False):  # type: ignore[no-untyped-def]  # replaces torch_xla.launch (its signature), untyped
            print("SMOKE_LAUNCHED torch_xla.launch", flush=True)
            return launch(fn, args=args, start_method=start_method, debug_single_process=True)

        torch_xla.launch = launch_here

    probe.run_in_this_process()
    # The optimizer steps, the devices of the parameters they stepped and of the tensors
    # backward() ran on: the recorder `xla-codemod verify` judges its runs with.
    recorder = probe.Recorder(lambda kind, **data: None, probe.doctor.UserCode(script), xla=False)
    recorder.install()

    plain_print = builtins.print

    def print_with_compiles(*p_args: object, **p_kwargs: object) -> None:
        plain_print(*p_args, **p_kwargs)  # type: ignore[call-overload]  # passes print's arguments through unchanged
        if mode == "xla" and p_kwargs.get("file") in (None, sys.stdout):
            sep = p_kwargs.get("sep")  # None: print's default
            text = (sep if isinstance(sep, str) else " ").join(map(str, p_args))
            if loss_line.search(text):
                plain_print(f"SMOKE_COMPILES {count('CompileTime')}", flush=True)

    builtins.print = print_with_compiles
    try:
        outcome = probe.doctor.run_script(script, args, 0.0)
    finally:
        builtins.print = plain_print
    result: dict[str, object] = {"exit": 0}
    if outcome["reason"] == "exit":
        result["exit"] = outcome["status"]
        if outcome.get("message"):
            result["error"] = outcome["message"]
    elif outcome["reason"] == "crashed":
        frames = [f'  File "{file}", line {line}, in {function}' for file, line, function in outcome["frames"]]
        print(
            "Traceback (most recent call last):",
            *frames,
            f"{outcome['type']}: {outcome['message']}",
            sep="\n",
            file=sys.stderr,
        )
        result["exit"] = 1
        result["error"] = f"{outcome['type']}: {outcome['message']}".splitlines()[0][:300]
    if mode == "xla":
        try:
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()  # executions run asynchronously: count them all
        except Exception:
            pass
    result.update(
        compiles=count("CompileTime"),
        executions=count("ExecuteTime"),
        optimizer_steps=recorder.steps,
        stepped_devices=sorted(recorder.stepped_devices),
        loss_devices=sorted(recorder.loss_devices),
    )
    sys.stdout.flush()
    plain_print("SMOKE_RESULT " + json.dumps(result), flush=True)
    sys.exit(result["exit"] if isinstance(result["exit"], int) else 1)


if __name__ == "__main__":
    main()
