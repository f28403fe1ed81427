"""``utils.cuda(batch)`` of a project module (tests/project/test_module_cuda_functions.py) where the
file binds the name ``utils`` (or the alias ``tu``) otherwise too, in other scopes: the module's
function where the call's own function does not bind the name (the call stays), a move where it
does (a parameter, the comprehension around the call: XLA102 ports it), and an error where it
cannot be told (a comprehension elsewhere in the call's function binds it: left, reported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_module_cuda_functions import DEVICE, TARGETS, TRAIN, _findings, _write

REBINDING = """

def other(xs):
    return [utils.cuda() for utils in xs]


def third(tu):
    return tu.cuda()


def fourth(xs):
    ys = [utils for utils in xs]
    return utils.cuda(ys)


def fifth(xs):
    return [*map(lambda b: utils.cuda(b), xs), *map(lambda utils: utils.cuda(), xs)]
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_name_bound_elsewhere_leaves_the_module_call_and_moves_the_locals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    (tmp_path / "train.py").write_text(TRAIN + REBINDING)
    names = ["pkg/utils/torch.py", "pkg/models.py", "train.py"]
    found = _findings(tmp_path, names, target, mode="write")["train.py"]
    converted = (tmp_path / "train.py").read_text()
    assert "        batch = utils.cuda(batch, device=device)\n" in converted
    assert "        pair = tu.cuda([batch, batch])\n" in converted
    assert f"    return [utils.to({DEVICE[target]}) for utils in xs]\n" in converted
    assert f"    return tu.to({DEVICE[target]})\n" in converted
    assert "    return utils.cuda(ys)\n" in converted
    assert f"lambda b: utils.cuda(b), xs), *map(lambda utils: utils.to({DEVICE[target]}), xs)]" in converted
    unsure = [f for f in found if not f.fixed]
    assert len(unsure) == 1 and unsure[0].message.startswith(
        "`utils.cuda(ys)` may run the function `cuda` of the project module `utils` this file imports, or "
    )
    assert "left as it is" in unsure[0].message
    again = _findings(tmp_path, names, target, mode="write")  # idempotent: only the error again
    assert (tmp_path / "train.py").read_text() == converted
    assert [(f.message, f.fixed) for f in again["train.py"]] == [(unsure[0].message, False)]


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_level_rebinding_is_reported_not_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    (tmp_path / "train.py").write_text(TRAIN + "\n\nif __name__ == '__main__':\n    utils = None\n")
    found = _findings(tmp_path, ["pkg/utils/torch.py", "pkg/models.py", "train.py"], target)["train.py"]
    unsure = [f for f in found if not f.fixed]
    assert [f.message.split("`")[1] for f in unsure] == ["utils.cuda(batch, device=device)"]
    assert "tu.cuda" not in " ".join(f.message for f in found if f.fixed)
