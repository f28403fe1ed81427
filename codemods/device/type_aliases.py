"""Names that alias ``torch.device`` (``Device = torch.device`` at module level, or imported from a
module of the project that makes it so): from there on the name resolves as torch.device in every
concern, like an import alias; it names the class, not a device."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts
    from codemods.engine.walk import Walk
    from codemods.facts import Facts


def module_alias(walk: Walk, part: DeviceFacts, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """``Device = torch.device``, ``Device: TypeAlias = device`` at module level: True when the
    assignment makes such an alias."""
    if type(target) is not cst.Name or not walk.module_level:
        return False
    qualified = walk.resolve(value) if type(value) in (cst.Name, cst.Attribute) else None
    if qualified not in apis.ALIASED_NAMES:
        return False
    part.table.alias(target.value, qualified)
    part.aliases[target.value] = qualified
    walk.resolve.clear()  # what was resolved before may read the name anew
    return True


def imported_aliases(facts: Facts, part: DeviceFacts, node: cst.ImportFrom) -> None:
    """``from fairseq2.typing import Device``, where that module of the project makes
    ``Device`` an alias of torch.device: the name resolves as torch.device here too."""
    if isinstance(node.names, cst.ImportStar):
        return
    project_names = facts.imports.project_names
    for alias in node.names:
        local = alias.evaluated_alias or alias.evaluated_name
        if local not in project_names:
            continue
        found = facts.project.context.lookup(*project_names[local])
        if found is not None and found.summary is not None and (qualified := found.summary.alias_of(found.name)):
            part.table.alias(local, qualified)  # the walk reads names anew after an import
