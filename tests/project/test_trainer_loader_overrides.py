"""A transformers Trainer subclass in one module of the project whose ``get_train_dataloader``
returns a loader ``self.accelerator.prepare`` never wrapped (Transformers4Rec's shape), used by a
script in another: on XLA the Trainer ends its steps only through the prepared loader, so its steps
get no barrier.  XLA301 reports the override in its module and the call in the script (that
module's summary lists the class), in a run on the project and on the script alone; XLA802 does not
say the Trainer ends every step.  A subclass of such a class in a third module inherits it; an
override that prepares its loader, or calls the base's, is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

LOADERS = """\
from torch.utils.data import DataLoader


class RecLoader(DataLoader):
    @classmethod
    def from_schema(cls, schema, data, batch_size):
        return cls(data, batch_size=batch_size)
"""
TRAINER = """\
from transformers import Trainer as BaseTrainer

from .loaders import RecLoader


class Trainer(BaseTrainer):
    def __init__(self, model, args, schema=None, train_dataloader=None, **kwargs):
        super().__init__(model=model, args=args, **kwargs)
        self.schema = schema
        self.given_loader = train_dataloader

    def get_train_dataloader(self):
        if self.given_loader is not None:
            return self.given_loader
        return RecLoader.from_schema(self.schema, self.train_dataset, self.args.per_device_train_batch_size)
"""
PREPARED = TRAINER.replace(
    "        return RecLoader.from_schema(self.schema, self.train_dataset, self.args.per_device_train_batch_size)\n",
    "        loader = RecLoader.from_schema(self.schema, self.train_dataset, self.args.per_device_train_batch_size)\n"
    "        return self.accelerator.prepare(loader)\n",
).replace("            return self.given_loader\n", "            return self.accelerator.prepare(self.given_loader)\n")
THROUGH_BASE = TRAINER.replace(
    "        if self.given_loader is not None:\n            return self.given_loader\n"
    "        return RecLoader.from_schema(self.schema, self.train_dataset, self.args.per_device_train_batch_size)\n",
    "        return super().get_train_dataloader()\n",
)
SCRIPT = """\
import recs.torch as t4r
from transformers import TrainingArguments


def main():
    args = TrainingArguments(output_dir="out")
    trainer = t4r.Trainer(model=build_model(), args=args, schema=load_schema())
    trainer.train()


if __name__ == "__main__":
    main()
"""
INIT = "from .trainer import Trainer\n"
# A subclass in a third module that keeps the base's loader.
CUSTOM = """\
from recs.torch.trainer import Trainer


class MyTrainer(Trainer):
    def log(self, logs, start_time=None):
        super().log(logs, start_time)
"""
CUSTOM_SCRIPT = SCRIPT.replace("import recs.torch as t4r\n", "from custom import MyTrainer\n").replace(
    "t4r.Trainer(", "MyTrainer("
)


def _findings(
    tmp_path: Path, trainer: str, names: list[str], target: str, script: str = SCRIPT
) -> list[tuple[str, str, int, str]]:
    files = {
        "recs/__init__.py": "",
        "recs/torch/__init__.py": INIT,
        "recs/torch/loaders.py": LOADERS,
        "recs/torch/trainer.py": trainer,
        "custom.py": CUSTOM,
        "run.py": script,
    }
    folder = write_project(tmp_path / "p", "p", files)
    reports = run([(str(folder / name), Job("check", target, RuleSelection())) for name in names], workers=1)
    return [(Path(r.path).name, f.rule, f.line, f.message) for r in reports for f in r.findings]


WHOLE = ["run.py", "custom.py", "recs/torch/trainer.py", "recs/torch/loaders.py", "recs/torch/__init__.py"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [WHOLE, ["run.py"]], ids=["project", "script-alone"])
@pytest.mark.parametrize("script", [SCRIPT, CUSTOM_SCRIPT], ids=["package", "subclass-elsewhere"])
def test_a_trainer_whose_loader_is_not_prepared_is_an_error(
    tmp_path: Path, target: str, names: list[str], script: str
) -> None:
    findings = _findings(tmp_path, TRAINER, names, target, script)
    at_call = [(rule, line, m) for path, rule, line, m in findings if path == "run.py" and rule in ("XLA301", "XLA802")]
    assert [(rule, line) for rule, line, _ in at_call] == [("XLA301", 7), ("XLA802", 7)], findings
    assert "of another module of the project" in at_call[0][2], findings
    assert "self.accelerator.prepare(loader)" in at_call[0][2], findings
    device = "xm.xla_device()" if target == "sagemaker" else "torch_xla.device()"
    assert f"pl.MpDeviceLoader(loader, {device})" in at_call[0][2], findings
    assert "but it does not end the steps of" in at_call[1][2], findings
    assert not any("ends every step itself" in m for _, rule, _, m in findings if rule == "XLA802"), findings
    override = [(rule, line) for path, rule, line, _ in findings if path == "trainer.py" and rule == "XLA301"]
    assert override == ([("XLA301", 12)] if "recs/torch/trainer.py" in names else []), findings


# A script that only evaluates with such a trainer: no training step, no error at its call.
EVALUATES = SCRIPT.replace("    trainer.train()\n", "    print(trainer.evaluate())\n")
# One that hands the trainer to a function (which may train it): the error stands.
HANDS = SCRIPT.replace("    trainer.train()\n", "    fit(trainer, args)\n")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("script", [EVALUATES, HANDS], ids=["evaluates", "hands-on"])
def test_a_trainer_only_evaluated_with_gets_no_error_at_its_call(tmp_path: Path, target: str, script: str) -> None:
    findings = _findings(tmp_path, TRAINER, ["run.py"], target, script)
    at_call = [(rule, line) for path, rule, line, _ in findings if path == "run.py" and rule == "XLA301"]
    assert at_call == ([] if script is EVALUATES else [("XLA301", 7)]), findings


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [WHOLE, ["run.py"]], ids=["project", "script-alone"])
@pytest.mark.parametrize("trainer", [PREPARED, THROUGH_BASE], ids=["prepared", "through-base"])
def test_a_trainer_whose_loader_is_prepared_is_left_alone(
    tmp_path: Path, target: str, names: list[str], trainer: str
) -> None:
    findings = _findings(tmp_path, trainer, names, target)
    assert not any(rule == "XLA301" for _, rule, _, _ in findings), findings
    assert any(rule == "XLA802" and "ends every step itself" in m for _, rule, _, m in findings), findings


@pytest.mark.parametrize("target", TARGETS)
def test_the_findings_change_no_code_and_hold_on_a_second_run(tmp_path: Path, target: str) -> None:
    folder = tmp_path / "p"
    _findings(tmp_path, TRAINER, [], target)
    job = Job("write", target, RuleSelection())
    for _ in range(2):
        reports = run([(str(folder / name), job) for name in WHOLE], workers=1)
        assert (folder / "recs/torch/trainer.py").read_text() == TRAINER
        found = {(Path(r.path).name, f.rule, f.line) for r in reports for f in r.findings if f.rule == "XLA301"}
        assert found == {("run.py", "XLA301", 7), ("trainer.py", "XLA301", 12)}, found
