"""XLA001, XLA002: imports that rewritten code needs, and imports that rewrites left unused.
Both are made as the rewrite leaves the module, once everything else has asked for what it
needs (the imports concern is the last of concerns.py's list): XLA002's hook removes the stale
imports, then XLA001's adds the new ones after the file's torch imports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_nodes
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A loop that runs before the file's import of xm: there the import binds nothing yet (2.9's port;
# sagemaker's is the same but for its barrier and the one import it adds).
_IMPORT_AFTER_CODE = """
import torch

for x, y in loader:
    loss_fn(model(x), y).backward()
    optimizer.step()
import torch_xla.core.xla_model as xm
"""
_IMPORT_AFTER_CODE_PORTED = substituted(
    _IMPORT_AFTER_CODE,
    ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
    ("    optimizer.step()\n", "    xm.optimizer_step(optimizer)\n    torch_xla.sync()\n"),
)

ADD_IMPORT = Rule(
    code="XLA001",
    name="add-import",
    severity="info",
    summary="Add the torch_xla imports that rewritten code uses",
    fixable=True,
    why="Rewritten code calls torch_xla, so its imports are added: once, after the file's torch imports, "
    "under the file's own alias where it has one.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = torch.nn.Linear(4, 2)
            torch.save(model.state_dict(), "model.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            model = torch.nn.Linear(4, 2)
            xm.save(model.state_dict(), "model.pt")
            """,
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            torch.save(model.state_dict(), "m.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save(model.state_dict(), "m.pt")
            """,
            note="already-imported",
        ),
        valid(
            """
            import torch
            from torch_xla.core import xla_model as xmod

            torch.save(state, "m.pt")
            """,
            """
            import torch
            from torch_xla.core import xla_model as xmod

            xmod.save(state, "m.pt")
            """,
            note="existing-alias-honoured",
        ),
    ),
    invalid=lambda: (
        # Findings of ``rule`` the case must give: (line in the output, text in the message).
        invalid(
            """
            \"\"\"Trainer.\"\"\"
            import os
            import torch
            import numpy as np

            model = torch.nn.Linear(2, 2)
            torch.save(model.state_dict(), "m.pt")
            """,
            """
            \"\"\"Trainer.\"\"\"
            import os
            import torch
            import torch_xla.core.xla_model as xm
            import numpy as np

            model = torch.nn.Linear(2, 2)
            xm.save(model.state_dict(), "m.pt")
            """,
            note="after-torch-import",
            findings=(Expected(4, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
        invalid(
            """
            import torch as th
            import torch.nn as nn

            th.save(state, "m.pt")
            """,
            """
            import torch as th
            import torch.nn as nn
            import torch_xla.core.xla_model as xm

            xm.save(state, "m.pt")
            """,
            alias=True,
            findings=(Expected(3, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
        invalid(
            """
            import torch

            xm = build_experiment_manager()
            torch.save(state, "m.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model

            xm = build_experiment_manager()
            torch_xla.core.xla_model.save(state, "m.pt")
            """,
            note="alias-taken",
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model` for the rewritten code"),),
        ),
        invalid(
            """
            import torch
            import pytorch_lightning as pl

            device = torch.device("cuda")
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.parallel_loader
            import pytorch_lightning as pl

            device = torch_xla.device()
            for x, y in torch_xla.distributed.parallel_loader.MpDeviceLoader(train_loader, device):
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            note="alias-bound-by-an-unused-import",
            findings=(
                Expected(2, 1, "`import torch_xla` for the rewritten code"),
                Expected(3, 1, "`import torch_xla.distributed.parallel_loader` for the rewritten code"),
            ),
        ),
        invalid(
            """
            import torch

            def get_device():
                import torch_xla.core.xla_model as xm
                return xm.xla_device()

            def step(optimizer):
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model

            def get_device():
                import torch_xla.core.xla_model as xm
                return torch_xla.device()

            def step(optimizer):
                torch_xla.core.xla_model.optimizer_step(optimizer)
            """,
            note="function-local-import-is-not-module-wide",
            findings=(
                Expected(2, 1, "`import torch_xla` for the rewritten code"),
                Expected(3, 1, "`import torch_xla.core.xla_model` for the rewritten code"),
            ),
        ),
        # An import that module-level code runs before binds nothing there: the rewritten
        # loop gets its own import (converting the output again then changes nothing).
        invalid(
            _IMPORT_AFTER_CODE,
            _IMPORT_AFTER_CODE_PORTED,
            note="import-after-code-is-not-module-wide",
            findings=(
                Expected(2, 1, "`import torch_xla` for the rewritten code"),
                Expected(3, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),
            ),
        ),
        invalid(
            _IMPORT_AFTER_CODE,
            substituted(_IMPORT_AFTER_CODE_PORTED, ("import torch_xla\n", ""), ("torch_xla.sync()", "xm.mark_step()")),
            target="sagemaker",
            note="import-after-code-is-not-module-wide-sagemaker",
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
        # A name used before its import (here on the loop's first pass) means what the
        # import binds: once the rewrite imports it at the top, the output reads the same.
        invalid(
            """
            import torch

            for x, y in loader:
                device = xm.xla_device()
                import torch_xla.core.xla_model as xm
                loss_fn(model(x.to(device)), y).backward()
            """,
            """
            import torch
            import torch_xla

            for x, y in loader:
                device = torch_xla.device()
                import torch_xla.core.xla_model as xm
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            note="name-used-before-its-import",
            findings=(Expected(2, 1, "`import torch_xla` for the rewritten code"),),
        ),
        invalid(
            """
            import torch

            for x, y in loader:
                device = xm.xla_device()
                import torch_xla.core.xla_model as xm
                loss_fn(model(x.to(device)), y).backward()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            for x, y in loader:
                device = xm.xla_device()
                import torch_xla.core.xla_model as xm
                loss_fn(model(x.to(device)), y).backward()
                xm.mark_step()
            """,
            target="sagemaker",
            note="name-used-before-its-import-sagemaker",
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
        # ``torch_xla`` never imported can only be the package: its barrier is one (the
        # rewrite's ``import torch_xla`` would make it one on a second pass).
        invalid(
            """
            import torch

            device = torch.device("cuda")
            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            note="torch-xla-never-imported",
            findings=(Expected(2, 1, "`import torch_xla` for the rewritten code"),),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda")
            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                xm.mark_step()
            """,
            target="sagemaker",
            note="torch-xla-never-imported-sagemaker",
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
    ),
)

REMOVE_STALE_IMPORT = Rule(
    code="XLA002",
    name="remove-stale-import",
    severity="info",
    summary="Remove an import that a rewrite left unused",
    fixable=True,
    why="A rewrite can leave an import unused (`xm` once `xm.xla_device()` is `torch_xla.device()`); it is "
    "removed so the file imports what it uses. Imports the tool did not make unused are left alone.",
    examples=lambda: (
        invalid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
            findings=(Expected(3, 1, "removed unused import `torch_xla.core.xla_model` as xm"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            import json

            device = xm.xla_device()
            xm.master_print("ready")
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            import json

            device = torch_xla.device()
            xm.master_print("ready")
            """,
            note="still-used-and-untouched-unused",
        ),
        valid(
            """
            import os
            import torch

            device = torch.device(f"cuda:{os.environ['LOCAL_RANK']}")
            os.makedirs("out", exist_ok=True)
            """,
            """
            import os
            import torch
            import torch_xla

            device = torch_xla.device()
            os.makedirs("out", exist_ok=True)
            """,
            note="name-still-used-after-a-replacement",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from torch.cuda import synchronize, memory_allocated

            synchronize()
            print(memory_allocated())
            """,
            """
            import torch
            from torch.cuda import memory_allocated
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            print(memory_allocated())
            """,
            note="from-import-name",
            alias=True,
            findings=(Expected(2, 1, "removed unused import `synchronize`"),),
        ),
    ),
)


@on_nodes(REMOVE_STALE_IMPORT, types="Module")
def _remove_stale_imports(ctx: Context[Facts], original: cst.Module, updated: cst.Module) -> cst.Module:
    """The imports whose every use a rewrite discarded go (``ctx.imports.unused``, which
    XLA001's hook reads: none of them is added); the added imports follow the file's torch
    imports (``facts.imports.anchor``) where it stands now (``ctx.now_at``)."""
    from codemods.engine.imports import import_lines, used_names
    from codemods.engine.rewriter import without_statements

    imports = ctx.imports
    candidates = {name for name in imports.discarded_names if imports.removable(name)}
    unused = candidates - used_names(updated, candidates) if candidates else set()
    unused = imports.unused = imports.keep_packages_loaded(unused)
    body = list(updated.body)
    anchor = ctx.facts.imports.anchor
    after = ctx.result_of(anchor) if anchor is not None else None
    insert_at = next((i + 1 for i, s in enumerate(body) if s is after), 0)

    originals = import_lines(list(original.body))
    updates = import_lines(body)
    paired = zip(updates, originals) if len(originals) == len(updates) else ((u, None) for u in updates)
    to_remove: set[cst.CSTNode] = set()
    for statement, source in paired:
        pruned = _pruned(ctx, statement, source, unused)
        if pruned is statement:
            continue
        index = body.index(statement)
        if pruned is None:
            to_remove.add(statement)
        else:
            body[index] = pruned
    if to_remove:
        insert_at -= sum(1 for s in body[:insert_at] if s in to_remove)
        kept = [s for s in body if s not in to_remove]
        body = list(without_statements(updated.with_changes(body=body), to_remove).body)
        ctx.rebuilt(kept, body)
    if anchor is not None:
        ctx.now_at(anchor, body[insert_at - 1] if insert_at else None)
    return updated.with_changes(body=body)


def _pruned(
    ctx: Context[Facts], statement: cst.SimpleStatementLine, source: cst.SimpleStatementLine | None, unused: set[str]
) -> cst.SimpleStatementLine | None:
    """The import line without the names that rewrites left unused (None: nothing left)."""
    import libcst as cst

    from codemods.engine.imports import local_name

    small: list[cst.BaseSmallStatement] = []
    changed = False
    for item in statement.body:
        if type(item) is cst.ImportFrom and type(item.names) is cst.ImportStar:
            small.append(item)
            continue
        names = list(item.names)  # type: ignore[attr-defined]  # an import line's items are Import or ImportFrom (typed BaseSmallStatement); the star import continued above
        kept = [a for a in names if local_name(a, type(item) is cst.Import) not in unused]
        if len(kept) == len(names):
            small.append(item)
            continue
        for alias in names:
            if alias not in kept:
                done = ctx.fix(
                    REMOVE_STALE_IMPORT,
                    source,
                    f"removed unused import `{ctx.code(alias.name)}`"
                    + (f" as {ctx.code(alias.asname.name)}" if alias.asname else ""),
                    lambda: alias,  # noqa: B023 - fix() calls it at once
                )
                if done is None:
                    kept.append(alias)
        if len(kept) == len(names):
            small.append(item)
            continue
        changed = True
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            small.append(item.with_changes(names=kept))
    if not changed:
        return statement
    if not small:
        return None
    small[-1] = small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=small)


# Packages imported only for what importing them registers: say so, for linters too.
_REGISTERS = {
    "torch_xla": 'the "xla" device',
    "torch_xla.distributed.xla_backend": 'the "xla" process group backend',
}


@on_nodes(ADD_IMPORT, types="Module")
def _add_imports(ctx: Context[Facts], original: cst.Module, updated: cst.Module) -> cst.Module:
    """The imports the rewritten code uses (``ctx.imports.added``), once each, after the file's
    torch imports; a package imported for what it registers says so."""
    import libcst as cst

    from codemods.engine.imports import local_name, used_names

    imports = ctx.imports
    body = list(updated.body)
    anchor = ctx.facts.imports.anchor
    after = ctx.result_of(anchor) if anchor is not None else None
    insert_at = next((i + 1 for i, s in enumerate(body) if s is after), 0)
    added = {k: v for k, v in imports.added.items() if local_name(v.names[0], True) not in imports.unused}
    required = {key for key in added if key in imports.required_packages}
    in_use = used_names(updated, required) if required else set()  # (one walk for all of them)
    for key, added_import in sorted(added.items()):
        line = cst.SimpleStatementLine(body=[added_import])
        if key in imports.required_packages:
            # Importing a submodule loads the package too; a plain one also binds its name.
            loaders = [other for other in added if other.startswith(key + ".")]
            used = key in in_use
            if loaders and (not used or any(" as " not in other for other in loaders)):
                continue
            if not used:
                line = line.with_changes(
                    trailing_whitespace=cst.TrailingWhitespace(
                        whitespace=cst.SimpleWhitespace("  "),
                        comment=cst.Comment(f"# noqa: F401  (registers {_REGISTERS.get(key, 'what the code uses')})"),
                    )
                )
        ctx.fix(
            ADD_IMPORT,
            anchor,
            f"added `import {key}` for the rewritten code",
            lambda: line,  # noqa: B023 - fix() calls it at once
            result=lambda n: n,
        )
        body.insert(insert_at, line)
        insert_at += 1
    return updated.with_changes(body=body)


# The stale imports go first: the added ones follow the file's torch imports where they are then.
RULES = (REMOVE_STALE_IMPORT, ADD_IMPORT)
