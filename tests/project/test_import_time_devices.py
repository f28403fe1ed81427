"""A device taken at import in a run that the XLA launcher starts (flair's shape): a package's
``__init__`` sets ``device = torch.device("cuda:0" if ... else "cpu")`` at module level, another
module of it starts the workers with ``mp.spawn``, and the script imports the package, then calls
that launcher.  Ported to ``device = torch_xla.device()``, the import starts the XLA runtime in the
launching process, and the port's own ``torch_xla.launch`` then refuses to start ("Runtime is
already initialized", torch_xla 2.9).  XLA101 writes ``torch.device("xla")`` there (no runtime
started; a tensor moved to it lands on the process's XLA device), in a project run and where the
launch is in the same file; where nothing of the run launches, the target's device call stays.

Executed on torch_xla 2.9 (CPU): the port runs its workers; the negative control (the device call
the port wrote before) fails with the runtime error."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection, convert_source
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from tests.support.executed import converted_project, run_script
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

PACKAGE = """\
import torch

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
"""
DIST = """\
import torch.multiprocessing as mp


def launch(fn):
    mp.spawn(_entry, args=(fn,), nprocs=1)


def _entry(index, fn):
    fn()
"""
TRAIN = """\
import torch

import mylib
import mylib.dist


def work():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).to(mylib.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.ones(3, 4).to(mylib.device)).pow(2).mean()
    loss.backward()
    opt.step()
    print(f"trained on {model.weight.device} loss {loss.item():.4f}")


if __name__ == "__main__":
    mylib.dist.launch(work)
"""
FILES = {"mylib/__init__.py": PACKAGE, "mylib/dist.py": DIST, "train.py": TRAIN}
# No launcher in the run: the device at import is the target's device call, as before.
UNLAUNCHED = {"mylib/__init__.py": PACKAGE, "train.py": TRAIN.replace("mylib.dist.launch(work)", "work()")}
PLAIN = 'device = torch.device("xla")'
CALLS = {"2.9": "device = torch_xla.device()", "sagemaker": "device = xm.xla_device()"}


def _converted(folder: Path, files: dict[str, str], target: str) -> tuple[str, list[tuple[str, int, str]]]:
    """The package ``__init__`` as a convert run of the whole project writes it, and its XLA101 findings."""
    write_project(folder, "proj", files)
    paths = sorted(folder.rglob("*.py"))
    project = Project(folder, summarise_with(target, RuleSelection(), None), in_run=paths)
    init = folder / "mylib" / "__init__.py"
    conversion = convert_source(init.read_text(), target=target, imports=project.imports_of(init))
    found = [(f.rule, f.line, f.message) for f in conversion.findings if f.rule == "XLA101"]
    return str(conversion.output), found


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_at_import_of_a_launched_run_starts_no_runtime(tmp_path: Path, target: str) -> None:
    text, found = _converted(tmp_path, FILES, target)
    assert PLAIN in text, text
    assert CALLS[target] not in text
    assert len(found) == 1, found
    rule, line, message = found[0]
    assert line == 4  # (in the output: the torch_xla import comes first)
    assert '-> torch.device("xla") (it runs at import, and `' in message
    assert "mylib/dist.py` starts the XLA launcher after it" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_at_import_of_a_run_that_launches_nothing_stays_the_device_call(tmp_path: Path, target: str) -> None:
    text, found = _converted(tmp_path, UNLAUNCHED, target)
    assert CALLS[target] in text, text
    assert PLAIN not in text
    assert len(found) == 1 and "runs at import" not in found[0][2], found


@pytest.mark.executed
def test_the_ported_launch_runs_its_workers_on_xla(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "ported", "flairlike", FILES)
    assert PLAIN in (folder / "mylib" / "__init__.py").read_text()
    assert "torch_xla.launch(_entry" in (folder / "mylib" / "dist.py").read_text()
    got = run_script(folder, "train.py", runner=False)
    assert "trained on xla:0 loss" in got.output, got.output + got.stderr


@pytest.mark.executed
def test_the_device_call_at_import_stops_the_launch(tmp_path: Path) -> None:
    """Negative control: the port as it was (the device taken at import) fails to launch."""
    folder = converted_project(tmp_path / "unported", "flairlike", FILES)
    init = folder / "mylib" / "__init__.py"
    init.write_text(init.read_text().replace(PLAIN, CALLS["2.9"]).replace("  # noqa: F401", "  # noqa"))
    got = run_script(folder, "train.py", runner=False, check=False)
    assert got.returncode != 0
    assert "trained on" not in got.output
    assert "Runtime is already initialized" in got.stderr, got.stderr[-3000:]
