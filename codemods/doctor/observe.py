"""What one doctor run saw, put in order: its steps, the graphs of each step, host reads.

Built from the probe's events and torch_xla's graph file (see ``probe.py`` and
``graphs.py``); plain data, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from codemods.doctor import graphs
from codemods.doctor.graphs import Frame, Graph


@dataclass(frozen=True)
class Metrics:
    """torch_xla's counters at one moment (times in nanoseconds)."""

    compiles: int = 0
    compile_ns: float = 0.0
    executions: int = 0
    execute_ns: float = 0.0
    from_device: int = 0
    to_device: int = 0

    @classmethod
    def of(cls, data: object) -> Metrics:
        values = data if isinstance(data, dict) else {}

        def pair(key: str) -> tuple[int, float]:
            count, total = values.get(key, (0, 0.0))
            return int(count), float(total)

        compiles, compile_ns = pair("compiles")
        executions, execute_ns = pair("executions")
        return cls(compiles, compile_ns, executions, execute_ns, pair("from_device")[0], pair("to_device")[0])

    def __sub__(self, other: Metrics) -> Metrics:
        return Metrics(
            self.compiles - other.compiles,
            self.compile_ns - other.compile_ns,
            self.executions - other.executions,
            self.execute_ns - other.execute_ns,
            self.from_device - other.from_device,
            self.to_device - other.to_device,
        )


@dataclass(frozen=True)
class HostRead:
    """``count`` reads of a device tensor by ``label`` (``.item()``, ``print()``) at a user line."""

    file: str
    line: int
    label: str
    count: int
    step: int  # the step it happened in (1-based; reads after the last barrier: steps + 1)


@dataclass(frozen=True)
class Loader:
    """A DataLoader the script made (at a user line)."""

    file: str
    line: int
    batch_size: int
    drop_last: bool
    samples: int | None  # None for an iterable dataset


@dataclass(eq=False)
class GraphRun:
    """One graph torch_xla ran: in which step, from which Python stack (compared by identity)."""

    step: int
    stack: list[Frame]
    graph_hash: str
    body: str = field(repr=False)
    new: bool = False  # first run of this graph: it was compiled

    @cached_property
    def graph(self) -> Graph:
        return graphs.parse_entry(self.body)


@dataclass
class Observation:
    steps: list[Metrics]  # after each step barrier
    step_times: list[float]  # when each step barrier returned (seconds, monotonic)
    final: Metrics
    runs: list[GraphRun]
    reads: list[HostRead]
    outcome: dict[str, Any]  # the probe's "finished" event (reason, frames, ...)
    fallback_ops: list[str]
    loaders: list[Loader]

    @property
    def step_count(self) -> int:
        return len(self.steps)


def observe(events: list[dict[str, Any]], graph_file: str) -> Observation | None:
    """None when the probe never reported its end (the process died).  ``events``: the
    probe's, as JSON gives them (``json.loads``: values of any type); each value read here
    is converted to what the probe wrote (``int()``, ``float()``, ``str()``)."""
    step_events = [e for e in events if e.get("kind") == "step"]
    finished = next((e for e in events if e.get("kind") == "finished"), None)
    if finished is None:
        return None
    boundaries = [int(e.get("graphs_bytes", 0)) for e in step_events]
    reads = [
        HostRead(str(file), int(line), str(label), int(count), step)
        for step, event in enumerate([*step_events, finished], start=1)
        for file, line, _function, label, count in event.get("reads", [])
    ]
    runs = []
    seen: set[str] = set()
    position = byte_offset = 0  # the probe measures the file in bytes
    for offset, _name, body in graphs.entries(graph_file):
        byte_offset += len(graph_file[position:offset].encode("utf-8", "surrogateescape"))
        position = offset
        stack, graph_hash = graphs.entry_head(body)
        graph_hash = graph_hash or f"offset {offset}"
        step = 1 + sum(1 for boundary in boundaries if boundary <= byte_offset)
        runs.append(GraphRun(step, stack, graph_hash, body, new=graph_hash not in seen))
        seen.add(graph_hash)
    return Observation(
        steps=[Metrics.of(e.get("metrics")) for e in step_events],
        step_times=[float(e.get("time", 0.0)) for e in step_events],
        final=Metrics.of(finished.get("metrics")),
        runs=runs,
        reads=reads,
        outcome=finished,
        fallback_ops=[str(op) for op in finished.get("fallback_ops", [])],
        loaders=list(
            dict.fromkeys(
                Loader(
                    str(e["file"]),
                    int(e["line"]),
                    int(e["batch_size"]),
                    bool(e["drop_last"]),
                    None if e.get("samples") is None else int(e["samples"]),
                )
                for e in events
                if e.get("kind") == "loader"
            )
        ),
    )
