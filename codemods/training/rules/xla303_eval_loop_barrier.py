"""XLA303 eval-loop-barrier."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
    "reads, so such a loop gets its barrier too.",
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
            findings=(Expected(8, 9, "evaluation loop over the device (no host read per iteration)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            with torch.no_grad():
                for x, y in val_loader:
                    x, y = x.to(device), y.to(device)
                    correct += (model(x).argmax(1) == y).sum().item()
            """,
            note="reads-every-iteration",
        ),
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
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            with torch.no_grad():
                for x, y in val_loader:
                    x, y = x.to(device), y.to(device)
                    correct += (model(x).argmax(1) == y).sum()
            """,
            """
            import torch
            import torch_xla

            with torch.no_grad():
                for x, y in val_loader:
                    x, y = x.to(device), y.to(device)
                    correct += (model(x).argmax(1) == y).sum()
                    torch_xla.sync()
            """,
            findings=(Expected(8, 9, "evaluation loop over the device (no host read per iteration)"),),
        ),
        invalid(
            """
            import torch

            with torch.no_grad():
                for images, target in val_loader:
                    images = images.to(device)
                    output = model(images)
                    losses.update(criterion(output, target.to(device)).item(), images.size(0))
                    top1.update(accuracy(output, target), images.size(0))
            """,
            """
            import torch
            import torch_xla

            with torch.no_grad():
                for images, target in val_loader:
                    images = images.to(device)
                    output = model(images)
                    losses.update(criterion(output, target.to(device)).item(), images.size(0))
                    top1.update(accuracy(output, target), images.size(0))
                    torch_xla.sync()
            """,
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
            findings=(Expected(6, 5, "evaluation loop over the device (no host read per iteration)"),),
        ),
    ),
)
