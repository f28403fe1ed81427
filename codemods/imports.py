"""Import aliases: reading them (qualified names without LibCST's slow scope metadata)
and writing them (add what rewritten code uses, drop what rewrites left unused)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from codemods.syntax import dotted, names_in, parse_dotted
from codemods.targets import Api


def _module_name(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


@dataclass
class ImportTable:
    """Local name -> qualified name, from every import statement in the file.

    ``import torch as th`` binds th -> torch; ``import torch.optim`` binds torch ->
    torch; ``from torch import optim`` binds optim -> torch.optim.  One flat table for
    the file: shadowing by a local variable of the same name is rare in training
    scripts and not modelled.
    """

    bindings: dict[str, str] = field(default_factory=dict)
    # Modules imported without an alias ("import torch_xla.core.xla_model"): their
    # full dotted path is usable as written.
    plain_modules: set[str] = field(default_factory=set)

    def add(self, statement: cst.Import | cst.ImportFrom) -> None:
        if isinstance(statement, cst.Import):
            for alias in statement.names:
                module = _module_name(alias.name)
                if alias.asname is not None:
                    self.bindings[dotted(alias.asname.name) or module] = module
                else:
                    head = module.split(".")[0]
                    self.bindings[head] = head
                    self.plain_modules.add(module)
            return
        if statement.relative or statement.module is None or isinstance(statement.names, cst.ImportStar):
            return
        module = _module_name(statement.module)
        for alias in statement.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
            local = dotted(alias.asname.name) if alias.asname is not None else name
            if name and local:
                self.bindings[local] = f"{module}.{name}"

    def resolve(self, node: cst.CSTNode | None) -> str | None:
        """The qualified name of a Name/Attribute chain, if it starts at an import."""
        path = dotted(node)
        if path is None:
            return None
        head, _, rest = path.partition(".")
        base = self.bindings.get(head)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def local_name_for(self, qualified: str) -> str | None:
        """A local spelling of ``qualified`` that existing imports already provide.

        ``a.b.c`` is reachable through a binding of ``a`` only if ``import a.b`` made
        the submodule reachable; torch is the exception, as it imports its public
        submodules itself (torch_xla does not: ``import torch_xla`` leaves
        ``torch_xla.amp`` unloaded).
        """
        for local, target in self.bindings.items():
            if qualified == target:
                return local
            if not qualified.startswith(target + "."):
                continue
            suffix = qualified[len(target) + 1 :]
            owner = qualified.rpartition(".")[0]
            if "." in suffix and target != "torch" and not (local == target and owner in self.plain_modules):
                continue
            return f"{local}.{suffix}"
        return None


@dataclass
class ImportManager:
    """Hands out spellings for target APIs and edits the import block at the end."""

    table: ImportTable
    name_uses: Counter[str]
    taken_names: set[str]
    can_add: bool
    added: dict[str, cst.BaseSmallStatement] = field(default_factory=dict)
    dropped_uses: Counter[str] = field(default_factory=Counter)
    new_uses: Counter[str] = field(default_factory=Counter)

    def expression(self, api: Api) -> cst.BaseExpression | None:
        """The expression that names ``api`` here, adding its import if needed.
        None when this file may not gain torch_xla imports (it imports torch_xla
        conditionally, so a top-level import would break its non-XLA path)."""
        spelling = self.table.local_name_for(api.qualified_name)
        if spelling is None:
            spelling = self._spelling_after_import(api)
            if spelling is None:
                return None
        self.new_uses[spelling.split(".")[0]] += 1
        return parse_dotted(spelling)

    def call(self, api: Api, args: list[cst.Arg] | tuple[cst.Arg, ...] = ()) -> cst.Call | None:
        func = self.expression(api)
        return None if func is None else cst.Call(func=func, args=list(args))

    def _spelling_after_import(self, api: Api) -> str | None:
        if not self.can_add:
            return None
        alias = api.alias
        if alias is not None and alias in self.taken_names and self.table.bindings.get(alias) != api.module:
            alias = None  # the short alias means something else in this file
        key = f"{api.module} as {alias}" if alias else api.module
        if key not in self.added:
            names = [cst.ImportAlias(name=parse_dotted(api.module), asname=cst.AsName(name=cst.Name(alias)) if alias else None)]
            self.added[key] = cst.Import(names=names)
            if alias:
                self.table.bindings[alias] = api.module
            else:
                head = api.module.split(".")[0]
                self.table.bindings[head] = head
                self.table.plain_modules.add(api.module)
        return f"{alias}.{api.attr}" if alias else api.qualified_name

    def drop_uses_in(self, node: cst.CSTNode) -> None:
        """Record that the names in a discarded subtree are no longer used."""
        self.dropped_uses.update(names_in(node))

    def stale(self, local: str) -> bool:
        """True when rewrites removed every use of an imported name.  The torch
        package itself always stays: the script is still PyTorch code."""
        if self.table.bindings.get(local) == "torch":
            return False
        dropped = self.dropped_uses[local]
        return dropped > 0 and self.name_uses[local] - dropped + self.new_uses[local] <= 0
