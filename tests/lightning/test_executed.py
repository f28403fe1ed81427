"""Lightning and Fabric fixtures, converted, against the installed Lightning (2.6.6).

Lightning's XLA accelerator only counts TPU chips, so it refuses torch_xla's CPU
device ("XLAAccelerator can not run on your system"): the converted scripts cannot
train here.  What is checked instead:
  * the converted script, run with PJRT_DEVICE=CPU, gets past Lightning's validation
    of its strategy and precision names and stops only at that availability check
    (the original stops at the CUDA one);
  * each converted accelerator, strategy and precision is what Lightning's own
    registries and XLA precision plugin take: the "tpu" accelerator is
    XLAAccelerator, the strategy is an XLA strategy, XLAPrecision(precision) builds
    (the original values fail these checks).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.fixtures import output_bytes
from tests.support.paths import FIXTURES

pytestmark = pytest.mark.executed

lightning = pytest.importorskip("lightning")
FIXTURE_KINDS = {"lightning_trainer.py": "trainer", "fabric_loop.py": "fabric"}
NOT_AVAILABLE = "XLAAccelerator` can not run on your system since the accelerator is not available"


def settings(source: str) -> dict[str, str]:
    """The accelerator, strategy and precision a script gives its Trainer or Fabric:
    literals, module-level names and argparse defaults."""
    tree = ast.parse(source)
    assignments = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)]
    names = {t.id: n.value for n in assignments for t in n.targets if isinstance(t, ast.Name)}
    defaults = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            if (
                default is not None
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                defaults[node.args[0].value.lstrip("-").replace("-", "_")] = default
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        callee = getattr(node, "func", None)
        if isinstance(node, ast.Call) and getattr(callee, "attr", getattr(callee, "id", "")) in ("Trainer", "Fabric"):
            for keyword in node.keywords:
                value = keyword.value
                if isinstance(value, ast.Name):
                    value = names.get(value.id, value)
                elif isinstance(value, ast.Attribute):
                    value = defaults.get(value.attr, value)
                if keyword.arg in ("accelerator", "strategy", "precision") and isinstance(value, ast.Constant):
                    found[keyword.arg] = str(value.value)
    return found


def xla_problems(values: dict[str, str], kind: str) -> list[str]:
    """What Lightning's registries and XLA precision plugin say of the values."""
    if kind == "trainer":
        from lightning.pytorch.accelerators import AcceleratorRegistry as accelerators
        from lightning.pytorch.accelerators import XLAAccelerator
        from lightning.pytorch.plugins.precision import XLAPrecision
        from lightning.pytorch.strategies import StrategyRegistry as strategies
        from lightning.pytorch.strategies import XLAStrategy as XLA
    else:
        from lightning.fabric.accelerators import ACCELERATOR_REGISTRY as accelerators
        from lightning.fabric.accelerators import XLAAccelerator
        from lightning.fabric.plugins.precision import XLAPrecision
        from lightning.fabric.strategies import STRATEGY_REGISTRY as strategies
        from lightning.fabric.strategies import XLAStrategy as XLA
    problems = []
    accelerator = values.get("accelerator")
    if accelerator not in accelerators or accelerators[accelerator]["accelerator"] is not XLAAccelerator:
        problems.append(f"accelerator {values.get('accelerator')!r} is not Lightning's XLA accelerator")
    strategy = values.get("strategy")
    if strategy not in strategies or "XLA" not in strategies[strategy]["strategy"].__name__:
        problems.append(f"strategy {strategy!r} is not an XLA strategy ({XLA.__name__}, ...)")
    try:
        XLAPrecision(precision=values.get("precision", "32-true"))
    except ValueError as error:
        problems.append(str(error))
    return problems


@pytest.mark.parametrize("script", sorted(FIXTURE_KINDS))
def test_converted_lightning_settings_are_lightnings_xla_ones(script: str) -> None:
    original = (FIXTURES / script).read_text()
    converted = output_bytes(convert_source(original.encode())).decode()
    kind = FIXTURE_KINDS[script]
    assert not xla_problems(settings(converted), kind), settings(converted)
    assert len(xla_problems(settings(original), kind)) == 3, settings(original)  # each original value selects CUDA


@pytest.mark.parametrize("script", sorted(FIXTURE_KINDS))
def test_converted_lightning_script_stops_only_at_xla_availability(script: str, tmp_path: Path) -> None:
    converted = tmp_path / script
    converted.write_bytes(output_bytes(convert_source((FIXTURES / script).read_bytes())))
    env = {"PATH": "/usr/bin:/bin", "PJRT_DEVICE": "CPU", "CUDA_VISIBLE_DEVICES": "", "HOME": str(tmp_path)}
    run = subprocess.run([sys.executable, script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and NOT_AVAILABLE in run.stderr, run.stderr[-2000:]
    original = subprocess.run(
        [sys.executable, str(FIXTURES / script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert original.returncode != 0 and NOT_AVAILABLE not in original.stderr, original.stderr[-2000:]


# What Lightning's XLAStrategy.setup does (lightning/pytorch/strategies/xla.py, 2.6.6): move the
# module, then ask it for its optimizers and move their state (not their parameters).
PREBUILT = """\
import torch
import torch_xla
from lightning.fabric.utilities.optimizer import _optimizers_to_device
from lightning.pytorch import LightningModule


class System(LightningModule):
    def __init__(self, model, optimizer, own):
        super().__init__()
        self.model, self.optimizer, self.own = model, optimizer, own

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5) if self.own else self.optimizer


for own in (False, True):
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 2)
    system = System(model, torch.optim.SGD(model.parameters(), lr=0.5), own)
    device = torch_xla.device()
    system.to(device)
    optimizer = system.configure_optimizers()
    _optimizers_to_device([optimizer], device)
    before = system.model.weight.detach().cpu().clone()
    system.model(torch.ones(1, 2, device=device)).sum().backward()
    optimizer.step()
    torch_xla.sync()
    print("own" if own else "prebuilt", bool(torch.equal(before, system.model.weight.detach().cpu())))
"""


def test_a_prebuilt_optimizer_leaves_the_xla_weights_unchanged(tmp_path: Path) -> None:
    """XLA822's claim on an optimizer built before Lightning moves the module: the XLA weights
    never change; built in configure_optimizers from self.parameters() (the advice, and the
    negative control), they do."""
    (tmp_path / "prebuilt.py").write_text(PREBUILT)
    env = {"PATH": "/usr/bin:/bin", "PJRT_DEVICE": "CPU", "CUDA_VISIBLE_DEVICES": "", "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "prebuilt.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["prebuilt", "True", "own", "False"], run.stdout
