"""Imports: add the imports that rewritten code uses, once, after the file's torch
imports (XLA001); drop imports whose every use a rewrite removed (XLA002)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import children, dotted
from codemods.engine.rewriter import Concern, without_statements
from codemods.imports.rules import ADD_IMPORT, REMOVE_STALE_IMPORT

if TYPE_CHECKING:
    from codemods.facts import Facts


def _imports_of(body: list[cst.BaseStatement]) -> list[cst.SimpleStatementLine]:
    return [
        s
        for s in body
        if type(s) is cst.SimpleStatementLine and all(type(i) in (cst.Import, cst.ImportFrom) for i in s.body)
    ]


def _local_name(alias: cst.ImportAlias, plain_import: bool) -> str:
    if alias.asname is not None:
        return dotted(alias.asname.name) or ""
    name = dotted(alias.name) or ""
    return name.split(".")[0] if plain_import else name


# Packages imported only for what importing them registers: say so, for linters too.
_REGISTERS = {
    "torch_xla": 'the "xla" device',
    "torch_xla.distributed.xla_backend": 'the "xla" process group backend',
}


def _registers(package: str) -> cst.TrailingWhitespace:
    return cst.TrailingWhitespace(
        whitespace=cst.SimpleWhitespace("  "),
        comment=cst.Comment(f"# noqa: F401  (registers {_REGISTERS.get(package, 'what the code uses')})"),
    )


def _used_names(module: cst.Module, wanted: set[str]) -> set[str]:
    """Which of ``wanted`` the code uses, import statements aside (walked over the node
    fields: a LibCST visitor would rebuild the whole module)."""
    used: set[str] = set()
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            if node.value in wanted:  # type: ignore[attr-defined]  # narrowed by ``kind``, the node's type, which mypy does not carry over to the node: a test of the node itself would cost every node
                used.add(node.value)  # type: ignore[attr-defined]  # as above
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(node.value)  # type: ignore[attr-defined]  # as above; `x.save`, `f(save=...)` use no name `save`
        elif kind is not cst.Import and kind is not cst.ImportFrom:
            stack.extend(children(node))
    return used


class ImportsRewrite(Concern):
    facts: Facts

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        imports = self.ctx.imports
        candidates = {name for name in imports.discarded_names if imports.removable(name)}
        if candidates:
            self.unused = candidates - _used_names(updated, candidates)
        else:
            self.unused = set()
        self.unused = imports.keep_packages_loaded(self.unused)
        body: list[cst.BaseStatement] = list(updated.body)
        anchor = self.ctx.result_of(self.facts.imports.anchor) if self.facts.imports.anchor is not None else None
        insert_at = next((i + 1 for i, s in enumerate(body) if s is anchor), 0)

        originals = _imports_of(list(original.body))
        updates = _imports_of(body)
        paired = zip(updates, originals) if len(originals) == len(updates) else ((u, None) for u in updates)
        to_remove: set[cst.CSTNode] = set()
        for statement, source in paired:
            pruned = self._prune(statement, source)
            if pruned is statement:
                continue
            index = body.index(statement)
            if pruned is None:
                to_remove.add(statement)
            else:
                body[index] = pruned
                if statement is anchor:
                    anchor = pruned
        if to_remove:
            insert_at -= sum(1 for s in body[:insert_at] if s in to_remove)
            body = list(without_statements(updated.with_changes(body=body), to_remove).body)

        added = {k: v for k, v in imports.added.items() if _local_name(v.names[0], True) not in self.unused}
        for key, added_import in sorted(added.items()):
            line = cst.SimpleStatementLine(body=[added_import])
            if key in imports.required_packages:
                # Importing a submodule loads the package too; a plain one also binds its name.
                loaders = [other for other in added if other.startswith(key + ".")]
                used = self._uses(updated, key)
                if loaders and (not used or any(" as " not in other for other in loaders)):
                    continue
                if not used:
                    line = line.with_changes(trailing_whitespace=_registers(key))
            self.ctx.fix(
                ADD_IMPORT,
                self.facts.imports.anchor,
                f"added `import {key}` for the rewritten code",
                lambda: line,  # noqa: B023 - fix() calls it at once
                result=lambda n: n,
            )
            body.insert(insert_at, line)
            insert_at += 1
        return updated.with_changes(body=body)

    @staticmethod
    def _uses(module: cst.Module, name: str) -> bool:
        return bool(_used_names(module, {name}))

    def _prune(
        self, statement: cst.SimpleStatementLine, source: cst.SimpleStatementLine | None
    ) -> cst.SimpleStatementLine | None:
        """The import line without the names that rewrites left unused (None: nothing left)."""
        small: list[cst.BaseSmallStatement] = []
        changed = False
        for item in statement.body:
            if type(item) is cst.ImportFrom and type(item.names) is cst.ImportStar:
                small.append(item)
                continue
            names = list(item.names)  # type: ignore[attr-defined]  # an import line's items are Import or ImportFrom (typed BaseSmallStatement); the star import continued above
            kept = [a for a in names if _local_name(a, type(item) is cst.Import) not in self.unused]
            if len(kept) == len(names):
                small.append(item)
                continue
            for alias in names:
                if alias not in kept:
                    done = self.ctx.fix(
                        REMOVE_STALE_IMPORT,
                        source,
                        f"removed unused import `{self.ctx.code(alias.name)}`"
                        + (f" as {self.ctx.code(alias.asname.name)}" if alias.asname else ""),
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
