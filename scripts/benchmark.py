"""How fast the tool is, side by side with LibCST's own round trip (parse, then print).

    python scripts/benchmark.py [--scripts 300] [--jobs N] [--scales 1,2,4] [--repeat 3] [--compare TREE]

It builds a corpus from the fixtures (each training script varied so no two files are
the same, plus files without torch, 3 for every 2 scripts, as in a real repository) and
prints, in one run:
  (a) `xla-codemod convert --check` on the corpus: wall time and lines per second;
  (b) the bare LibCST round trip over the same files with the same number of processes;
  (c) their ratio, on the whole corpus and on its training scripts alone (files
      without torch are skipped unparsed, which flatters the first);
  (d) cold starts: `convert --check` on one small training script against
      `python -m libcst.tool print` on it, and on one file without torch against
      `python -c pass` (and whether LibCST was imported for it);
  (e) (a) to (c) at several multiples of the corpus, to show how the cost grows;
  (f) a per-stage profile of one process over the corpus' training scripts, the stages
      as the pipeline runs them, next to LibCST's parse and print of the same files.
Figures, not assertions: compare them before and after a change.  ``--compare TREE``
(a checkout of another commit) runs (a) to (c) for that tree's package too, on the same
corpus, the runs of both trees and of the round trip taking turns (the best of each
counts), then stops: a shared machine's load moves both the same way.

    python scripts/benchmark.py --instructions [--scripts 30] [--compare TREE]

counts instructions instead of seconds (valgrind's callgrind, one process, hash seed
fixed, packages byte-compiled): the same figures on every run, whatever else the machine
does, where wall and CPU times of a few percent drown in its noise.  It prints the
instructions of `convert --check -j 1` on the corpus, of a start on one small script (and of
`python -m libcst.tool print` on it), and of LibCST's round trip of the corpus, for this tree
(and TREE), with the ratios.  About two minutes per tree at 30 scripts.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
XLA_CODEMOD = [PYTHON, "-m", "codemods"]
ROUND_TRIP = """
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
import libcst

def round_trip(path):
    data = Path(path).read_bytes()
    return len(libcst.parse_module(data).code)

if __name__ == "__main__":
    jobs, paths = int(sys.argv[1]), sys.argv[2:]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(round_trip, paths, chunksize=8))
    else:
        for path in paths:
            round_trip(path)
"""


def training_scripts() -> list[bytes]:
    skip = {"launchers", "containers"}
    return [
        p.read_bytes()
        for p in sorted((ROOT / "fixtures").rglob("*.py"))
        if not skip & set(p.relative_to(ROOT / "fixtures").parts) and b"torch" in p.read_bytes()
    ]


def plain_module() -> bytes:
    """A module that mentions no framework (the report renderer, with its one mention renamed)."""
    return re.sub(rb"torch|sagemaker|transformers", b"thing", (ROOT / "codemods" / "engine" / "report.py").read_bytes())


def vary(source: bytes, index: int) -> bytes:
    """The same script, made a different file: its own header, its own numbers."""
    header = f"# variant {index} of a training script\n".encode()
    bumped = re.sub(rb"\b(\d+)\.(\d+)\b", lambda m: m.group(0) + str(index % 7).encode(), source, count=3)
    return header + bumped + f"\n\ndef _variant_{index}():\n    return {index}\n".encode()


def build_corpus(folder: Path, scripts: int, with_plain: bool = True) -> tuple[list[Path], int]:
    """``scripts`` varied training scripts, and (``with_plain``) 3 files without torch for every 2."""
    sources = training_scripts()
    plain = plain_module()
    paths = []
    for index in range(scripts):
        package = folder / f"pkg{index % 25}"
        package.mkdir(parents=True, exist_ok=True)
        paths.append(package / f"train_{index}.py")
        paths[-1].write_bytes(vary(sources[index % len(sources)], index))
    for index in range(scripts * 3 // 2 if with_plain else 0):
        package = folder / f"pkg{index % 25}"
        package.mkdir(parents=True, exist_ok=True)
        paths.append(package / f"util_{index}.py")
        paths[-1].write_bytes(plain + f"\nVARIANT = {index}\n".encode())
    return paths, sum(p.read_bytes().count(b"\n") for p in paths)


def timed(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def best(command: list[str], repeat: int, cwd: Path | None = None) -> float:
    return min(timed(command, cwd) for _ in range(repeat))


def side_by_side(scripts: int, jobs: int, repeat: int, with_plain: bool = True) -> tuple[float, float, int, int]:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        paths, lines = build_corpus(folder, scripts, with_plain)
        tool = best([*XLA_CODEMOD, "convert", "--check", "-j", str(jobs), str(folder)], repeat)
        bare = best([PYTHON, "-c", ROUND_TRIP, str(jobs), *map(str, paths)], repeat)
    return tool, bare, len(paths), lines


def compared(tree: Path, scripts: int, jobs: int, repeat: int, with_plain: bool) -> None:
    """(a) to (c) for the package of ``tree`` and for this one, taking turns on one corpus."""
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "corpus"
        paths, lines = build_corpus(folder, scripts, with_plain)
        trees = {"before": tree, "after": ROOT}
        times: dict[str, list[float]] = {name: [] for name in (*trees, "round trip")}
        cpu: dict[str, list[float]] = {name: [] for name in times}  # the processes' CPU time
        for _ in range(repeat):
            for name, root in trees.items():
                # From a folder without a package, so that -m codemods is the tree's.
                env = {**os.environ, "PYTHONPATH": str(root)}
                command = [*XLA_CODEMOD, "convert", "--check", "-j", str(jobs), str(folder)]
                before = _children_cpu()
                times[name].append(timed(command, Path(temporary), env))
                cpu[name].append(_children_cpu() - before)
            before = _children_cpu()
            times["round trip"].append(timed([PYTHON, "-c", ROUND_TRIP, str(jobs), *map(str, paths)], Path(temporary)))
            cpu["round trip"].append(_children_cpu() - before)
    bare, bare_cpu = min(times["round trip"]), min(cpu["round trip"])
    corpus = f"{len(paths)} files" if with_plain else "training scripts only"
    print(
        f"{scripts} training scripts, {corpus}, {lines} lines; LibCST round trip {bare:.2f} s wall, "
        f"{bare_cpu:.2f} s CPU (best of {repeat})"
    )
    for name, root in trees.items():
        best_time, best_cpu = min(times[name]), min(cpu[name])
        runs = " ".join(f"{t:.2f}/{c:.2f}" for t, c in zip(times[name], cpu[name]))
        print(
            f"    {name:<7} {root}: convert --check {best_time:.2f} s wall, ratio {best_time / bare:.3f}; "
            f"{best_cpu:.2f} s CPU, ratio {best_cpu / bare_cpu:.3f}   (runs, wall/CPU: {runs})"
        )


def instructions(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> int:
    """Instructions ``command`` executes, counted by callgrind."""
    counted = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        cwd=cwd,
        env={**(env or os.environ), "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", counted.stderr)
    if found is None:
        raise SystemExit(f"valgrind gave no count for {' '.join(command)}:\n{counted.stderr[-2000:]}")
    return int(found.group(1))


def counted(trees: dict[str, Path], scripts: int) -> None:
    """Instructions of each tree's `convert --check -j 1` on one corpus and on one small
    script (the start), and of the round trip; the ratios to the round trip."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian's package valgrind)")
    with tempfile.TemporaryDirectory() as temporary:
        folder, small = Path(temporary) / "corpus", Path(temporary) / "small"
        paths, lines = build_corpus(folder, scripts)
        small.mkdir()
        (small / "train.py").write_text("import torch\n\nx = torch.zeros(1)\n")
        bare = instructions([PYTHON, "-c", ROUND_TRIP, "1", *map(str, paths)], Path(temporary))
        libcst_print = instructions([PYTHON, "-m", "libcst.tool", "print", str(small / "train.py")], Path(temporary))
        print(
            f"{scripts} training scripts, {len(paths)} files, {lines} lines; LibCST round trip {bare / 1e9:.3f} G instructions; "
            f"`python -m libcst.tool print` on the small script {libcst_print / 1e9:.3f} G"
        )
        for name, root in trees.items():
            env = {**os.environ, "PYTHONPATH": str(root)}
            tool = instructions([*XLA_CODEMOD, "convert", "--check", "-j", "1", str(folder)], Path(temporary), env)
            start = instructions([*XLA_CODEMOD, "convert", "--check", "-j", "1", str(small)], Path(temporary), env)
            print(
                f"    {name:<7} {root}: convert --check {tool / 1e9:.3f} G, ratio {tool / bare:.4f}; "
                f"a start on one small script {start / 1e9:.3f} G (ratio to libcst.tool print {start / libcst_print:.3f}); "
                f"the corpus less that start {(tool - start) / 1e9:.3f} G"
            )


def _children_cpu() -> float:
    """User and system time of the finished child processes (and theirs), in seconds:
    steadier than wall time on a loaded machine."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold_starts(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        small = folder / "small.py"
        shutil.copy(ROOT / "fixtures" / "manual_sgd.py", small)
        plain = folder / "plain.py"
        plain.write_bytes(plain_module())
        ours = best([*XLA_CODEMOD, "convert", "--check", str(small)], repeat, folder)
        libcst_print = best([PYTHON, "-m", "libcst.tool", "print", str(small)], repeat, folder)
        skip = best([*XLA_CODEMOD, "convert", "--check", str(plain)], repeat, folder)
        empty = best([PYTHON, "-c", "pass"], repeat, folder)
        probe = "import sys, runpy; sys.argv = ['xla-codemod', 'convert', '--check', sys.argv[1]]\n"
        probe += "try:\n    runpy.run_module('codemods', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        probe += "print('libcst' in sys.modules)"
        imported = subprocess.run([PYTHON, "-c", probe, str(plain)], capture_output=True, text=True, cwd=folder)
    print("(d) cold start, best of", repeat)
    print(f"    convert --check small training script   {ours * 1000:7.0f} ms")
    print(
        f"    python -m libcst.tool print (same file)   {libcst_print * 1000:7.0f} ms   ratio {ours / libcst_print:.2f}"
    )
    print(f"    convert --check file without torch       {skip * 1000:7.0f} ms")
    print(
        f"    python -c pass                            {empty * 1000:7.0f} ms   (LibCST imported: {imported.stdout.split()[-1]})"
    )


def stages() -> None:
    """One process, every training script of the corpus once: where the time goes, stage
    by stage as codemods/pipeline.py runs them (convert --check: findings in the input)."""
    sys.path.insert(0, str(ROOT))
    import ast

    import libcst as cst

    from codemods.analyse import analyse
    from codemods.concerns import concerns_for
    from codemods.engine.positions import code_reusing, print_back
    from codemods.engine.report import FileReport, Finding, Report, render_text
    from codemods.engine.rewriter import Context, Rewriter
    from codemods.engine.rule import RuleSelection
    from codemods.pipeline import _never
    from codemods.targets import get_target

    ours = dict.fromkeys(
        (
            "read",
            "parse",
            "print back (check)",
            "analyse",
            "rewrite",
            "print output",
            "CPython parse of the new parts",
            "finding positions",
            "report",
        ),
        0.0,
    )
    bare = dict.fromkeys(("parse", "LibCST print"), 0.0)
    with tempfile.TemporaryDirectory() as temporary:
        paths, _ = build_corpus(Path(temporary), len(training_scripts()) * 4, with_plain=False)
        for path in paths:
            start = time.perf_counter()
            data = path.read_bytes()
            mark = time.perf_counter()
            ours["read"] += mark - start
            module = cst.parse_module(data)
            ours["parse"] += time.perf_counter() - mark
            mark = time.perf_counter()
            printed = print_back(module)
            code = printed.code
            assert code.encode(module.encoding) == data
            ours["print back (check)"] += time.perf_counter() - mark
            mark = time.perf_counter()
            facts = analyse(module)
            ours["analyse"] += time.perf_counter() - mark
            mark = time.perf_counter()
            ctx = Context(facts, get_target("2.9"), RuleSelection(), _never)
            new = Rewriter(ctx, concerns_for(ctx), facts.nodes_to_visit).transform(module)
            ours["rewrite"] += time.perf_counter() - mark
            mark = time.perf_counter()
            reprinted = code_reusing(new, printed) if any(f.fixed for f in ctx.findings) else None
            output = code if reprinted is None else reprinted.code
            ours["print output"] += time.perf_counter() - mark
            mark = time.perf_counter()
            if reprinted is not None and output != code:
                ast.parse(reprinted.new_parts())
            ours["CPython parse of the new parts"] += time.perf_counter() - mark
            mark = time.perf_counter()
            starts = printed.positions(facts.parents)
            starts.locate(f.original for f in ctx.findings)
            findings = [
                Finding(f.rule.code, *(starts.get(f.original) or (1, 1)), f.message, f.fixed) for f in ctx.findings
            ]
            ours["finding positions"] += time.perf_counter() - mark
            mark = time.perf_counter()
            render_text(Report([FileReport(str(path), True, None, findings)]))
            ours["report"] += time.perf_counter() - mark
            mark = time.perf_counter()
            module = cst.parse_module(data)
            bare["parse"] += time.perf_counter() - mark
            mark = time.perf_counter()
            _ = module.code
            bare["LibCST print"] += time.perf_counter() - mark
    print(f"(f) per stage, one process, {len(paths)} training scripts (ms)")
    for name, seconds in ours.items():
        print(f"    {name:<38}{seconds * 1000:9.1f}")
    print(f"    {'total':<38}{sum(ours.values()) * 1000:9.1f}")
    print("    LibCST round trip: " + ", ".join(f"{name} {seconds * 1000:.1f}" for name, seconds in bare.items()))
    print(f"    ratio {sum(ours.values()) / sum(bare.values()):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--scripts", type=int, help="training scripts in the corpus (1x; 300, or 30 with --instructions)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes for both sides")
    parser.add_argument("--scales", default="1,2,4", help="multiples of the corpus to run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (the best counts)")
    parser.add_argument("--compare", type=Path, help="a checkout of another commit: (a) to (c) for both, taking turns")
    parser.add_argument("--instructions", action="store_true", help="count instructions (valgrind) instead of timing")
    args = parser.parse_args()
    if args.scripts is None:
        args.scripts = 30 if args.instructions else 300
    # Installed packages run from bytecode (pip compiles it, LibCST's included); an
    # editable install under PYTHONDONTWRITEBYTECODE would compile ours on every start.
    compileall.compile_dir(ROOT / "codemods", quiet=1)
    print(
        f"{os.cpu_count()} cores; {args.jobs} process(es) per side; {time.strftime('%Y-%m-%d')}; package byte-compiled"
    )
    if args.compare is not None:
        compileall.compile_dir(args.compare.resolve() / "codemods", quiet=1)
    if args.instructions:
        before = {"before": args.compare.resolve()} if args.compare is not None else {}
        counted({**before, "after": ROOT}, args.scripts)
        return
    if args.compare is not None:
        for scale in (int(s) for s in args.scales.split(",")):
            for with_plain in (True, False):
                compared(args.compare.resolve(), args.scripts * scale, args.jobs, args.repeat, with_plain)
        return
    for scale in (int(s) for s in args.scales.split(",")):
        for with_plain in (True, False):
            tool, bare, files, lines = side_by_side(args.scripts * scale, args.jobs, args.repeat, with_plain)
            corpus = f"{files} files" if with_plain else "training scripts only"
            print(
                f"(a-c, e) {scale}x, {corpus} ({args.scripts * scale} training scripts), {lines} lines: "
                f"convert --check {tool:.2f} s ({lines / tool:,.0f} lines/s), LibCST round trip {bare:.2f} s, "
                f"ratio {tool / bare:.2f}"
            )
    cold_starts(args.repeat + 2)
    stages()


if __name__ == "__main__":
    main()
