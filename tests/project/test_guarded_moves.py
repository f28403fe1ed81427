"""A move that a CUDA check guards, where the move is in another module of the project: a
`torch.cuda.is_available()` check around a call of a helper of another module that moves (the
eighth held-out list's Palette shape, with `set_device` in a module of its own) is dropped as one
around the move itself (XLA104); a device type check handed as a flag to a helper of another module
that moves only if it is true (MiniGPT-4's `prepare_sample(samples, cuda_enabled=self.cuda_enabled)`)
is an error at the check (XLA119), on both targets.  A check around a helper that moves nothing
stays XLA105's warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project
from tests.support.training_programs import MINIGPT_DATA, MINIGPT_RUNNER

UTIL = """\
import torch


def to_gpu(x):
    return x.cuda()


def set_device(args):
    if isinstance(args, dict):
        return {key: to_gpu(value) for key, value in args.items()}
    return to_gpu(args)


def log_batch(x):
    print(x.shape)
"""

MAIN = """\
import torch

from util import log_batch, set_device

model = torch.nn.Linear(4, 2)
if torch.cuda.is_available():
    model = set_device(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(8, 4)]:
    if torch.cuda.is_available():
        log_batch(x)
    if torch.cuda.is_available():
        x = set_device(x)
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_check_around_a_helper_of_another_module_that_moves_is_dropped(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "guarded", {"util.py": UTIL, "main.py": MAIN})
    found = unfixed_findings(folder, ["util.py", "main.py"], target)
    main = found["main.py"]
    # the checks around set_device are dropped (fixed), the one around log_batch stays a warning
    assert [(rule, line) for rule, line, _ in main if rule in ("XLA104", "XLA105", "XLA119")] == [("XLA105", 10)], main
    converted = (folder / "main.py").read_text()
    assert converted.count("torch.cuda.is_available()") == 3  # a check run leaves the file as it is


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_device_check_handed_to_a_helper_of_another_module_that_moves_under_it_is_an_error(
    tmp_path: Path, target: str
) -> None:
    folder = write_project(tmp_path / "p", "minigpt", {"data.py": MINIGPT_DATA, "runner.py": MINIGPT_RUNNER})
    found = unfixed_findings(folder, ["data.py", "runner.py"], target)
    errors = [(rule, line, message) for rule, line, message in found["runner.py"] if rule in ("XLA105", "XLA119")]
    assert len(errors) == 1, found
    rule, line, message = errors[0]
    assert (rule, line) == ("XLA119", 14)
    assert "is handed to `prepare_sample` as `cuda_enabled`" in message
    assert "which moves to the device only if `cuda_enabled` is true" in message


def test_a_helper_that_moves_only_if_its_flag_is_true_is_in_its_module_summary(tmp_path: Path) -> None:
    from codemods import convert_source

    conversion = convert_source(MINIGPT_DATA, filename="data.py")
    assert conversion.summary is not None
    assert conversion.summary.flag_moves_of("prepare_sample") == [(1, "cuda_enabled")]


TASK = """\
from data import prepare_sample


class BaseTask:
    def train_epoch(self, model, loader, optimizer, cuda_enabled=False):
        return self._inner_loop(model, loader, optimizer, cuda_enabled=cuda_enabled)

    def _inner_loop(self, model, loader, optimizer, cuda_enabled=False):
        for samples in loader:
            samples = prepare_sample(samples, cuda_enabled=cuda_enabled)
            optimizer.zero_grad()
            model(samples["x"]).sum().backward()
            optimizer.step()
"""

TASK_ALWAYS_MOVES = """\
class BaseTask:
    def train_epoch(self, model, loader, optimizer, cuda_enabled=False):
        for samples in loader:
            samples = {key: value.cuda() for key, value in samples.items()}
            optimizer.zero_grad()
            model(samples["x"]).sum().backward()
            optimizer.step()
"""

REGISTRY_RUNNER = """\
import torch


class Runner:
    def __init__(self, model, task, device):
        self.task = task
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    @property
    def cuda_enabled(self):
        return self.device.type == "cuda"

    def train(self, loader):
        return self.task.train_epoch(self.model, loader, self.optimizer, cuda_enabled=self.cuda_enabled)
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_check_handed_to_a_method_the_file_cannot_follow_is_an_error_where_the_run_moves_under_it(
    tmp_path: Path, target: str
) -> None:
    """MiniGPT-4's runner hands ``cuda_enabled=self.cuda_enabled`` to ``self.task.train_epoch``, its
    task built by a registry: the run's ``BaseTask.train_epoch`` moves the batches only if it is
    true, so the check is XLA119's error (held until the run's files are seen), not a warning."""
    folder = write_project(
        tmp_path / "p", "registry", {"data.py": MINIGPT_DATA, "task.py": TASK, "runner.py": REGISTRY_RUNNER}
    )
    found = unfixed_findings(folder, ["data.py", "task.py", "runner.py"], target)
    checks = [(rule, line, message) for rule, line, message in found["runner.py"] if rule in ("XLA105", "XLA119")]
    assert [(rule, line) for rule, line, _ in checks] == [("XLA119", 13)], found
    message = checks[0][2]
    assert "it is handed as `cuda_enabled` to `self.task.train_epoch`" in message
    assert "; `BaseTask.train_epoch` in " in message  # the path as findings show it
    assert "task.py moves to the device only if `cuda_enabled` is true: where that is what runs" in message


def test_where_no_function_of_the_run_moves_under_the_flag_the_check_stays_a_warning(tmp_path: Path) -> None:
    folder = write_project(tmp_path / "p", "registry", {"task.py": TASK_ALWAYS_MOVES, "runner.py": REGISTRY_RUNNER})
    found = unfixed_findings(folder, ["task.py", "runner.py"], "2.9")
    checks = [(rule, line) for rule, line, _ in found["runner.py"] if rule in ("XLA105", "XLA119")]
    assert checks == [("XLA105", 13)], found
