"""The doctor's probe: runs a training script inside the interpreter that has torch_xla.

``python probe.py --events FILE --graphs PREFIX --steps N --timeout S -- SCRIPT [ARGS...]``

It is started by ``xla-codemod doctor`` with torch_xla's debug switches set in the
environment (``XLA_IR_DEBUG``, ``XLA_HLO_DEBUG``, ``XLA_SAVE_TENSORS_FILE=PREFIX``,
``XLA_SAVE_TENSORS_FMT=stablehlo``), so torch_xla itself appends every graph it runs,
with the Python stack of each operation, to the file ``PREFIX.<ordinal>``.  The probe
adds what that file cannot say, as JSON lines in ``FILE``:

* ``step``: after every step barrier that ran a graph (``torch_xla.sync()``,
  ``xm.mark_step()``, ``MpDeviceLoader``: all of them end in ``_xla_step_marker``),
  torch_xla's metrics and the size of the graph file, so each graph can be put in its
  step; the host reads of device tensors (``.item()``, ``print(t)``, ...) of that step,
  except those in ``xm.add_step_closure`` callbacks (the recommended place for them).
* ``loader``: each DataLoader made by the script, its batch size and sample count.
* ``finished`` (the step limit, the time limit, or the script's own end), ``crashed``
  (with the traceback's frames), ``unavailable`` (no torch_xla here).

It stops the script by raising ``StopScript`` from the barrier, so the script's
``finally`` blocks and context managers run.  ``torch_xla.launch`` and ``xmp.spawn`` run
the function in this process (one device), where the probe can see it.

This file must not import ``codemods``: the interpreter may be another environment.
Only the standard library and torch_xla.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import glob
import json
import os
import runpy
import signal
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

UNAVAILABLE = 3  # exit status: this interpreter has no (working) torch_xla
EXIT_GRACE_SECONDS = 20.0  # after the script stops, time for the interpreter to exit
HOST_READS = (
    "item",
    "tolist",
    "numpy",
    "cpu",
    "to",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__repr__",
    "__format__",
    "__array__",
)
METRICS = {
    "compiles": "CompileTime",
    "executions": "ExecuteTime",
    "from_device": "TransferFromDeviceTime",
    "to_device": "TransferToDeviceTime",
}


class StopScript(BaseException):
    """Raised into the script to stop it; a BaseException so ``except Exception`` lets it pass."""


class Events:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8", buffering=1)

    def emit(self, kind: str, **data: object) -> None:
        self._file.write(json.dumps({"kind": kind, **data}) + "\n")
        self._file.flush()


class UserCode:
    """Which frames are the user's: files under the script's folder, outside installed packages.
    (The tool imports this class to apply the same rule to the stacks in the graph file.)"""

    def __init__(self, script: str) -> None:
        self._folder = os.path.dirname(os.path.realpath(script)) + os.sep
        self._known: dict[str, bool] = {}

    def __call__(self, filename: str) -> bool:
        known = self._known.get(filename)
        if known is None:
            path = os.path.realpath(filename)
            known = path.startswith(self._folder) and not any(
                part in ("site-packages", "dist-packages") for part in path.split(os.sep)
            )
            self._known[filename] = known
        return known

    def frame(self, frame: types.FrameType | None) -> tuple[str, int, str] | None:
        """The innermost user frame at or above ``frame``: (file, line, function) or None."""
        while frame is not None:
            if self(frame.f_code.co_filename):
                return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
            frame = frame.f_back
        return None


class Probe:
    def __init__(self, events: Events, graphs_prefix: str, steps: int, user_code: UserCode) -> None:
        self.events = events
        self.graphs_prefix = graphs_prefix
        self.step_limit = steps
        self.user_code = user_code
        self.steps = 0
        self.reads: collections.Counter[tuple[str, int, str, str]] = collections.Counter()
        self._reading = threading.local()
        self._graphs_file: str | None = None

    def graphs_bytes(self) -> int:
        """Size of torch_xla's graph file (named PREFIX.<ordinal> by torch_xla)."""
        if self._graphs_file is None:
            found = sorted(glob.glob(glob.escape(self.graphs_prefix) + "*"))
            if not found:
                return 0
            self._graphs_file = found[0]
        return os.path.getsize(self._graphs_file)

    def metrics(self) -> dict[str, list[float]]:
        import torch_xla.debug.metrics as met

        values = {}
        for key, name in METRICS.items():
            data = met.metric_data(name)
            values[key] = [int(data[0]), float(data[1])] if data else [0, 0.0]
        return values

    def take_reads(self) -> list[list[object]]:
        reads = [[*key, count] for key, count in self.reads.items()]
        self.reads.clear()
        return reads

    def install(self) -> None:
        import torch
        import torch_xla
        import torch_xla.distributed.xla_multiprocessing as xmp

        step_marker = torch_xla._XLAC._xla_step_marker

        def counting_step_marker(*args: Any, **kwargs: Any) -> Any:  # wraps torch_xla's _XLAC._xla_step_marker
            before = self.graphs_bytes()
            result = step_marker(*args, **kwargs)
            if self.graphs_bytes() == before:
                return result  # nothing was pending: no graph ran, not a step
            self.steps += 1
            self.events.emit(
                "step",
                index=self.steps,
                graphs_bytes=self.graphs_bytes(),
                metrics=self.metrics(),
                reads=self.take_reads(),
                time=time.monotonic(),
            )
            if self.steps >= self.step_limit:
                raise StopScript("steps")
            return result

        torch_xla._XLAC._xla_step_marker = counting_step_marker

        spawn = xmp.spawn

        def spawn_here(  # wraps torch_xla's xmp.spawn (its signature)
            fn: Callable[..., object],
            args: tuple[Any, ...] = (),
            nprocs: int | None = None,
            join: bool = True,
            daemon: bool = False,
            start_method: str = "spawn",
        ) -> Any:
            return spawn(fn, args=args, nprocs=1, join=join, daemon=daemon, start_method=start_method)

        xmp.spawn = spawn_here

        for name in HOST_READS:
            original = getattr(torch.Tensor, name, None)
            if original is not None:
                setattr(torch.Tensor, name, self._host_read(name, original, torch.Tensor))

        from torch.utils.data import DataLoader

        loader_init = DataLoader.__init__

        def recording_init(loader: Any, *args: Any, **kwargs: Any) -> None:  # replaces torch's DataLoader.__init__
            loader_init(loader, *args, **kwargs)
            self._loader_made(loader, sys._getframe(1))

        DataLoader.__init__ = recording_init

    def _loader_made(self, loader: Any, caller: types.FrameType) -> None:
        """A DataLoader's batch size and sample count: its last batch may be short."""
        where = self.user_code.frame(caller)
        if where is None or not loader.batch_size:
            return
        try:
            samples = len(loader.sampler)
        except TypeError:  # an iterable dataset: no length
            samples = None
        self.events.emit(
            "loader",
            file=where[0],
            line=where[1],
            batch_size=loader.batch_size,
            drop_last=bool(loader.drop_last),
            samples=samples,
        )

    def _host_read(self, name: str, original: Callable[..., Any], tensor_type: Any) -> Callable[..., Any]:
        """``original`` wrapped to count calls on XLA tensors by the user line that made them."""
        reading = self._reading
        label = {
            "to": ".to('cpu')",
            "__bool__": "bool()",
            "__float__": "float()",
            "__int__": "int()",
            "__index__": "index",
            "__repr__": "repr()/print()",
            "__format__": "format()",
            "__array__": "numpy array",
        }.get(name, f".{name}()")

        def read(tensor: Any, *args: Any, **kwargs: Any) -> Any:  # wraps a torch.Tensor method (any of several)
            if getattr(reading, "active", False) or tensor.device.type != "xla":
                return original(tensor, *args, **kwargs)
            reading.active = True
            try:
                result = original(tensor, *args, **kwargs)
            finally:
                reading.active = False
            if name != "to" or (isinstance(result, tensor_type) and result.device.type == "cpu"):
                caller = sys._getframe(1)
                where = self.user_code.frame(caller)
                if where is not None and not _in_step_closure(caller):
                    self.reads[(where[0], where[1], where[2], label)] += 1
            return result

        read.__name__ = name
        read.__doc__ = getattr(original, "__doc__", None)
        return read


def _in_step_closure(frame: types.FrameType | None) -> bool:
    """Reads in ``xm.add_step_closure`` callbacks run after the step: the recommended way."""
    while frame is not None:
        if frame.f_code.co_name == "_run_step_closures":
            return True
        frame = frame.f_back
    return False


def _frames(error: BaseException) -> list[list[object]]:
    return [[f.filename, f.lineno, f.name] for f in traceback.extract_tb(error.__traceback__)]


def _stop_on_signal(signum: int, frame: object) -> None:
    raise StopScript("timeout" if signum == signal.SIGALRM else "interrupted")


def _exit_soon() -> None:
    """If the interpreter hangs on exit (a worker thread that never ends), end it."""
    timer = threading.Timer(EXIT_GRACE_SECONDS, os._exit, args=(0,))
    timer.daemon = True
    timer.start()


def run_script(script: str, args: list[str], timeout: float) -> dict[str, object]:
    """Run the script as ``python SCRIPT ARGS`` would (its folder first on sys.path, not
    ours; ``__name__ == "__main__"``), stopped by ``StopScript``, SIGTERM or after ``timeout``
    seconds (0: no limit).  How it ended: ``reason`` (completed, steps, timeout, interrupted,
    exit with ``status``, crashed with ``type``), ``message`` and ``frames``.
    (The verify probe runs scripts through this too.)"""
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    signal.signal(signal.SIGTERM, _stop_on_signal)
    if timeout > 0:
        signal.signal(signal.SIGALRM, _stop_on_signal)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    outcome: dict[str, object]
    try:
        runpy.run_path(script, run_name="__main__")
        outcome = {"reason": "completed"}
    except StopScript as stop:
        outcome = {"reason": str(stop)}
    except SystemExit as exit_:
        code = exit_.code
        if code is None or code == 0:
            outcome = {"reason": "completed"}
        else:
            outcome = {
                "reason": "exit",
                "status": code if isinstance(code, int) else 1,
                "message": "" if isinstance(code, int) else str(code),
                "frames": _frames(exit_),
            }
    except BaseException as error:  # any crash of the script is reported, with its frames
        outcome = {"reason": "crashed", "type": type(error).__name__, "message": str(error), "frames": _frames(error)}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return outcome


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="probe.py")
    parser.add_argument("--events", required=True)
    parser.add_argument("--graphs", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=0.0)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    events = Events(options.events)
    try:
        import torch_xla
        import torch_xla.debug.metrics
    except Exception as error:  # an ImportError, or an install that fails to load
        events.emit("unavailable", error=f"{type(error).__name__}: {error}", python=sys.executable)
        return UNAVAILABLE

    user_code = UserCode(options.script)
    probe = Probe(events, options.graphs, options.steps, user_code)
    probe.install()
    events.emit("started", python=sys.executable, torch_xla=torch_xla.__version__, time=time.monotonic())

    outcome = run_script(options.script, options.args, options.timeout)
    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met

    with contextlib.suppress(Exception):  # the last step's graph may still be running
        xm.wait_device_ops()
    events.emit(
        "finished",
        steps=probe.steps,
        metrics=probe.metrics(),
        reads=probe.take_reads(),
        graphs_bytes=probe.graphs_bytes(),
        fallback_ops=sorted(met.executed_fallback_ops()),
        time=time.monotonic(),
        **outcome,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    _exit_soon()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
