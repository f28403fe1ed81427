"""The launcher's facts: the SageMaker estimators a launcher script builds, the values it
gives them (as far as the file fixes them), and a training script under SageMaker model
parallel (smdistributed).  The launcher analysis (analysis.py) fills them; the launcher
rules' checks (rules/) read them."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

SMP_TORCH = "smdistributed.modelparallel.torch"
SET_DEVICE = "torch.cuda.set_device"


@dataclass(frozen=True)
class Unknown:
    """A value the file does not fix statically; ``why`` finishes "could not check: ..."."""

    node: cst.CSTNode
    why: str


@dataclass(frozen=True)
class Constant:
    node: cst.BaseExpression
    value: object  # str, int, float, bool or None


@dataclass(frozen=True)
class Construct:
    """A call of a class the checks know (TrainingCompilerConfig(...))."""

    node: cst.Call
    qualified: str
    keywords: dict[str, Value]


@dataclass(frozen=True)
class Entry:
    key: str
    key_node: cst.CSTNode  # the key's string literal, or the keyword's Name in dict(k=v)
    written: cst.BaseExpression  # the value as written in the dict
    value: Value


@dataclass(frozen=True)
class Mapping:
    """A dict literal or ``dict(...)`` call; ``hidden`` is a ``**spread`` or computed key
    that may hold entries the analysis cannot see."""

    node: cst.Dict | cst.Call
    entries: dict[str, Entry]
    hidden: cst.CSTNode | None = None

    def get(self, key: str) -> Value | None:
        entry = self.entries.get(key)
        return entry.value if entry else None


Value = Unknown | Constant | Construct | Mapping


@dataclass(frozen=True)
class Argument:
    node: cst.Arg
    value: Value


@dataclass
class Estimator:
    call: cst.Call
    kind: str  # "PyTorch" | "TensorFlow" | "HuggingFace" | "Estimator"
    arguments: dict[str, Argument]
    # ``**kwargs`` in the call: a keyword not seen may still be given.
    hidden: cst.Arg | None = None

    def value(self, keyword: str) -> Value | None:
        argument = self.arguments.get(keyword)
        return argument.value if argument else None


@dataclass
class SmpScript:
    """A PyTorch training script that imports smdistributed.modelparallel.torch."""

    import_statement: cst.CSTNode
    # `torch.cuda.set_device(...)` calls, and whether each takes smp.local_rank().
    set_device_calls: list[tuple[cst.Call, bool]] = field(default_factory=list)
    # Statement lines that are just `smp.init()`: the device is pinned right after.
    init_statements: list[cst.SimpleStatementLine] = field(default_factory=list)
    # It calls `smp.init()` (as a statement or not): it starts model parallel itself, and pins
    # its GPU; a module without the call is code that such a script runs.
    inits: bool = False
    # Every import of it is under an `if` or a `try` and it never calls `smp.init()` (a copy of
    # transformers' Trainer: `if is_sagemaker_mp_enabled(): import smdistributed...`): model
    # parallel is an option of the module, not what it runs on; it is converted as any other.
    optional: bool = False


@dataclass
class LauncherFacts:
    estimators: list[Estimator] = field(default_factory=list)
    smp_script: SmpScript | None = None

    def __bool__(self) -> bool:
        return bool(self.estimators) or self.smp_script is not None
