"""XLA704 carried-state-barrier: an evaluation loop that carries device state across iterations
(``total = total + loss``, read on the host only after the loop) ends every iteration with the
step barrier: a host read materializes only what it reads; the carried graph keeps growing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, substituted, valid, with_barrier
from codemods.lazy.rules.programs import STEP_WITH_INNER_LOSS_LOOP

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# An RNN cell's hidden state carried across the iterations of an evaluation loop (the rule page's example).
_RNN_CELL = (
    "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nrnn = torch.nn.RNNCell(4, 4).to(device)\n"
    "h = torch.zeros(1, 4, device=device)\nwith torch.no_grad():\n    for x in torch.randn(10, 1, 4):\n"
    "        h = rnn(x.to(device), h)\n        print(h.sum().item())\n"
)
# An evaluation loop whose hidden state carries over each iteration (its near variant resets it in the loop).
_HIDDEN = """
import torch

hidden = model.init_hidden(4)
with torch.no_grad():
    for x in loader:
        output, hidden = model(x.to(device), hidden)
        total += output.sum().item()
"""
# An evaluation loop that binds ``x`` anew from a field of each batch (``x = data.x``) before reading it.
_BATCH_FIELD = """
import torch

device = torch.device("cuda")
model = Net().to(device)
out = []
with torch.no_grad():
    for data in loader:
        x = data.x
        x, _ = model(x.to(device))
        out.append(x.cpu().numpy())
"""
# The same with the names unpacked from the batch's fields, through an alias of torch.
_UNPACKED_FIELDS = """
import torch as th

device = th.device("cuda")
ret = []
with th.no_grad():
    for data in loader:
        data.to(device)
        x, edge_index = data.x, data.edge_index
        x, _ = encoder(x, edge_index)
        ret.append(x.cpu().numpy())
"""
# A batch's outputs unpacked by name each iteration, then moved (torchbeast's inference loop): nothing carried.
_UNPACKED_OUTPUTS = """
import torch
import nest

device = torch.device("cuda")
model = torch.nn.Linear(3, 3).to(device)
with torch.no_grad():
    for batch in batcher:
        outputs, state = batch.get_inputs()
        frame, reward, *_ = outputs
        frame = frame.to(device)
        outputs = nest.map(lambda t: t.cpu(), model(frame))
        batch.set_outputs(outputs)
"""
# Its near variant: ``x``, read as a variable beside the field ``data.x``, is carried.
_STATE_BESIDE_FIELD = substituted(
    _BATCH_FIELD,
    ("model = Net().to(device)\nout = []\n", "out = []\nx = torch.zeros(4, device=device)\n"),
    ("        x = data.x\n        x, _ = model(x.to(device))\n", "        x, _ = model(data.x.to(device), x)\n"),
)

# A state carried through a ``while`` loop, through aliases of torch and torch_xla.
_STATE_LOOP = """
import torch as th
import torch_xla as tx

state = th.zeros(2, 4, device=tx.device())
with th.no_grad():
    while steps < 10:
        state = cell(th.randn(2, 4).to(tx.device()), state)
        print(state.norm().item())
        steps += 1
"""
# Near the training step whose inner loop builds the loss: the inner loop carries ``h``, which the step does not
# backpropagate.
_STEP_INNER_STATE = substituted(
    STEP_WITH_INNER_LOSS_LOOP,
    ("Linear(4, 3)", "Linear(4, 4)"),
    (
        "    out = model(x)\n    loss = out.pow(2).mean()\n",
        "    loss = model(x).pow(2).mean()\n    h = torch.zeros(8, 4, device=device)\n",
    ),
    (
        "        _, top = out.topk(k, dim=1)\n        loss = loss + out.gather(1, top).mean()\n"
        "        hits.append(top.sum().item())\n",
        "        h = model(h + x)\n        hits.append(h.sum().item())\n",
    ),
)
_NN = "from torch import nn\n"  # the import line that torch_xla is imported after, in the samplers
# A diffusion model's sampling loop without autograd: it reads nothing on the host until the loop ends.
_SAMPLER = """
import torch
from torch import nn


class Diffusion(nn.Module):
    @torch.no_grad()
    def sample(self, shape):
        img = torch.randn(shape, device=self.device)
        for t in reversed(range(1000)):
            times = torch.full((shape[0],), t, device=self.device, dtype=torch.long)
            img = self.p_sample(img, times)
        return img.cpu()
"""
# The same under ``inference_mode``, through an alias of torch.
_INFERENCE_SAMPLER = """
import torch as th
from torch import nn


class Diffusion(nn.Module):
    def sample(self, shape):
        with th.inference_mode():
            img = th.randn(shape, device=self.device)
            for t in reversed(range(1000)):
                img = self.p_sample(img, t)
        return img.cpu()
"""
# With an inner resampling loop: one barrier, in the outer loop.
_NESTED_SAMPLER = """
import torch
from torch import nn


class Diffusion(nn.Module):
    @torch.no_grad()
    def sample(self, shape, resample):
        img = torch.randn(shape, device=self.device)
        for t in reversed(range(1000)):
            for r in range(resample):
                img = self.p_sample(img, t)
        return img.cpu()
"""
# A diffusers-style pipeline's sampling loop, whose result is read after it.
_PIPELINE_STEP = 'images = self.scheduler.step(model_output=model_output, timestep=t, sample=images)["prev_sample"]'
_PIPELINE = f"""
import torch


class AudioPipeline:
    @torch.no_grad()
    def __call__(self, batch_size=1, noise=None):
        if noise is None:
            noise = torch.randn((batch_size, 1, 64, 64), device=self.device)
        images = noise
        for step, t in enumerate(self.progress_bar(self.scheduler.timesteps)):
            model_output = self.unet(images, t)["sample"]
            {_PIPELINE_STEP}
        images = images.cpu().numpy()
        return images
"""

# An inference script that fixes the CPU as its device (recurrent-ppo's results/minigrid_enjoy.py): the
# model and its state stay there, before and after the port.
_CPU_ENJOY = """
import torch

device = torch.device("cpu")
model = Policy()
model.to(device)
hidden = model.init_hidden(1, device)
done = False
while not done:
    action, hidden = model(torch.tensor(obs), hidden)
    obs, done = env.step(action.cpu().numpy())
"""
# Its near variant on the GPU, which the port puts on the XLA device.
_CUDA_ENJOY = substituted(_CPU_ENJOY, ('torch.device("cpu")', 'torch.device("cuda")'))


def _ported(program: str, *more: tuple[str, str], torch: str = "torch") -> str:
    """``program`` as the port leaves it: the XLA device chosen, and what ``more`` changes."""
    return substituted(
        program,
        ("\n\ndevice = ", "\nimport torch_xla\n\ndevice = "),
        (f'{torch}.device("cuda")', "torch_xla.device()"),
        *more,
    )


CARRIED_STATE_BARRIER = Rule(
    code="XLA704",
    name="carried-state-barrier",
    severity="error",
    summary="An evaluation loop that carries device state across iterations ends every iteration with the step barrier",
    fixable=True,
    why="A host read materializes only the value it reads: the carried state (an RNN hidden state) keeps "
    "the whole history in its graph, which grows and is compiled again every iteration. A name bound anew "
    "each iteration before it is read (`x = data.x`, a field of the batch, not the name `x`; `frame, reward, *_ = "
    "outputs`) carries nothing. "
    "A loop without autograd (under `torch.no_grad()` or `inference_mode`, or in a function decorated with it) "
    "that reads nothing to the host and carries a value a call computes (a diffusion sampler's "
    "`for t in reversed(range(1000)): img = self.p_sample(img, t)`) is one graph of every iteration's forward, "
    "compiled only when the result is read: it gets the barrier too. Not one within a training step's iteration "
    "(the step's barrier ends it: also a module's `forward`, of a class whose base is a module class of another "
    "file of the project), nor a loop with autograd (an RNN unrolled for the backward), nor one that "
    "builds the loss the training step backpropagates (`for i in range(heads): loss = loss + ...`), nor the loop of "
    'a model the script moves only to the CPU (an inference script\'s `device = torch.device("cpu")`: its state '
    "stays on the CPU).",
    examples=lambda: (
        Invalid(
            _RNN_CELL,
            with_barrier(_RNN_CELL, "        print(h.sum().item())\n", imported_after=None),
            findings=(Expected(11, 9, "evaluation loop carries `h` across iterations on the device"),),
        ),
    ),
    valid=lambda: (
        valid(
            substituted(
                _HIDDEN, ("    for x in loader:\n", "    for x in loader:\n        hidden = model.init_hidden(4)\n")
            )
        ),
        valid(
            """
            import torch

            class Recurrent(torch.nn.Module):
                def forward(self, steps, hidden):
                    for x in steps:
                        hidden = self.cell(x.to(self.device), hidden)
                        self.norms.append(hidden.norm().item())
                    return hidden
            """,
            target="sagemaker",
            note="loop-of-a-module-forward",
        ),
        # ``x`` bound anew from a field of the batch each iteration (``data.x``): nothing carried.
        valid(_BATCH_FIELD, _ported(_BATCH_FIELD), note="name-bound-from-a-batch-field"),
        valid(_UNPACKED_FIELDS, _ported(_UNPACKED_FIELDS, torch="th"), note="names-unpacked-from-batch-fields-aliased"),
        valid(
            _UNPACKED_OUTPUTS,
            substituted(
                _UNPACKED_OUTPUTS,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                ('torch.device("cuda")', "torch_xla.device()"),
            ),
            note="names-unpacked-from-the-batchs-outputs",
        ),
        valid(
            _UNPACKED_OUTPUTS,
            substituted(
                _UNPACKED_OUTPUTS,
                ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n"),
                ('torch.device("cuda")', "xm.xla_device()"),
            ),
            target="sagemaker",
            note="names-unpacked-from-the-batchs-outputs-sagemaker",
        ),
        valid(STEP_WITH_INNER_LOSS_LOOP, note="an-inner-loop-of-a-training-step-builds-the-loss-it-backpropagates"),
        valid(_CPU_ENJOY, note="a-loop-of-a-model-the-script-keeps-on-the-cpu"),
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            teacher = torch.nn.Linear(4, 4).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(10):
                x = torch.randn(8, 4).to(device)
                target = x
                with torch.no_grad():
                    for _ in range(3):
                        target = teacher(target)
                loss = (model(x) - target).pow(2).mean()
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="a-loop-without-autograd-inside-a-training-step",
        ),
        valid(
            """
            import torch as th


            def unroll(cell, h, xs):
                for x in xs:
                    h = cell(x, h)
                return h


            @th.no_grad()
            def probe(net, base):
                outs = []
                for t in range(10):
                    outs.append(net(base + t))
                return outs
            """,
            note="a-carried-loop-with-autograd-and-a-no-grad-loop-that-carries-nothing",
        ),
    ),
    invalid=lambda: (
        invalid(
            _STATE_LOOP,
            with_barrier(_STATE_LOOP, "        steps += 1\n", imported_after=None, barrier="tx.sync()"),
            alias=True,
            findings=(Expected(10, 9, "evaluation loop carries `state` across iterations on the device"),),
        ),
        invalid(
            _HIDDEN,
            with_barrier(_HIDDEN, "        total += output.sum().item()\n"),
            findings=(Expected(9, 9, "evaluation loop carries `hidden` across iterations on the device"),),
        ),
        invalid(
            _CUDA_ENJOY,
            with_barrier(_ported(_CUDA_ENJOY), "    obs, done = env.step(action.cpu().numpy())\n", imported_after=None),
            note="the-same-loop-of-a-model-moved-to-the-device",
            findings=(Expected(12, 5, "evaluation loop carries `hidden` across iterations on the device"),),
        ),
        # Near the batch-field shape: ``x`` read as a variable beside the field ``data.x`` is carried.
        invalid(
            _STATE_BESIDE_FIELD,
            with_barrier(_ported(_STATE_BESIDE_FIELD), "        out.append(x.cpu().numpy())\n", imported_after=None),
            note="state-read-beside-a-batch-field",
            findings=(Expected(11, 9, "evaluation loop carries `x` across iterations on the device"),),
        ),
        invalid(
            _STEP_INNER_STATE,
            with_barrier(_STEP_INNER_STATE, "        hits.append(h.sum().item())\n", imported_after=None),
            note="an-inner-loop-of-a-training-step-carries-what-the-step-does-not-backpropagate",
            findings=(Expected(15, 9, "evaluation loop carries `h` across iterations on the device"),),
        ),
        invalid(
            _SAMPLER,
            with_barrier(_SAMPLER, "            img = self.p_sample(img, times)\n", imported_after=_NN),
            note="a-sampling-loop-without-autograd-reads-nothing",
            findings=(Expected(13, 13, "loop without autograd carries `img` across iterations on the device"),),
        ),
        invalid(
            _INFERENCE_SAMPLER,
            with_barrier(_INFERENCE_SAMPLER, "                img = self.p_sample(img, t)\n", imported_after=_NN),
            alias=True,
            note="a-sampling-loop-under-inference-mode",
            findings=(Expected(12, 17, "loop without autograd carries `img` across iterations on the device"),),
        ),
        invalid(
            _PIPELINE,
            with_barrier(_PIPELINE, f"            {_PIPELINE_STEP}\n"),
            note="a-pipelines-sampling-loop-whose-result-is-read-after-it",
            findings=(Expected(14, 13, "loop without autograd carries `images` across iterations on the device"),),
        ),
        invalid(
            _NESTED_SAMPLER,
            with_barrier(
                _NESTED_SAMPLER,
                "                img = self.p_sample(img, t)\n",
                indent="            ",
                imported_after=_NN,
            ),
            note="nested-sampling-loops-get-one-barrier-in-the-outer-loop-and-keep-it",
            findings=(Expected(13, 13, "loop without autograd carries `img` across iterations on the device"),),
        ),
    ),
)


@on_facts(CARRIED_STATE_BARRIER, nodes=lambda facts: facts.host_reads.carried_state)
def _carried(ctx: Context[Facts], original: cst.For | cst.While, updated: cst.For | cst.While) -> cst.For | cst.While:
    from codemods.engine.barriers import with_barriers

    carried = ", ".join(f"`{n}`" for n in ctx.facts.host_reads.carried_state[original])
    if original in ctx.facts.host_reads.unread_carried:
        message = (
            f"loop without autograd carries {carried} across iterations on the device: {{new}} ends every "
            "iteration (without it every iteration's computation joins one graph, which grows until the result is "
            "read)"
        )
    else:
        message = (
            f"evaluation loop carries {carried} across iterations on the device: {{new}} ends every iteration "
            "(a host read materializes only what it reads; the carried graph keeps growing)"
        )
    return with_barriers(ctx, CARRIED_STATE_BARRIER, original, updated, message)
