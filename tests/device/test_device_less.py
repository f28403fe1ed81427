"""XLA005 on a script whose model a call of a package the tool does not follow builds
(``somelib.build_model(cfg)``): run on its folder, the finding names that call and its package
(it may place the model itself); a single-file run, which cannot tell ``somelib`` from a module
of the project it does not read, stays silent."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.rule import RuleSelection
from codemods.files import discover
from codemods.runner import Job, run
from codemods.targets import TARGETS
from tests.support.rule_cases import RUN_CASES

# The rule's invalid runs whose model ``somelib.build_model(cfg)`` builds.
_LIBRARY_RUNS = [
    files["train.py"]
    for rule, kind, files in RUN_CASES
    if (rule, kind) == ("XLA005", "positive") and "somelib.build_model(cfg)" in files["train.py"]
]


def _messages(source: str, target: str, folder: Path) -> list[str]:
    (folder / "train.py").write_text(textwrap.dedent(source).lstrip("\n"))
    job = Job("lint", target, RuleSelection())
    reports = run([(str(path), job) for path in discover((str(folder),))])
    return [f.message for r in reports for f in r.findings if f.rule == "XLA005"]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_the_finding_names_the_library_call_that_builds_the_model(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    [message] = _messages(_LIBRARY_RUNS[0], target, tmp_path)
    device = TARGETS[target].api("device").spelled
    assert message == (
        "this script trains but picks no device: its model comes from `somelib.build_model(...)`, of somelib, a "
        "package the tool does not follow, which may place it itself (on the CPU or a GPU) but is never told of "
        "XLA; the script is left unchanged (a barrier or an XLA optimizer step alone would not move it); to run it "
        f"on XLA, move the model and its tensors with `.to({device}())` and convert again"
    )


def test_a_torch_model_is_not_said_to_come_from_a_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = _LIBRARY_RUNS[0].replace("somelib.build_model(cfg)", "torch.nn.Linear(2, 1)")
    [message] = _messages(source, "2.9", tmp_path)
    assert message.startswith("this script trains but picks no device: it runs on the CPU")


def test_a_single_file_run_may_take_the_library_for_a_module_of_the_project() -> None:
    conversion = convert_source(textwrap.dedent(_LIBRARY_RUNS[0]).lstrip("\n"))
    assert not [f for f in conversion.findings if f.rule == "XLA005"]
    assert "torch_xla" in conversion.output  # ported as code whose model another module places


@pytest.mark.parametrize("notes", [False, True])
def test_a_missing_module_of_a_project_folder_is_no_library(
    notes: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``from nets.zoo import build`` where ``nets/`` is a folder of the project whose ``zoo.py`` is
    missing: the project's module, which could not be read (it may place the model), as for XLA121,
    XLA116 and XLA307 (``ProjectAnalysis.library_package``); a folder without Python files is no
    module of the project (the control: the finding names it)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nets").mkdir()
    (tmp_path / "nets" / ("notes.txt" if notes else "layers.py")).write_text("X = 1\n")
    source = _LIBRARY_RUNS[0].replace("import somelib", "import nets.zoo").replace("somelib.", "nets.zoo.")
    messages = _messages(source, "2.9", tmp_path)
    if notes:
        assert [m.split(": ")[1].split(",")[0] for m in messages] == [
            "its model comes from `nets.zoo.build_model(...)`"
        ]
    else:
        assert messages == []
