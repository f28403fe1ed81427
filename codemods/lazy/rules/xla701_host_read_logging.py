"""XLA701 host-read-logging."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.lazy.rules.programs import _loop

HOST_READ_LOGGING = Rule(
    code="XLA701",
    name="host-read-logging",
    severity="warning",
    summary="A host read that only logs runs in xm.add_step_closure, with the iteration's values bound",
    fixable=True,
    why="`loss.item()` or `print(loss)` in a training loop runs the pending graph at once, an extra "
    "execution every step; in a step closure it runs after the step's graph, reading values already computed.",
    examples=lambda: (
        Invalid(
            _loop('print(f"step {step} loss {loss.item():.4f}")'),
            _loop(
                'xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.4f}"), args=(step, loss))'
            ),
            findings=(Expected(13, 31, "logging-only host read `loss.item()` moved into a step closure"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            for x, y in loader:
                with torch.no_grad():
                    out = model(x.to(device))
                print(f"accuracy {(out.argmax(1) == y.to(device)).float().mean().item()}")
            print(f"final loss {loss.item()}")
            """,
            note="outside-training-loop",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch_xla as tx
            from torch_xla.core import xla_model as xmod

            for i, batch in enumerate(train_loader):
                out = net(batch.to(dev))
                out.mean().backward()
                xmod.optimizer_step(opt)
                print("loss", float(out.mean()))
                tx.sync()
            """,
            """
            import torch as th
            import torch_xla as tx
            from torch_xla.core import xla_model as xmod

            for i, batch in enumerate(train_loader):
                out = net(batch.to(dev))
                out.mean().backward()
                xmod.optimizer_step(opt)
                xmod.add_step_closure(lambda value: print("loss", float(value)), args=(out.mean(),))
                tx.sync()
            """,
            alias=True,
            findings=(Expected(9, 19, "logging-only host read `float(out.mean())` moved into a step closure"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for step, (x, y) in enumerate(loader):
                x, y = x.to(device), y.to(device)
                loss = loss_fn(model(x), y)
                loss.backward()
                xm.optimizer_step(optimizer)
                print(f"step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]}")
                torch_xla.sync()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for step, (x, y) in enumerate(loader):
                x, y = x.to(device), y.to(device)
                loss = loss_fn(model(x), y)
                loss.backward()
                xm.optimizer_step(optimizer)
                xm.add_step_closure(lambda step, loss, value: print(f"step {step} loss {loss.item():.4f} lr {value}"), args=(step, loss, scheduler.get_last_lr()[0]))
                torch_xla.sync()
            """,
            note="fstring-print",
            findings=(Expected(10, 31, "logging-only host read `loss.item()` moved into a step closure"),),
        ),
        invalid(
            """
            import logging
            import torch

            logger = logging.getLogger(__name__)
            for step, (x, y) in enumerate(pbar):
                x, y = x.to("cuda"), y.to("cuda")
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                logger.info("step %d loss %.4f", step, loss.item())
                writer.add_scalar("train/loss", loss.item(), global_step=step)
                pbar.set_postfix(loss=loss.item())
                if step % 10 == 0: print(loss)
            """,
            """
            import logging
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            logger = logging.getLogger(__name__)
            for step, (x, y) in enumerate(pbar):
                x, y = x.to("xla"), y.to("xla")
                loss = criterion(model(x), y)
                loss.backward()
                xm.optimizer_step(optimizer)
                xm.add_step_closure(lambda step, loss: logger.info("step %d loss %.4f", step, loss.item()), args=(step, loss))
                xm.add_step_closure(lambda loss, step: writer.add_scalar("train/loss", loss.item(), global_step=step), args=(loss, step))
                xm.add_step_closure(lambda loss: pbar.set_postfix(loss=loss.item()), args=(loss,))
                if step % 10 == 0: xm.add_step_closure(lambda loss: print(loss), args=(loss,))
                torch_xla.sync()
            """,
            note="logging-forms",
            findings=(
                Expected(12, 44, "logging-only host read `loss.item()` moved into a step closure"),
                Expected(13, 37, "logging-only host read `loss.item()` moved into a step closure"),
                Expected(14, 27, "logging-only host read `loss.item()` moved into a step closure"),
                Expected(15, 30, "logging-only host read `loss` moved into a step closure"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla

            for x in loader:
                losses = model(x.to(device))
                losses.sum().backward()
                print([l.item() for l in losses])
                torch_xla.sync()
            """,
            note="not-movable",
            findings=(Expected(7, 12, "`l.item()` only logs, but stays"),),
        ),
        invalid(
            """
            import torch
            import torch_xla

            for x in loader:
                loss = model(x.to(device)).sum()
                loss.backward()
                print(f"{self.loss.item()=}")
                torch_xla.sync()
            """,
            note="f-string-equals-stays",
            findings=(Expected(7, 14, "`self.loss.item()` only logs, but stays"),),
        ),
    ),
)
