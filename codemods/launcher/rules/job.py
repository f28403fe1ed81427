"""What the launcher rules' checks share: the findings and planned fixes of a launcher
script (one report per rule, node and message; one fix per node and rule), the estimator
call a check reads with the instance it runs on, and the value and literal helpers that
several rules need.  The rules' modules load it inside their checks; the launcher's
driver (``launcher/rewrite.py``) applies the planned fixes as the traversal leaves each
node."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.positions import code_of
from codemods.launcher import instances
from codemods.launcher.facts import Constant, Estimator, Mapping, Unknown, Value
from codemods.launcher.rules.sm100_launcher_unresolved import INSTANCE_DEPENDENTS, LAUNCHER_UNRESOLVED, could_not_check

if TYPE_CHECKING:
    from codemods.engine.rewriter import Context
    from codemods.engine.rule import Rule
    from codemods.facts import Facts


@dataclass
class Edit:
    """A planned fix: ``build`` makes the new node from the updated one; ``anchor`` picks,
    from what ``build`` made, the node the finding points at."""

    rule: Rule
    message: str
    build: Callable[[cst.CSTNode], cst.CSTNode]
    anchor: Callable[[cst.CSTNode], cst.CSTNode] | None = None


class Findings:
    """The launcher script's findings, recorded at once, and its fixes, planned per node
    (the same dict literal may feed several estimators: it is reported and edited once)."""

    def __init__(self, ctx: Context[Facts]) -> None:
        self.ctx = ctx
        self.edits: dict[int, list[Edit]] = defaultdict(list)
        self.reported: set[tuple[str, int, str]] = set()

    def report(self, rule: Rule, node: cst.CSTNode, message: str) -> None:
        key = (rule.code, id(node), message)
        if key not in self.reported:
            self.reported.add(key)
            self.ctx.report(rule, node, message)

    def unknown(self, value: Unknown, what: str) -> None:
        self.report(LAUNCHER_UNRESOLVED, value.node, could_not_check(what, value.why))

    def plan(self, node: cst.CSTNode, edit: Edit) -> None:
        planned = self.edits[id(node)]
        if all(e.rule is not edit.rule for e in planned):
            planned.append(edit)


class Job:
    """One estimator call under check, and where its findings go."""

    def __init__(self, findings: Findings, estimator: Estimator) -> None:
        self.findings = findings
        self.estimator = estimator

    @cached_property
    def instance(self) -> tuple[str, instances.InstanceType] | None:
        """The instance type and its table entry; None (reported once) when unknown."""
        report = self.findings
        value = self.estimator.value("instance_type")
        if isinstance(value, Unknown):
            report.unknown(value, INSTANCE_DEPENDENTS)
            return None
        name = value.value if isinstance(value, Constant) else None
        if not isinstance(value, Constant) or not isinstance(name, str):
            if value is None and self.estimator.hidden is None and "instance_groups" not in self.estimator.arguments:
                why = "the estimator has no instance_type"
                report.report(LAUNCHER_UNRESOLVED, self.estimator.call, could_not_check(INSTANCE_DEPENDENTS, why))
            return None
        entry = instances.lookup(name)
        if entry is None:
            why = f"{name!r} is not in the tool's table of SageMaker instance types"
            report.report(LAUNCHER_UNRESOLVED, value.node, could_not_check(INSTANCE_DEPENDENTS, why))
            return None
        return name, entry

    def instance_count(self) -> int | Unknown | None:
        value = self.estimator.value("instance_count")
        if value is None:
            return 1
        if isinstance(value, Unknown):
            return value
        return value.value if isinstance(value, Constant) and isinstance(value.value, int) else None


def entry_value(value: Value | None, key: str) -> Value | None:
    """The value under ``key`` of a mapping; None for anything else."""
    return value.get(key) if isinstance(value, Mapping) else None


def constant(value: Value | None, default: object) -> object:
    """The constant's value; ``default`` for a missing value; None when not a constant."""
    if value is None:
        return default
    return value.value if isinstance(value, Constant) else None


def positive_int(value: Value | None) -> int | None:
    return value.value if isinstance(value, Constant) and isinstance(value.value, int) and value.value > 0 else None


def code(node: cst.CSTNode) -> str:
    return code_of(node).strip()


def string_like(template: cst.CSTNode, text: str) -> cst.SimpleString:
    """A string literal holding ``text`` with the prefix and quotes of ``template``."""
    prefix, quote = ("", '"')
    if isinstance(template, cst.SimpleString):
        prefix, quote = template.prefix, template.quote
    if "\\" in text or "\n" in text or quote[0] in text:
        literal = repr(text)
    else:
        literal = f"{prefix}{quote}{text}{quote}"
    return cst.SimpleString(literal, lpar=getattr(template, "lpar", ()), rpar=getattr(template, "rpar", ()))
