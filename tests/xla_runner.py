"""Runs a script on torch_xla for the executed tests: ``python xla_runner.py SCRIPT``.

After each ``step N loss V`` line it prints ``XLA_COMPILES <count>``: how many graphs
XLA has compiled so far, so a test can see whether a training loop reaches a steady
state.  At the end it prints ``XLA_EXECUTIONS <count>`` (graphs run on the device).
"""

from __future__ import annotations

import builtins
import runpy
import sys

import torch_xla.debug.metrics as met


def _count(metric: str) -> int:
    data = met.metric_data(metric)
    return int(data[0]) if data else 0


def main() -> None:
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
    print(f"XLA_EXECUTIONS {_count('ExecuteTime')}", flush=True)


if __name__ == "__main__":
    main()
