"""XLA514 resized-buffer: a preallocated tensor on the XLA device filled in place with each
batch (``v.data.resize_(data.size()).copy_(data)``, directly or through a helper of the file or
of another project module): on XLA a resize to a larger size raises and a smaller one keeps the
old shape.  Reported at the resize or at the call that hands the tensor to the helper."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# An old-style script: a buffer made once, moved to the GPU, then filled with each batch by a helper.
_FILLED_BY_A_HELPER = """
import torch
from torch.autograd import Variable


def load_data(v, data):
    v.data.resize_(data.size()).copy_(data)


model = torch.nn.Linear(8, 2).cuda()
image = torch.FloatTensor(4, 8)
image = image.cuda()
image = Variable(image)


def train_batch(cpu_images):
    load_data(image, cpu_images)
    return model(image).sum()
"""
_FILLED_BY_A_HELPER_PORTED = substituted(
    _FILLED_BY_A_HELPER,
    ("from torch.autograd import Variable\n", "from torch.autograd import Variable\nimport torch_xla\n"),
    ("torch.nn.Linear(8, 2).cuda()", "torch.nn.Linear(8, 2).to(torch_xla.device())"),
    ("image.cuda()", "image.to(torch_xla.device())"),
)

RESIZED_BUFFER = Rule(
    code="XLA514",
    name="resized-buffer",
    severity="error",
    summary="A preallocated tensor on the XLA device resized and filled in place with each batch "
    "(`v.data.resize_(data.size()).copy_(data)`)",
    fixable=False,
    why="Old training scripts make an input buffer once, move it to the GPU, and fill it with each batch: "
    "`v.data.resize_(data.size()).copy_(data)` (often in a helper, `utils.loadData(image, cpu_images)`). On "
    "torch_xla 2.9 (checked with PJRT_DEVICE=CPU) resizing an XLA tensor's `.data` to a larger size raises "
    "`RuntimeError: Attempted to resize a view tensor to a larger size. This is not allowed in the "
    "functionalization pass`, and a resize to a smaller size leaves the tensor its old shape, so the copy that "
    "follows fills only part of it (or fails): the batch never reaches the model as it should. (Eagerly, on "
    "current PyTorch, `v.data.resize_(...)` leaves `v` its old shape too: the model sees the buffer's first "
    "elements, not the batch.) The tool reports "
    "the resize of a name the port puts on the device (`x.cuda()`, `x.to(device)`, also through "
    "`Variable(x)`), and a call handing such a name to a module-level function of the file, or of another module "
    "of the project, that resizes that parameter in place. Bind the batch instead: `image = cpu_images.to(device)` "
    "where the buffer was filled (declare it `global` in a function that fills a module's buffer), and drop the "
    "preallocated buffer.",
    examples=lambda: (invalid(_FILLED_BY_A_HELPER, _FILLED_BY_A_HELPER_PORTED, findings=(Expected(17, 5, ""),)),),
    valid=lambda: (
        valid(
            """
            import torch


            def load_data(v, data):
                v.data.resize_(data.size()).copy_(data)


            image = torch.FloatTensor(4, 8)
            text = torch.IntTensor(4)


            def train_batch(cpu_images, t):
                load_data(image, cpu_images)
                load_data(text, t)
                buffer = torch.empty(0)
                buffer.resize_(t.size())
                return image.sum()
            """,
            note="buffers-on-the-cpu",
        ),
    ),
    invalid=lambda: (
        invalid(
            _FILLED_BY_A_HELPER,
            _FILLED_BY_A_HELPER_PORTED,
            note="filled-by-a-helper-of-the-file",
            findings=(
                Expected(
                    17,
                    5,
                    "`load_data(...)` resizes `image` in place (`load_data` resizes its parameter), which the port "
                    "puts on the XLA device: a resize to a larger size raises there (functionalization), a smaller "
                    "one keeps the old shape; bind the batch instead (`image = <the batch>.to(device)`)",
                ),
            ),
        ),
        invalid(
            """
            import torch
            from torch.autograd import Variable as V


            def step(model, batch, buffer):
                buffer = V(buffer.to("cuda"))
                buffer.data.resize_(batch.size()).copy_(batch)
                return model(buffer)
            """,
            """
            import torch
            from torch.autograd import Variable as V
            import torch_xla  # noqa: F401  (registers the "xla" device)


            def step(model, batch, buffer):
                buffer = V(buffer.to("xla"))
                buffer.data.resize_(batch.size()).copy_(batch)
                return model(buffer)
            """,
            target="sagemaker",
            alias=True,
            note="resized-in-place-sagemaker",
            findings=(Expected(8, 5, "`buffer.data.resize_(...)` resizes `buffer` in place"),),
        ),
    ),
)


@reports_facts(RESIZED_BUFFER, nodes=lambda facts: facts.cuda_only.resized_buffers)
def _resized(ctx: Context[Facts], original: cst.Call) -> str:
    name, helper = ctx.facts.cuda_only.resized_buffers[original]
    how = f" (`{helper}` resizes its parameter)" if helper else ""
    return (
        f"`{ctx.code(original.func)}(...)` resizes `{name}` in place{how}, which the port puts on the XLA device: "
        "a resize to a larger size raises there (functionalization), a smaller one keeps the old shape; bind the "
        f"batch instead (`{name} = <the batch>.to(device)`)"
    )
