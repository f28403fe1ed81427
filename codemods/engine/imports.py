"""Import aliases: reading them (qualified names without LibCST's slow scope metadata)
and writing them (add what rewritten code uses, drop what rewrites left unused)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from codemods.engine.nodes import children, dotted, names_in, parse_dotted
from codemods.followed_packages import unfollowed_package
from codemods.targets import Api


def _module_name(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


@dataclass(repr=False)
class ImportTable:
    """Local name -> qualified name, from the file's import statements.

    ``import torch as th`` binds th -> torch; ``import torch.optim`` binds torch ->
    torch; ``from torch import optim`` binds optim -> torch.optim.  Reading uses every
    import (a function's own imports included); writing new code only relies on the
    module-level ones, which every function sees.  Shadowing by a local variable of the
    same name is rare in training scripts and not modelled.
    """

    bindings: dict[str, str] = field(default_factory=dict)
    module_level: dict[str, str] = field(default_factory=dict)
    # Modules imported at module level without an alias ("import torch_xla.core.xla_model"):
    # their full dotted path is usable as written.
    plain_modules: set[str] = field(default_factory=set)
    # Module-level imports that run after module-level code (``ImportTable.expect``):
    # rewritten code does not rely on them, but may import the same names anew.
    later: dict[str, str] = field(default_factory=dict)
    # Names an ``import`` statement binds (``import utils``, ``import numpy as np``): modules,
    # whatever else ``from`` imports may bind.
    modules: set[str] = field(default_factory=set)
    # Names the file also binds otherwise (assigns, takes as parameters, loops over): such
    # a name may hold anything (``import model`` ... ``model = model.Net()``).
    rebound: set[str] = field(default_factory=set)

    def add(self, statement: cst.Import | cst.ImportFrom, module_level: bool = True) -> None:
        for local, qualified, plain in _bound_names(statement):
            self.bindings[local] = qualified
            if isinstance(statement, cst.Import):
                self.modules.add(local)
            if module_level:
                self.module_level[local] = qualified
                if plain:
                    self.plain_modules.add(plain)

    def expect(self, statement: cst.Import | cst.ImportFrom) -> None:
        """Read the names of an import that runs later as bound already: code that uses
        them before (in a loop that imports on its first pass, or wrongly) means them, and
        once a rewrite imports them earlier it reads them so; names bound before keep their
        meaning until then."""
        for local, qualified, _ in _bound_names(statement):
            self.bindings.setdefault(local, qualified)
            self.later.setdefault(local, qualified)
            if isinstance(statement, cst.Import):
                self.modules.add(local)

    def bind(self, local: str, qualified: str, module_level: bool) -> None:
        """A name another module imported, which ``from <that module> import *`` binds here."""
        self.bindings[local] = qualified
        if module_level:
            self.module_level[local] = qualified

    def alias(self, local: str, qualified: str) -> None:
        """``Device = torch.device`` (or ``Device: TypeAlias = device``) at module level:
        reading, the name means what it is assigned, as an import alias would; new code
        is not spelt through it (it is no import)."""
        self.bindings[local] = qualified

    def is_module(self, node: cst.CSTNode | None) -> bool:
        """A name an ``import`` statement binds, and nothing else in the file: ``utils.cuda(x)``
        calls a module's function."""
        return type(node) is cst.Name and node.value in self.modules and node.value not in self.rebound

    def resolve(self, node: cst.CSTNode | None) -> str | None:
        """The qualified name of a Name/Attribute chain, if it starts at an import."""
        head = node
        while type(head) is cst.Attribute:
            head = head.value
        if type(head) is not cst.Name or head.value not in self.bindings:
            return None  # most chains (self.x, args.lr) start at no import: no string is built
        path = dotted(node)
        return None if path is None else self.resolve_dotted(path)

    def resolve_dotted(self, path: str) -> str | None:
        """What ``resolve`` makes of the name chain written ``path`` ("a.b.c"), without
        building its nodes."""
        first, _, rest = path.partition(".")
        base = self.bindings.get(first)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def local_name_for(self, qualified: str) -> str | None:
        """A spelling of ``qualified`` that the module-level imports already provide.

        ``a.b.c`` is reachable through a binding of ``a`` only if ``import a.b`` made
        the submodule reachable; torch is the exception, as it imports its public
        submodules itself (torch_xla does not: ``import torch_xla`` leaves
        ``torch_xla.amp`` unloaded).
        """
        for local, target in self.module_level.items():
            if qualified == target:
                return local
        for local, target in self.module_level.items():
            if not qualified.startswith(target + "."):
                continue
            suffix = qualified[len(target) + 1 :]
            owner = qualified.rpartition(".")[0]
            if "." in suffix and target != "torch" and not (local == target and owner in self.plain_modules):
                continue
            return f"{local}.{suffix}"
        return None

    def imports_module(self, package: str) -> bool:
        """Some module-level import loads ``package`` (or one of its submodules)."""
        loaded = (*self.module_level.values(), *self.plain_modules)
        return any(q == package or q.startswith(package + ".") for q in loaded)


@dataclass(repr=False, eq=False)
class ImportFacts:
    """The fact sheet's part the walk and the rewriter read themselves: the import table, the
    names taken, where new imports go and what already handles XLA (filled by the imports
    analysis, codemods/imports/analysis.py)."""

    table: ImportTable = field(default_factory=ImportTable)
    # Every name the file binds or uses (the walk adds each name it meets): new import
    # aliases must not collide with them.
    taken_names: set[str] = field(default_factory=set)
    # The statement after which new imports go.
    anchor: cst.CSTNode | None = None
    # Module-level imports that only run after some module-level code: that code runs
    # before their names are bound, so rewritten code may not rely on them.
    after_code: set[cst.Import | cst.ImportFrom] = field(default_factory=set)
    # Names that may come from the project's own modules: local name -> (module as
    # written, name in it); the name is "" for ``import util.misc as misc``.
    project_names: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Of those, the names a star import of a project module binds: local name -> that import.
    star_bound: dict[str, cst.ImportFrom] = field(default_factory=dict)
    # What ``from <module> import *`` binds (the project's ImportContext.star_names, set
    # before the walk; None: the module is no project file the tool can read).
    star_names_of: Callable[[str], tuple[tuple[str, str | None], ...] | None] = lambda module: None
    # Star imports of project modules the tool could not read (the module as written, the
    # import): what they bind is unknown here.
    unfollowed_stars: list[tuple[str, cst.ImportFrom]] = field(default_factory=list)
    # torch_xla imported inside try/if: the file keeps a non-XLA path, so the tool
    # may not add top-level torch_xla imports or move code onto the XLA device.
    xla_optional: bool = False
    # Ifs and conditional expressions that branch on XLA (or TPU) availability: their
    # code already handles XLA and is left exactly as written.
    xla_guarded: set[cst.CSTNode] = field(default_factory=set)

    def unread_star_sources(self, name: str, bound: set[str]) -> tuple[cst.ImportFrom, ...]:
        """The star imports of modules the tool cannot read that alone may bind ``name``, a name the
        file uses and never binds (not in ``bound``, nor one of Python's builtins): not the standard
        library's nor a followed package's (``from numpy import *``)."""
        if name in bound or name in _BUILTINS:
            return ()
        return tuple(
            node for module, node in self.unfollowed_stars if module.startswith(".") or unfollowed_package(module)
        )


_BUILTINS = frozenset(dir(builtins))


def _bound_names(statement: cst.Import | cst.ImportFrom) -> list[tuple[str, str, str | None]]:
    """(local name, qualified name, plainly imported module or None) per name bound."""
    bound: list[tuple[str, str, str | None]] = []
    if isinstance(statement, cst.Import):
        for alias in statement.names:
            module = _module_name(alias.name)
            if alias.asname is not None:
                bound.append((dotted(alias.asname.name) or module, module, None))
            else:
                head = module.split(".")[0]
                bound.append((head, head, module))
        return bound
    if statement.relative or statement.module is None or isinstance(statement.names, cst.ImportStar):
        return bound
    module = _module_name(statement.module)
    for alias in statement.names:
        name = alias.evaluated_name
        bound.append((alias.evaluated_alias or name, f"{module}.{name}", None))
    return bound


@dataclass(repr=False)
class ImportManager:
    """Hands out spellings for target APIs, adding the imports they need.

    Rewrites that discard code report the names in it (``discard``); the imports
    concern then checks, on the output, which of those imports are left unused.
    """

    table: ImportTable
    taken_names: set[str]
    can_add: bool
    added: dict[str, cst.Import] = field(default_factory=dict)
    discarded_names: set[str] = field(default_factory=set)
    # Packages the rewritten code needs imported for their side effect (torch_xla
    # registers the "xla" device), and those of them that this manager imports itself.
    needed_packages: set[str] = field(default_factory=set)
    required_packages: set[str] = field(default_factory=set)
    # The names whose imports go as the module is left, unused once rewrites discarded their
    # code (worked out by the hook that removes them, XLA002's): no import of them is added.
    unused: set[str] = field(default_factory=set)

    def expression(self, api: Api) -> cst.BaseExpression | None:
        """The expression that names ``api`` here, adding its import if needed.
        None when this file may not gain torch_xla imports (it imports torch_xla
        conditionally, so a top-level import would break its non-XLA path)."""
        spelling = self.table.local_name_for(api.qualified_name) or self._spelling_after_import(api)
        return None if spelling is None else parse_dotted(spelling)

    def call(self, api: Api, args: Sequence[cst.Arg] = ()) -> cst.Call | None:
        func = self.expression(api)
        return None if func is None else cst.Call(func=func, args=list(args))

    def require_package(self, package: str) -> bool:
        """Make sure ``package`` is imported (``import torch_xla`` registers the "xla"
        device string); False when this file may not gain the import."""
        if self.table.imports_module(package):
            self.needed_packages.add(package)
            return True
        if self._add(package, None) is None:
            return False
        self.needed_packages.add(package)
        self.required_packages.add(package)
        return True

    def keep_packages_loaded(self, unused: set[str]) -> set[str]:
        """The names among ``unused`` whose imports may go while every needed package
        stays loaded: a binding of the package itself is kept; a package that only an
        unused import loaded is imported anew."""
        for package in sorted(self.needed_packages - self.required_packages):
            if package in unused and self.table.module_level.get(package) == package:
                unused = unused - {package}
                continue
            loaded = any(
                (qualified == package or qualified.startswith(package + ".")) and local not in unused
                for local, qualified in self.table.module_level.items()
            ) or any(  # ``import torch_xla.distributed.xla_backend`` loads it, binding ``torch_xla``
                (plain == package or plain.startswith(package + ".")) and plain.split(".")[0] not in unused
                for plain in self.table.plain_modules
            )
            if not loaded and self._add(package, None) is not None:
                self.required_packages.add(package)
        return unused

    def _spelling_after_import(self, api: Api) -> str | None:
        alias = api.alias
        if (
            alias is not None
            and alias in self.taken_names
            and api.module not in (self.table.module_level.get(alias), self.table.later.get(alias))
        ):
            alias = None  # the short alias means something else in this file
        if self._add(api.module, alias) is None:
            return None
        return f"{alias}.{api.attr}" if alias else api.qualified_name

    def _add(self, module: str, alias: str | None) -> str | None:
        if not self.can_add:
            return None
        key = f"{module} as {alias}" if alias else module
        if key not in self.added:
            statement = cst.Import(
                names=[
                    cst.ImportAlias(
                        name=parse_dotted(
                            module
                        ),  # parse_dotted of a module name is a Name or Attribute; its return type is BaseExpression
                        asname=cst.AsName(name=cst.Name(alias)) if alias else None,
                    )
                ]
            )
            self.added[key] = statement
            self.table.add(statement)
        return key

    def discard(self, node: cst.CSTNode) -> None:
        """The names in a subtree that a rewrite dropped: their imports may be stale now."""
        self.discarded_names.update(names_in(node))

    def removable(self, local: str) -> bool:
        """May an import binding ``local`` go when nothing uses it?  Only names whose
        code a rewrite discarded, and never the torch package: the script is still
        PyTorch code."""
        return local in self.discarded_names and self.table.bindings.get(local) != "torch"


def import_lines(body: Sequence[cst.BaseStatement]) -> list[cst.SimpleStatementLine]:
    """The lines of ``body`` that hold nothing but imports."""
    return [
        s
        for s in body
        if type(s) is cst.SimpleStatementLine and all(type(i) in (cst.Import, cst.ImportFrom) for i in s.body)
    ]


def local_name(alias: cst.ImportAlias, plain_import: bool) -> str:
    """The name an import binds (``import a.b`` binds ``a``; ``from a import b``, ``b``)."""
    if alias.asname is not None:
        return dotted(alias.asname.name) or ""
    name = dotted(alias.name) or ""
    return name.split(".")[0] if plain_import else name


def used_names(module: cst.Module, wanted: set[str]) -> set[str]:
    """Which of ``wanted`` the code uses, import statements aside (walked over the node
    fields: a LibCST visitor would rebuild the whole module)."""
    used: set[str] = set()
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            if node.value in wanted:  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
                used.add(node.value)  # type: ignore[attr-defined]  # narrowed by ``kind`` (the node's type), which mypy does not carry over to the node
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(node.value)  # type: ignore[attr-defined]  # `x.save`, `f(save=...)` use no name `save`
        elif kind is not cst.Import and kind is not cst.ImportFrom:
            stack.extend(children(node))
    return used
