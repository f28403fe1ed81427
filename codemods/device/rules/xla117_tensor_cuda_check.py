"""XLA117 tensor-cuda-check: a tensor's own CUDA check (``x.is_cuda``, ``x.device.type == 'cuda'``)
around device code becomes ``x.device.type == 'xla'`` (the device facts' ``tensor_checks``;
reported where the guarded code also fails without CUDA, or the CUDA devices stay), and
``x.get_device()`` where a device goes becomes ``x.device`` (``index_of_tensor``).  What the
analysis recognises is device/tensor_checks.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.xla107_cuda_tensor_type import CPU_TYPE_IN_ARITHMETIC, CPU_TYPE_IN_MAX
from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

TENSOR_CUDA_CHECK = Rule(
    code="XLA117",
    name="tensor-cuda-check",
    severity="error",
    summary="A tensor's own CUDA check (`x.is_cuda`, `x.device.type == 'cuda'`) around a move asks whether `x` is "
    "on the accelerator: on XLA it is `x.device.type == 'xla'`",
    fixable=True,
    why="Helpers that make a tensor on the CPU follow another tensor's device with a check of its CUDA-ness: "
    "`if y.is_cuda: return t.cuda()`, `t = t.cuda() if x.is_cuda else t`, `device = x.device if x.is_cuda else "
    "'cpu'`, `if x.device.type == 'cuda': ...`. For a tensor on the XLA device `is_cuda` is False and its "
    "device type is 'xla' (torch_xla 2.9), so the move the port made of `.cuda()` never runs: the new tensor "
    "stays on the CPU and the next operation with `x` fails ('Expected XLA tensor'), or the work silently runs "
    "on the CPU. Where the check guards device code (a move, a device, `x.device`) or a copy of the tensor to "
    "the host (`if t.is_cuda: return t.cpu()`, spotlight's `cpu()` before `.numpy()`: without it the tensor stays "
    "on the XLA device and `.numpy()` raises), it becomes `x.device.type == 'xla'`: it keeps asking whether `x` is on the accelerator, and a CPU tensor still skips "
    "the move. Where the guarded code also runs something that fails without CUDA, the check is reported "
    "instead: move that code onto the XLA device, then compare with 'xla'. `x.get_device()` given where a "
    "device goes (`t.to(x.get_device())`, `device=x.get_device()`) is a CUDA index, 0 for an XLA tensor, so it "
    "names cuda:0, which fails without CUDA: it becomes `x.device` (not where `x` is a value the file calls, "
    "`model(x)`: a module, or where the file defines a `get_device` method of its own, which returns a device). "
    "A check around other code (`if x.is_cuda: "
    "x = x.half()`) stays, with XLA105; `x.get_device()` compared with a number (`>= 0`, `== -1`) already "
    "tells a tensor on the XLA device (0) from one on the CPU (-1) and stays. A method of the file that returns "
    "such a check (`def is_cuda(self): return self.lstm.bias_hh_l0.data.is_cuda`), called in a condition around "
    "device code (`... .cuda() if self.is_cuda() else ...`), has the check in its body ported; the call stays (a "
    "module has no `is_cuda`, nor a `device`). Where the check chooses a CUDA string for the accelerator "
    "(`dv = 'cuda' if x.is_cuda else 'cpu'`), that string becomes \"xla\" with it: once the check asks for the "
    "XLA device, 'cuda' would name a device that is not there. A check that chooses a CUDA tensor type "
    "(`FT = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor`) is reported (that type fails without CUDA) "
    "where the CPU type's tensors meet XLA tensors in an operation that needs one device (`torch.max`); where they "
    "only meet them in arithmetic and host reads, it runs on XLA as it is and is no finding of this rule (XLA105's). "
    "A branch that also asks for XLA availability (`if use_tpu and x.is_cuda:`, a name with the word xla or tpu: "
    "`HAS_XLA`, `args.tpu`, `isTPU`) is the project's own XLA path and is left as written; a tensor whose name only "
    "holds those letters (`output`, `throughput`, `xlarge`: kospeech's `if output.is_cuda: mask = mask.cuda()`) "
    "asks nothing of the kind, and its check is ported.",
    examples=lambda: (
        invalid(
            """
            import torch

            def one_hot(y, num_classes):
                new_y = torch.eye(num_classes)[y.cpu()]
                if y.is_cuda:
                    return new_y.cuda()
                return new_y
            """,
            """
            import torch
            import torch_xla

            def one_hot(y, num_classes):
                new_y = torch.eye(num_classes)[y.cpu()]
                if y.device.type == "xla":
                    return new_y.to(torch_xla.device())
                return new_y
            """,
            findings=(
                Expected(6, 8, '`y.is_cuda` -> y.device.type == "xla": it is False for a tensor on the XLA device'),
            ),
        ),
    ),
    valid=lambda: (
        *(
            valid(
                f"""
                import torch

                def pad_mask(x, {flag}):
                    mask = torch.ones([x.size(0), x.size(1)])
                    if {flag} and x.is_cuda:
                        mask = mask.cuda()
                    return mask
                """,
                target=target,
                note=f"a-branch-on-xla-availability-is-left-as-written-{flag}-{target}",
            )
            for target in ("2.9", "sagemaker")
            for flag in ("use_tpu", "HAS_XLA", "onTPU")
        ),
        valid(
            """
            import torch

            def cast(x, t):
                if x.is_cuda:
                    x = x.half()
                if x.get_device() >= 0:
                    t = t.cuda(x.get_device())
                return x, t
            """,
            """
            import torch
            import torch_xla

            def cast(x, t):
                if x.is_cuda:
                    x = x.half()
                if x.get_device() >= 0:
                    t = t.to(torch_xla.device())
                return x, t
            """,
            note="no-device-code-and-index-comparison",
        ),
        valid(
            """
            import torch

            def place(t, x):
                return t.to(x.device), torch.zeros(3, device=x.device)
            """,
            note="follows-the-device-already",
        ),
        valid(
            """
            import torch

            def evaluate(model, batches):
                total = torch.tensor(0.0, device=model.get_device())
                for x, y in batches:
                    total += model(x, y)
                return total
            """,
            note="get-device-of-a-called-module",
        ),
        valid(
            """
            import torch
            from torch import nn

            class Net(nn.Module):
                def get_device(self):
                    return self.proj.weight.device

            def scratch(net, n):
                return torch.zeros(n, device=net.get_device())
            """,
            note="get-device-the-file-defines",
        ),
        valid(
            """
            import torch

            def report(encoder):
                if encoder.is_cuda():
                    print("the encoder runs on the GPU")
            """,
            note="a-call-of-a-method-named-is_cuda",
        ),
        valid(
            """
            import torch

            def cpu(tensor):
                if tensor.is_cuda:
                    print("copied from the GPU")
                return tensor.cpu()
            """,
            note="host-copy-not-guarded-by-the-check",
        ),
        valid(CPU_TYPE_IN_ARITHMETIC, target="sagemaker", note="a-cpu-type-chosen-met-only-in-arithmetic-and-item"),
    ),
    invalid=lambda: (
        # A tensor whose name holds the letters of "tpu" or "xla" (``output``, ``throughput``, ``xlarge``):
        # a branch on it is no branch on XLA availability (imports/analysis.py names_xla), so it is ported.
        *(
            invalid(
                f"""
                import torch{" as th" if torch == "th" else ""}

                def pad_mask({name}):
                    mask = {torch}.ones([{name}.size(0), {name}.size(1)])
                    if {name}.is_cuda:
                        mask = mask.cuda()
                    return mask
                """,
                f"""
                import torch{" as th" if torch == "th" else ""}
                import {"torch_xla" if target == "2.9" else "torch_xla.core.xla_model as xm"}

                def pad_mask({name}):
                    mask = {torch}.ones([{name}.size(0), {name}.size(1)])
                    if {name}.device.type == "xla":
                        mask = mask.to({"torch_xla.device()" if target == "2.9" else "xm.xla_device()"})
                    return mask
                """,
                target=target,
                alias=torch == "th",
                note=f"a-tensor-named-{name}-is-no-test-for-xla-{target}",
                findings=(Expected(6, 8, f'`{name}.is_cuda` -> {name}.device.type == "xla": it is False'),),
            )
            for target in ("2.9", "sagemaker")
            for name, torch in (("output", "torch"), ("throughput", "torch"), ("xlarge", "th"))
        ),
        invalid(
            CPU_TYPE_IN_MAX,
            target="sagemaker",
            note="a-cpu-type-chosen-met-in-torch-max",
            findings=(Expected(7, 43, "`x.is_cuda` is False for a tensor on the XLA device"),),
        ),
        invalid(
            """
            import torch

            def cpu(tensor):
                if tensor.is_cuda:
                    return tensor.cpu()
                else:
                    return tensor

            def predict(net, x):
                return cpu(net(x)).detach().numpy()
            """,
            """
            import torch

            def cpu(tensor):
                if tensor.device.type == "xla":
                    return tensor.cpu()
                else:
                    return tensor

            def predict(net, x):
                return cpu(net(x)).detach().numpy()
            """,
            note="host-copy-before-numpy",
            findings=(Expected(4, 8, '`tensor.is_cuda` -> tensor.device.type == "xla": it is False'),),
        ),
        invalid(
            """
            import torch

            def to_host(t):
                return t.cpu() if t.device.type == "cuda" else t
            """,
            """
            import torch

            def to_host(t):
                return t.cpu() if t.device.type == "xla" else t
            """,
            note="host-copy-in-a-conditional-expression",
            target="sagemaker",
            findings=(Expected(4, 23, '`t.device.type == "cuda"` -> t.device.type == "xla": it is False'),),
        ),
        invalid(
            """
            import torch


            def train(args, model):
                if args.device == "cuda":
                    model = model.cuda()
                return model
            """,
            """
            import torch
            import torch_xla


            def train(args, model):
                if args.device == "xla":
                    model = model.to(torch_xla.device())
                return model
            """,
            note="a device setting compared as a string, not a tensor's device",
            findings=(
                Expected(
                    6,
                    8,
                    '`args.device == "cuda"` -> args.device == "xla": it compares a device named by a string (a '
                    "setting, such as a --device flag: a tensor's device is never equal to a string), which the port "
                    "makes 'xla' where it is set",
                ),
            ),
        ),
        invalid(
            """
            import torch

            def pad(t, x):
                t = t.cuda() if x.is_cuda else t
                device = x.device if x.is_cuda else 'cpu'
                if x.device.type == "cuda":
                    t = t.cuda()
                if not x.is_cuda:
                    t = t.to(x.device)
                return t, device
            """,
            """
            import torch
            import torch_xla

            def pad(t, x):
                t = t.to(torch_xla.device()) if x.device.type == "xla" else t
                device = x.device if x.device.type == "xla" else 'cpu'
                if x.device.type == "xla":
                    t = t.to(torch_xla.device())
                if not (x.device.type == "xla"):
                    t = t.to(x.device)
                return t, device
            """,
            note="ifexp-device-choice-type-and-negation",
            findings=(
                Expected(5, 37, '`x.is_cuda` -> x.device.type == "xla": it is False for a tensor'),
                Expected(6, 26, '`x.is_cuda` -> x.device.type == "xla": it is False for a tensor'),
                Expected(7, 8, '`x.device.type == "cuda"` -> x.device.type == "xla": it is False'),
                Expected(9, 13, '`x.is_cuda` -> (x.device.type == "xla"): it is False for a tensor'),
            ),
        ),
        invalid(
            """
            import torch

            def ones_like_rows(x):
                dv = 'cuda' if x.is_cuda else 'cpu'
                first = 'cuda:0' if x.device.type == 'cuda' else 'cpu'
                return torch.ones(x.size(0), device=dv), first
            """,
            """
            import torch

            def ones_like_rows(x):
                dv = "xla" if x.device.type == "xla" else 'cpu'
                first = "xla" if x.device.type == 'xla' else 'cpu'
                return torch.ones(x.size(0), device=dv), first
            """,
            note="ifexp-chosen-cuda-string",
            findings=(
                Expected(4, 10, "`'cuda'` -> \"xla\": the device chosen when the tensor is on the accelerator"),
                Expected(4, 19, '`x.is_cuda` -> x.device.type == "xla": it is False for a tensor'),
                Expected(5, 13, "`'cuda:0'` -> \"xla\": the device chosen when the tensor is on the accelerator"),
                Expected(5, 22, "`x.device.type == 'cuda'` -> x.device.type == 'xla': it is False"),
            ),
        ),
        invalid(
            """
            import torch

            def like(t, x):
                z = torch.zeros(3, device=x.get_device())
                return t.to(x.get_device()) + z
            """,
            """
            import torch

            def like(t, x):
                z = torch.zeros(3, device=x.device)
                return t.to(x.device) + z
            """,
            note="get-device-as-a-device",
            findings=(
                Expected(
                    4, 31, "`x.get_device()` -> x.device: a CUDA index where a device goes (0 for a tensor on the XLA"
                ),
                Expected(5, 17, "-> x.device"),
            ),
        ),
        invalid(
            """
            import torch

            def to_device(t, x):
                if x.is_cuda:
                    t = t.cuda(non_blocking=True)
                    torch.cuda.current_stream().synchronize()
                return t
            """,
            """
            import torch
            import torch_xla

            def to_device(t, x):
                if x.is_cuda:
                    t = t.to(torch_xla.device(), non_blocking=True)
                    torch.cuda.current_stream().synchronize()
                return t
            """,
            note="guards-code-that-fails-without-cuda-reported",
            findings=(Expected(5, 8, "not changed: the code it guards also runs `torch.cuda.current_stream`"),),
        ),
        invalid(
            """
            import torch as th

            def label(y, n):
                out = th.eye(n)[y.cpu()]
                return out.cuda() if (y.is_cuda) else out
            """,
            """
            import torch as th
            import torch_xla

            def label(y, n):
                out = th.eye(n)[y.cpu()]
                return out.to(torch_xla.device()) if (y.device.type == "xla") else out
            """,
            alias=True,
            findings=(Expected(6, 43, '`(y.is_cuda)` -> (y.device.type == "xla")'),),
        ),
        # A module's own method that asks a tensor (its weights) and is called where a batch goes:
        # the call stays (a module has no is_cuda), the tensor's check in its body is ported.
        invalid(
            """
            import torch
            from torch import nn

            class Encoder(nn.Module):
                def is_cuda(self):
                    return self.lstm.bias_hh_l0.data.is_cuda

                def forward(self, x):
                    idx = torch.arange(x.size(0)).cuda() if self.is_cuda() else torch.arange(x.size(0))
                    return x.index_select(0, idx)
            """,
            """
            import torch
            from torch import nn
            import torch_xla

            class Encoder(nn.Module):
                def is_cuda(self):
                    return self.lstm.bias_hh_l0.data.device.type == "xla"

                def forward(self, x):
                    idx = torch.arange(x.size(0)).to(torch_xla.device()) if self.is_cuda() else torch.arange(x.size(0))
                    return x.index_select(0, idx)
            """,
            note="a-method-that-returns-a-tensor-check-called-around-a-move",
            findings=(Expected(7, 16, "`self.lstm.bias_hh_l0.data.is_cuda` -> self.lstm.bias_hh_l0.data.device.type"),),
        ),
    ),
)


# Where an ``x.is_cuda`` that becomes ``x.device.type == "xla"`` needs no parentheses (node types).
_TAKES_A_BARE_COMPARISON = frozenset(
    "If IfExp While BooleanOperation Assign AnnAssign Return Arg Assert Element Expr".split()
)
_FALSE_ON_XLA = "is False for a tensor on the XLA device, so the device code it guards never runs there"


# ``x.device == "cuda"`` is False for any tensor (a torch.device never equals a string): what
# it compares is a device named by a string, a setting (``args.device``, a config's).
_STRING_SETTING = "compares a device named by a string (a setting, such as a --device flag: a tensor's device is never equal to a string)"


def _compares_a_string(check: cst.CSTNode) -> bool:
    """``args.device == 'cuda'``: a value compared as it is, not its ``.type`` nor ``str(...)``."""
    import libcst as cst

    from codemods.engine.nodes import string_value

    if not isinstance(check, cst.Comparison) or len(check.comparisons) != 1:
        return False
    left, right = check.left, check.comparisons[0].comparator
    value = right if string_value(left) is not None else left
    return isinstance(value, cst.Attribute) and value.attr.value == "device"


def _ported_checks(facts: Facts) -> list[cst.CSTNode]:
    """The tensor checks: one XLA110 ports as the script's device is its."""
    return [check for check in facts.device.tensor_checks if check not in facts.device.type_checks]


@on_facts(TENSOR_CUDA_CHECK, nodes=_ported_checks)
def _ported_check(
    ctx: Context[Facts], original: cst.Attribute | cst.Comparison, updated: cst.Attribute | cst.Comparison
) -> cst.BaseExpression:
    import libcst as cst

    from codemods.device.rules.checks import compared_with, kept_because

    blocker = ctx.facts.device.tensor_checks[original]
    check = ctx.code(original)
    device_type = ctx.target.device_string
    why = kept_because(ctx, blocker)
    string = _compares_a_string(original)
    if why is not None:
        said = _STRING_SETTING if string else f"{_FALSE_ON_XLA} (the tensors it makes stay on the CPU)"
        ctx.report(
            TENSOR_CUDA_CHECK,
            original,
            f"`{check}` {said}; not changed: {why}; move that code onto the XLA device, then ask "
            f"`.device.type == '{device_type}'`",
        )
        return updated

    def build() -> cst.BaseExpression:
        if isinstance(updated, cst.Comparison):
            return compared_with(updated, device_type)
        comparison = cst.Comparison(
            left=cst.Attribute(
                value=cst.Attribute(value=updated.value, attr=cst.Name("device")), attr=cst.Name("type")
            ),
            comparisons=[cst.ComparisonTarget(operator=cst.Equal(), comparator=cst.SimpleString(f'"{device_type}"'))],
        )
        if type(ctx.parent()).__name__ in _TAKES_A_BARE_COMPARISON:
            return comparison.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        return comparison.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    message = (
        f"`{check}` -> {{new}}: it {_STRING_SETTING}, which the port makes '{device_type}' where it is set"
        if string
        else f"`{check}` -> {{new}}: it {_FALSE_ON_XLA}; the new check asks whether the tensor is on the accelerator"
    )
    return ctx.fix_or_keep(updated, TENSOR_CUDA_CHECK, original, message, build)


@on_facts(TENSOR_CUDA_CHECK, nodes=lambda facts: facts.device.index_of_tensor)
def _tensor_device(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``x.get_device()`` where a device goes -> ``x.device``."""
    import libcst as cst

    if not isinstance(updated.func, cst.Attribute):
        return updated
    tensor = updated.func.value
    return ctx.fix_or_keep(
        updated,
        TENSOR_CUDA_CHECK,
        original,
        f"`{ctx.code(original)}` -> {{new}}: a CUDA index where a device goes (0 for a tensor on the XLA device: "
        "cuda:0, which fails without CUDA); the tensor's device is what it meant",
        lambda: cst.Attribute(value=tensor, attr=cst.Name("device")),
    )


@on_facts(TENSOR_CUDA_CHECK, nodes=lambda facts: facts.device.tensor_chosen_strings.difference(facts.device.strings))
def _chosen_string(ctx: Context[Facts], original: cst.SimpleString, updated: cst.SimpleString) -> cst.BaseExpression:
    """``'cuda' if x.is_cuda else 'cpu'`` -> ``"xla" if x.device.type == "xla" else 'cpu'``: the
    device chosen for a tensor on the accelerator."""
    import libcst as cst

    device_string = f'"{ctx.target.device_string}"'
    return ctx.fix_or_keep(
        updated,
        TENSOR_CUDA_CHECK,
        original,
        f"`{ctx.code(original)}` -> {{new}}: the device chosen when the tensor is on the accelerator, which is the "
        "XLA device once the check asks for it (CUDA would fail there)",
        lambda: cst.SimpleString(device_string),
    )
