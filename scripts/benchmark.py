"""Prints how fast the pipeline is: per-stage times on the fixtures, and a whole-tree run
over a synthetic repository (many files without torch, some training scripts).

    python scripts/benchmark.py [--files 2000] [--jobs 0]

Figures, not assertions: compare them before and after a change.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import libcst as cst

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codemods.analysis import analyse  # noqa: E402
from codemods.pipeline import convert_source  # noqa: E402
from codemods.runner import Job, run, workers_for  # noqa: E402
from codemods.rules import RuleSelection  # noqa: E402


def best_of(function, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def stages() -> None:
    rows = []
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        source = path.read_bytes()
        if b"torch" not in source:
            continue
        module = cst.parse_module(source)
        parse = best_of(lambda: cst.parse_module(source))
        facts = best_of(lambda: analyse(module))
        lint = best_of(lambda: convert_source(source, locate="input"))
        convert = best_of(lambda: convert_source(source))
        rows.append((path.name, len(source.splitlines()), parse, facts, lint, convert))
    print(f"{'fixture':<28}{'lines':>6}{'parse':>9}{'analyse':>9}{'lint':>9}{'convert':>9}  (ms, best of 5)")
    for name, lines, *times in rows:
        print(f"{name:<28}{lines:>6}" + "".join(f"{t:>9.1f}" for t in times))
    ratio = statistics.mean(r[5] / r[2] for r in rows)
    print(f"convert costs {ratio:.1f}x the LibCST parse on average")


def tree(files: int, jobs: int) -> None:
    scripts = [p.read_bytes() for p in sorted((ROOT / "fixtures").glob("*.py")) if b"torch" in p.read_bytes()]
    plain = (ROOT / "codemods" / "report.py").read_bytes().replace(b"torch", b"thing")
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        for index in range(files):
            target = base / f"pkg{index % 50}" / f"module_{index}.py"
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(scripts[index % len(scripts)] if index % 10 == 0 else plain)
        paths = [str(p) for p in sorted(base.rglob("*.py"))]
        for mode in ("lint", "write"):
            start = time.perf_counter()
            job = Job(mode, "2.9", RuleSelection())
            reports = run([(path, job) for path in paths], workers_for(len(paths), jobs))
            elapsed = time.perf_counter() - start
            changed = sum(r.changed for r in reports)
            print(f"{mode:<6} {len(paths)} files ({len(paths) // 10} training scripts): {elapsed:.2f} s, {changed} changed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=0)
    args = parser.parse_args()
    stages()
    tree(args.files, args.jobs)


if __name__ == "__main__":
    main()
