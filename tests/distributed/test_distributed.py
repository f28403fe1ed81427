"""Distributed fixtures, converted: what issue 8 asks of the result, checked on the code
itself (comments and docstrings aside): no NCCL, torchrun variables or CUDA device ids
left, the XLA launcher, a sampler from the XLA world size, MpDeviceLoader, and gradients
reduced exactly once; and ``convert --distributed``, which makes a one-device script
multi-process."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from codemods import TARGETS, Conversion, convert_source
from tests.support.cli import invoke
from tests.support.data_parallel_projects import (
    DP_TRAINER,
    DP_TRAINER_MAIN,
    ORDERED_DATA,
    UNEVEN_PARALLEL,
    UNEVEN_TRAIN,
)
from tests.support.fixtures import convert_fixture as convert_in_project
from tests.support.fixtures import fixture_scripts, output_bytes, output_text
from tests.support.paths import FIXTURES

DISTRIBUTED = sorted(p.name for p in FIXTURES.glob("dist_*.py"))
LAUNCHED = {
    "dist_torchrun.py",
    "dist_ddp_spawn.py",
    "dist_demo_basic.py",
    "dist_amp_ddp.py",
    "dist_class_no_sync.py",
    "dist_imagenet.py",
    "dist_xmp_spawn.py",
}


def convert_fixture(script: str, target: str) -> Conversion:
    return convert_source((FIXTURES / script).read_bytes(), target=target)


def code_words(source: str) -> set[str]:
    """Names, attributes, keywords and string constants of the code, docstrings left out."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            words.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.add(node.value)
    return words


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("script", [s for s in DISTRIBUTED if s != "dist_hogwild.py"])
def test_no_cuda_process_group_names_are_left(script: str, target: str) -> None:
    words = code_words(output_bytes(convert_fixture(script, target)).decode())
    assert not words & {"nccl", "gloo", "LOCAL_RANK", "device_ids", "output_device", "set_device"}


@pytest.mark.parametrize("script", sorted(LAUNCHED))
def test_processes_start_through_the_xla_launcher(script: str) -> None:
    for target, launcher in (("2.9", "torch_xla.launch("), ("sagemaker", "xmp.spawn(")):
        output = output_bytes(convert_fixture(script, target)).decode()
        assert launcher in output, target
        assert "mp.spawn(" not in output.replace("xmp.spawn(", "")


@pytest.mark.parametrize("script", ["dist_torchrun.py", "dist_ddp_spawn.py"])
def test_ddp_scripts_shard_feed_and_reduce_once(script: str) -> None:
    output = output_bytes(convert_fixture(script, "2.9")).decode()
    assert "num_replicas=xr.world_size(), rank=xr.global_ordinal()" in output
    assert "pl.MpDeviceLoader(" in output
    # DDP reduces the gradients: neither xm.optimizer_step nor a manual all-reduce is added.
    assert "DDP(self.model)" in output
    assert "xm.optimizer_step" not in output and "all_reduce" not in output


def test_torchrun_guard_becomes_mp_fn_for_both_targets() -> None:
    for target, launch in (("2.9", "torch_xla.launch(_mp_fn, args=())"), ("sagemaker", "xmp.spawn(_mp_fn, args=())")):
        output = output_bytes(convert_fixture("dist_torchrun.py", target)).decode()
        assert "\ndef _mp_fn(index):\n" in output
        assert output.rstrip().endswith(f'if __name__ == "__main__":\n    {launch}')


def test_sagemaker_runtime_calls_mp_fn_of_a_spawning_script() -> None:
    """SageMaker's pytorchxla runtime imports the script and calls _mp_fn(index) in each
    process: the guard that spawned becomes _mp_fn, calling the worker with its index."""
    output = output_bytes(convert_fixture("dist_ddp_spawn.py", "sagemaker")).decode()
    assert "\ndef _mp_fn(index):\n" in output
    assert "    main(index, world_size, args.save_every, args.total_epochs, args.batch_size)\n" in output
    assert output.rstrip().endswith('if __name__ == "__main__":\n    xmp.spawn(_mp_fn, args=())')
    assert "torch.cuda.device_count()" not in output  # read in the workers now: the runtime's count


def test_sagemaker_mp_fn_passes_starred_spawn_args_on() -> None:
    """``args=(*extra, lr)``: the worker is called with ``*extra`` (a crash before mypy
    found that a StarredElement has no ``star``)."""
    source = (
        "import torch.multiprocessing as mp\n\n\ndef train(rank, world, lr):\n    pass\n\n\n"
        'if __name__ == "__main__":\n    extra = (4,)\n    mp.spawn(train, args=(*extra, 0.1), nprocs=4)\n'
    )
    conversion = convert_source(source, target="sagemaker")
    output = output_text(conversion)
    assert "\ndef _mp_fn(index):\n    extra = (4,)\n    train(index, *extra, 0.1)\n" in output
    assert output.rstrip().endswith('if __name__ == "__main__":\n    xmp.spawn(_mp_fn, args=())')
    assert convert_source(output, target="sagemaker").output == conversion.output


def test_hogwild_is_reported_and_left_alone() -> None:
    conversion = convert_fixture("dist_hogwild.py", "2.9")
    assert conversion.output == (FIXTURES / "dist_hogwild.py").read_bytes()
    assert [f.rule for f in conversion.findings] == ["XLA608"]


# -- convert --distributed --------------------------------------------------------------------

ONE_DEVICE = """\
import torch
from torch.utils.data import DataLoader


def main():
    device = torch.device("cuda")
    loader = DataLoader(dataset, batch_size=8, shuffle=True, drop_last=True)
    for epoch in range(2):
        for x, y in loader:
            loss = model(x.to(device), y.to(device))
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
"""


def test_distributed_makes_a_one_device_script_multi_process(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(ONE_DEVICE)
    plain = invoke("convert", "-", input=ONE_DEVICE).output
    assert "_mp_fn" not in plain and "DistributedSampler" not in plain

    result = invoke("convert", "--distributed", str(script))
    converted = script.read_text()
    assert result.exit_code == 1, result.output  # files changed
    assert "def _mp_fn(index):\n    main()\n" in converted
    assert 'if __name__ == "__main__":\n    torch_xla.launch(_mp_fn, args=())\n' in converted
    assert (
        "DataLoader(dataset, batch_size=8, shuffle=False, drop_last=True, sampler=torch.utils.data.distributed."
        "DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True))"
    ) in converted
    assert (
        "        loader.sampler.set_epoch(epoch)\n        for x, y in pl.MpDeviceLoader(loader, device):" in converted
    )
    # Converting the result again changes nothing, with or without the flag.
    assert invoke("convert", "--distributed", "--check", str(script)).exit_code == 0
    assert invoke("convert", "--check", str(script)).exit_code == 0


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("script", fixture_scripts(), ids=str)
def test_distributed_converts_every_fixture(script: Path, target: str) -> None:
    """``convert --distributed`` takes every fixture (class_trainer.py once stopped with an
    IndexError: its DataLoader's pin_memory=True, dropped before the sampler was added); the
    output parses and a second run changes nothing."""
    once = convert_in_project(script, target, distributed=True)
    ast.parse(output_bytes(once))
    assert convert_in_project(script, target, output_bytes(once), distributed=True).output == once.output


_DATA_MODULE = """\
from torch.utils.data import Dataset, IterableDataset


class Stream(IterableDataset):
    def __iter__(self):
        yield from range(8)


class Shuffled(Stream):
    pass


class Table(Dataset):
    def __getitem__(self, index):
        return index

    def __len__(self):
        return 4
"""

_TRAINING = """\
import torch
import torch.distributed as dist
from data import Shuffled, Table


def main():
    dist.init_process_group("nccl")
    stream = torch.utils.data.DataLoader(Shuffled(), batch_size=None)
    table = Table()
    rows = torch.utils.data.DataLoader(table, batch_size=2)
    for x in stream:
        optimizer.step()
    for x in rows:
        optimizer.step()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_iterable_data_set_classes_of_another_module_get_no_sampler(tmp_path: Path, monkeypatch, target: str) -> None:  # type: ignore[no-untyped-def]
    """A DataLoader over an IterableDataset subclass of a project module takes no sampler (it
    would raise); its map-style neighbour gets one.  On the file alone the module cannot be
    read: neither gets a sampler, and the finding says why."""
    from codemods.engine.rule import RuleSelection
    from codemods.pipeline import summarise_with
    from codemods.project.resolver import Project

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'streams'\n")
    (tmp_path / "data.py").write_text(_DATA_MODULE)
    (tmp_path / "train.py").write_text(_TRAINING)
    monkeypatch.chdir(tmp_path)
    project = Project(
        tmp_path, summarise_with(target, RuleSelection(), None), in_run=[tmp_path / "data.py", tmp_path / "train.py"]
    )
    whole = convert_source(_TRAINING, target=target, imports=project.imports_of(tmp_path / "train.py"))
    assert "DataLoader(Shuffled(), batch_size=None)\n" in whole.output
    assert "DataLoader(table, batch_size=2, sampler=" in whole.output
    (iterable,) = [f for f in whole.findings if f.rule == "XLA617"]
    assert iterable.line == line_of(whole.output, "Shuffled()") and "data set (`Shuffled(...)`)" in iterable.message
    alone = convert_source(_TRAINING, target=target)
    assert "sampler=" not in alone.output
    unknown = [f for f in alone.findings if f.rule == "XLA617"]
    assert [f.line for f in unknown] == [line_of(alone.output, "Shuffled()"), line_of(alone.output, "(table,")]
    assert all("a class of `data`, which this run does not read" in f.message for f in unknown)


def line_of(output: str | bytes, part: str) -> int:
    text = output.decode() if isinstance(output, bytes) else output
    return next(n for n, line in enumerate(text.splitlines(), 1) if part in line)


# -- DataParallel models that leave their module (XLA605) ----------------------------------------

_DP_MODELS = """\
import torch.nn as nn

shared = nn.DataParallel(nn.Linear(4, 4))


def build_model():
    gen = nn.DataParallel(nn.Linear(4, 4))
    return {"gen": gen}


def local_copy():
    net = nn.DataParallel(nn.Linear(4, 4))
    return net.module
"""

_DP_TRAIN = """\
import torch
from models import build_model, shared

nets = build_model()
torch.save({"shared": shared.module.state_dict(), "gen": nets["gen"].module.state_dict()}, "nets.pt")
"""


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_data_parallel_models_read_by_other_modules_keep_their_wrappers(tmp_path: Path, target: str) -> None:
    """A wrapper whose model another module may read `.module` on (returned by a builder, or
    bound at module level in an imported module) stays, reported; one whose uses are all in
    the file goes with its `.module`; the run changes nothing the second time."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'dp'\n")
    (tmp_path / "models.py").write_text(_DP_MODELS)
    (tmp_path / "train.py").write_text(_DP_TRAIN)
    result = invoke("convert", ".", "--target", target, "--format", "json", cwd=tmp_path)
    models = (tmp_path / "models.py").read_text()
    assert "shared = nn.DataParallel(nn.Linear(4, 4))" in models
    assert "    gen = nn.DataParallel(nn.Linear(4, 4))" in models
    assert "    net = nn.Linear(4, 4)\n    return net\n" in models
    assert "shared.module.state_dict()" in (tmp_path / "train.py").read_text()
    report = json.loads(result.output)
    kept = [f["message"] for file in report["files"] for f in file["findings"] if " kept: " in f["message"]]
    assert len(kept) == 2, kept
    assert any("returned by `build_model`" in message for message in kept)
    assert any("bound at module level in a module other files of the run import" in message for message in kept)
    assert invoke("convert", ".", "--target", target, "--check", cwd=tmp_path).exit_code == 0


# -- DataParallel models held on an attribute, read as `.module` by another module (XLA605) -------

_DP_SUBCLASS = """\
import torch
from trainer import Trainer


class SavingTrainer(Trainer):
    def save(self, path):
        torch.save(self.model.module.state_dict(), path)
"""


def _trainer_project(folder: Path, read: str, *extra: tuple[str, str]) -> Path:
    (folder / "pyproject.toml").write_text("[project]\nname = 'dp'\n")
    (folder / "trainer.py").write_text(DP_TRAINER)
    (folder / "main.py").write_text(DP_TRAINER_MAIN.format(read=read))
    for name, text in extra:
        (folder / name).write_text(text)
    return folder


def _kept(result_output: str) -> list[str]:
    report = json.loads(result_output)
    return [f["message"] for file in report["files"] for f in file["findings"] if " kept: " in f["message"]]


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize(
    ("read", "extra", "reader"),
    [
        ("trainer.model.module", (), "main.py"),
        ('getattr(trainer.model, "module", trainer.model)', (("saving.py", _DP_SUBCLASS),), "saving.py"),
    ],
    ids=["attribute-read", "subclass-read"],
)
def test_a_wrapper_held_on_an_attribute_that_another_module_reads_stays(
    tmp_path: Path, target: str, read: str, extra: tuple[tuple[str, str], ...], reader: str
) -> None:
    """`self.model = nn.DataParallel(net)` in a trainer class, read as `trainer.model.module`
    by the driver (or as `self.model.module` by a subclass of another module): the wrapper
    stays, reported with the file that reads `.module`; that read is left as it is."""
    folder = _trainer_project(tmp_path, read, *extra)
    result = invoke("convert", ".", "--target", target, "--format", "json", cwd=folder)
    assert "self.model = nn.DataParallel(net)" in (folder / "trainer.py").read_text()
    assert read in (folder / "main.py").read_text()
    kept = _kept(result.output)
    assert len(kept) == 1, kept
    assert f"held on `self.model` of `Trainer`, and {reader} of the run reads `.module`" in kept[0]
    assert invoke("convert", ".", "--target", target, "--check", cwd=folder).exit_code == 0


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_wrapper_held_on_an_attribute_that_no_module_reads_goes(tmp_path: Path, target: str) -> None:
    """The driver reads the model through `getattr(..., "module", ...)`, which works on the bare
    model, and no file of the run reads `.module`: the wrapper goes."""
    folder = _trainer_project(tmp_path, 'getattr(trainer.model, "module", trainer.model)')
    result = invoke("convert", ".", "--target", target, "--format", "json", cwd=folder)
    assert "DataParallel" not in (folder / "trainer.py").read_text()
    assert not _kept(result.output)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_trainer_converted_alone_keeps_the_wrapper_its_unseen_users_may_read(tmp_path: Path, target: str) -> None:
    """trainer.py converted on its own: no file of the run builds `Trainer`, so the files that
    do (and may read `.module`) are out of sight: the wrapper stays. A trainer file that builds
    its class itself, and that no file of the run imports, loses it."""
    folder = _trainer_project(tmp_path, "trainer.model.module")
    result = invoke("convert", "trainer.py", "--target", target, "--format", "json", cwd=folder)
    assert "self.model = nn.DataParallel(net)" in (folder / "trainer.py").read_text()
    assert "a class no file of the run builds or imports" in _kept(result.output)[0]
    (folder / "script.py").write_text(DP_TRAINER + "\n\nif __name__ == '__main__':\n    Trainer(nn.Linear(4, 4))\n")
    result = invoke("convert", "script.py", "--target", target, "--format", "json", cwd=folder)
    assert "DataParallel" not in (folder / "script.py").read_text()
    assert not _kept(result.output)


# -- a DataParallel subclass with its own scatter, fed batches already on the device (XLA118) ------


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("handed", [", device=device", ""], ids=["handed-the-device", "not-handed"])
def test_scattering_data_parallel_fed_batches_on_the_device_is_no_error(
    tmp_path: Path, target: str, handed: str
) -> None:
    """The subclass of parallel.py scatters in its own `scatter`, which never runs on XLA; the
    iterator of data.py, handed the device, put the whole stream there: nothing to move, an
    info (XLA605). Not handed the device, its batches stay on the CPU: XLA118 stands."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'uneven'\n")
    (tmp_path / "parallel.py").write_text(UNEVEN_PARALLEL)
    (tmp_path / "data.py").write_text(ORDERED_DATA)
    (tmp_path / "train.py").write_text(UNEVEN_TRAIN.format(handed=handed))
    result = invoke("lint", ".", "--target", target, "--format", "json", cwd=tmp_path)
    findings = {(f["rule"], f["severity"]) for file in json.loads(result.output)["files"] for f in file["findings"]}
    if handed:
        assert ("XLA118", "error") not in findings
        assert ("XLA605", "info") in findings
    else:
        assert ("XLA118", "error") in findings
