"""A rule is one unit (docs/dev/architecture.md#adding-a-rule): a new rule module, with its
hooks, registered in its concern's ``RULES``, fires in the pipeline with no other module of
the package edited: hooks on names through the imports, hooks on the nodes a concern's facts
name, on every node of a type, and on the statements that go whole from their line."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import libcst as cst
import pytest

from codemods import convert_source
from codemods.analyse import analyse
from codemods.checkpoint import rules as checkpoint_rules
from codemods.cuda_only import rules as cuda_only_rules
from codemods.engine import hooks, rule
from codemods.engine.rewriter import Context
from codemods.engine.rule import RuleSelection
from codemods.engine.rule_hooks import RuleHooks
from codemods.rules import RULES
from codemods.targets import DEFAULT_TARGET, get_target
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


def _new_rule_module(folder: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> ModuleType:
    package = folder / "new_rules"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "new_rules", raising=False)
    monkeypatch.delitem(sys.modules, f"new_rules.{name}", raising=False)
    return importlib.import_module(f"new_rules.{name}")


def test_a_rule_registered_in_its_concern_runs_its_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registries: None
) -> None:
    before = convert_source(SCRIPT)
    assert {(f.rule, f.line) for f in before.findings} == {("XLA506", 3), ("XLA506", 4)}

    module = _new_rule_module(tmp_path, monkeypatch, "test501_cuda_rng_state", RULE_MODULE)
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


def test_a_hook_on_unhooked_names_leaves_the_concerns_hooked_names_to_their_rules() -> None:
    """XLA506 reports any torch.cuda API no rule of its concern looks at by name (an
    ``unhooked`` hook), but not the names its concern's rules' hooks report (XLA505's seeds)."""
    assert [f.rule for f in convert_source("import torch\n\ntorch.cuda.manual_seed_all(0)\n").findings] == ["XLA505"]
    assert [f.rule for f in convert_source("import torch\n\ntorch.cuda.get_arch_list()\n").findings] == ["XLA506"]


# A rule whose finding needs a concern's facts: its hook runs on the nodes the checkpoint
# facts name (the torch.save calls that are checkpoints) and reads the rest of the sheet.
FACTS_RULE_MODULE = '''
"""TEST503 kept-save."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Rule

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

KEPT_SAVE = Rule(
    code="TEST503",
    name="kept-save",
    severity="info",
    summary="A checkpoint torch.save that xm.save cannot take",
    fixable=False,
)


@on_facts(KEPT_SAVE, nodes=lambda facts: facts.checkpoint.saves)
def _kept(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    problem = ctx.facts.checkpoint.saves[original]
    if problem is not None:
        ctx.report(KEPT_SAVE, original, f"`{ctx.code(original.func)}` stays: {problem}")
    return updated
'''

SAVES = """\
import torch
from torch.utils.data import Dataset


class Cache(Dataset):
    def __getitem__(self, i):
        torch.save(self.items[i], self.path(i), pickle_protocol=4)


torch.save(state, "a.pt")
torch.save(state, "b.pt", pickle_protocol=4)
"""


def test_a_rule_registered_in_its_concern_runs_its_hooks_on_the_nodes_its_facts_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registries: None
) -> None:
    """The hook runs on the saves the checkpoint facts hold, and on nothing else: not on the
    Dataset's save, which the analysis does not count as a checkpoint (the negative case)."""
    before = convert_source(SAVES)
    assert [f.rule for f in before.findings] == ["XLA001", "XLA401"]  # the import xm.save needs, the save at the end

    module = _new_rule_module(tmp_path, monkeypatch, "test503_kept_save", FACTS_RULE_MODULE)
    monkeypatch.setattr(checkpoint_rules, "RULES", (*checkpoint_rules.RULES, module.KEPT_SAVE))

    after = convert_source(SAVES)
    assert output_text(after) == output_text(before)
    assert [f for f in after.findings if f.rule != "TEST503"] == before.findings
    # Line 12 of the output (the file gains the import of xm): the last save, which stays.
    assert [(f.line, f.message) for f in after.findings if f.rule == "TEST503"] == [
        (12, "`torch.save` stays: xm.save takes no pickle_protocol")
    ]


# A rule whose statements go whole from their line (as XLA106's set-device calls do), and that
# reports on the module once the traversal has left it (as XLA111 reports the broken proofs).
STATEMENTS_RULE_MODULE = '''
"""TEST504 rng-state-read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codemods.engine.hooks import on_nodes, removes_statements
from codemods.engine.rule import Rule

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context

RNG_STATE_READ = Rule(
    code="TEST504",
    name="rng-state-read",
    severity="info",
    summary="A read of the CUDA generator's state whose value no one keeps",
    fixable=True,
)


@removes_statements(RNG_STATE_READ)
def _unkept(ctx: Context[Any], statement: cst.BaseSmallStatement) -> str | None:
    import libcst as cst

    if type(statement) is cst.Expr and type(statement.value) is cst.Call:
        if ctx.resolve(statement.value.func) == "torch.cuda.get_rng_state":
            return f"removed `{ctx.code(statement.value)}`: its value is not kept"
    return None


@on_nodes(RNG_STATE_READ, types="Module")
def _left(ctx: Context[Any], original: cst.Module, updated: cst.Module) -> cst.Module:
    removed = sum(1 for finding in ctx.findings if finding.rule is RNG_STATE_READ)
    ctx.report(RNG_STATE_READ, original.body[0], f"{removed} removed")
    return updated
'''

READS = """\
import torch

torch.cuda.get_rng_state()
torch.cuda.get_rng_state(); seed = 1
if seed:
    torch.cuda.get_rng_state()
if seed: torch.cuda.get_rng_state()
state = torch.cuda.get_rng_state()
"""


def test_a_rule_registered_in_its_concern_removes_statements_and_runs_its_hooks_on_a_node_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registries: None
) -> None:
    """Each read that keeps no value goes from its line (the line with it, a ``pass`` where a
    block is left empty, the other statement of its line kept), the one whose value is kept
    stays (the negative case); the module hook runs once, after them."""
    module = _new_rule_module(tmp_path, monkeypatch, "test504_rng_state_read", STATEMENTS_RULE_MODULE)
    monkeypatch.setattr(cuda_only_rules, "RULES", (*cuda_only_rules.RULES, module.RNG_STATE_READ))

    after = convert_source(READS)
    assert output_text(after) == (
        "import torch\n\nseed = 1\nif seed:\n    pass\nif seed: pass\nstate = torch.cuda.get_rng_state()\n"
    )
    assert [(f.line, f.message) for f in after.findings if f.rule == "TEST504"] == [
        (1, "4 removed"),
        (3, "removed `torch.cuda.get_rng_state()`: its value is not kept"),
        (3, "removed `torch.cuda.get_rng_state()`: its value is not kept"),
        (5, "removed `torch.cuda.get_rng_state()`: its value is not kept"),
        (6, "removed `torch.cuda.get_rng_state()`: its value is not kept"),
    ]


def test_a_file_whose_facts_name_no_such_node_hands_the_rule_hooks_nothing() -> None:
    """The rewrite's traversal calls a concern of rule hooks only on the node types its
    hooks' nodes have in this file: none for a file without checkpoints."""
    ctx = Context(
        analyse(cst.parse_module("import torch\n\nmodel = torch.nn.Linear(2, 2)\n")),
        get_target(DEFAULT_TARGET),
        RuleSelection(),
        lambda rule, node: False,
    )
    hooks_of_checkpoints = RuleHooks(ctx, checkpoint_rules.RULES)
    assert list(hooks_of_checkpoints.leave_handlers()) == []
    assert hooks_of_checkpoints.reference_handler() is None


def test_every_fact_hook_reads_nodes_the_fact_sheet_holds() -> None:
    """A hook's ``nodes`` is a lambda over the sheet, which mypy cannot check from the
    engine: each reads a part the sheet has, here of a file whose facts are empty."""
    facts = analyse(cst.parse_module("import torch\n"))
    fact_hooks = [hook for each in RULES for hook in hooks.hooks_of(each) if isinstance(hook, hooks.OnFacts)]
    assert {hook.rule.code for hook in fact_hooks} >= {"XLA401", "XLA402", "XLA403", "XLA404", "XLA821", "XLA822"}
    for hook in fact_hooks:
        assert list(hook.nodes(facts)) == []
