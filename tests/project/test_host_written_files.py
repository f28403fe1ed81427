"""A Dataset's ``torch.load`` of files another module of the project writes (checkpoint/written_files.py):
voicefilter's generator script saves ``torch.from_numpy(mag)`` at ``formatter(dir_, hp.form.target.mag,
num)`` and its Dataset loads ``self.target_mag_list[idx]``, ``find_all(hp.form.target.mag)``.  Host data
only: no CUDA run can have written a CUDA storage there, so the load gets no XLA403 in a run on the project
and no XLA003 in a single-file run of the script that uses the Dataset.  A save of a moved tensor under the
same chain, or a chain of two parts (``args.out``), keeps the finding; so does a load of one file of a folder
the chain names (``os.path.join(cfg.data.root, "pretrained.pth")``) where the saves write other files there."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

GENERATOR = """\
import os

import numpy as np
import torch


def formatter(dir_, form, num):
    return os.path.join(dir_, form.replace("*", "%06d" % num))


def mix(hp, dir_, num):
    mag = np.abs(np.random.randn(601, 301)).astype(np.float32)
    target_mag_path = formatter(dir_, hp.form.target.mag, num)
    torch.save(torch.from_numpy(mag), target_mag_path)
"""
DATASET = """\
import glob
import os

import torch
from torch.utils.data import Dataset


class VFDataset(Dataset):
    def __init__(self, hp, data_dir):
        def find_all(file_format):
            return sorted(glob.glob(os.path.join(data_dir, file_format)))

        self.target_mag_list = find_all(hp.form.target.mag)

    def __len__(self):
        return len(self.target_mag_list)

    def __getitem__(self, idx):
        return torch.load(self.target_mag_list[idx])
"""
TRAIN = """\
import torch
from torch.utils.data import DataLoader

from dataset import VFDataset


def train(hp, data_dir):
    model = torch.nn.Linear(301, 301).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for mag in DataLoader(VFDataset(hp, data_dir), batch_size=4):
        loss = model(mag.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
# The generator saves a moved tensor under the same chain: it may hold CUDA storages.
MOVED = GENERATOR.replace("torch.from_numpy(mag)", "torch.from_numpy(mag).cuda()")
# A chain of two parts names too little: another save may write there.
SHORT = GENERATOR.replace("hp.form.target.mag", "hp.target_mag")


def _findings(folder: Path, names: list[str], target: str) -> dict[str, list[tuple[str, int, str]]]:
    reports = run([(str(folder / name), Job("check", target, RuleSelection())) for name in names], workers=1)
    return {Path(r.path).name: [(f.rule, f.line, f.message) for f in r.findings] for r in reports}


def _project(tmp_path: Path, generator: str, dataset: str = DATASET) -> Path:
    return write_project(tmp_path / "p", "p", {"generator.py": generator, "dataset.py": dataset, "train.py": TRAIN})


@pytest.mark.parametrize("target", TARGETS)
def test_a_load_of_what_the_project_saves_from_host_data_is_no_checkpoint(tmp_path: Path, target: str) -> None:
    folder = _project(tmp_path, GENERATOR)
    found = _findings(folder, ["generator.py", "dataset.py", "train.py"], target)
    assert not [f for f in found["dataset.py"] if f[0] == "XLA403"], found["dataset.py"]
    single = _findings(folder, ["train.py"], target)["train.py"]
    assert not [f for f in single if f[0] == "XLA003" and "torch.load" in f[2]], single
    # a converted project, run again: nothing changes
    job = Job("write", target, RuleSelection())
    run([(str(folder / name), job) for name in ("generator.py", "dataset.py", "train.py")], workers=1)
    assert (folder / "dataset.py").read_text() == DATASET
    before = {name: (folder / name).read_text() for name in ("generator.py", "dataset.py", "train.py")}
    run([(str(folder / name), job) for name in before], workers=1)
    assert {name: (folder / name).read_text() for name in before} == before


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("generator", "dataset"),
    [(MOVED, DATASET), (SHORT, DATASET.replace("hp.form.target.mag", "hp.target_mag"))],
    ids=["moved-tensor", "two-part-chain"],
)
def test_a_save_that_may_hold_device_tensors_keeps_the_finding(
    tmp_path: Path, target: str, generator: str, dataset: str
) -> None:
    folder = _project(tmp_path, generator, dataset)
    found = _findings(folder, ["generator.py", "dataset.py", "train.py"], target)
    (load,) = [(line, message) for rule, line, message in found["dataset.py"] if rule == "XLA403"]
    assert load[0] == 19
    assert 'torch.load(...) -> map_location="cpu"' in load[1]
    single = _findings(folder, ["train.py"], target)["train.py"]
    assert [f for f in single if f[0] == "XLA003" and "torch.load" in f[2]], single


# A chain that names a folder: the preprocessing script saves host data at some file of it (a name
# it computes), the training script loads a file it names there (a pretrained checkpoint).
PREPROCESS = """\
import os

import numpy as np
import torch


def preprocess(cfg, arrays):
    for name, a in arrays.items():
        torch.save(torch.from_numpy(a), os.path.join(cfg.data.root, name))
"""
PRETRAINED = """\
import os

import torch


def build(cfg):
    model = torch.nn.Linear(4, 4).cuda()
    model.load_state_dict(torch.load(os.path.join(cfg.data.root, "pretrained.pth")))
    return model
"""
# The same file named beyond the chain in both paths: what the script saves there is host data.
CACHED = PREPROCESS.replace("os.path.join(cfg.data.root, name)", 'os.path.join(cfg.data.root, "cache.pt")')
CACHE_LOAD = PRETRAINED.replace(
    'model.load_state_dict(torch.load(os.path.join(cfg.data.root, "pretrained.pth")))',
    'cache = torch.load(os.path.join(cfg.data.root, "cache.pt"))',
)


@pytest.mark.parametrize("target", TARGETS)
def test_a_load_of_another_file_of_a_folder_the_project_saves_into_keeps_the_finding(
    tmp_path: Path, target: str
) -> None:
    folder = write_project(tmp_path / "p", "p", {"preprocess.py": PREPROCESS, "build.py": PRETRAINED})
    found = _findings(folder, ["preprocess.py", "build.py"], target)
    (load,) = [(line, message) for rule, line, message in found["build.py"] if rule == "XLA403"]
    assert load[0] == 8
    assert 'torch.load(...) -> map_location="cpu"' in load[1]
    # a save under the chain that names a file of its own (another one than the load's) writes nothing it reads
    other = PREPROCESS.replace("os.path.join(cfg.data.root, name)", 'os.path.join(cfg.data.root, "cache.pt")')
    (folder / "preprocess.py").write_text(other)
    found = _findings(folder, ["preprocess.py", "build.py"], target)
    assert [line for rule, line, _ in found["build.py"] if rule == "XLA403"] == [8]


@pytest.mark.parametrize("target", TARGETS)
def test_a_load_of_the_file_the_project_saves_beyond_the_chain_is_no_checkpoint(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"preprocess.py": CACHED, "build.py": CACHE_LOAD})
    found = _findings(folder, ["preprocess.py", "build.py"], target)
    assert not [f for f in found["build.py"] if f[0] == "XLA403"], found["build.py"]
    # a save of some file of the folder (a name it computes) may write it too: host data there as well
    both = CACHED + PREPROCESS.split("\n\n\n", 1)[1].replace("def preprocess", "def preprocess_all")
    (folder / "preprocess.py").write_text(both)
    found = _findings(folder, ["preprocess.py", "build.py"], target)
    assert not [f for f in found["build.py"] if f[0] == "XLA403"], found["build.py"]
    moved = both.replace(
        "torch.from_numpy(a), os.path.join(cfg.data.root, name)",
        "torch.from_numpy(a).cuda(), os.path.join(cfg.data.root, name)",
    )
    (folder / "preprocess.py").write_text(moved)
    found = _findings(folder, ["preprocess.py", "build.py"], target)
    assert [line for rule, line, _ in found["build.py"] if rule == "XLA403"] == [8]
