"""XLA303 eval-loop-barrier: an evaluation loop over the device that reads nothing to the host
per iteration, or that accumulates device values across iterations, ends every iteration with
the step barrier (also before each ``continue`` that skips the end and each ``break`` of the loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid, with_barrier
from codemods.training.rules.cpu_device_read_cases import (
    CPU_DEVICE_READ_WHY,
    cpu_device_read_invalid,
    cpu_device_read_valid,
)
from codemods.training.rules.dead_loop_cases import dead_loop_invalid, dead_loop_valid
from codemods.training.rules.host_read_loop_cases import (
    HOST_READ_LOOPS_WHY,
    host_read_loop_invalid,
    host_read_loop_valid,
)
from codemods.training.rules.meter_loop_cases import DEVICE_ACCURACY, DEVICE_METER, HOST_ACCURACY, SUBMODULES
from codemods.training.rules.move_loop_cases import move_loop_invalid, move_loop_valid
from codemods.training.rules.step_loop_cases import STEP_LOOPS_WHY, step_loop_invalid, step_loop_valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


def _scores(predicted: str) -> str:
    """An evaluation function whose loop calls a helper on each batch returning ``predicted`` (a read or not)."""
    return f"""
import numpy as np
import torch


def score(loader, net, device):
    net = net.to(device)

    def predict(x):
        with torch.no_grad():
            out = net(x).softmax(-1)
        return {predicted}

    preds = np.zeros((len(loader), 4, 2))
    for i, batch in enumerate(loader):
        preds[i] = predict(batch.to(device))
    return preds
"""


# An evaluation loop that accumulates on the device (its near variant reads each iteration: ``.item()``).
_VAL_SUM = """
import torch

with torch.no_grad():
    for x, y in val_loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(1) == y).sum()
"""
# A device value read only as the test of an ``if`` in a nested loop (Towards-Realtime-MOT's test_emb).
_READ_IN_A_CONDITION = """
import torch

with torch.no_grad():
    for imgs in loader:
        output = model(imgs.to(device)).squeeze()
        for out in output:
            feat, label = out[:-1], out[-1].long()
            if label != -1:
                kept.append(feat)
"""
# A read in a loop nested in every iteration (its near variant reads only under an ``if``).
_NESTED_READS = """
import torch

with torch.no_grad():
    for pos, bias in test_loader:
        pos = pos.to(device)
        argsort = torch.argsort(model(pos) + bias.to(device), dim=1, descending=True)
        for i in range(pos.size(0)):
            rank = (argsort[i] == pos[i, 2]).nonzero().item()
            logs.append(1.0 / (rank + 1))
"""
_READS_UNDER_AN_IF = substituted(
    _NESTED_READS,
    (
        "        for i in range(pos.size(0)):\n            rank = (argsort[i] == pos[i, 2]).nonzero().item()\n"
        "            logs.append(1.0 / (rank + 1))\n",
        "        if len(logs) < 100:\n            for i in range(pos.size(0)):\n"
        "                logs.append((argsort[i] == pos[i, 2]).nonzero().item())\n",
    ),
)
# An optimizer's eigen-decomposition, run inside its step (its near variant: the same loop in a class that is none).
_SOAP = """
import torch
from torch.optim import Optimizer


class SOAP(Optimizer):
    def get_orthogonal_matrix(self, mats):
        final = []
        for m in mats:
            _, q = torch.linalg.eigh(m.to(self.device))
            final.append(torch.flip(q, [1]))
        return final
"""
_NO_OPTIMIZER = substituted(
    _SOAP,
    ("from torch.optim import Optimizer\n", ""),
    ("class SOAP(Optimizer):\n    def get_orthogonal_matrix", "class Preconditioner:\n    def refresh"),
    ("torch.flip(q, [1])", "q"),
)
# A loss module whose ``__call__`` calls the method with the loop (its near variant does not call it).
_TARGET_LOSS = """
import torch

class TargetLoss(torch.nn.Module):
    def prepare(self, targets, anchors):
        out = []
        for t in targets:
            t = t.to(self.device)
            out.append(t.labels[iou(t.boxes, anchors).max(1)[1]])
        return out
    def __call__(self, logits, targets, anchors):
        return torch.nn.functional.cross_entropy(logits, torch.cat(self.prepare(targets, anchors)))
"""
_TARGET_LOSS_UNCALLED = substituted(
    _TARGET_LOSS,
    ("def prepare(self, targets, anchors):", "def prepare(self, targets):"),
    ("iou(t.boxes, anchors).max(1)[1]", "self.match(t.scores)[1]"),
    (
        "(self, logits, targets, anchors):\n        return torch.nn.functional.cross_entropy(logits, "
        "torch.cat(self.prepare(targets, anchors)))",
        "(self, logits, targets):\n        return torch.nn.functional.cross_entropy(logits, targets)",
    ),
)

_EVALUATOR = """
import torch

class Evaluator:
    def forward(self, val_loader):
        correct = 0
        for x, y in val_loader:
            x, y = x.to(self.device), y.to(self.device)
            correct += (self.model(x).argmax(1) == y).sum()
        return correct
"""
_EMA_SCORE = """
import torch

class Ema:
    def score(self, loader, total):
        for x in loader:
            x = x.to(device=self.device)
            total = total + self.ema(x).sum()
        return total
"""


EVAL_LOOP_BARRIER = Rule(
    code="XLA303",
    name="eval-loop-barrier",
    severity="error",
    summary="An evaluation loop over the device ends every iteration with the step barrier",
    fixable=True,
    why="An evaluation loop that keeps its results on the device (`correct += (pred == y).sum()`) builds one "
    "graph over the whole data set, compiled only when the total is read; a barrier per iteration keeps every "
    "graph one batch long. A host read in the loop (`losses.update(loss.item(), n)`) does not change that "
    "when the loop also accumulates device values (`top1.update(acc1, n)`, whose meter keeps "
    "`self.sum += val * n`; `total += correct`; `outputs.append(logits)`): the read materializes only what it "
    "reads, so such a loop gets its barrier too; what a function of the file or of the project returns as host "
    "numbers (torchvision's `accuracy`, whose list holds `correct_k.mul_(100.0 / n).item()`) is no device value. "
    "A read in a function of the file that the loop calls by its "
    "name (`preds[i] = get_pred(batch)` where `get_pred` returns `out.cpu().numpy()`) is a read per iteration too, "
    "and so is one in a loop nested in every iteration, outside an `if` (`for i in range(n): "
    "ranks.append(hits[i].nonzero().item())`). A device value read only as a condition (`for out in output: "
    "if out[-1] != -1: kept.append(out)`) is a read the rule does not see, so such a loop gets the barrier "
    "too, which changes nothing there (the read already runs the graph), and its message names only the "
    "calls it looked for. "
    "A loop over a model's weights or submodules (`for key, module in model.named_modules()`, which sets them "
    "up) evaluates no data. "
    "A loop that only moves modules in place (`for net in nets.values(): net.to(device)`), or a batch's "
    "tensors (`for k, v in batch.items(): batch[k] = v.to(device)`, `xs.append(x.cuda())`, a container's own "
    "`d.to_device(device)`: moves, casts, container reads and writes and tensors made of host data, `torch.from_numpy(v)`, no model's forward), "
    "computes nothing and gets none; so does one over the items of a container that is no data set that also "
    "reshapes or reduces each where it is (a model's per-image targets: `heatmaps.append(inst.heatmap.to(device)"
    ".max(dim=0)[0])`, calling nothing else), part of the computation that uses them; over a loader it keeps one. "
    "A loop that runs within another loop's iteration gets none: one "
    "of a model's or a loss module's `forward` (or the `__call__` a loss module defines instead, or a method "
    "either calls through `self`) is part of the training step, one of an optimizer class's methods (SOAP's or Shampoo's eigen-decomposition of its preconditioners "
    "in `step()`) is part of the optimizer step, and one of a generator (`yield data.to(device)`) runs inside "
    "its consumer's iteration; a barrier of their own would cut that iteration's graph in pieces. A loop in a class's "
    "own move method (`def to(self, device)` of a box list moving each of its fields, `cuda`, `cpu`) is no evaluation "
    "loop either: it moves a container's contents inside whatever step or evaluation calls it. Nor is a loop over a "
    "model's weights (an EMA's `for k, v in self.ema.state_dict().items()`, `zip(ema.parameters(), model.parameters())`): "
    "it updates each weight once per call, inside the step that calls it. PyTorch Geometric's converters to host "
    "objects (`to_networkx(g)`, `to_scipy_sparse_matrix`) read every tensor of the graph to the host: a host read. "
    "A loop in the body of an `if False:` (`if 0:`) never runs and gets none (one in its `else:` does). "
    + STEP_LOOPS_WHY
    + HOST_READ_LOOPS_WHY
    + CPU_DEVICE_READ_WHY,
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            with torch.no_grad():
                for x, y in test_batches:
                    total += (model(x.to(device)).argmax(1) == y.to(device)).sum()
            print(total.item())
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            with torch.no_grad():
                for x, y in test_batches:
                    total += (model(x.to(device)).argmax(1) == y.to(device)).sum()
                    torch_xla.sync()
            print(total.item())
            """,
            findings=(
                Expected(8, 9, "evaluation loop over the device (no call in every iteration reads a value to the host"),
            ),
        ),
    ),
    valid=lambda: (
        valid(_scores("out.cpu().numpy()"), note="a-read-per-iteration-in-a-helper-the-loop-calls"),
        valid(
            """
            import torch
            import torch.nn as nn

            device = torch.device("cuda")
            nets = {"gen": nn.Linear(4, 4), "disc": nn.Linear(4, 1)}
            for net in nets.values():
                net.to(device)
            for net in [nets["gen"]]:
                net.cuda()
            """,
            """
            import torch
            import torch.nn as nn
            import torch_xla

            device = torch_xla.device()
            nets = {"gen": nn.Linear(4, 4), "disc": nn.Linear(4, 1)}
            for net in nets.values():
                net.to(device)
            for net in [nets["gen"]]:
                net.to(torch_xla.device())
            """,
            note="loops-that-move-modules-in-place-compute-nothing",
        ),
        valid(
            """
            import torch


            class Ranker(torch.nn.Module):
                def get_inputs(self, batch):
                    inputs = {}
                    for name, value in batch.items():
                        if name == "label":
                            continue
                        inputs[name] = value.to(self.device)
                    return inputs


            def process_batch(model, batch, device):
                for key, ipt in batch.items():
                    batch[key] = ipt.to(device)
                for key, value in batch.items():
                    if isinstance(value, list):
                        for i in range(len(value)):
                            value[i] = value[i].to(device, non_blocking=True)
                    else:
                        batch[key] = value.to(device, non_blocking=True)
                views = []
                for view in batch["views"]:
                    views.append(view.to(device).float())
                return model(batch, views)
            """,
            note="loops-that-only-move-a-batch-to-the-device",
        ),
        valid(
            """
            import numpy as np
            import torch
            from torch import from_numpy


            def to_device(batch):
                for key, value in batch.items():
                    if not isinstance(value, np.ndarray):
                        continue
                    elif key == "ids":
                        batch[key] = from_numpy(value).long().cuda()
                    else:
                        batch[key] = torch.from_numpy(value).float().cuda().contiguous()
            """,
            """
            import numpy as np
            import torch
            from torch import from_numpy
            import torch_xla


            def to_device(batch):
                for key, value in batch.items():
                    if not isinstance(value, np.ndarray):
                        continue
                    elif key == "ids":
                        batch[key] = from_numpy(value).long().to(torch_xla.device())
                    else:
                        batch[key] = torch.from_numpy(value).float().to(torch_xla.device()).contiguous()
            """,
            note="a loop that makes tensors of a batch's arrays and moves them computes nothing",
        ),
        valid(
            """
            import torch


            def to_device(batch):
                for key, value in batch.items():
                    batch[key] = torch.as_tensor(value).cuda()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def to_device(batch):
                for key, value in batch.items():
                    batch[key] = torch.as_tensor(value).to(xm.xla_device())
            """,
            target="sagemaker",
            note="a loop that makes tensors of a batch's values and moves them computes nothing (sagemaker)",
        ),
        valid(
            """
            class Boxes:
                def to(self, device):
                    moved = Boxes(self.xy.to(device))
                    for k, v in self.fields.items():
                        moved.put(k, v.to(device) if hasattr(v, "to") else v)
                    return moved
            """,
            note="a-tensor-containers-own-to-moves-its-fields",
        ),
        valid(
            """
            import torch as th


            class Fields:
                def cuda(self):
                    out = Fields()
                    for name, value in self.items.items():
                        if isinstance(value, th.Tensor):
                            value = value.to(self.device)
                        out.set(name, value)
                    return out
            """,
            target="sagemaker",
            note="a-containers-own-cuda-moves-its-fields",
        ),
        valid(_SOAP, note="an-optimizers-eigen-decomposition-runs-inside-the-step"),
        valid(
            """
            import torch.optim as O


            class Shampoo(O.Optimizer):
                pass


            class Preconditioned(Shampoo):
                def refresh(self, mats):
                    for m in mats:
                        self.roots.append(m.to(self.device).pow(-0.25))
            """,
            target="sagemaker",
            note="alias-and-a-subclass-of-the-files-optimizer",
        ),
        valid(substituted(_VAL_SUM, (".sum()\n", ".sum().item()\n")), note="reads-every-iteration"),
        valid(HOST_ACCURACY, note="meters-of-host-numbers-a-helper-of-the-file-returns"),
        valid(SUBMODULES, note="a-loop-over-a-models-submodules-sets-them-up"),
        valid(_NESTED_READS, note="reads-in-a-nested-loop-every-iteration"),
        valid(
            """
            import torch

            with torch.no_grad():
                for images, target in val_loader:
                    images = images.to(device)
                    loss = criterion(model(images), target.to(device))
                    losses.update(loss.item(), images.size(0))
                    seen += images.size(0)
                    outputs.append(loss.item())
            """,
            note="only-host-values-accumulate",
        ),
        valid(
            """
            import torch
            import torch.nn as nn

            class FocalLoss(nn.Module):
                def forward(self, classifications, annotations):
                    losses = []
                    for j in range(classifications.shape[0]):
                        target = annotations[j]
                        target = target.to(self.device)
                        if target.shape[0] == 0:
                            losses.append(classifications[j].sum() * 0)
                            continue
                        losses.append((classifications[j] - target).abs().sum())
                    return torch.stack(losses).mean()
            """,
            note="loss-module-forward",
        ),
        valid(
            """
            import torch


            class StreamIterator:
                def __init__(self, streams, bsz, bptt, device="cpu"):
                    self.streams, self.bsz, self.bptt, self.device = streams, bsz, bptt, device

                def __iter__(self):
                    data = torch.LongTensor(self.bptt, self.bsz)
                    target = torch.LongTensor(self.bptt, self.bsz)
                    source = iter(self.streams)
                    while True:
                        try:
                            chunk = next(source)
                        except StopIteration:
                            return
                        data.copy_(chunk[:-1].view(self.bptt, self.bsz))
                        target.copy_(chunk[1:].view(self.bptt, self.bsz))
                        yield data.to(self.device), target.to(self.device)
            """,
            note="a-generator-of-device-batches",
        ),
        valid(
            """
            import torch

            class Detector(torch.nn.Module):
                @torch.no_grad()
                def forward(self, scores):
                    kept = []
                    for i in range(scores.shape[1]):
                        column = scores[:, i]
                        kept.append(column.to(self.device))
                    return kept
            """,
            target="sagemaker",
            note="model-forward",
        ),
        valid(
            """
            import torch
            from torch import nn

            class Head(nn.Module):
                pass

            class Captioner(Head):
                def forward(self, input_ids, images):
                    embeds = self.prepare_inputs(input_ids, images)
                    return self.decoder(embeds)

                def prepare_inputs(self, input_ids, images):
                    return [self.merge(ids, images) for ids in input_ids]

                def merge(self, ids, images):
                    merged = []
                    for image in images:
                        image = image.to(self.device)
                        merged.append(self.embed(ids) + image)
                    return torch.cat(merged)
            """,
            target="sagemaker",
            note="method-that-forward-calls",
        ),
        valid(
            """
            from transformers import PreTrainedModel

            class DecoderBase(PreTrainedModel):
                pass

            class Decoder(DecoderBase):
                def forward(self, hidden):
                    for block in self.blocks:
                        hidden = hidden.to(self.first_device)
                        hidden = block(hidden)
                    return hidden
            """,
            note="forward-of-a-transformers-model",
        ),
        valid(_TARGET_LOSS, note="a-loss-modules-__call__-and-the-method-it-calls-run-in-the-step"),
        valid(
            """
            import torch

            class Ema:
                def update(self, model):
                    for k, v in self.ema.state_dict().items():
                        w = model.state_dict()[k].detach()
                        w = w.to(device=self.device)
                        v.copy_(v * self.decay + (1 - self.decay) * w)
                    for e, p in zip(self.ema.parameters(), model.parameters()):
                        p = p.to(self.device)
                        e.copy_(e * self.decay + (1 - self.decay) * p)
            """,
            target="sagemaker",
            note="an-emas-loops-over-the-weights-run-in-the-step",
        ),
        *step_loop_valid(),
        *dead_loop_valid(),
        *move_loop_valid(),
        *host_read_loop_valid(),
        *cpu_device_read_valid(),
    ),
    invalid=lambda: (
        invalid(
            _READ_IN_A_CONDITION,
            with_barrier(_READ_IN_A_CONDITION, "                kept.append(feat)\n", indent="        "),
            note="a-device-value-read-only-as-a-condition",
            findings=(
                Expected(
                    11,
                    9,
                    "evaluation loop over the device (no call in every iteration reads a value to the host: "
                    '`.item()`, `.cpu()`, `.to("cpu")`, `.numpy()`, `.tolist()`, `float()`): torch_xla.sync() ends '
                    "every iteration",
                ),
            ),
        ),
        invalid(
            _READS_UNDER_AN_IF,
            with_barrier(
                _READS_UNDER_AN_IF,
                "                logs.append((argsort[i] == pos[i, 2]).nonzero().item())\n",
                indent="        ",
            ),
            note="a-nested-loop-reads-only-under-an-if",
            findings=(
                Expected(
                    11, 9, "evaluation loop over the device (no call in every iteration reads a value to the host"
                ),
            ),
        ),
        invalid(
            _scores("out"),
            with_barrier(_scores("out"), "        preds[i] = predict(batch.to(device))\n"),
            note="a-helper-the-loop-calls-without-a-read",
            findings=(
                Expected(
                    17, 9, "evaluation loop over the device (no call in every iteration reads a value to the host"
                ),
            ),
        ),
        invalid(
            _NO_OPTIMIZER,
            with_barrier(_NO_OPTIMIZER, "            final.append(q)\n"),
            findings=(Expected(11, 13, "loop over the device (no call in every iteration reads a value to the host"),),
            note="the-same-loop-in-a-class-that-is-no-optimizer",
        ),
        invalid(
            _VAL_SUM,
            with_barrier(_VAL_SUM, "        correct += (model(x).argmax(1) == y).sum()\n"),
            findings=(
                Expected(8, 9, "evaluation loop over the device (no call in every iteration reads a value to the host"),
            ),
        ),
        invalid(
            DEVICE_ACCURACY,
            with_barrier(DEVICE_ACCURACY, "        top5.update(acc5, images.size(0))\n"),
            note="meters-of-device-values-a-helper-of-the-file-returns",
            findings=(
                Expected(23, 9, "evaluation loop over the device that accumulates device values into `top1`, `top5`"),
            ),
        ),
        invalid(
            DEVICE_METER,
            with_barrier(DEVICE_METER, "        top1.update(accuracy(output, target), images.size(0))\n"),
            note="a-device-meter-beside-a-host-read",
            findings=(Expected(10, 9, "evaluation loop over the device that accumulates device values into `top1`"),),
        ),
        invalid(
            """
            import torch as th

            for x in val_batches:
                total = total + model(x.cuda()).sum()
            """,
            """
            import torch as th
            import torch_xla

            for x in val_batches:
                total = total + model(x.to(torch_xla.device())).sum()
                torch_xla.sync()
            """,
            alias=True,
            findings=(
                Expected(6, 5, "evaluation loop over the device (no call in every iteration reads a value to the host"),
            ),
        ),
        invalid(
            _EVALUATOR,
            with_barrier(
                _EVALUATOR, "            correct += (self.model(x).argmax(1) == y).sum()\n", target="sagemaker"
            ),
            target="sagemaker",
            note="method-of-a-class-that-is-no-module",
            findings=(
                Expected(
                    10, 13, "evaluation loop over the device (no call in every iteration reads a value to the host"
                ),
            ),
        ),
        invalid(
            _TARGET_LOSS_UNCALLED,
            with_barrier(_TARGET_LOSS_UNCALLED, "            out.append(t.labels[self.match(t.scores)[1]])\n"),
            note="a-loss-modules-method-its-__call__-does-not-call",
            findings=(Expected(10, 13, "loop over the device (no call in every iteration reads a value to the host"),),
        ),
        invalid(
            _EMA_SCORE,
            with_barrier(_EMA_SCORE, "            total = total + self.ema(x).sum()\n", target="sagemaker"),
            target="sagemaker",
            note="an-emas-loop-over-batches-evaluates",
            findings=(
                Expected(
                    9, 13, "evaluation loop over the device (no call in every iteration reads a value to the host"
                ),
            ),
        ),
        *step_loop_invalid(),
        *dead_loop_invalid(),
        *move_loop_invalid(),
        *host_read_loop_invalid(),
        *cpu_device_read_invalid(),
    ),
)


@on_facts(
    EVAL_LOOP_BARRIER,
    nodes=lambda facts: [loop for loop, plan in facts.training.loops.items() if plan.kind == "evaluation"],
)
def _barrier(ctx: Context[Facts], original: cst.For | cst.While, updated: cst.For | cst.While) -> cst.For | cst.While:
    from codemods.engine.barriers import with_barriers

    plan = ctx.facts.training.loops[original]
    loop = "evaluation loop" if plan.over_data else "loop"  # (one over no loader or data set: a decoder's)
    if accumulates := plan.accumulates:
        kept = ", ".join(f"`{name}`" for name in accumulates)
        message = f"{loop} over the device that accumulates device values into {kept}: its host reads "
        message += "materialize only what they read, so {new} ends every iteration"
    else:
        message = (
            f"{loop} over the device (no call in every iteration reads a value to the host: `.item()`, "
            '`.cpu()`, `.to("cpu")`, `.numpy()`, `.tolist()`, `float()`): {new} ends every iteration'
        )
    return with_barriers(ctx, EVAL_LOOP_BARRIER, original, updated, message)
