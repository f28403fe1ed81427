"""XLA701 host-read-logging: a statement in a training loop that only logs device values
moves into ``xm.add_step_closure`` (built by lazy/rules/step_closures.py), with this iteration's
values passed in; one that cannot move is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.lazy.rules.programs import _loop

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

HOST_READ_LOGGING = Rule(
    code="XLA701",
    name="host-read-logging",
    severity="warning",
    summary="A host read that only logs runs in xm.add_step_closure, with the iteration's values bound",
    fixable=True,
    why="`loss.item()` or `print(loss)` in a training loop runs the pending graph at once, an extra "
    "execution every step; in a step closure it runs after the step's graph, reading values already computed. "
    "A tensor the step changes in place after the statement is passed as a copy (`.detach().clone()`); a value "
    'given an item by a string key after it (`logs["lr"] = ...`) is a mapping, not a tensor, and its '
    "statement stays (reported). The receiver of a `backward` handed a model or an optimizer "
    "(`strategy.backward(loss, model, optimizer)`) is a training helper, not a tensor: what it returns is not "
    "taken for device values.",
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
        # Formatting host values reads nothing from the device; a `format` of the file's own is not the builtin.
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            from util import format

            for step, (x, y) in enumerate(loader):
                loss = loss_fn(model(x.to(torch_xla.device())), y.to(torch_xla.device()))
                loss.backward()
                xm.optimizer_step(optimizer)
                print("step {} lr {:.5f}".format(step, lr))
                print(format(loss, ".3f"))
                torch_xla.sync()
            """,
            note="format-of-host-values",
        ),
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
        # A training helper's backward, handed the model and the optimizer (DeepSpeed-style), is no
        # tensor's: its other results (a dict of floats, reduced across ranks) are not device values.
        valid(
            """
            import torch
            from tqdm import tqdm

            bar = tqdm(range(10))
            for x in loader:
                loss = model(x.to("cuda")).sum()
                strategy.backward(loss, model, optimizer)
                strategy.optimizer_step(optimizer, model, scheduler)
                logs = strategy.all_reduce({"loss": loss.item()})
                bar.set_postfix(logs)
                logs["lr"] = scheduler.get_last_lr()[0]
            """,
            """
            import torch
            import torch_xla
            from tqdm import tqdm

            bar = tqdm(range(10))
            for x in loader:
                loss = model(x.to("xla")).sum()
                strategy.backward(loss, model, optimizer)
                strategy.optimizer_step(optimizer, model, scheduler)
                logs = strategy.all_reduce({"loss": loss.item()})
                bar.set_postfix(logs)
                logs["lr"] = scheduler.get_last_lr()[0]
                torch_xla.sync()
            """,
            note="helper-backward-with-the-model",
        ),
    ),
    invalid=lambda: (
        # A value the step treats as a device value but gives an item by a string key is a mapping:
        # `.detach().clone()` would raise AttributeError, and the closure would see the later item.
        invalid(
            """
            import torch

            for x in loader:
                loss = model(x.to("cuda")).sum()
                engine.backward(loss)
                logs = engine.summary()
                print(logs)
                logs["lr"] = 0.1
            """,
            """
            import torch
            import torch_xla

            for x in loader:
                loss = model(x.to("xla")).sum()
                engine.backward(loss)
                logs = engine.summary()
                print(logs)
                logs["lr"] = 0.1
                torch_xla.sync()
            """,
            note="string-keyed-item-later-stays",
            findings=(
                Expected(8, 11, "`logs` only logs, but stays: `logs` gets an item by a string key after this line"),
            ),
        ),
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
            import time
            import torch

            for i, (x, y) in enumerate(loader):
                start = time.time()
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                print("iter %d loss %.3f time %.2f" % (i, loss, time.time() - start))
                print("loss %.3f" % loss)
            """,
            """
            import time
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for i, (x, y) in enumerate(loader):
                start = time.time()
                loss = loss_fn(model(x.to(torch_xla.device())), y.to(torch_xla.device()))
                loss.backward()
                xm.optimizer_step(optimizer)
                xm.add_step_closure(lambda i, loss, value: print("iter %d loss %.3f time %.2f" % (i, loss, value)), args=(i, loss, time.time() - start))
                xm.add_step_closure(lambda loss: print("loss %.3f" % loss), args=(loss,))
                torch_xla.sync()
            """,
            note="percent-formatting-reads-each-operand-in-the-closure",
            findings=(
                Expected(
                    11,
                    47,
                    "logging-only host read `loss` moved into a step closure: it runs after the step's graph, with "
                    "this iteration's values passed in",
                ),
                Expected(12, 25, "logging-only host read `loss` moved into a step closure"),
            ),
        ),
        # str.format and the builtin format read a tensor as an f-string does.
        invalid(
            """
            import torch

            for i, (x, y) in enumerate(loader):
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                print("iter {} loss {:.3f}".format(i, loss))
                print(format(loss, ".3f"))
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for i, (x, y) in enumerate(loader):
                loss = loss_fn(model(x.to(torch_xla.device())), y.to(torch_xla.device()))
                loss.backward()
                xm.optimizer_step(optimizer)
                xm.add_step_closure(lambda i, loss: print("iter {} loss {:.3f}".format(i, loss)), args=(i, loss))
                xm.add_step_closure(lambda loss: print(format(loss, ".3f")), args=(loss,))
                torch_xla.sync()
            """,
            note="str-format-reads-each-argument-in-the-closure",
            findings=(
                Expected(9, 43, "logging-only host read `loss` moved into a step closure"),
                Expected(10, 18, "logging-only host read `loss` moved into a step closure"),
            ),
        ),
        invalid(
            """
            import torch as th
            import torch_xla as tx
            from torch_xla.core import xla_model as xmod

            for i, batch in enumerate(train_loader):
                out = net(batch.to(dev))
                out.mean().backward()
                xmod.optimizer_step(opt)
                logger.info("loss {:.4f}".format(out.mean()))
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
                xmod.add_step_closure(lambda value: logger.info("loss {:.4f}".format(value)), args=(out.mean(),))
                tx.sync()
            """,
            alias=True,
            note="str-format-alias",
            findings=(Expected(9, 38, "logging-only host read `out.mean()` moved into a step closure"),),
        ),
        invalid(
            """
            import torch

            for i, (x, y) in enumerate(loader):
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                print("loss {:.3f}".format(loss))
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            for i, (x, y) in enumerate(loader):
                loss = loss_fn(model(x.to(xm.xla_device())), y.to(xm.xla_device()))
                loss.backward()
                xm.optimizer_step(optimizer)
                xm.add_step_closure(lambda loss: print("loss {:.3f}".format(loss)), args=(loss,))
                xm.mark_step()
            """,
            target="sagemaker",
            note="str-format-1.13",
            findings=(Expected(8, 32, "logging-only host read `loss` moved into a step closure"),),
        ),
        invalid(
            """
            import torch

            for step, (x, y) in enumerate(loader):
                x, y = x.to("cuda"), y.to("cuda")
                loss = criterion(model(x), y)
                reg = model.weight.pow(2).sum()
                print("base", loss.item(), "ratio", reg.item() / loss.item())
                loss += 0.1 * reg
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for step, (x, y) in enumerate(loader):
                x, y = x.to("xla"), y.to("xla")
                loss = criterion(model(x), y)
                reg = model.weight.pow(2).sum()
                xm.add_step_closure(lambda loss, reg: print("base", loss.item(), "ratio", reg.item() / loss.item()), args=(loss.detach().clone(), reg))
                loss += 0.1 * reg
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="read tensor changed in place later: a copy",
            findings=(
                Expected(
                    9,
                    19,
                    "logging-only host read `loss.item()` moved into a step closure: it runs after the step's "
                    "graph, with this iteration's values passed in (`loss` as a copy, `.detach().clone()`: the step "
                    "changes it in place after this line)",
                ),
            ),
        ),
        invalid(
            """
            import torch

            for step, (x, y) in enumerate(loader):
                x, y = x.to("cuda"), y.to("cuda")
                losses = criterion(model(x), y)
                writer.add_scalar("base", losses.item(), step)
                losses.mul_(2.0)
                losses.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for step, (x, y) in enumerate(loader):
                x, y = x.to("xla"), y.to("xla")
                losses = criterion(model(x), y)
                xm.add_step_closure(lambda losses, step: writer.add_scalar("base", losses.item(), step), args=(losses.detach().clone(), step))
                losses.mul_(2.0)
                losses.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="read tensor changed by an in-place method later: a copy",
            findings=(Expected(8, 31, "(`losses` as a copy, `.detach().clone()`"),),
        ),
        invalid(
            """
            import torch

            for step, (x, y) in enumerate(loader):
                x, y = x.to("cuda"), y.to("cuda")
                loss = criterion(model(x), y)
                writer.add_scalar("base", loss.item(), step)
                loss = loss + 0.1 * model.weight.pow(2).sum()
                loss.mul_(2.0)
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for step, (x, y) in enumerate(loader):
                x, y = x.to("xla"), y.to("xla")
                loss = criterion(model(x), y)
                xm.add_step_closure(lambda loss, step: writer.add_scalar("base", loss.item(), step), args=(loss, step))
                loss = loss + 0.1 * model.weight.pow(2).sum()
                loss.mul_(2.0)
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="read name bound anew before the in-place change: the read tensor itself is passed",
            findings=(
                Expected(
                    8,
                    31,
                    "logging-only host read `loss.item()` moved into a step closure: it runs after the step's "
                    "graph, with this iteration's values passed in",
                ),
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


@on_facts(HOST_READ_LOGGING, nodes=lambda facts: facts.host_reads.step_closures)
def _into_step_closure(ctx: Context[Facts], original: cst.Expr, updated: cst.Expr) -> cst.Expr:
    from codemods.engine.loop_barrier_rules import barrier_off
    from codemods.lazy.rules.step_closures import closure_parts, rewritten_values, step_closure

    closure = ctx.facts.host_reads.step_closures[original]
    first = closure.reads[0]
    read = ctx.code(first)
    reason = closure.blocked
    plan = ctx.facts.training.loops.get(closure.loop)
    if reason is None and plan is not None:  # a loop that gets its barrier from a rewrite needs that rewrite on
        unbarriered = barrier_off(ctx, closure.loop, loader_wrapped=plan.wrap_loader is not None)
        reason = None if unbarriered is None else f"{unbarriered}, so the closure would not run"
    rewritten: dict[int, cst.CSTNode] | None = {}
    if reason is None:  # the closure is built only for a statement that may move
        hoisted = closure_parts(ctx.facts, original.value, closure)  # type: ignore[arg-type]  # step closures are recorded for logging Expr statements, whose value is the print/log Call
        if updated is not original:
            rewritten = rewritten_values(original.value, updated.value, hoisted[0])
            if rewritten is None:
                reason = "other rewrites changed this statement"
    if reason is not None:
        ctx.report(
            HOST_READ_LOGGING,
            first,
            f"`{read}` only logs, but stays: {reason}; move it into "
            "xm.add_step_closure(fn, args=(...)) by hand, passing the values it prints",
        )
        return updated
    copies = sorted(closure.changed_later)
    new = ctx.fix(
        HOST_READ_LOGGING,
        first,
        f"logging-only host read `{read}` moved into a step closure: it runs after the step's graph, "
        "with this iteration's values passed in"
        + (
            f" ({', '.join(f'`{name}`' for name in copies)} as a copy, `.detach().clone()`: the step changes "
            f"{'it' if len(copies) == 1 else 'them'} in place after this line)"
            if copies
            else ""
        ),
        lambda: step_closure(ctx, *hoisted, rewritten or {}, closure.changed_later),
    )
    return updated if new is None else updated.with_changes(value=new)
