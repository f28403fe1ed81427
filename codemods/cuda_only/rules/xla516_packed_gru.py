"""XLA516 packed-gru: a PackedSequence fed to a ``torch.nn.GRU`` in a file that uses the XLA
device: ``import torch_xla`` (2.8 and later) replaces ``torch.nn.GRU`` with its scan GRU, which
raises on a PackedSequence.  Followed in one file: the GRU bound to a name or attribute, the
packed sequence made in the call or bound to a name of the same function."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_calls, on_nodes
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

ENCODER = """
import torch
from torch.nn.utils.rnn import pack_padded_sequence


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(4, 8, batch_first=True)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True)
        return self.rnn(packed)[0]


model = Encoder().cuda()
"""
_ENCODER_PORTED = substituted(
    ENCODER,
    (
        "from torch.nn.utils.rnn import pack_padded_sequence\n",
        "from torch.nn.utils.rnn import pack_padded_sequence\nimport torch_xla\n",
    ),
    (".cuda()", ".to(torch_xla.device())"),
)
_SAYS = (
    "`{call}` feeds a PackedSequence to `{gru}`, a torch.nn.GRU: `import torch_xla` replaces torch.nn.GRU with "
    "torch_xla's scan GRU, which raises `AssertionError: PackedSequence is not supported`; feed the padded batch "
    "(mask the padded steps)"
)

PACKED_GRU = Rule(
    code="XLA516",
    name="packed-gru",
    severity="error",
    summary="A PackedSequence fed to a `torch.nn.GRU`: torch_xla's GRU, which `import torch_xla` puts in its place, "
    "rejects it",
    fixable=False,
    why="torch_xla 2.8 and later replace `torch.nn.GRU` with its own GRU (`GRU` of the module torch_xla/experimental/gru.py) when torch_xla is "
    "imported (`_apply_patches()`); torch_xla 1.13 does not (its patches touch only `clip_grad_norm_`). On "
    "torch_xla 2.9 (checked with PJRT_DEVICE=CPU) that GRU raises `AssertionError: PackedSequence is not "
    "supported. Use a regular tensor instead.` on a `pack_padded_sequence(...)` input, on the CPU and on the XLA "
    "device, so a converted recurrent model that packs its batches crashes at the first forward. The original "
    "class (`torch.nn.modules.rnn.GRU`) is no port: a sequence packed from an XLA tensor carries `batch_sizes` "
    "with no storage there, and `_VF.gru` (also LSTM and RNN) raises `RuntimeError: The tensor has a non-zero "
    "number of elements, but its data is not allocated yet`; it runs only on a sequence packed on the CPU and "
    "then moved. Feed the padded batch and mask the padded steps (or gather each sequence's last valid output). "
    "Reported on target 2.9 where a file that uses the XLA device (it imports torch_xla, or the port moves "
    "something there) calls a name or attribute bound to `torch.nn.GRU(...)` with `pack_padded_sequence(...)` / "
    "`pack_sequence(...)` or a name of the same function bound to one. Not followed: a GRU or packed sequence "
    "handed in from another function or file, a GRU inside `nn.Sequential`/a list, and the packed sequences of "
    "LSTM and RNN modules (not reported). On the sagemaker target (torch_xla 1.13, which does not patch GRU; "
    "packed sequences on its XLA device were not checked here) nothing is reported.",
    instead="Feed the GRU the padded batch (`self.rnn(x)`, not `pack_padded_sequence(x, lengths)`) and mask the "
    "padded steps, or take each sequence's last valid output (`out[torch.arange(len(lengths)), lengths - 1]`): "
    "on torch_xla 2.9 neither its GRU nor the original one runs a sequence packed on the XLA device.",
    # The example already imports torch_xla (a pre-commit check of ported code): the rule is 2.9's only.
    examples=lambda: (
        invalid(
            _ENCODER_PORTED,
            findings=(Expected(13, 16, _SAYS.format(call="self.rnn(packed)", gru="self.rnn")),),
        ),
    ),
    valid=lambda: (
        valid(
            _ENCODER_PORTED.replace("import torch_xla\n", "import torch_xla.core.xla_model as xm\n", 1).replace(
                "torch_xla.device()", "xm.xla_device()"
            ),
            target="sagemaker",
            note="sagemaker-no-patch",
        ),
        # torch_xla 1.13's import does not replace it.
        valid(
            ENCODER,
            substituted(
                ENCODER,
                (
                    "from torch.nn.utils.rnn import pack_padded_sequence\n",
                    "from torch.nn.utils.rnn import pack_padded_sequence\nimport torch_xla.core.xla_model as xm\n",
                ),
                (".cuda()", ".to(xm.xla_device())"),
            ),
            target="sagemaker",
            note="port-adds-import-sagemaker",
        ),
        valid(substituted(ENCODER, ("Encoder().cuda()", "Encoder()")), note="no-xla-device"),
        valid(
            substituted(ENCODER, ("self.rnn(packed)", "self.rnn(x)"), ("packed = ", "_ = ")),
            _ENCODER_PORTED.replace("self.rnn(packed)", "self.rnn(x)").replace("packed = ", "_ = "),
            note="padded-input",
        ),
        valid(
            substituted(ENCODER, ("torch.nn.GRU(", "torch.nn.LSTM(")),
            _ENCODER_PORTED.replace("torch.nn.GRU(", "torch.nn.LSTM("),
            note="lstm-not-followed",
        ),
    ),
    invalid=lambda: (
        # The port adds `import torch_xla` (2.9): the file's GRU is replaced as it starts.
        invalid(
            ENCODER,
            _ENCODER_PORTED,
            note="port-adds-import",
            target_only=True,
            findings=(Expected(13, 16, _SAYS.format(call="self.rnn(packed)", gru="self.rnn")),),
        ),
        invalid(
            """
            import torch.nn as nn
            import torch.nn.utils.rnn as rnn_utils
            import torch_xla

            gru = nn.GRU(4, 8)
            out, h = gru(rnn_utils.pack_sequence(seqs))
            """,
            alias=True,
            note="aliases",
            findings=(Expected(6, 10, _SAYS.format(call="gru(rnn_utils.pack_sequence(seqs))", gru="gru")),),
        ),
    ),
)

_GRUS = frozenset({"torch.nn.GRU"})
_PACKS = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence"})


def _uses_xla_device(ctx: Context[Facts]) -> bool:
    device = ctx.facts.device
    return (
        ctx.facts.imports.table.imports_module("torch_xla")
        or ctx.facts.imports.xla_optional
        or bool(device.calls or device.strings or device.dot_cuda or device.index_moves)
        or any(added.startswith("torch_xla") for added in ctx.imports.added)
    )


def packed_gru_calls(ctx: Context[Facts], module: cst.Module) -> list[tuple[cst.Call, str]]:
    """The calls of a name bound to ``torch.nn.GRU(...)`` whose first argument is a packed
    sequence (made there, or bound to a name in the same function), with the GRU's name."""
    import libcst as cst

    from codemods.engine.nodes import dotted

    def call_of(node: cst.CSTNode | None, names: frozenset[str]) -> bool:
        return type(node) is cst.Call and ctx.resolve(node.func) in names

    # A GRU bound to ``self.<name>`` is known in its class only (an LSTM of another class may use the name).
    grus: set[tuple[str, str]] = set()
    for owner, node in _owned(module, ""):
        if type(node) is cst.Assign and call_of(node.value, _GRUS):
            for t in node.targets:
                name = dotted(t.target)
                if name is not None:
                    grus.add((owner if name.startswith("self.") else "", name))
    if not grus:
        return []
    found: list[tuple[cst.Call, str]] = []
    for owner, scope in _owned(module, ""):
        if type(scope) is not cst.FunctionDef and type(scope) is not cst.Module:
            continue
        packed: set[str] = set()
        for node in _walk(scope, into_functions=False):
            if type(node) is cst.Assign and call_of(node.value, _PACKS):
                packed.update(name for t in node.targets if (name := dotted(t.target)) is not None)
            elif type(node) is cst.Call and node.args and (gru := dotted(node.func)) is not None:
                if (owner if gru.startswith("self.") else "", gru) not in grus:
                    continue
                first = node.args[0].value
                if call_of(first, _PACKS) or (type(first) is cst.Name and first.value in packed):
                    found.append((node, gru))
    return found


def _owned(node: cst.CSTNode, owner: str) -> list[tuple[str, cst.CSTNode]]:
    """Every node of ``node``'s subtree with the name of the class it is in ("" outside classes)."""
    import libcst as cst

    result: list[tuple[str, cst.CSTNode]] = [(owner, node)]
    inner = node.name.value if type(node) is cst.ClassDef else owner
    for child in node.children:
        result.extend(_owned(child, inner))
    return result


def _walk(node: cst.CSTNode, *, into_functions: bool = True) -> list[cst.CSTNode]:
    """``node``'s subtree in source order; without ``into_functions``, not the bodies of the
    functions inside it."""
    import libcst as cst

    nodes: list[cst.CSTNode] = []
    stack = [node]
    while stack:
        current = stack.pop()
        nodes.append(current)
        if not into_functions and current is not node and type(current) is cst.FunctionDef:
            continue
        stack.extend(reversed(current.children))
    return nodes


@on_calls(PACKED_GRU, names=_GRUS)
def _seen(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.Call:
    """Only a name the module hook needs looked at."""
    return updated


@on_nodes(PACKED_GRU, types="Module")
def _packed_grus(ctx: Context[Facts], original: cst.Module, updated: cst.Module) -> cst.Module:
    taken = ctx.facts.imports.taken_names
    if "GRU" not in taken or not ctx.target.patches_gru or not _uses_xla_device(ctx):
        return updated
    if "pack_padded_sequence" not in taken and "pack_sequence" not in taken:
        return updated
    for call, gru in packed_gru_calls(ctx, original):
        ctx.report(PACKED_GRU, call, _SAYS.format(call=ctx.code(call), gru=gru))
    return updated
