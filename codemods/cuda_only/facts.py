"""The CUDA-only concern's part of the fact sheet: CUDA runtime calls, settings with no
effect, CUDA-only libraries (analysis.py), and device strings handed to other code
(handed_strings.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import libcst as cst

# What the answer of a CUDA query does on an XLA host (cuda_answers.py): nothing, choose
# another branch or value than a GPU would, or break the script.
Effect = Literal["none", "branch", "breaks"]

if TYPE_CHECKING:
    # What may bind or move a sparse tensor, in order (analysis.py), tagged by its kind:
    # ("bind", the targets' name chains (None: not one), the value, the enclosing function's
    # qualified name or "") | ("unpack", the name chains of a tuple target's elements, the value,
    # that scope) | ("move", the call, what it moves) | ("return", the function's qualified name,
    # the value returned).
    SparseEvent = (
        tuple[Literal["bind", "unpack"], list[str | None], cst.BaseExpression, str]
        | tuple[Literal["move"], cst.Call, cst.BaseExpression]
        | tuple[Literal["return"], str, cst.BaseExpression]
    )


@dataclass(frozen=True)
class HandedString:
    """A "cuda" string handed to a project callable: the callable as the call names it, and
    either the parameter's device uses (all of them: converted) or why it is reported."""

    callee: str
    converted: bool
    said: str


@dataclass(frozen=True)
class SparseParameter:
    """``nn.Embedding(..., sparse=sparse)`` with ``sparse`` a parameter of the enclosing
    function that defaults to False: the embedding is sparse only where a caller passes
    something else."""

    function: str  # qualified name
    parameter: str
    # Calls of this file that pass something other than False or None: as findings name them.
    passed_here: tuple[str, ...] = ()
    called_here: bool = False  # this file calls the function (with False or nothing, if passed_here is empty)


@dataclass(frozen=True)
class Answer:
    """What a CUDA query's answer does on an XLA host: its effect, the code where that
    shows, and what happens there (a clause for a finding's message)."""

    effect: Effect
    at: cst.CSTNode
    says: str
    # What to do instead, where the finding's usual advice does not fit (a device picked by a count).
    advice: str = ""

    def heading(self, query: str, qualified: str) -> str:
        """The start of a finding on the query (``query``: its code as written, without the
        call): what it answers on an XLA host, and what that does there."""
        value = 0 if qualified == "torch.cuda.device_count" else False
        return f"`{query}()` is {value} on an XLA host (no CUDA device): {self.says}"


@dataclass(repr=False, eq=False)
class CudaOnlyFacts:
    # torch.optim constructors given ``fused=`` (other than False or None), with that
    # argument; those that become sync-free optimizers are AMP's (they drop it there).
    fused_optimizers: dict[cst.Call, cst.Arg] = field(default_factory=dict)
    # Embeddings given ``sparse=`` (other than False or None), with that argument, and
    # torch.optim.SparseAdam constructions: sparse gradients do not run on XLA.
    sparse_embeddings: dict[cst.Call, cst.Arg] = field(default_factory=dict)
    sparse_optimizers: set[cst.Call] = field(default_factory=set)
    # Embeddings whose ``sparse=`` is a parameter of the function that defaults to False;
    # for other files, those functions: (name, index without self or -1, parameter); and the
    # calls of another module's such function that pass something other than False or None:
    # (that module's path, the function, the call as findings name it).
    sparse_parameters: dict[cst.Call, SparseParameter] = field(default_factory=dict)
    sparse_functions: set[tuple[str, int, str]] = field(default_factory=set)
    sparse_calls: set[tuple[str, str, str]] = field(default_factory=set)
    # Calls of another module's functions: (that module's path, the function), those under a
    # test that is never true on XLA (a CUDA availability check) and the others.
    cuda_guarded_calls: set[tuple[str, str]] = field(default_factory=set)
    other_calls: set[tuple[str, str]] = field(default_factory=set)
    # Module-level functions that the file never names again (no call, no reference).
    unnamed_functions: set[str] = field(default_factory=set)
    # Sparse tensors moved to the device (``adj.cuda()``: the name holding it, or the code of
    # a call that returns one and whether it is such a call) and sparse products in a model's
    # forward, where an operand is on the device: both raise on XLA.
    sparse_moves: dict[cst.Call, tuple[str, bool]] = field(default_factory=dict)
    # For other files: the functions of this one that return a sparse tensor (qualified).
    sparse_returns: set[str] = field(default_factory=set)
    # And the elements of the tuples they return that are (``return adj, features``: (qualified, 0)).
    sparse_element_returns: set[tuple[str, int]] = field(default_factory=set)
    sparse_products: set[cst.Call] = field(default_factory=set)
    # ``x.to_sparse()`` in a forward or a method it reaches (the tensor is on the device), and
    # a sparse tensor made on the device (``torch.sparse_coo_tensor(..., device=device)``: the
    # device as written): both raise on XLA.
    sparse_conversions: set[cst.Call] = field(default_factory=set)
    # Modules moved with a sparse Parameter or buffer (``model.to(device)``, ``model`` a
    # ``GraphModel`` whose ``__init__`` has ``self.A = nn.Parameter(torch.sparse.FloatTensor(n, n))``):
    # the move -> (what it moves, the class, the attribute); and those Parameters and buffers
    # -> (the class, the attribute, the first move of the module): the move raises on XLA.
    sparse_module_moves: dict[cst.Call, tuple[str, str, str]] = field(default_factory=dict)
    sparse_held: dict[cst.Call, tuple[str, str, str]] = field(default_factory=dict)
    # For other files: the classes of this one that hold a sparse Parameter or buffer (class, attribute).
    sparse_holders: set[tuple[str, str]] = field(default_factory=set)
    sparse_creations: dict[cst.Call, str] = field(default_factory=dict)
    # DGL graphs moved to the XLA device (the move -> the name holding the graph, or the code of
    # the graph, and whether it is a name) and made there
    # (``dgl.graph(..., device=device)`` -> the device as written): DGL knows only CPU and CUDA
    # devices (dgl_graphs.py).
    dgl_moves: dict[cst.Call, tuple[str, bool]] = field(default_factory=dict)
    dgl_creations: dict[cst.Call, str] = field(default_factory=dict)
    # Module-level functions that resize a parameter in place (``v.data.resize_(...)``): (name,
    # its index), for other files; resizes of a name on the device, and calls handing one to
    # such a function: (the name, the function; "" for a resize in place).
    resizing_functions: set[tuple[str, int]] = field(default_factory=set)
    resized_buffers: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    # Where the script sets a CUDA or NCCL environment variable, with its name.
    environment: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Statement lines with a statement that only sets or calls a setting with no effect on XLA
    # (rules/runtime_apis.NO_EFFECT: ``torch.backends.cudnn.benchmark = True``): it goes.
    no_effect_lines: set[cst.SimpleStatementLine | cst.SimpleStatementSuite] = field(default_factory=set)
    # ``pin_memory=True`` arguments, with the call they are given to (None: a class's), and
    # dict entries: no effect on XLA.
    pinned_args: dict[cst.Arg, cst.Call | None] = field(default_factory=dict)
    pinned_entries: set[cst.DictElement] = field(default_factory=set)
    # A CUDA device count that the launching process hands to its workers (which read the
    # XLA one: XLA602) and also uses itself, where it is 0 on XLA: each such use, with the
    # assignment of the count.
    launcher_count_uses: dict[cst.Name, cst.Assign] = field(default_factory=dict)
    # ``torch.cuda.device_count()`` and ``torch.cuda.is_bf16_supported()`` (0 and False on an
    # XLA host) that nothing else ports or guards: by the reference to the API, what their
    # answer does there (cuda_answers.py).
    cuda_answers: dict[cst.BaseExpression, Answer] = field(default_factory=dict)
    # References to torch.cuda APIs in the body of an ``if`` that is never true on XLA as
    # the script runs by default: under a kept CUDA availability check (never runs there:
    # the value None), or under a command-line switch that is off by default (the value:
    # the switch as the test reads it, ``args.profile``).
    guarded_cuda: dict[cst.CSTNode, str | None] = field(default_factory=dict)
    # References to a CUDA-only class (SyncBatchNorm) that only test a value's class
    # (``isinstance(m, bn_types)``): they build nothing (class_tests.py).
    class_tests: set[cst.CSTNode] = field(default_factory=set)
    # In a forward (or backward): calls of a compiled extension's ops, and the tests that make
    # it raise unless its input is a CUDA tensor (``if not x.is_cuda: raise``), with where the
    # extension comes from (``from ._ext import dcn_v2``) or the test as written.
    extension_ops: dict[cst.CSTNode, str] = field(default_factory=dict)
    cuda_only_forwards: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Outside a forward: calls of a compiled extension's op handed a tensor that their function
    # puts on the device (on the XLA device after the port): where the extension comes from, and
    # the name of that tensor.
    extension_calls: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    # Module-level names bound to a compiled extension's op (``nms = _C.nms``): where the
    # extension comes from, and the name bound.
    extension_exports: dict[cst.Attribute, tuple[str, str]] = field(default_factory=dict)
    # "cuda" strings handed to a class or function of the project (handed_strings.py).
    handed_strings: dict[cst.BaseExpression, HandedString] = field(default_factory=dict)
