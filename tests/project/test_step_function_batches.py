"""A step function of a module a single-file run does not convert, which takes its batch itself
(``pos, neg = next(train_iterator)``), moves it with CUDA terms (``pos.cuda()``) and feeds it to the
model handed in (KnowledgeGraphEmbedding's ``KGEModel.train_step(model, optimizer, iterator, args)``,
a static method): the script's model on the XLA device gets its batches on CUDA (obligation 3, issue
32), reported at the call (XLA116) like the evaluation function's loop of the same module.  A step
function that takes its batch moved by the caller and moves nothing feeds nothing of its own; the
whole run converts the module, and says nothing at the call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

MODEL = """\
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.lin(x)

    @staticmethod
    def train_step(model, optimizer, train_iterator, args):
        optimizer.zero_grad()
        pos, neg = next(train_iterator)
        if args.cuda:
            pos = pos.cuda()
            neg = neg.cuda()
        loss = (model(pos) - model(neg)).mean()
        loss.backward()
        optimizer.step()
        return loss.item()

    @staticmethod
    def moved_step(model, optimizer, x):
        optimizer.zero_grad()
        model(x).mean().backward()
        optimizer.step()
"""

RUN = """\
import torch

from model import Model


def main(args, train_iterator, xs):
    model = Model()
    if args.cuda:
        model = model.cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for step in range(100):
        log = model.train_step(model, optimizer, train_iterator, args)
    for x in xs:
        model.moved_step(model, optimizer, x.cuda())
"""


def _batch_findings(found: dict[str, list[tuple[str, int, str]]]) -> list[tuple[str, int, str]]:
    return [f for f in found.get("run.py", []) if f[0] == "XLA116"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_step_function_that_moves_its_own_batch_with_cuda_terms_is_reported_at_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = write_project(tmp_path, "kge", {"model.py": MODEL, "run.py": RUN})
    ((rule, line, message),) = _batch_findings(unfixed_findings(folder, ["run.py"], target))
    assert line == 12
    assert (
        "`model` (on the XLA device) goes to `model.train_step` in model.py, which feeds it batches and still "
        "needs converting" in message
    )
    assert _batch_findings(unfixed_findings(folder, ["model.py", "run.py"], target)) == []
