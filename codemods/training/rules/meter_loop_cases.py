"""XLA303's programs of evaluation loops that accumulate meters (a meter beside a host read; the
``accuracy`` helper of torchvision and CvT returning host numbers or device values) and of a loop over
a model's submodules that sets them up.  Kept apart from the rule so that its module holds the rule,
its messages and its hooks."""

from __future__ import annotations

from codemods.engine.rule import substituted

# Evaluation loops that accumulate on the device: a meter beside a host read, a method of a class
# that is no module, an EMA's loop over batches.
DEVICE_METER = """
import torch

with torch.no_grad():
    for images, target in val_loader:
        images = images.to(device)
        output = model(images)
        losses.update(criterion(output, target.to(device)).item(), images.size(0))
        top1.update(accuracy(output, target), images.size(0))
"""
# torchvision's (and CvT's) ``accuracy``: a helper of the file whose list holds host numbers
# (``.item()``), which the meters accumulate; its near variant returns them on the device.
ACCURACY = """\
def accuracy(output, target, topk=(1,)):
    _, pred = output.topk(max(topk), 1, True, True)
    correct = pred.t().eq(target.reshape(1, -1).expand_as(pred.t()))
    res = []
    for k in topk:
        res.append(correct[:k].reshape(-1).float().sum(0).mul_(100.0 / target.size(0)).item())
    return res
"""
HOST_ACCURACY = (
    "\nimport torch\n\n\n"
    + ACCURACY
    + """

with torch.no_grad():
    for images, target in val_loader:
        images = images.to(device)
        target = target.to(device)
        output = model(images)
        losses.update(criterion(output, target).item(), images.size(0))
        acc1, acc5 = accuracy(output, target, (1, 5))
        top1.update(acc1, images.size(0))
        top5.update(acc5, images.size(0))
"""
)
DEVICE_ACCURACY = substituted(
    HOST_ACCURACY, (".mul_(100.0 / target.size(0)).item())", ".mul_(100.0 / target.size(0)))")
)
# A loop over a model's submodules that sets them up (MeZO's prefix injection): it evaluates nothing.
SUBMODULES = """
import torch


def inject(model, real_key_values):
    for key, _ in model.named_modules():
        if key.endswith("attn"):
            attn = model.get_submodule(key)
            keys = real_key_values[0].reshape(4, -1)
            attn.prefix_keys.data = keys.to(attn.prefix_keys.data.device)
"""
