"""torch.compile: its calls (``torch.compile(m, ...)``, ``@torch.compile``,
``@torch.compile(...)``, ``model.compile(...)``), references to it that are not
calls, and settings of the compiler stack (``torch._dynamo.config.*``,
``torch._inductor.config.*``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import arg_value, call_args, dotted, method_name, receiver, string_value, target_names
from codemods.engine.walk import Analysis, Walk
from codemods.huggingface.names import TRAINING_ARGUMENTS

if TYPE_CHECKING:
    from codemods.facts import Facts

# The last part of a name that holds a model (``model``, ``self.net``, ``unet``).
_MODEL_WORDS = ("model", "net", "module")
# The scope of module-level code (a function's scope is its FunctionDef; a lambda's, None).
_MODULE = "module"
Scope = cst.FunctionDef | str | None


class CompileAnalysis(Analysis):
    facts: Facts

    name = "compile"
    reads = ("imports", "training")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.compile
        self.bindings = self.facts.imports.table.bindings
        self.statement: cst.BaseSmallStatement | None = None
        self.line: cst.SimpleStatementLine | cst.SimpleStatementSuite | None = None
        self.lines: dict[cst.BaseSmallStatement, cst.SimpleStatementLine | cst.SimpleStatementSuite] = {}
        self.called_decorators: list[cst.Decorator] = []
        self.method_calls: list[tuple[cst.Call, str, cst.BaseSmallStatement | None]] = []
        self.named: list[cst.CSTNode] = []  # every Name or Attribute that is torch.compile
        self.called: set[int] = set()
        self.inner: set[int] = set()  # Attributes inside a recorded setting's chain
        self.not_uses: set[int] = set()  # Names that are attributes, keywords or parameters
        # Names each scope binds otherwise than by an import (``config = GPTConfig()``, a
        # parameter ``config``), and the scopes each setting is read from: a setting whose
        # first name is so bound there is that local value, not the imported module.
        self.rebound: dict[Scope, set[str]] = {}
        self.setting_scopes: dict[cst.CSTNode, tuple[Scope, ...]] = {}

    def _bind(self, names: list[str]) -> None:
        scope = self.walk.functions[-1] if self.walk.functions else _MODULE
        self.rebound.setdefault(scope, set()).update(names)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.statement = node
        self._bind([name for target in node.targets for name in target_names(target.target)])

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(target_names(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(target_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self._bind(target_names(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(target_names(node.target))

    def visit_AsName(self, node: cst.AsName) -> None:
        # ``with ... as config``, ``except ... as config`` (the walk does not enter imports).
        self._bind(target_names(node.name))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(target_names(node.target))

    def visit_Expr(self, node: cst.Expr) -> None:
        self.statement = node

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.line = node

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.line = node

    def visit_Call(self, node: cst.Call) -> None:
        self.called.add(id(node.func))
        callee = self.walk.callee
        if callee in TRAINING_ARGUMENTS:
            keywords = call_args(node)[1]
            compiles = keywords.get("torch_compile")
            if compiles is not None and not (
                isinstance(compiles.value, cst.Name) and compiles.value.value in ("False", "None")
            ):
                self.part.trainer_compiles[node] = keywords.get("torch_compile_backend")
        if callee == apis.DYNAMO_OPTIMIZE:
            backend = arg_value(node, 0, "backend")
            self.part.dynamo_optimize[node] = "inductor" if backend is None else string_value(backend)
        if callee == apis.TORCH_COMPILE:
            self.part.calls[node] = self._own_statement(node)
        elif method_name(node) == "compile" and callee is None:
            compiled = dotted(receiver(node))
            if compiled is not None and not any(a.keyword is None for a in node.args):
                self.method_calls.append((node, compiled, self._own_statement(node)))

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if isinstance(node.decorator, cst.Call):
            self.called_decorators.append(node)
        elif self.walk.resolve(node.decorator) == apis.TORCH_COMPILE:
            self.part.bare_decorators.add(node)
            self.called.add(id(node.decorator))

    def visit_Import(self, node: cst.Import) -> None:
        if any(_compiler_module(dotted(alias.name)) for alias in node.names):
            self.part.compiler_imports.add(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = dotted(node.module) if node.module is not None and not node.relative else None
        names = [] if isinstance(node.names, cst.ImportStar) else [dotted(a.name) for a in node.names]
        if _compiler_module(module) or (module == "torch" and any(n in ("_dynamo", "_inductor") for n in names)):
            self.part.compiler_imports.add(node)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_uses.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self.not_uses.add(id(node.name))
        self._bind([node.name.value])

    def visit_Name(self, node: cst.Name) -> None:
        if self.bindings.get(node.value) == apis.TORCH_COMPILE and id(node) not in self.not_uses:
            self.named.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_uses.add(id(node.attr))
        if id(node) in self.inner:
            self.inner.add(id(node.value))
            return
        qualified = self.walk.qualified
        if qualified == apis.TORCH_COMPILE:
            self.named.append(node)
        elif qualified is not None and qualified.startswith(tuple(apis.COMPILER_SETTINGS)):
            self.inner.add(id(node.value))
            functions = tuple(self.walk.functions)
            if functions or (dotted(node) or "").split(".")[0] not in self.rebound.get(_MODULE, ()):
                # Module-level code reads what was bound before it; a function, what any binding left.
                self.part.settings[node] = qualified
                self.setting_scopes[node] = (_MODULE, *functions) if functions else ()

    def _own_statement(self, call: cst.Call) -> cst.BaseSmallStatement | None:
        """The statement being walked, if it is nothing but this call (``m.compile()``)
        or the assignment of it to the name it compiles (``m = torch.compile(m)``)."""
        statement = self.statement
        own = isinstance(statement, cst.Expr) and statement.value is call
        if isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1:
            positional, _ = call_args(call)
            compiled = dotted(positional[0].value) if positional and not positional[0].star else None
            own = compiled is not None and dotted(statement.targets[0].target) == compiled
        if not own or statement is None or self.line is None:
            return None
        self.lines[statement] = self.line
        return statement

    def finish(self) -> None:
        """A ``.compile()`` method call compiles a module when it passes none but
        torch.compile's keywords (Keras' ``model.compile(optimizer=...)`` is not one), and
        its receiver is a model (built from a torch.nn class or a module class of the
        file, or named like one) or it passes some of them."""
        models = self.facts.training.models
        for call, compiled, statement in self.method_calls:
            keywords = set(call_args(call)[1])
            if not keywords <= apis.COMPILE_KEYWORDS:
                continue
            last = compiled.rsplit(".", 1)[-1].lower()
            if (
                compiled in models
                or any(word in last for word in _MODEL_WORDS)
                or (keywords and not any(a.star for a in call.args))
            ):
                self.part.calls[call] = statement
        self.part.references = {node for node in self.named if id(node) not in self.called}
        self.part.decorators = self.part.bare_decorators | {
            decorator for decorator in self.called_decorators if decorator.decorator in self.part.calls
        }
        self.part.compile_only_lines = {
            self.lines[statement] for statement in self.part.calls.values() if statement is not None
        }
        self.part.settings = {
            node: qualified
            for node, qualified in self.part.settings.items()
            if not any(
                (dotted(node) or "").split(".")[0] in self.rebound.get(scope, ()) for scope in self.setting_scopes[node]
            )
        }


def _compiler_module(module: str | None) -> bool:
    return module is not None and module.split(".")[:2] in (["torch", "_dynamo"], ["torch", "_inductor"])
