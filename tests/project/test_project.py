"""Whole repositories: a file's imports resolve to the project's own modules, whose
summaries decide which loops train and which findings name another file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine import speed
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from codemods.project.roots import find_root
from tests.support.paths import FIXTURES

REPO = FIXTURES / "vision_repo"
FILES = sorted(p.relative_to(REPO) for p in REPO.rglob("*.py"))


def convert(repo: Path, name: str, in_run: list[Path], target: str = "2.9"):  # type: ignore[no-untyped-def]
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / p for p in in_run])
    return convert_source((repo / name).read_bytes(), target=target, imports=project.imports_of(repo / name))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the repository, as the current folder (findings name files relative to it)."""
    copy = tmp_path / "repo"
    shutil.copytree(REPO, copy)
    (copy / "pyproject.toml").write_text("[project]\nname = 'vision'\n")
    monkeypatch.chdir(copy)
    return copy


def cross_file(conversion) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.message for f in conversion.findings if f.rule == "XLA003"]


def test_a_folder_run_asks_to_convert_nothing_it_converts(repo: Path) -> None:
    for name in FILES:
        assert cross_file(convert(repo, str(name), FILES)) == [], name


def test_a_single_file_run_names_the_project_files_that_need_converting(repo: Path) -> None:
    messages = cross_file(convert(repo, "main.py", [Path("main.py")]))
    assert any("`get_device` in utils/misc.py" in m for m in messages), messages
    assert any("`train_one_epoch` in engine.py" in m for m in messages), messages
    assert any("`NativeScaler` sets up CUDA mixed precision in utils/misc.py" in m for m in messages), messages
    # Functions that take the optimizer but run no training step are not the user's concern.
    assert not any("save_checkpoint" in m or "adjust_learning_rate" in m for m in messages), messages
    assert not any("datasets" in m for m in messages), messages


def test_converted_modules_are_not_pending(repo: Path) -> None:
    for name in FILES:
        conversion = convert(repo, str(name), FILES)
        (repo / name).write_bytes(conversion.output)
    assert cross_file(convert(repo, "main.py", [Path("main.py")])) == []


def test_single_file_and_folder_runs_agree_on_the_code(repo: Path) -> None:
    for name in FILES:
        alone = convert(repo, str(name), [name])
        together = convert(repo, str(name), FILES)
        assert alone.output == together.output, name


def test_the_engine_loop_trains_through_the_scaler_wrapper_and_amp_comes_from_utils(repo: Path) -> None:
    engine = convert(repo, "engine.py", FILES).output.decode()
    assert engine.count("torch_xla.sync()") == 2  # the training loop and the evaluation loop
    main = convert(repo, "main.py", FILES).output.decode()
    assert "syncfree.AdamW(model.parameters()" in main  # AMP is set up by utils.misc's scaler


def test_imports_resolve_like_python(repo: Path) -> None:
    project = Project(repo, summarise_with("2.9", RuleSelection(), None))
    imports = project.imports_of(repo / "main.py")
    # a package re-exporting a name from a submodule (relative import)
    found = imports.lookup("utils", "NativeScalerWithGradNormCount")
    assert found is not None and found.summary is not None
    assert found.summary.path.endswith("utils/misc.py") and found.name == "NativeScalerWithGradNormCount"
    # a submodule named in a from-import, and a module of the project that shadows a package
    assert imports.lookup("utils", "lr.adjust_learning_rate").summary.path.endswith("utils/lr.py")  # type: ignore[union-attr]
    assert imports.lookup("datasets", "build_dataset").summary.path.endswith("datasets.py")  # type: ignore[union-attr]
    # installed packages and the standard library are outside the project
    assert imports.lookup("torch.nn", "Linear") is None
    assert imports.lookup("argparse", "ArgumentParser") is None
    assert imports.lookup("pytest", "fixture") is None


def test_the_folder_listings_kept_for_the_run_find_the_modules_the_files_do(repo: Path) -> None:
    """A module is looked for in a folder only when its listing has the first name (in any case);
    the answers are those of looking for its files, with the shortcuts and without."""
    (repo / "Loud.py").write_text("")
    asked = [("utils",), ("utils", "misc"), ("engine",), ("datasets",), ("loud",), ("Loud",), ("argparse",)]
    asked += [("utils", "nothing"), ("ünï",), ("main",)]
    bases = [repo, repo / "utils", repo / "missing"]
    found = {
        (b, p): Project(repo, summarise_with("2.9", RuleSelection(), None)).module_file_at(b, p)
        for b in bases
        for p in asked
    }
    with speed.full_traversal():
        project = Project(repo, summarise_with("2.9", RuleSelection(), None))
        assert {(b, p): project.module_file_at(b, p) for b in bases for p in asked} == found
    assert found[(repo, ("utils", "misc"))] == repo / "utils" / "misc.py"
    assert found[(repo, ("Loud",))] == repo / "Loud.py" and found[(repo, ("argparse",))] is None
    assert found[(repo / "missing", ("utils",))] is None


def test_the_root_is_the_nearest_folder_with_git_or_pyproject(repo: Path) -> None:
    assert find_root(repo / "utils" / "misc.py") == repo
    (repo / "pyproject.toml").unlink()
    (repo / "utils" / "pyproject.toml").write_text("")
    assert find_root(repo / "utils" / "misc.py") == repo / "utils"


def test_without_a_marked_root_the_folder_a_run_shares_is_the_root(tmp_path: Path) -> None:
    (tmp_path / "exp").mkdir()
    assert find_root(tmp_path / "exp" / "trainer.py") == tmp_path / "exp"
    assert find_root(tmp_path / "exp" / "trainer.py", top=tmp_path) == tmp_path
    assert find_root(tmp_path / "exp" / "trainer.py", top=tmp_path / "other") == tmp_path / "exp"


SPLIT = FIXTURES / "gpt_trainer_split"


def test_an_optimizer_built_before_another_files_trainer_moves_the_model_is_fixed(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """main.py builds the optimizer through model.py's builder; trainer.py moves the model
    to the device main.py hands it: the model is moved before the optimizer is built."""
    copy = tmp_path / "split"
    shutil.copytree(SPLIT, copy)
    monkeypatch.chdir(copy)
    files = [Path("main.py"), Path("model.py"), Path("trainer.py")]
    conversion = convert(copy, "main.py", files)
    assert b"create_optimizer(model.to(torch_xla.device()), lr=3e-3" in conversion.output
    (finding,) = [f for f in conversion.findings if f.rule == "XLA203"]
    assert finding.fixed and finding.line == 20
    assert "`Trainer` (trainer.py) moves the model later" in finding.message


def test_an_optimizer_before_a_move_to_a_device_that_may_be_the_cpu_names_both_places(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch
) -> None:
    copy = tmp_path / "split"
    shutil.copytree(SPLIT, copy)
    monkeypatch.chdir(copy)
    main = copy / "main.py"
    main.write_text(
        main.read_text().replace('device = "cuda" if torch.cuda.is_available() else "cpu"', "device = pick_device()")
    )
    conversion = convert(copy, "main.py", [Path("main.py"), Path("model.py"), Path("trainer.py")])
    assert b"create_optimizer(model, lr=3e-3" in conversion.output
    (finding,) = [f for f in conversion.findings if f.rule == "XLA203"]
    assert not finding.fixed and finding.severity == "error" and finding.line == 19  # the input, unchanged
    assert (
        "`Trainer` (trainer.py: `model.to(device)`) moves the model later to a device that may be the CPU"
        in finding.message
    )


def test_an_alias_of_torch_device_imported_from_another_module_is_torch_device(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """fairseq2's layout: one module makes ``Device`` an alias of torch.device, the others
    import it and build CUDA devices with it; single-file and folder runs port them alike."""
    repo = tmp_path / "aliases"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "typing.py").write_text(
        "from torch import device\nfrom typing_extensions import TypeAlias\n\nDevice: TypeAlias = device\n"
    )
    (repo / "pkg" / "devices.py").write_text(
        "import torch\n\nfrom pkg.typing import Device as Dev\n\n\n"
        'def local_device(index: int) -> Dev:\n    return Dev("cuda", index=index)\n'
    )
    monkeypatch.chdir(repo)
    files = [Path("pkg/typing.py"), Path("pkg/devices.py")]
    for in_run in (files, [Path("pkg/devices.py")]):
        conversion = convert(repo, "pkg/devices.py", in_run)
        assert b"    return torch_xla.device()\n" in conversion.output
        (finding,) = [f for f in conversion.findings if f.rule == "XLA101"]
        assert finding.fixed and 'Dev("cuda", index=index) -> torch_xla.device()' in finding.message
    assert convert(repo, "pkg/typing.py", files).output == (repo / "pkg" / "typing.py").read_bytes()


def _alias_package(base: Path, package: str = "pkg") -> None:
    """``package``/typing.py makes ``Device`` an alias of torch.device; devices.py imports it
    by the package's absolute name and builds a CUDA device with it."""
    (base / package).mkdir(parents=True)
    (base / package / "__init__.py").write_text("")
    (base / package / "typing.py").write_text(
        "from torch import device\nfrom typing_extensions import TypeAlias\n\nDevice: TypeAlias = device\n"
    )
    (base / package / "devices.py").write_text(
        f"import torch\n\nfrom {package}.typing import Device as Dev\n\n\n"
        'def local_device(index: int) -> Dev:\n    return Dev("cuda", index=index)\n'
    )


def test_a_src_layout_resolves_the_package_under_src(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """fairseq2's layout: ``src/pkg/devices.py`` imports ``pkg.typing``, which is
    ``src/pkg/typing.py`` (neither next to the file nor under the root)."""
    repo = tmp_path / "srclayout"
    (repo / "src").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    _alias_package(repo / "src")
    monkeypatch.chdir(repo)
    files = [Path("src/pkg/typing.py"), Path("src/pkg/devices.py")]
    project = Project(repo, summarise_with("2.9", RuleSelection(), None))
    assert project.src_layout == repo.resolve() / "src"
    found = project.imports_of(repo / "src/pkg/devices.py").lookup("pkg.typing", "Device")
    assert found is not None and found.summary is not None and found.summary.path == "src/pkg/typing.py"
    for in_run in (files, [Path("src/pkg/devices.py")]):
        conversion = convert(repo, "src/pkg/devices.py", in_run)
        assert b"    return torch_xla.device()\n" in conversion.output
        (finding,) = [f for f in conversion.findings if f.rule == "XLA101"]
        assert finding.fixed and 'Dev("cuda", index=index) -> torch_xla.device()' in finding.message


def test_a_src_folder_that_is_a_package_is_no_src_layout(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``src/__init__.py``: src is a package of the root (``from src.pkg import ...``), and
    ``pkg`` alone is not importable, so what ``src/pkg/typing.py`` defines is not learnt."""
    repo = tmp_path / "srcpackage"
    (repo / "src").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (repo / "src" / "__init__.py").write_text("")
    _alias_package(repo / "src")
    monkeypatch.chdir(repo)
    project = Project(repo, summarise_with("2.9", RuleSelection(), None))
    assert project.src_layout is None
    imports = project.imports_of(repo / "src/pkg/devices.py")
    assert imports.lookup("pkg.typing", "Device") is None
    assert imports.lookup("src.pkg.typing", "Device").summary.path == "src/pkg/typing.py"  # type: ignore[union-attr]
    conversion = convert(repo, "src/pkg/devices.py", [Path("src/pkg/devices.py")])
    assert b'return Dev("cuda", index=index)' in conversion.output
    assert not [f for f in conversion.findings if f.rule == "XLA101" and f.fixed]


RL = FIXTURES / "rl_agent_split"


def _run(folder: Path, names: list[str], target: str = "2.9") -> dict[str, list[Finding]]:
    """The files converted as one run of the command line (check mode): findings by file."""
    from codemods.runner import Job, run

    job = Job("check", target, RuleSelection())
    return {Path(r.path).name: r.findings for r in run([(str(folder / name), job) for name in names])}


@pytest.fixture
def rl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "rl"
    shutil.copytree(RL, copy)
    (copy / "pyproject.toml").write_text("[project]\nname = 'rl'\n")
    monkeypatch.chdir(copy)
    return copy


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_step_that_another_file_of_the_run_drives_is_no_error(rl: Path, target: str) -> None:
    """agent.py's Agent.update steps; main.py's loop (in another function) calls it: that
    loop gets the barrier, and agent.py has nothing to answer for."""
    findings = _run(rl, ["agent.py", "main.py"], target)
    assert not [f for f in findings["agent.py"] if f.rule == "XLA306"], findings["agent.py"]
    (barrier,) = [f for f in findings["main.py"] if f.rule == "XLA301"]
    assert barrier.fixed and barrier.line == 19  # the loop of run()


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_step_converted_without_its_driver_is_an_error_at_the_step(rl: Path, target: str) -> None:
    findings = _run(rl, ["agent.py"], target)
    (error,) = [f for f in findings["agent.py"] if f.rule == "XLA306"]
    assert error.line == 31 and not error.fixed
    assert "`self.optimizer.step()` in `Agent.update` has no step barrier: no loop of this file calls" in error.message
    assert ("torch_xla.sync()" if target == "2.9" else "xm.mark_step()") in error.message
    assert "convert the project folder with the script whose loop calls it" in error.message  # (main.py is not)


def test_a_step_that_the_importing_files_of_the_run_never_call_stays_an_error(rl: Path) -> None:
    """main.py imports agent.py but never calls update(): the finding agent.py held back
    stands once the run has seen main.py."""
    main = rl / "main.py"
    main.write_text(main.read_text().replace("loss = agent.update(states, actions, returns)", "loss = states.sum()"))
    findings = _run(rl, ["agent.py", "main.py"])
    (error,) = [f for f in findings["agent.py"] if f.rule == "XLA306"]
    assert error.line == 31
    assert (
        "no loop of this file calls `Agent.update`, nor any loop that the tool could follow in the files"
        in error.message
    )
    # main.py is in this run: the advice is the barrier after the call, not to convert the project
    assert error.message.endswith("call torch_xla.sync() after each call of `update` in the loop that calls it")
    assert "convert the project folder" not in error.message


def test_a_loop_that_calls_a_step_ending_with_its_own_barrier_gets_no_second_one(rl: Path) -> None:
    """agent.py already ported by hand, its update ending with the barrier: main.py's loop
    (converted now) gets none of its own: one barrier per step."""
    agent = rl / "agent.py"
    agent.write_text(
        agent.read_text()
        .replace(
            "import torch.nn as nn\n",
            "import torch.nn as nn\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n",
        )
        .replace("self.optimizer.step()", "xm.optimizer_step(self.optimizer)\n        torch_xla.sync()")
    )
    findings = _run(rl, ["agent.py", "main.py"])
    assert not [f for f in findings["main.py"] if f.rule in ("XLA301", "XLA306")], findings["main.py"]
    assert [f for f in findings["main.py"] if f.rule == "XLA701"]  # still a training loop: its log line is deferred
    assert not [f for f in findings["agent.py"] if f.rule == "XLA306"], findings["agent.py"]


_LEARNER = """import torch


class {name}:
    def __init__(self):
        self.net = torch.nn.Linear(4, 1).cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def learn(self, batch):
        loss = self.net(batch.cuda()).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
"""


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        (repo / name).write_text(text)
    return repo


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_name_that_branches_build_from_different_classes_drives_each_ones_step(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``learner = Fast()`` under one condition, ``learner = Slow()`` under the other:
    the loop's ``learner.learn(...)`` drives both classes' steps."""
    main = (
        "import sys\n\nimport torch\n\nimport fast\nimport slow\n\n\n"
        "def main():\n"
        "    if sys.argv[1] == 'fast':\n"
        "        learner = fast.Fast()\n"
        "    else:\n"
        "        learner = slow.Slow()\n"
        "    for _ in range(10):\n"
        "        learner.learn(torch.randn(2, 4))\n"
    )
    repo = _project(
        tmp_path, {"fast.py": _LEARNER.format(name="Fast"), "slow.py": _LEARNER.format(name="Slow"), "main.py": main}
    )
    monkeypatch.chdir(repo)
    findings = _run(repo, ["fast.py", "slow.py", "main.py"], target)
    for name in ("fast.py", "slow.py"):
        assert not [f for f in findings[name] if f.rule == "XLA306"], findings[name]
    assert [f.line for f in findings["main.py"] if f.rule == "XLA301"] == [14]
    alone = _run(repo, ["fast.py", "slow.py"], target)  # the driver is not in the run: both stand
    assert [f.line for f in alone["fast.py"] if f.rule == "XLA306"] == [13]
    assert [f.line for f in alone["slow.py"] if f.rule == "XLA306"] == [13]


_FACTORY = """import torch


def make_step(net):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def step(batch):
        loss = net(batch).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_function_that_a_factory_returns_is_driven_by_the_loop_that_calls_it(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``step = steps.make_step(...)``, then the loop calls ``step(batch)``: the inner
    function's step is driven there, and that loop gets the barrier."""
    main = (
        "import torch\n\nimport steps\n\n\n"
        "def main():\n"
        "    net = torch.nn.Linear(4, 1).cuda()\n"
        "    step = steps.make_step(net)\n"
        "    for _ in range(10):\n"
        "        step(torch.randn(2, 4).cuda())\n"
    )
    repo = _project(tmp_path, {"steps.py": _FACTORY, "main.py": main})
    monkeypatch.chdir(repo)
    findings = _run(repo, ["steps.py", "main.py"], target)
    assert not [f for f in findings["steps.py"] if f.rule == "XLA306"], findings["steps.py"]
    assert [f.line for f in findings["main.py"] if f.rule == "XLA301"] == [9]
    alone = _run(repo, ["steps.py"], target)
    assert [f.line for f in alone["steps.py"] if f.rule == "XLA306"] == [11]


_MULTI_OPTIMIZER = """from functools import reduce

import torch


class MultiOptimizer:
    def __init__(self, optimizers):
        self.optimizers = optimizers
        self.keys = list(optimizers.keys())
        self.param_groups = reduce(lambda x, y: x + y, [o.param_groups for o in optimizers.values()])

    def step(self, key=None, scaler=None):
        keys = [key] if key is not None else self.keys
        _ = [self._step(k, scaler) for k in keys]

    def _step(self, key, scaler=None):
        if scaler is not None:
            scaler.step(self.optimizers[key])
            scaler.update()
        else:
            self.optimizers[key].step()

    def zero_grad(self):
        for o in self.optimizers.values():
            o.zero_grad()


def build_optimizer(params, lr):
    return MultiOptimizer({k: torch.optim.SGD(p, lr=lr) for k, p in params.items()})
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_instance_that_a_builder_function_returns_is_driven_by_the_loop_that_steps_it(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``optimizer = optim_util.build_optimizer(...)`` returns a MultiOptimizer: the loop's
    ``optimizer.step("enc")`` drives ``MultiOptimizer.step``, and that loop gets the barrier.
    Converted without the loop's file, the step stays an error."""
    main = (
        "import torch\n\nimport optim_util\n\n\n"
        "def main():\n"
        "    net = torch.nn.Linear(4, 1).cuda()\n"
        "    optimizer = optim_util.build_optimizer({'enc': net.parameters()}, lr=0.1)\n"
        "    for _ in range(10):\n"
        "        net(torch.randn(2, 4).cuda()).sum().backward()\n"
        "        optimizer.step('enc')\n"
    )
    repo = _project(tmp_path, {"optim_util.py": _MULTI_OPTIMIZER, "main.py": main})
    monkeypatch.chdir(repo)
    findings = _run(repo, ["optim_util.py", "main.py"], target)
    assert not [f for f in findings["optim_util.py"] if f.rule == "XLA306"], findings["optim_util.py"]
    alone = _run(repo, ["optim_util.py"], target)
    assert [f.line for f in alone["optim_util.py"] if f.rule == "XLA306"] == [14]


_SCALER = """import torch


class Scaled:
    def __init__(self):
        self.scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer):
        self.scaler.scale(loss).backward()
        self.scaler.step(optimizer)
        self.scaler.update()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_instance_handed_to_a_function_whose_loop_calls_it_is_driven(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """main.py builds ``scaled = Scaled()`` and hands it to engine.py's ``epoch``, whose
    training loop (handed the optimizer) calls ``scaled(loss, optimizer)``: that loop gets
    the barrier, and Scaled.__call__'s step is driven by it."""
    engine = (
        "import torch\n\n\n"
        "def epoch(net, optimizer, scaled):\n"
        "    for _ in range(10):\n"
        "        loss = net(torch.randn(2, 4).cuda()).sum()\n"
        "        scaled(loss, optimizer)\n"
    )
    main = (
        "import torch\n\nfrom engine import epoch\nfrom scaling import Scaled\n\n\n"
        "def main():\n"
        "    net = torch.nn.Linear(4, 1).cuda()\n"
        "    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "    scaled = Scaled()\n"
        "    for _ in range(3):\n"
        "        epoch(net, opt, scaled)\n"
    )
    repo = _project(tmp_path, {"scaling.py": _SCALER, "engine.py": engine, "main.py": main})
    monkeypatch.chdir(repo)
    findings = _run(repo, ["scaling.py", "engine.py", "main.py"], target)
    assert not [f for f in findings["scaling.py"] if f.rule == "XLA306"], findings["scaling.py"]
    assert [f.line for f in findings["engine.py"] if f.rule == "XLA301"] == [5]
    alone = _run(repo, ["scaling.py", "engine.py"], target)  # nothing hands engine.py a Scaled
    assert [f.line for f in alone["scaling.py"] if f.rule == "XLA306"] == [10]


def _optim_project(tmp_path: Path, helper: str | None) -> Path:
    """main.py builds its optimizer from optim_utils.py's parameter groups before moving the model."""
    repo = tmp_path / "groups"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'groups'\n")
    if helper is not None:
        (repo / "optim_utils.py").write_text(helper)
    (repo / "main.py").write_text(
        "import torch\n\nfrom optim_utils import param_groups\n\n\n"
        "def main():\n"
        "    model = torch.nn.Linear(8, 2)\n"
        "    optimizer = torch.optim.AdamW(param_groups(model, 0.1), lr=1e-3)\n"
        "    model.cuda()\n"
    )
    return repo


_GROUPS = (
    "import torch\n\n\n"
    "def param_groups(model, weight_decay):\n"
    "    decay = [p for n, p in model.named_parameters() if p.ndim > 1]\n"
    "    rest = [p for n, p in model.named_parameters() if p.ndim <= 1]\n"
    '    return [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]\n'
)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_parameters_collected_by_another_modules_helper_are_taken_after_the_move(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, target: str
) -> None:
    repo = _optim_project(tmp_path, _GROUPS)
    monkeypatch.chdir(repo)
    device = "torch_xla.device()" if target == "2.9" else "xm.xla_device()"
    for in_run in ([Path("main.py"), Path("optim_utils.py")], [Path("main.py")]):
        conversion = convert(repo, "main.py", in_run, target)
        assert f"param_groups(model.to({device}), 0.1)".encode() in conversion.output
        (finding,) = [f for f in conversion.findings if f.rule == "XLA203"]
        assert finding.fixed and "`param_groups` collects the optimizer's parameters" in finding.message


def test_parameters_from_a_module_that_cannot_be_read_are_an_error(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    repo = _optim_project(tmp_path, "import torch\n\ndef param_groups(model, weight_decay:\n")  # does not parse
    monkeypatch.chdir(repo)
    conversion = convert(repo, "main.py", [Path("main.py"), Path("optim_utils.py")])
    (finding,) = [f for f in conversion.findings if f.rule == "XLA213"]
    assert finding.severity == "error" and finding.line == 9
    assert "come from `param_groups` (not read), handed `model`, while `model` is on the CPU" in finding.message


def test_a_method_that_runs_a_training_loop_in_a_module_still_to_convert_is_named(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """PPO's layout: PPO.update() runs its epochs (and the optimizer steps) inside; train.py,
    converted alone, calls it: the loop that needs the barrier is in PPO.py."""
    repo = tmp_path / "ppo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'ppo'\n")
    (repo / "PPO.py").write_text(
        "import torch\n\n\nclass PPO:\n"
        "    def __init__(self):\n"
        "        self.policy = torch.nn.Linear(4, 2).cuda()\n"
        "        self.optimizer = torch.optim.Adam(self.policy.parameters())\n\n"
        "    def update(self, states):\n"
        "        for _ in range(80):\n"
        "            self.policy(states.cuda()).sum().backward()\n"
        "            self.optimizer.step()\n"
    )
    (repo / "train.py").write_text(
        "import torch\n\nfrom PPO import PPO\n\n\ndef train():\n    agent = PPO()\n"
        "    for episode in range(10):\n        agent.update(torch.randn(8, 4))\n"
    )
    monkeypatch.chdir(repo)
    alone = convert(repo, "train.py", [Path("train.py")])
    (finding,) = [f for f in alone.findings if f.rule == "XLA003"]
    # The class's ``.cuda()`` too, where the chain breaks (so not again at the import).
    (device,) = [f for f in alone.findings if f.rule == "XLA112"]
    assert device.line == 9 and "its device, model, batches and optimizer step stay on CUDA terms" in device.message
    assert (
        finding.line == 9
        and "`agent.update` runs a training loop in PPO.py, which still needs converting" in finding.message
    )
    together = convert(repo, "train.py", [Path("train.py"), Path("PPO.py")])
    assert not [f for f in together.findings if f.rule in ("XLA003", "XLA301")]  # PPO.py's own loop gets the barrier


def test_an_instance_handed_to_a_driver_under_another_name_is_followed(rl: Path) -> None:
    """main.py's run(learner, ...) is handed `agent = Agent(...)`: `learner.update()` is
    agent.py's Agent.update, so run()'s loop gets the barrier and agent.py answers for nothing."""
    main = rl / "main.py"
    main.write_text(
        main.read_text()
        .replace("def run(agent, episodes, generator):", "def run(learner, episodes, generator):")
        .replace("loss = agent.update(states, actions, returns)", "loss = learner.update(states, actions, returns)")
    )
    findings = _run(rl, ["agent.py", "main.py"])
    assert [f.line for f in findings["main.py"] if f.rule == "XLA301"] == [19]
    assert not [f for f in findings["agent.py"] if f.rule == "XLA306"]


def _simclr_project(tmp_path: Path, move: str) -> Path:
    """SimCLR's layout: run.py builds the model and its optimizer, then hands both by
    keyword to a trainer class of simclr.py whose ``__init__`` moves ``kwargs['model']``."""
    repo = tmp_path / "simclr"
    (repo / "models").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'simclr'\n")
    (repo / "models" / "__init__.py").write_text("")
    (repo / "models" / "resnet_simclr.py").write_text(
        "import torch.nn as nn\n\n\nclass ResNetSimCLR(nn.Module):\n"
        "    def __init__(self, out_dim):\n"
        "        super().__init__()\n"
        "        self.backbone = nn.Linear(8, out_dim)\n"
    )
    (repo / "simclr.py").write_text(
        "import torch\n\n\nclass SimCLR(object):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        self.args = kwargs['args']\n"
        f"        self.model = kwargs['model']{move}\n"
        "        self.optimizer = kwargs['optimizer']\n\n"
        "    def train(self, loader):\n"
        "        for images in loader:\n"
        "            self.optimizer.zero_grad()\n"
        "            self.model(images.to(self.args.device)).sum().backward()\n"
        "            self.optimizer.step()\n"
    )
    (repo / "run.py").write_text(
        "import torch\nfrom models.resnet_simclr import ResNetSimCLR\nfrom simclr import SimCLR\n\n\n"
        "def main(args):\n"
        "    model = ResNetSimCLR(out_dim=128)\n"
        "    optimizer = torch.optim.Adam(model.parameters(), 3e-4, weight_decay=1e-4)\n"
        "    simclr = SimCLR(model=model, optimizer=optimizer, args=args)\n"
    )
    return repo


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_optimizer_before_a_class_of_another_module_moves_a_keyword_argument_is_an_error(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, target: str
) -> None:
    """SimCLR.__init__ moves ``kwargs['model']`` to ``self.args.device``, which the tool cannot
    follow: the optimizer run.py built before would hold CPU copies; the error is at the
    optimizer, names the move, and in a run of run.py alone says simclr.py is not converted."""
    repo = _simclr_project(tmp_path, ".to(self.args.device)")
    monkeypatch.chdir(repo)
    every = [Path("run.py"), Path("simclr.py"), Path("models/resnet_simclr.py"), Path("models/__init__.py")]
    for in_run, pending in ((every, False), ([Path("run.py")], True)):
        conversion = convert(repo, "run.py", in_run, target)
        assert b"torch.optim.Adam(model.parameters(), 3e-4" in conversion.output
        (finding,) = [f for f in conversion.findings if f.rule == "XLA203"]
        assert not finding.fixed and finding.severity == "error" and finding.line == 8
        assert "`SimCLR` (simclr.py: `kwargs['model'].to(self.args.device)`)" in finding.message
        assert "moves the model later to a device that may be the CPU" in finding.message
        assert ("which this run does not convert" in finding.message) is pending


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_optimizer_before_a_class_of_another_module_moves_a_keyword_argument_to_cuda_is_fixed(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, target: str
) -> None:
    repo = _simclr_project(tmp_path, ".cuda()")
    monkeypatch.chdir(repo)
    device = "torch_xla.device()" if target == "2.9" else "xm.xla_device()"
    conversion = convert(repo, "run.py", [Path("run.py"), Path("simclr.py")], target)
    assert f"torch.optim.Adam(model.to({device}).parameters(), 3e-4".encode() in conversion.output
    (finding,) = [f for f in conversion.findings if f.rule == "XLA203"]
    assert finding.fixed and "`SimCLR` (simclr.py) moves the model later" in finding.message


def test_an_optimizer_built_after_a_class_of_another_module_moved_the_model_is_left_alone(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch
) -> None:
    repo = _simclr_project(tmp_path, ".cuda()")
    (repo / "run.py").write_text(
        "import torch\nfrom models.resnet_simclr import ResNetSimCLR\nfrom simclr import SimCLR\n\n\n"
        "def main(args):\n"
        "    model = ResNetSimCLR(out_dim=128)\n"
        "    simclr = SimCLR(model=model, optimizer=None, args=args)\n"
        "    optimizer = torch.optim.Adam(simclr.model.parameters(), 3e-4)\n"
    )
    monkeypatch.chdir(repo)
    conversion = convert(repo, "run.py", [Path("run.py"), Path("simclr.py")])
    assert not [f for f in conversion.findings if f.rule in ("XLA203", "XLA213")]
    assert b"torch.optim.Adam(simclr.model.parameters(), 3e-4)" in conversion.output


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_optimizer_before_a_function_of_another_module_moves_and_returns_the_model_is_fixed(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, target: str
) -> None:
    """``model = build(model, device)`` after the optimizer: build moves its argument to the
    device the caller hands it, which is the XLA device once ported."""
    repo = tmp_path / "returned"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'returned'\n")
    (repo / "util.py").write_text("import torch\n\n\ndef build(model, device):\n    return model.to(device)\n")
    (repo / "train.py").write_text(
        "import torch\nfrom util import build\n\n\n"
        "def main():\n"
        "    device = torch.device('cuda')\n"
        "    model = torch.nn.Linear(4, 2)\n"
        "    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
        "    model = build(model, device)\n"
    )
    monkeypatch.chdir(repo)
    device = "torch_xla.device()" if target == "2.9" else "xm.xla_device()"
    for in_run in ([Path("train.py"), Path("util.py")], [Path("train.py")]):
        conversion = convert(repo, "train.py", in_run, target)
        assert f"torch.optim.Adam(model.to({device}).parameters(), lr=1e-3)".encode() in conversion.output
        (finding,) = [f for f in conversion.findings if f.rule == "XLA203"]
        assert finding.fixed and "`build` (util.py) moves the model later" in finding.message


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_optimizer_before_a_method_of_another_modules_class_moves_what_init_was_handed(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, target: str
) -> None:
    """trainer.py's class binds ``self.model = model`` in ``__init__`` and moves
    ``self.model`` in ``fit``: the caller's optimizer, built before, gets the moved
    parameters (the model is moved first), in a folder run and a run of main.py alone."""
    repo = tmp_path / "late"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'late'\n")
    (repo / "trainer.py").write_text(
        "import torch\n\n\nclass Trainer:\n"
        "    def __init__(self, model, optimizer):\n"
        "        self.model = model\n"
        "        self.optimizer = optimizer\n\n"
        "    def fit(self):\n"
        "        self.model.cuda()\n"
    )
    (repo / "main.py").write_text(
        "import torch\nfrom trainer import Trainer\n\n\n"
        "def main():\n"
        "    model = torch.nn.Linear(4, 2)\n"
        "    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
        "    Trainer(model, optimizer).fit()\n"
    )
    monkeypatch.chdir(repo)
    device = "torch_xla.device()" if target == "2.9" else "xm.xla_device()"
    for in_run in ([Path("main.py"), Path("trainer.py")], [Path("main.py")]):
        conversion = convert(repo, "main.py", in_run, target)
        assert f"torch.optim.Adam(model.to({device}).parameters(), lr=1e-3)".encode() in conversion.output
        (finding,) = [f for f in conversion.findings if f.rule == "XLA203"]
        assert finding.fixed and "`Trainer` (trainer.py)" in finding.message


FSDP_SPLIT = FIXTURES / "fsdp_split"


@pytest.fixture
def fsdp_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "fsdp_split"
    shutil.copytree(FSDP_SPLIT, copy)
    (copy / "pyproject.toml").write_text("[project]\nname = 'fsdp_split'\n")
    monkeypatch.chdir(copy)
    return copy


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_step_whose_optimizer_an_fsdp_file_hands_in_stays_plain(fsdp_split: Path, target: str) -> None:
    """train.py wraps the model in FSDP and hands it, with its optimizer, to train_utils.train:
    converted together, train_utils' step stays optimizer.step() (FSDP reduce-scatters the
    gradients; xm.optimizer_step would all-reduce the shards again), with no finding left."""
    findings = _run(fsdp_split, ["train_utils.py", "train.py"], target)
    assert not [f for f in findings["train_utils.py"] if f.rule == "XLA201"], findings["train_utils.py"]
    assert not [f for f in findings["train.py"] if "trains this FSDP model" in f.message]


def test_a_step_whose_optimizer_comes_from_a_caller_that_is_not_known_stays_plain_with_an_error(
    fsdp_split: Path,
) -> None:
    """train.py wraps a model in FSDP but hands train_utils.train another one: which model the
    optimizer steps is not known in train_utils, so its plain step is an error."""
    train = fsdp_split / "train.py"
    train.write_text(
        train.read_text().replace(
            "train(model, loader, optimizer, epoch, local_rank)", "train(plain, loader, optimizer, epoch, local_rank)"
        )
    )
    findings = _run(fsdp_split, ["train_utils.py", "train.py"])
    (error,) = [f for f in findings["train_utils.py"] if f.rule == "XLA201"]
    assert not error.fixed and error.severity == "error"
    assert "`optimizer.step()` stays: `optimizer` comes from the caller" in error.message


def test_a_module_reached_through_a_package_init_is_imported_by_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """main.py imports the package ``a2c.algo``, whose ``__init__`` (not in the run) imports
    ``.a2c_acktr``: main.py reaches A2C_ACKTR.update that way and its loop drives the step, so
    a2c_acktr.py's step is no undriven step ("no other file of this run imports this one" was
    false)."""
    algo = tmp_path / "a2c" / "algo"
    algo.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'a2c'\n")
    (tmp_path / "a2c" / "__init__.py").write_text("")
    (algo / "__init__.py").write_text("from .a2c_acktr import A2C_ACKTR\n")
    (algo / "a2c_acktr.py").write_text(
        "import torch\n\n\nclass A2C_ACKTR:\n    def __init__(self, net):\n        self.net = net\n"
        "        self.optimizer = torch.optim.RMSprop(net.parameters(), 7e-4)\n\n"
        "    def update(self, x):\n        loss = self.net(x).sum()\n        self.optimizer.zero_grad()\n"
        "        loss.backward()\n        self.optimizer.step()\n        return loss\n"
    )
    (tmp_path / "main.py").write_text(
        "import torch\nfrom a2c import algo\n\n\ndef main():\n    net = torch.nn.Linear(4, 2).cuda()\n"
        "    agent = algo.A2C_ACKTR(net)\n    for j in range(10):\n        agent.update(torch.randn(3, 4).cuda())\n"
    )
    monkeypatch.chdir(tmp_path)
    findings = _run(tmp_path, ["a2c/algo/a2c_acktr.py", "main.py"])
    assert not [f for f in findings["a2c_acktr.py"] if f.rule == "XLA306"], findings["a2c_acktr.py"]
    assert [f for f in findings["main.py"] if f.rule == "XLA301" and f.fixed]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_class_of_another_module_moving_a_keyword_argument_to_a_device_the_caller_knows_is_fixed(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, target: str
) -> None:
    """SimCLR.__init__ moves ``kwargs['model']`` to ``self.args.device``, bound from the
    ``args`` keyword: run.py sets ``args.device`` to the (ported) XLA device, so the model
    is moved there before the optimizer is built."""
    repo = _simclr_project(tmp_path, ".to(self.args.device)")
    run = repo / "run.py"
    run.write_text(
        run.read_text().replace(
            "    model = ResNetSimCLR", "    args.device = torch.device('cuda')\n    model = ResNetSimCLR"
        )
    )
    monkeypatch.chdir(repo)
    device = "torch_xla.device()" if target == "2.9" else "xm.xla_device()"
    for in_run in ([Path("run.py"), Path("simclr.py")], [Path("run.py")]):
        conversion = convert(repo, "run.py", in_run, target)
        assert f"torch.optim.Adam(model.to({device}).parameters(), 3e-4".encode() in conversion.output
        (finding,) = [f for f in conversion.findings if f.rule == "XLA203"]
        assert finding.fixed and "`SimCLR` (simclr.py)" in finding.message


_ENGINE = """import torch


def train_one_epoch(model, data_loader, optimizer, device, epoch):
    model.train()
    for data_iter_step, (examples, labels, example_mask, imgs) in enumerate(data_loader):
        imgs = imgs.to(device, non_blocking=True)
        c_loss = model(examples, labels, imgs)
        c_loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def val_one_epoch(model, data_loader, device):
    for examples, labels, example_mask in data_loader:
        print(model(examples, labels))
"""

_ENGINE_MAIN = """import torch
from engine import train_one_epoch, val_one_epoch


def main(args):
    device = torch.device(args.device)
    model = build(args)
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data_loader_train = torch.utils.data.DataLoader(dataset_train, batch_size=8)
    data_loader_val = torch.utils.data.DataLoader(dataset_val, batch_size=8)
    for epoch in range(args.epochs):
        train_one_epoch(model, data_loader_train, optimizer, device, epoch)
        val_one_epoch(model, data_loader_val, device)
"""

_ENGINE_ARGS = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
args = parser.parse_args()
"""


def _engine_split(tmp_path: Path, engine: str = _ENGINE) -> Path:
    return _project(tmp_path, {"engine.py": engine, "main.py": _ENGINE_MAIN + _ENGINE_ARGS + "main(args)\n"})


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_loaders_handed_with_a_model_on_xla_to_another_modules_loops_are_wrapped(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """engine.py's loops feed the loaders' batches (only `imgs` moved) to the model handed in;
    main.py moves the model to the XLA device and hands plain DataLoaders: each is wrapped
    where it is handed, and converting the converted project again changes nothing."""
    repo = _engine_split(tmp_path)
    monkeypatch.chdir(repo)
    files = [Path("engine.py"), Path("main.py")]
    main = convert(repo, "main.py", files, target)
    code = main.output.decode()
    assert "train_one_epoch(model, pl.MpDeviceLoader(data_loader_train, device), optimizer, device, epoch)" in code
    assert "val_one_epoch(model, pl.MpDeviceLoader(data_loader_val, device), device)" in code
    wraps = [f for f in main.findings if f.rule == "XLA302"]
    lines = code.splitlines()
    assert [(lines[f.line - 1].split("(")[0].strip(), f.fixed) for f in wraps] == [
        ("train_one_epoch", True),
        ("val_one_epoch", True),
    ], wraps
    assert "`train_one_epoch` (in engine.py) feeds the batches of its `data_loader` (`examples`, `labels`)" in (
        wraps[0].message
    )
    assert not [f for f in main.findings if f.rule == "XLA116"]
    engine = convert(repo, "engine.py", files, target)
    assert "imgs = imgs.to(device, non_blocking=True)" in engine.output.decode()  # a no-op on an XLA tensor
    (repo / "main.py").write_bytes(main.output)
    (repo / "engine.py").write_bytes(engine.output)
    for name in ("engine.py", "main.py"):
        again = convert(repo, name, files, target)
        assert again.output == (repo / name).read_bytes(), name
        assert not [f for f in again.findings if f.rule in ("XLA116", "XLA302")], name


def test_a_loader_whose_sampler_the_other_modules_function_reads_is_reported_at_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _ENGINE.replace("    model.train()\n", "    model.train()\n    data_loader.sampler.set_epoch(epoch)\n")
    repo = _engine_split(tmp_path, engine)
    monkeypatch.chdir(repo)
    main = convert(repo, "main.py", [Path("engine.py"), Path("main.py")])
    (error,) = [f for f in main.findings if f.rule == "XLA116"]
    assert main.output.decode().splitlines()[error.line - 1].strip().startswith("train_one_epoch(")
    assert not error.fixed
    assert "`data_loader_train` goes to `train_one_epoch` (in engine.py), which feeds" in error.message
    assert "it uses `data_loader` otherwise than by iterating it" in error.message
    assert "pl.MpDeviceLoader(data_loader_train" not in main.output.decode()
    assert "val_one_epoch(model, pl.MpDeviceLoader(data_loader_val, device), device)" in main.output.decode()


def test_loaders_of_a_function_that_moves_every_batch_tensor_stay_plain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _ENGINE.replace(
        "        c_loss = model(examples, labels, imgs)\n",
        "        examples, labels = examples.to(device), labels.to(device)\n        c_loss = model(examples, labels, imgs)\n",
    ).replace(
        "        print(model(examples, labels))\n", "        print(model(examples.to(device), labels.to(device)))\n"
    )
    repo = _engine_split(tmp_path, engine)
    monkeypatch.chdir(repo)
    main = convert(repo, "main.py", [Path("engine.py"), Path("main.py")])
    assert "MpDeviceLoader" not in main.output.decode()
    assert not [f for f in main.findings if f.rule in ("XLA116", "XLA302")], main.findings


def test_a_single_file_run_hands_the_unconverted_engine_nothing_to_wrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """main.py alone: engine.py still needs converting (its loops keep their CUDA terms), so
    each call is reported, not wrapped (the calls inside the epoch loop too)."""
    repo = _engine_split(tmp_path)
    monkeypatch.chdir(repo)
    main = convert(repo, "main.py", [Path("main.py")])
    assert "MpDeviceLoader" not in main.output.decode()
    assert not [f for f in main.findings if f.rule == "XLA302"]
    reported = [f.message for f in main.findings if f.rule == "XLA116"]
    assert [m.split(" in engine.py")[0] for m in reported] == [
        "`model` (on the XLA device) goes to `train_one_epoch`",
        "`model` (on the XLA device) goes to `val_one_epoch`",
    ], reported


_SELF_OPTIMIZING = """from torch import nn, optim


class Generator(nn.Module):
    def __init__(self, lr=1e-3, no_optim=False):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        if no_optim:
            return
        self.optim = optim.Adam(params=self.parameters(), lr=lr)
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_class_of_another_module_that_builds_its_own_optimizer_is_reported_where_it_moves(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BigGAN's shape: ``Generator.__init__`` (nets.py) builds ``self.optim`` over its own
    parameters and train.py moves the instance afterwards: an error at each move, naming
    the class, its module and the attribute, on a whole-project and a single-file run;
    none for an instance that stays on the CPU or is built with ``no_optim=True``, and none
    in a script that trains nothing."""
    main = (
        "import torch\n\nimport nets\nfrom nets import Generator as G\n\n"
        'device = torch.device("cuda")\n'
        "gen = nets.Generator().to(device)\n"
        "other = G()\n"
        "other.cuda()\n"
        'kept = nets.Generator().to("cpu")\n'
        "ema = nets.Generator(**{'no_optim': True}).to(device)\n"
        "for x in loader:\n"
        "    gen(x.to(device)).sum().backward()\n"
        "    gen.optim.step()\n"
    )
    dynamic = (
        "import torch\n\n\n"
        "def run(config, loader):\n"
        '    model = __import__(config["model"])\n'
        '    G = model.Generator(**config).to("cuda")\n'
        "    for x in loader:\n"
        '        G(x.to("cuda")).sum().backward()\n'
        "        G.optim.step()\n"
    )
    sample = 'import nets\n\nG = nets.Generator().cuda()\nsamples = G(z.to("cuda"))\n'
    files = {"nets.py": _SELF_OPTIMIZING, "train.py": main, "dynamic.py": dynamic, "sample.py": sample}
    repo = _project(tmp_path, files)
    monkeypatch.chdir(repo)
    for names in (list(files), ["train.py", "dynamic.py", "sample.py"]):
        found = _run(repo, names, target)
        errors = [f for f in found["train.py"] if f.rule == "XLA203"]
        assert [(f.line, f.col) for f in errors] == [(7, 7), (9, 1)], errors
        assert "after `Generator.__init__` (nets.py) built `self.optim`" in errors[0].message
        assert "so `other.optim` steps the stale CPU copies" in errors[1].message
        (run_time,) = [f for f in found["dynamic.py"] if f.rule == "XLA203"]
        assert "(of the module that `model` names at run time, if it is nets.py) built `self.optim`" in run_time.message
        assert not [f for f in found["sample.py"] if f.rule == "XLA203"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_sparse_tensor_that_another_module_returns_is_reported_where_it_moves(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LightGCN's shape across modules: graphs.py returns a torch sparse tensor, train.py
    moves it to the device (NotImplementedError on XLA); a densified one is left alone."""
    graphs = (
        "import torch\n\n\ndef load_graph(index, data, n):\n    return torch.sparse_coo_tensor(index, data, (n, n))\n"
    )
    main = (
        "import torch\n\nimport graphs\n\n"
        'device = torch.device("cuda")\n'
        "adj = graphs.load_graph(index, data, n).coalesce().to(device)\n"
        "dense = graphs.load_graph(index, data, n).to_dense().to(device)\n"
    )
    repo = _project(tmp_path, {"graphs.py": graphs, "train.py": main})
    monkeypatch.chdir(repo)
    for names in (["graphs.py", "train.py"], ["train.py"]):
        errors = [f for f in _run(repo, names, target)["train.py"] if f.rule == "XLA510"]
        assert [(f.line, f.col) for f in errors] == [(6, 7)], errors
        assert "`graphs.load_graph(index, data, n)` returns a sparse tensor" in errors[0].message


_EMBEDDINGS = """from torch import nn


def create_embedding_matrix(columns, init_std=0.0001, linear=False, sparse=False):
    return nn.ModuleDict({c: nn.Embedding(10, 4, sparse=sparse) for c in columns})
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_embeddings_sparse_parameter_is_decided_by_the_runs_calls(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DeepCTR-Torch's shape: ``sparse=sparse`` with ``sparse=False`` by default. Every call
    of the run passes False or nothing: no error; a call that may pass True: an error at
    the embedding naming that call; the file alone: an error saying no call is in sight."""
    base = (
        "import torch\nfrom inputs import create_embedding_matrix\n\n"
        "linear = create_embedding_matrix(cols, 0.0001, True, False)\n"
        "tables = create_embedding_matrix(cols, sparse=False)\n"
        "plain = create_embedding_matrix(cols)\n"
    )
    other = "import torch\n\nimport inputs\n\ntables = inputs.create_embedding_matrix(cols, sparse=args.sparse)\n"
    repo = _project(tmp_path, {"inputs.py": _EMBEDDINGS, "base.py": base, "other.py": other})
    monkeypatch.chdir(repo)
    assert not [f for f in _run(repo, ["inputs.py", "base.py"], target)["inputs.py"] if f.rule == "XLA507"]
    (error,) = [f for f in _run(repo, ["inputs.py", "base.py", "other.py"], target)["inputs.py"] if f.rule == "XLA507"]
    assert (error.line, error.col) == (5, 50)
    assert "but `inputs.create_embedding_matrix(..., sparse=args.sparse)` in other.py may pass True" in error.message
    (alone,) = [f for f in _run(repo, ["inputs.py"], target)["inputs.py"] if f.rule == "XLA507"]
    assert "no file of this run calls it" in alone.message


_SCALER_HELPER = """import torch


def init_distributed_mode(args):
    torch.distributed.init_process_group(backend="nccl", world_size=args.world_size, rank=args.rank)


class NativeScaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer, update_grad=True):
        self._scaler.scale(loss).backward()
        if update_grad:
            self._scaler.step(optimizer)
            self._scaler.update()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_scaler_helpers_backward_under_the_callers_ddp_needs_no_all_reduce(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LLaMA-Adapter's shape: util's NativeScaler runs the scaled backward and the step;
    the script that imports it wraps the model in DDP (kept: it all-reduces in backward),
    so no all-reduce is asked for; a script without DDP leaves the error standing."""
    main = (
        "import torch\n\nimport misc\n\n\n"
        "def main(args, model, loader, optimizer):\n"
        "    misc.init_distributed_mode(args)\n"
        "{wrap}"
        "    loss_scaler = misc.NativeScaler()\n"
        "    for x in loader:\n"
        "        loss_scaler(model(x.cuda()).sum(), optimizer)\n"
    )
    ddp = "    model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[args.gpu])\n"
    repo = _project(tmp_path, {"misc.py": _SCALER_HELPER, "main.py": main.format(wrap=ddp)})
    monkeypatch.chdir(repo)
    assert not [f for f in _run(repo, ["misc.py", "main.py"], target)["misc.py"] if f.rule == "XLA607"]
    (repo / "main.py").write_text(main.format(wrap="    model = model.cuda()\n"))
    (error,) = [f for f in _run(repo, ["misc.py", "main.py"], target)["misc.py"] if f.rule == "XLA607"]
    assert "no file of this run that imports this one wraps the model in DistributedDataParallel" in error.message


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("names", [["train.py"], ["train.py", "parallel/__init__.py", "parallel/scattered.py"]])
def test_a_data_parallel_subclass_of_a_package_that_scatters_the_batches_is_an_error_where_it_wraps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: list[str], target: str
) -> None:
    """train.py builds parallel/scattered.py's DataParallel subclass, re-exported by the package's
    `__init__.py` (which names no torch, and is skipped unparsed when the run converts it): its
    `scatter` moved the batches, and never runs on XLA. Said at the construction, whether the
    run converts the package or only reads it."""
    copy = tmp_path / "scatter"
    shutil.copytree(FIXTURES / "scatter_wrapper_split", copy)
    (copy / "pyproject.toml").write_text("[project]\nname = 'scatter'\n")
    monkeypatch.chdir(copy)
    findings = _run(copy, names, target)
    (error,) = [f for f in findings["train.py"] if f.rule == "XLA118"]
    assert error.line == 24 and not error.fixed
    assert "`ScatteredDataParallel` (a DataParallel subclass of parallel/scattered.py)" in error.message


@pytest.fixture
def factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "factory"
    shutil.copytree(FIXTURES / "trainer_factory_split", copy)
    (copy / "pyproject.toml").write_text("[project]\nname = 'factory'\n")
    monkeypatch.chdir(copy)
    return copy


FACTORY_FILES = [
    "main.py",
    "trains/__init__.py",
    "trains/base_trainer.py",
    "trains/classification.py",
    "trains/regression.py",
    "trains/train_factory.py",
]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("names", [["main.py"], FACTORY_FILES], ids=["single", "whole"])
def test_a_trainer_picked_from_a_dict_of_classes_is_followed_to_its_base_class(
    factory: Path, names: list[str], target: str
) -> None:
    """``Trainer = train_factory[args.task]`` (a dict of classes in a module that names no
    torch), whose classes inherit ``__init__`` and ``train`` from a base class of another
    module: the optimizer built before the base class moves the wrapped model is an error,
    and the loop in the base class gets its barrier, or is named in a single-file run."""
    findings = _run(factory, names, target)
    (early,) = [f for f in findings["main.py"] if f.rule == "XLA203"]
    assert early.line == 19 and "`Trainer` (trains/base_trainer.py: `self.model_with_loss.to(device)`)" in early.message
    if len(names) == 1:
        (loop,) = [f for f in findings["main.py"] if f.rule == "XLA003"]
        assert loop.line == 30 and "`trainer.train` runs a training loop in trains/base_trainer.py" in loop.message
    else:
        (barrier,) = [f for f in findings["base_trainer.py"] if f.rule == "XLA301"]
        assert barrier.fixed and barrier.line == 28


def test_each_class_of_the_dict_counts_not_only_the_first(factory: Path) -> None:
    """A dict whose first class moves nothing: the one after it that does still makes the
    optimizer built before it an error."""
    (factory / "trains" / "plain.py").write_text(
        "class PlainTrainer:\n    def __init__(self, model, optimizer):\n        pass\n"
    )
    table = factory / "trains" / "train_factory.py"
    table.write_text(
        "from .plain import PlainTrainer\n"
        + table.read_text().replace("train_factory = {", "train_factory = {\n    'plain': PlainTrainer,")
    )
    findings = _run(factory, ["main.py"])
    assert [f.line for f in findings["main.py"] if f.rule == "XLA203"] == [19]


def test_a_method_a_subclass_does_not_define_is_its_base_classes(factory: Path) -> None:
    """Without the dict: ``RegressionTrainer`` (trains/regression.py, no torch there) is
    followed to ``BaseTrainer`` for its ``__init__`` and its ``train``."""
    main = factory / "main.py"
    main.write_text(
        main.read_text()
        .replace("from trains.train_factory import train_factory", "from trains.regression import RegressionTrainer")
        .replace("choices=sorted(train_factory)", "choices=['regression']")
        .replace("Trainer = train_factory[args.task]\n    trainer = Trainer(", "trainer = RegressionTrainer(")
    )
    findings = _run(factory, ["main.py"])
    assert {f.rule for f in findings["main.py"]} >= {"XLA203", "XLA003"}


_GAN = """import torch
import torch.nn as nn
from torch.optim import Adam


class GAN:
    def __init__(self):
        self.g = nn.Linear(4, 4).cuda()
        self.opt_g = Adam(self.g.parameters(), lr=1e-3)
        self.decay = torch.optim.lr_scheduler.StepLR(self.opt_g, 10)
        self.helper = make_helper()
"""

_GAN_TRAIN = """import torch
from gan import GAN

gan = GAN()
for _ in range(10):
    gan.g(torch.randn(8, 4).cuda()).sum().backward()
    gan.opt_g.step()
    gan.decay.step()
    gan.helper.step()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_optimizer_that_another_modules_class_keeps_on_its_instance_is_stepped_with_xm(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gan.opt_g.step()`` where gan.py's ``GAN.__init__`` builds ``self.opt_g = Adam(...)``:
    ported like a plain optimizer; the scheduler it keeps (``gan.decay``) is left alone; an
    attribute it keeps that is neither (``gan.helper``) is still asked about."""
    repo = _project(tmp_path, {"gan.py": _GAN, "train.py": _GAN_TRAIN})
    monkeypatch.chdir(repo)
    steps = {f.line: f.message for f in _run(repo, ["gan.py", "train.py"], target)["train.py"] if f.rule == "XLA201"}
    assert steps[7] == "gan.opt_g.step() -> xm.optimizer_step(gan.opt_g)"
    assert 8 not in steps
    assert "if this is an optimizer, call xm.optimizer_step(gan.helper)" in steps[9]
    alone = {f.line for f in _run(repo, ["train.py"], target)["train.py"] if f.rule == "XLA201"}
    assert alone == {7, 9}  # gan.py is read for train.py's summary, converted or not
