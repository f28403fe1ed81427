"""A regression loop that reports its numbers every step in each common way: print
with an f-string and with str.format, logger.info, a progress bar's set_postfix and
a metrics writer's add_scalar (small stand-ins for tqdm and SummaryWriter that print
what they would show)."""
import logging
import sys

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s", force=True)
logger = logging.getLogger("train")


class Progress:
    """Iterates like tqdm; set_postfix prints what the bar would show."""

    def __init__(self, iterable):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def set_postfix(self, **values):
        print("postfix " + " ".join(f"{k}={v:.6f}" for k, v in values.items()))


class Writer:
    """Records scalars like SummaryWriter.add_scalar, printing them."""

    def add_scalar(self, tag, value, global_step=None):
        print(f"scalar {tag} {value:.6f} {global_step}")


torch.manual_seed(3)
device = "xla"

inputs = torch.randn(160, 8)
targets = inputs[:, :4].sum(1, keepdim=True) - inputs[:, 4:].sum(1, keepdim=True)
batches = [(inputs[i:i + 16], targets[i:i + 16]) for i in range(0, 160, 16)]

model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
writer = Writer()

step = 0
for epoch in range(2):
    pbar = Progress(batches)
    for x, y in pbar:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = model(x)
        loss = nn.functional.mse_loss(out, y)
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(step, loss))
        xm.add_step_closure(lambda step, value: logger.info("mean %d %.6f", step, value.item()), args=(step, out.mean()))
        xm.add_step_closure(lambda loss, value: pbar.set_postfix(loss=loss.item(), epoch=value), args=(loss, float(epoch)))
        xm.add_step_closure(lambda loss, step: writer.add_scalar("train/loss", loss.item(), global_step=step), args=(loss, step))
        xm.add_step_closure(lambda step, value: print("weight {} {:.6f}".format(step, value.item())), args=(step, model[0].weight.abs().max()))
        step += 1
        xm.mark_step()
