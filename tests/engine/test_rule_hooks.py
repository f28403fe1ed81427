"""A rule is one unit (docs/dev/architecture.md#adding-a-rule): a new rule module, with its
hooks, registered in its concern's ``RULES``, fires in the pipeline with no other module of
the package edited."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

from codemods import convert_source
from codemods.cuda_only import rules as cuda_only_rules
from codemods.engine import hooks, rule
from codemods.engine.rule_hooks import hooked_names
from tests.support.fixtures import output_text

# A rule as a contributor writes it, in a module of its own: a report on references and a
# fix on calls.
RULE_MODULE = '''
"""TEST501 cuda-rng-state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codemods.engine.hooks import on_calls, reports_references
from codemods.engine.rule import Rule

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context

CUDA_RNG_STATE = Rule(
    code="TEST501",
    name="cuda-rng-state",
    severity="warning",
    summary="The CUDA generator's state is not the XLA device's",
    fixable=True,
)

reports_references(CUDA_RNG_STATE, "torch.cuda.get_rng_state_all", "reads only CUDA generators")


@on_calls(CUDA_RNG_STATE, names="torch.cuda.get_rng_state")
def _host_state(ctx: Context[Any], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    import libcst as cst

    return ctx.fix_or_keep(
        updated,
        CUDA_RNG_STATE,
        original,
        f"{ctx.code(original)} -> {{new}}: the CUDA generator is not the XLA device's",
        lambda: updated.with_changes(func=cst.parse_expression("torch.get_rng_state"), args=()),
    )
'''

SCRIPT = """\
import torch

state = torch.cuda.get_rng_state()
states = torch.cuda.get_rng_state_all()
"""


@pytest.fixture
def registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules' and hooks' registries as they are, restored after the test."""
    monkeypatch.setattr(rule, "_BY_CODE", dict(rule._BY_CODE))
    monkeypatch.setattr(hooks, "_BY_CODE", defaultdict(list, {code: list(h) for code, h in hooks._BY_CODE.items()}))
    monkeypatch.setattr(hooks, "_NAMES", set(hooks._NAMES))
    monkeypatch.setattr(hooks, "_MODULES", list(hooks._MODULES))
    monkeypatch.setattr(hooks, "_modules", hooks._modules)


def _new_rule_module(folder: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    package = folder / "new_rules"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "test501_cuda_rng_state.py").write_text(textwrap.dedent(RULE_MODULE))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "new_rules", raising=False)
    monkeypatch.delitem(sys.modules, "new_rules.test501_cuda_rng_state", raising=False)
    return importlib.import_module("new_rules.test501_cuda_rng_state")


def test_a_rule_registered_in_its_concern_runs_its_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registries: None
) -> None:
    before = convert_source(SCRIPT)
    assert {(f.rule, f.line) for f in before.findings} == {("XLA506", 3), ("XLA506", 4)}

    module = _new_rule_module(tmp_path, monkeypatch)
    # Its registration: the one line a contributor adds to the concern's rules/__init__.py.
    monkeypatch.setattr(cuda_only_rules, "RULES", (*cuda_only_rules.RULES, module.CUDA_RNG_STATE))

    after = convert_source(SCRIPT)
    assert output_text(after) == SCRIPT.replace("torch.cuda.get_rng_state()", "torch.get_rng_state()")
    assert [(f.rule, f.line, f.message, f.fixed) for f in after.findings] == [
        (
            "TEST501",
            3,
            "torch.cuda.get_rng_state() -> torch.get_rng_state(): the CUDA generator is not the XLA device's",
            True,
        ),
        ("TEST501", 4, "`torch.cuda.get_rng_state_all` reads only CUDA generators", False),
    ]


def test_a_name_a_hook_looks_at_is_visited_by_the_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registries: None
) -> None:
    """Outside the prefixes the rewrites inspect anyway (torch.cuda., torch_xla., ...), a
    hooked name is still marked for the traversal (analyse.inspected reads hooks.looked_at)."""
    module = ModuleType("outside")
    exec(  # a rule on a name no table lists, built the way a rule module builds it
        "from codemods.engine.hooks import reports_references\n"
        "from codemods.engine.rule import Rule\n"
        'RULE = Rule(code="TEST502", name="numpy-seed", severity="info", summary="s", fixable=False)\n'
        'reports_references(RULE, "numpy.random.seed", "seeds NumPy only")\n',
        module.__dict__,
    )
    monkeypatch.setattr(cuda_only_rules, "RULES", (*cuda_only_rules.RULES, module.RULE))
    conversion = convert_source("import numpy as np\nimport torch\n\nnp.random.seed(0)\n")
    assert [(f.rule, f.line, f.col) for f in conversion.findings] == [("TEST502", 4, 1)]


def test_the_concern_leaves_its_rules_hooked_names_to_them() -> None:
    """The CUDA runtime rewrite reports any torch.cuda API no rule handles (XLA506), but not
    the names its rules' hooks report (XLA505's seeds)."""
    assert "torch.cuda.manual_seed_all" in hooked_names(cuda_only_rules.RULES)
    findings = convert_source("import torch\n\ntorch.cuda.manual_seed_all(0)\n").findings
    assert [f.rule for f in findings] == ["XLA505"]
