"""Folders a repository puts on ``sys.path`` by hand (``import _init_paths``, ``sys.path.insert``
in the script) are searched for its imports, so the modules there are followed as any other
of the project's: a step they hold gets its barrier in the loop of the script that drives it
(a whole run), and a single-file run names them (XLA003)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from codemods.project.sys_path import added_folders

TARGETS = ["2.9", "sagemaker"]

LEARNER = """\
import torch


class Learner:
    def __init__(self):
        self.net = torch.nn.Linear(4, 1).cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def learn(self, batch):
        loss = self.net(batch.cuda()).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
"""

INIT_PATHS = """\
import os.path as osp
import sys


def add_path(path):
    if path not in sys.path:
        sys.path.insert(0, path)


this_dir = osp.dirname(__file__)
lib_path = osp.join(this_dir, 'lib')
add_path(lib_path)
"""

# The script: its path set-up, then the loop that drives the learner's step (line 9 + set-up lines).
SCRIPT = """\
{setup}
import torch

from learners.learner import Learner


def main():
    learner = Learner()
    for _ in range(10):
        learner.learn(torch.randn(2, 4))
"""


def _repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setup: str, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for name, text in {"pyproject.toml": "[project]\nname = 'repo'\n", **files}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "tools").mkdir(exist_ok=True)
    (repo / "tools" / "train.py").write_text(SCRIPT.format(setup=setup))
    monkeypatch.chdir(repo)
    return repo


def _init_paths_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    files = {
        "tools/_init_paths.py": INIT_PATHS,
        "tools/lib/learners/__init__.py": "",
        "tools/lib/learners/learner.py": LEARNER,
    }
    return _repo(tmp_path, monkeypatch, "import _init_paths", files)


def _direct_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup = (
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'code'))"
    )
    files = {"code/learners/__init__.py": "", "code/learners/learner.py": LEARNER}
    return _repo(tmp_path, monkeypatch, setup, files)


def _run(repo: Path, names: list[str], target: str) -> dict[str, list[Finding]]:
    from codemods.runner import Job, run

    job = Job("check", target, RuleSelection())
    return {Path(r.path).name: r.findings for r in run([(str(repo / name), job) for name in names])}


def _alone(repo: Path, target: str) -> list[Finding]:
    script = repo / "tools" / "train.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[script])
    return convert_source(script.read_bytes(), target=target, imports=project.imports_of(script)).findings


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("make", "learner", "loop"),
    [
        (_init_paths_repo, "tools/lib/learners/learner.py", 9),
        (_direct_repo, "code/learners/learner.py", 12),
    ],
)
def test_a_step_in_a_module_on_a_hand_made_import_path_is_driven_by_the_scripts_loop(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, make, learner: str, loop: int
) -> None:
    repo = make(tmp_path, monkeypatch)
    findings = _run(repo, ["tools/train.py", learner], target)
    assert not [f for f in findings["learner.py"] if f.rule == "XLA306"], findings["learner.py"]
    assert [f.line for f in findings["train.py"] if f.rule == "XLA301" and f.fixed] == [loop]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("make", "learner"),
    [(_init_paths_repo, "tools/lib/learners/learner.py"), (_direct_repo, "code/learners/learner.py")],
)
def test_a_single_file_run_names_the_module_on_a_hand_made_import_path(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, make, learner: str
) -> None:
    repo = make(tmp_path, monkeypatch)
    messages = [f.message for f in _alone(repo, target) if f.rule == "XLA003"]
    assert any(f"uses of {learner}, which this run does not convert" in m for m in messages), messages


@pytest.mark.parametrize("target", TARGETS)
def test_a_folder_the_tool_cannot_compute_leaves_the_import_unresolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    setup = "import os\nimport sys\n\nsys.path.insert(0, os.environ['LEARNERS'])"
    files = {"code/learners/__init__.py": "", "code/learners/learner.py": LEARNER}
    repo = _repo(tmp_path, monkeypatch, setup, files)
    assert not [f for f in _alone(repo, target) if f.rule == "XLA003"]
    project = Project(repo, summarise_with(target, RuleSelection(), None))
    assert project.imports_of(repo / "tools" / "train.py").module_file("learners.learner", "Learner") is None


def test_the_folders_followed(tmp_path: Path) -> None:
    script = tmp_path / "repo" / "tools" / "train.py"
    text = """\
import os
import sys
from os.path import abspath, dirname, join
from pathlib import Path

import pathlib

sys.path.append('..')
sys.path.append(os.path.abspath(os.path.join(os.path.dirname(__file__), '..', 'third')))
sys.path.insert(0, join(dirname(abspath(__file__)), 'lib'))
ROOT = pathlib.Path(__file__).parent.parent
if str(ROOT / 'src') not in sys.path:
    sys.path.append(str(ROOT / 'src'))
try:
    sys.path.insert(0, os.path.realpath(Path(__file__).parents[0] / 'vendor'))
except OSError:
    pass
sys.path.insert(0, os.getcwd())
sys.path.append(os.path.join(Path.cwd().parent, 'up'))
sys.path.append(sys.argv[1])
sys.path.append(os.environ['HOME'])
"""
    assert added_folders(script, text.encode()) == (
        tmp_path / "repo",
        tmp_path / "repo" / "third",
        tmp_path / "repo" / "tools" / "lib",
        tmp_path / "repo" / "src",
        tmp_path / "repo" / "tools" / "vendor",
        Path("."),  # the folder the script runs from: relative, the resolver finds which
        Path("../up"),
    )
    assert added_folders(script, b"import sys\nsys.path.append(\n") == ()  # not Python: nothing, no crash
    assert added_folders(script, b"import os\nos.makedirs('lib')\n") == ()


RUNNER = """\
import sys
{setup}

from learners.agent import Agent

if __name__ == "__main__":
    Agent().run()
"""

AGENT = """\
import torch

from learners.learner import Learner


class Agent(Learner):
    def run(self):
        for _ in range(10):
            self.learn(torch.randn(2, 4))
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "setup",
    [
        "from os.path import abspath, dirname\nsys.path.append(dirname(dirname(abspath(__file__))))",
        "import os\nsys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))",
        "import os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))",
    ],
)
@pytest.mark.parametrize("marked", [False, True])
def test_a_script_without_a_marked_root_that_puts_the_folder_above_on_the_path(
    tmp_path: Path, target: str, setup: str, marked: bool
) -> None:
    """A repository without .git or pyproject.toml: a single-file run of ``results/run.py`` takes
    its folder for the root, but the script puts the folder above on sys.path itself: its modules
    (and theirs, imported through that folder) are the project's.  Where a marker makes
    ``results`` a root of its own, the folder above is another project: not followed."""
    repo = tmp_path / "repo"
    files = {
        "results/run.py": RUNNER.format(setup=setup),
        "learners/__init__.py": "",
        "learners/agent.py": AGENT,
        "learners/learner.py": LEARNER,
    }
    if marked:
        files["results/pyproject.toml"] = "[project]\nname = 'results'\n"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    messages = [f.message for f in _run(repo, ["results/run.py"], target)["run.py"] if f.rule == "XLA003"]
    if marked:
        assert not messages
    else:
        assert len(messages) == 1 and "learners/learner.py" in messages[0], messages


# ``tools/_init_paths.py`` of HRNet-style repositories: ``lib`` beside ``tools`` goes on sys.path.
SIBLING_INIT_PATHS = """\
import os.path as osp
import sys

lib_path = osp.join(osp.dirname(__file__), "..", "lib")
if lib_path not in sys.path:
    sys.path.insert(0, lib_path)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("marked", [False, True])
def test_a_script_without_a_marked_root_whose_init_paths_puts_a_folder_beside_it_on_the_path(
    tmp_path: Path, target: str, marked: bool
) -> None:
    """A single-file run of ``tools/train.py`` in a repository without .git or pyproject.toml takes
    ``tools`` for the root; its ``import _init_paths`` puts ``../lib`` on sys.path, so the modules
    there are the script's project: the run names the one that holds the training loop (XLA003).
    Where a marker makes ``tools`` a root of its own, ``lib`` is another project: not followed."""
    repo = tmp_path / "repo"
    files = {
        "tools/train.py": SCRIPT.format(setup="import _init_paths"),
        "tools/_init_paths.py": SIBLING_INIT_PATHS,
        "lib/learners/__init__.py": "",
        "lib/learners/learner.py": LEARNER,
    }
    if marked:
        files["tools/pyproject.toml"] = "[project]\nname = 'tools'\n"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    messages = [f.message for f in _run(repo, ["tools/train.py"], target)["train.py"] if f.rule == "XLA003"]
    if marked:
        assert not messages
    else:
        assert messages and all("lib/learners/learner.py" in m for m in messages), messages


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "setup",
    [
        "import os\nimport sys\n\nROOT = os.getcwd()\nif str(ROOT) not in sys.path:\n    sys.path.append(str(ROOT))",
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path.cwd()))",
        "import sys\nfrom os import getcwd\nfrom os.path import abspath\n\nsys.path.append(abspath(getcwd()))",
    ],
)
@pytest.mark.parametrize("layout", ["root", "marked tools", "installed"])
def test_a_script_that_puts_the_folder_it_runs_from_on_the_path(
    tmp_path: Path, target: str, setup: str, layout: str
) -> None:
    """YOLOv6's ``tools/train.py`` (a repository without .git or pyproject.toml, run from its root)
    puts ``os.getcwd()`` on sys.path and imports ``yolov6.core.engine`` from the root: a single-file
    run takes ``tools`` for the root, yet the package above is the script's project, and the run
    names the module that holds the training step (XLA003).  Where a marker makes ``tools`` a root
    of its own, or no folder above holds the package (it is installed), nothing is followed."""
    repo = tmp_path / "repo"
    files = {"tools/train.py": SCRIPT.format(setup=setup)}
    if layout != "installed":
        files.update({"learners/__init__.py": "", "learners/learner.py": LEARNER})
    if layout == "marked tools":
        files["tools/pyproject.toml"] = "[project]\nname = 'tools'\n"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    messages = [f.message for f in _run(repo, ["tools/train.py"], target)["train.py"] if f.rule == "XLA003"]
    if layout == "root":
        assert messages and all("learners/learner.py" in m for m in messages), messages
    else:
        assert not messages
