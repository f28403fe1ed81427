"""torch.compile on the XLA device.  The 2.9 target compiles with the openxla backend
(XLA721), drops inductor-only options, which openxla ignores (XLA722), and reports
other explicit backends (XLA723); the sagemaker target (PyTorch 1.13, which has no
torch.compile) runs the model as it is.  Settings of dynamo and inductor are reported
(XLA724)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.compile.rules import COMPILE_BACKEND, COMPILER_SETTINGS, INDUCTOR_OPTIONS, TORCH_COMPILE
from codemods.engine.nodes import quoted_like, string_value, walk, with_keyword, without_args
from codemods.engine.rewriter import Concern, Context

if TYPE_CHECKING:
    from codemods.facts import Facts

# TrainingArguments' compile settings.
_TRAINER_COMPILE = frozenset({"torch_compile", "torch_compile_backend", "torch_compile_mode"})
_NO_TORCH_COMPILE = "PyTorch 1.13 (torch_xla 1.13, the SageMaker containers) has no torch.compile"
# Expressions that may run code of their own: an argument holding one is not simply deleted.
_ACTIVE = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda, cst.BaseComp)


class CompileRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        self.part = self.facts.compile
        self.backend = ctx.target.compile_backend
        # Statements that only compile (``model = torch.compile(model)``), removed on a
        # target without torch.compile.
        self.dropped = {statement for statement in self.part.calls.values() if statement is not None}
        # By id: every visited Name and Attribute is looked up (CSTNode hashing is Python code).
        self.references = {id(node) for node in self.part.references}
        self.settings = {id(node): qualified for node, qualified in self.part.settings.items()}

    # -- the 2.9 target: compile with openxla ---------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if original in self.part.trainer_compiles:
            return self._trainer(original, updated)
        if original in self.part.dynamo_optimize:
            self._dynamo_optimize(original)
            return updated
        if original not in self.part.calls:
            return updated
        if self.backend is None:
            return self._eager(original, updated)
        if len(updated.args) != len(original.args):  # another rewrite reshaped the call
            self.ctx.report(TORCH_COMPILE, original, f'`{self.ctx.code(original)}`: pass backend="{self.backend}"')
            return updated
        to_remove = [i for i, arg in enumerate(original.args) if self._drops_option(arg)]
        args = without_args(list(updated.args), to_remove)
        backend = next((a for a in original.args if a.keyword is not None and a.keyword.value == "backend"), None)
        if backend is None and any(a.star == "**" for a in original.args):
            self.ctx.report(
                TORCH_COMPILE,
                original,
                f"`{self.ctx.code(original)}`: the backend may come from the unpacked keywords; "
                f'make sure it is "{self.backend}" (inductor, the default, fails on XLA tensors)',
            )
        elif backend is None:
            new = self.ctx.fix(
                TORCH_COMPILE,
                original,
                f"{self._shown(original)} -> {{new}}: the default inductor backend "
                f"{apis.CUDA_COMPILE_BACKENDS['inductor']}; openxla compiles the graph with XLA",
                lambda: updated.with_changes(args=with_keyword(args, "backend", cst.SimpleString(f'"{self.backend}"'))),
            )
            return new if new is not None else updated.with_changes(args=args)
        else:
            return self._explicit_backend(original, updated, backend, args)
        return updated.with_changes(args=args)

    def _dynamo_optimize(self, original: cst.Call) -> None:
        backend = self.part.dynamo_optimize[original]
        if self.backend is None:
            self.ctx.report(
                TORCH_COMPILE, original, f"`{self.ctx.code(original)}`: PyTorch 1.13 has no torch._dynamo; remove it"
            )
        elif backend != self.backend:
            said = f"backend {backend!r}" if backend else "a backend that is not known here"
            self.ctx.report(
                TORCH_COMPILE,
                original,
                f"`{self.ctx.code(original)}` compiles with {said}, which does not compile for XLA: "
                f'use torch.compile(model, backend="{self.backend}") (torch._dynamo.optimize is the API before it)',
            )

    def _trainer(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """TrainingArguments(torch_compile=True): the Trainer compiles through Accelerate,
        which offers no backend that runs on XLA here (checked: transformers 5.24,
        accelerate 1.15, torch 2.9: "openxla" is not one of Accelerate's DynamoBackend
        names, its "aot_torchxla_trace_once" is no longer registered, and the default
        inductor fails).  Without it the Trainer trains, and torch_xla compiles each step's
        lazy graph anyway: the compile settings go."""
        to_remove = [
            i for i, a in enumerate(original.args) if a.keyword is not None and a.keyword.value in _TRAINER_COMPILE
        ]
        flag = next(original.args[i] for i in to_remove if original.args[i].keyword.value == "torch_compile")  # type: ignore[union-attr]  # to_remove holds indices of keyword arguments only
        why = (
            _NO_TORCH_COMPILE
            if self.backend is None
            else "the Trainer compiles through Accelerate, whose dynamo backends have no XLA one that runs here (openxla "
            "is not among them; the default inductor fails on XLA tensors)"
        )
        literal_true = isinstance(flag.value, cst.Name) and flag.value.value == "True"
        if not literal_true or len(updated.args) != len(original.args):
            self.ctx.report(
                TORCH_COMPILE, flag, f"`{self.ctx.code(flag).rstrip(',')}`: {why}; make sure it is False on XLA"
            )
            return updated
        removed = ", ".join(self.ctx.code(original.args[i]).rstrip(",").strip() for i in to_remove)
        return self.ctx.fix_or_keep(
            updated,
            TORCH_COMPILE,
            flag,
            f"removed `{removed}`: {why}; without it the Trainer trains, and torch_xla compiles each "
            "step's graph itself",
            lambda: updated.with_changes(args=without_args(list(updated.args), to_remove)),
        )

    def _explicit_backend(
        self, original: cst.Call, updated: cst.Call, backend: cst.Arg, args: list[cst.Arg]
    ) -> cst.Call:
        name = string_value(backend.value)
        if name == self.backend:
            return updated.with_changes(args=args)
        if name in apis.CUDA_COMPILE_BACKENDS:
            at = next(i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "backend")
            new_value = quoted_like(backend.value, self.backend or "")
            new = self.ctx.fix(
                TORCH_COMPILE,
                original,
                f'{self._shown(original)} -> {{new}}: backend="{name}" {apis.CUDA_COMPILE_BACKENDS[name]}; '
                "openxla compiles the graph with XLA",
                lambda: updated.with_changes(
                    args=[*args[:at], args[at].with_changes(value=new_value), *args[at + 1 :]]
                ),
            )
            return new if new is not None else updated.with_changes(args=args)
        self.ctx.report(
            COMPILE_BACKEND,
            backend,
            f"`{self.ctx.code(backend)}` is not the openxla backend: dynamo's graphs go to it, not to XLA (on XLA "
            f'tensors eager backends run them op by op, CUDA ones fail); use backend="{self.backend}" unless this '
            "backend is meant for XLA",
        )
        return updated.with_changes(args=args)

    def _drops_option(self, arg: cst.Arg) -> bool:
        """Removes an inductor-only ``mode=`` or ``options=`` (with a finding saying what
        it did), or reports it where removing it is not safe."""
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword not in ("mode", "options"):
            return False
        code = self.ctx.code(arg).rstrip(",").strip()
        if keyword == "mode":
            mode = string_value(arg.value)
            if mode == "default":
                return False
            did = apis.INDUCTOR_MODES.get(mode or "", "chose how inductor compiles")
        else:
            did = apis.INDUCTOR_OPTIONS
        unsafe = _unsafe_to_drop(arg.value) if keyword == "options" else _active(arg.value)
        if unsafe:
            self.ctx.report(INDUCTOR_OPTIONS, arg, f"`{code}` {did} and is ignored by openxla; not removed: {unsafe}")
            return False
        done = self.ctx.fix(
            INDUCTOR_OPTIONS,
            arg,
            f"removed `{code}`: it {did} on CUDA; the openxla backend ignores it",
            lambda: arg,
        )
        return done is not None

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator) -> cst.Decorator | cst.RemovalSentinel:
        compiles = original in self.part.bare_decorators or (
            isinstance(original.decorator, cst.Call) and original.decorator in self.part.calls
        )
        if not compiles:
            return updated
        if self.backend is None:
            if not self._removed(original, f"@{self.ctx.code(original.decorator)}", "function"):
                return updated
            self.ctx.imports.discard(updated)
            return cst.RemovalSentinel.REMOVE
        if original not in self.part.bare_decorators:
            return updated
        return self.ctx.fix_or_keep(
            updated,
            TORCH_COMPILE,
            original,
            f"@{self.ctx.code(original.decorator)} -> {{new}}: the default inductor backend "
            f"{apis.CUDA_COMPILE_BACKENDS['inductor']}; openxla compiles the graph with XLA",
            lambda: updated.with_changes(
                decorator=cst.Call(
                    updated.decorator,
                    [cst.Arg(cst.SimpleString(f'"{self.backend}"'), keyword=cst.Name("backend"), equal=_EQUAL)],
                )
            ),
        )

    # -- the sagemaker target: no torch.compile --------------------------------------------

    def _eager(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``torch.compile(f, ...)`` -> ``f`` where the call is a value (a statement that
        only compiles goes whole: leave_SimpleStatementLine)."""
        if self.part.calls[original] is not None or self._in_decorator():
            return updated
        positional = [a for a in updated.args if a.keyword is None]
        if self.ctx.resolve(original.func) != apis.TORCH_COMPILE:  # model.compile(...)
            self.ctx.report(
                TORCH_COMPILE,
                original,
                f"`{self.ctx.code(original)}`: {_NO_TORCH_COMPILE} (nor nn.Module.compile); remove it",
            )
            return updated
        if len(positional) != 1 or positional[0].star:
            self.ctx.report(TORCH_COMPILE, original, f"`{self.ctx.code(original)}`: {_NO_TORCH_COMPILE}; remove it")
            return updated
        compiled = positional[0].value
        new = self.ctx.fix(
            TORCH_COMPILE,
            original,
            f"{self._shown(original)} -> {{new}}: {_NO_TORCH_COMPILE}; the model runs as it is "
            "(torch_xla compiles its lazy graph at the step barrier)",
            lambda: compiled.with_changes(lpar=original.lpar, rpar=original.rpar) if original.lpar else compiled,
        )
        if new is not None:
            self.ctx.imports.discard(original.func)
        return new if new is not None else updated

    def _removed(self, node: cst.CSTNode, shown: str, runs: str) -> bool:
        """Records the removal of ``node`` (the caller removes it); False if not allowed here."""
        return (
            self.ctx.fix(
                TORCH_COMPILE,
                node,
                f"removed `{shown}`: {_NO_TORCH_COMPILE}; the {runs} runs as it is "
                "(torch_xla compiles its lazy graph at the step barrier)",
                lambda: node,
            )
            is not None
        )

    def _in_decorator(self) -> bool:
        return len(self.ctx.ancestors) >= 2 and isinstance(self.ctx.ancestors[-2], cst.Decorator)

    def leave_SimpleStatementLine(self, original, updated):  # type: ignore[no-untyped-def]  # serves SimpleStatementSuite too (aliased below): one annotation cannot say both
        """A line (or a one-line suite: ``if compile: model = torch.compile(model)``) that
        only compiles goes; its block keeps a ``pass`` if nothing else is left."""
        if self.backend is not None or not self.dropped:
            return updated
        to_remove = [s for s in original.body if s in self.dropped]
        if not to_remove or len(to_remove) != len(original.body):
            for statement in to_remove:
                self.ctx.report(
                    TORCH_COMPILE, statement, f"`{self.ctx.code(statement)}`: {_NO_TORCH_COMPILE}; remove it"
                )
            return updated
        for statement in to_remove:
            if not self._removed(statement, self.ctx.code(statement), "model"):
                return updated
        self.ctx.imports.discard(updated)
        if isinstance(updated, cst.SimpleStatementSuite):
            return updated.with_changes(body=[cst.Pass()])
        self.ctx.drop_statement(updated)
        return updated

    leave_SimpleStatementSuite = leave_SimpleStatementLine

    # -- references and settings -------------------------------------------------------------

    def _compiler_import(self, original: cst.CSTNode) -> None:
        if self.backend is None and original in self.part.compiler_imports:
            self.ctx.report(
                TORCH_COMPILE,
                original,
                f"`{self.ctx.code(original)}`: PyTorch 1.13 has no torch._dynamo or "
                "torch._inductor (nor torch.compile); remove it",
            )

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self._compiler_import(original)
        return updated

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self._compiler_import(original)
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        self._reported(original)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        self._reported(original)
        return updated

    def _reported(self, original: cst.CSTNode) -> None:
        if id(original) in self.references:
            advice = (
                f'pass backend="{self.backend}" where it is called; the default inductor backend '
                f"{apis.CUDA_COMPILE_BACKENDS['inductor']}"
                if self.backend
                else f"{_NO_TORCH_COMPILE}; remove it"
            )
            self.ctx.report(TORCH_COMPILE, original, f"`{self.ctx.code(original)}` is used as a value: {advice}")
            return
        qualified = self.settings.get(id(original))
        if qualified is None:
            return
        if self.backend is None:
            self.ctx.report(
                TORCH_COMPILE,
                original,
                f"`{self.ctx.code(original)}`: PyTorch 1.13 has no torch._dynamo or "
                "torch._inductor (nor torch.compile); remove it",
            )
            return
        advice = next(text for prefix, text in apis.COMPILER_SETTINGS.items() if qualified.startswith(prefix))
        self.ctx.report(COMPILER_SETTINGS, original, f"`{self.ctx.code(original)}` {advice}")

    def _shown(self, call: cst.Call) -> str:
        """The call as the finding names it: in full when it is short."""
        code = self.ctx.code(call)
        return code if len(code) <= 60 and "\n" not in code else self.ctx.code(call.func) + "(...)"


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _active(value: cst.CSTNode) -> str | None:
    return "computing it may do more" if any(isinstance(n, _ACTIVE) for n in walk(value)) else None


def _unsafe_to_drop(value: cst.BaseExpression) -> str | None:
    """Why ``options=value`` may hold more than inductor's settings (None: it does not)."""
    if not isinstance(value, cst.Dict):
        return 'its keys are not known here; torch.compile reads "guard_filter_fn" from it for dynamo itself'
    keys = [string_value(e.key) if isinstance(e, cst.DictElement) else None for e in value.elements]
    if None in keys:
        return "its keys are not all known here"
    if any(key in apis.DYNAMO_OPTION_KEYS for key in keys):
        return '"guard_filter_fn" is read by dynamo, not inductor; keep only it'
    return _active(value)
