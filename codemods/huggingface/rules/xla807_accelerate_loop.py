"""XLA807 accelerate-loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import BARRIERS, Expected, Invalid, Rule, invalid, substituted, valid, with_barrier
from codemods.training.rules.accelerate_loader_cases import METHOD_LOADER

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A loop over a loader that ``acc.prepare`` did not return: the port gives it the step barrier (XLA301).
_UNPREPARED_LOADER = """
import torch
from accelerate import Accelerator

acc = Accelerator()
model, opt = acc.prepare(model, opt)
loader = torch.utils.data.DataLoader(data, batch_size=8, drop_last=True)
for x in loader:
    acc.backward(model(x.to(acc.device)).mean())
    opt.step()
"""

ACCELERATE_LOOP = Rule(
    code="XLA807",
    name="accelerate-loop",
    severity="info",
    summary="An Accelerate training loop: what Accelerate does on XLA, and whether its loader ends the step",
    fixable=False,
    why="On XLA, Accelerate places the model and batches, wraps prepared loaders in MpDeviceLoader (which "
    "ends each step) and, in a prepared optimizer's step, all-reduces the gradients across processes before "
    "the optimizer's own step (what xm.optimizer_step does); launch it with an XLA accelerate config. "
    "Neither `accelerator.backward` nor a prepared optimizer's step ends the step: a loop over a loader "
    "that `accelerator.prepare` never returns (a `DataLoader(...)` built in its function, or returned by a "
    "function or method of the file, or a function of another module of the project; under `enumerate`, "
    "`tqdm` or a batching iterator), calling none of the accelerator's gather, reduce or accumulate (which "
    "end it), gets the step barrier (XLA301). The finding says nothing is to port only where the loop's "
    "loader is prepared (or the loop ends its steps otherwise); where the tool cannot follow the loader "
    "(a parameter, an attribute, a method defined elsewhere) it says what to check. Where the file uses "
    "Accelerate's DeepSpeed integration (XLA810), or another module of the project names its placeholders or "
    "plugin (`DummyOptim`, `DummyScheduler`, `DeepSpeedPlugin`: a config may pick them), it does not say "
    "nothing is to port: it names that integration, which XLA does not run. A backward outside any loop of "
    "its function (a one-line `def backward(self, loss): self.accelerator.backward(loss)`) is no loop: the "
    "finding says what the loop that calls it needs.",
    examples=lambda: (
        Invalid(
            "import torch\nfrom accelerate import Accelerator\n\naccelerator = Accelerator()\n"
            "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\nfor batch in loader:\n"
            "    loss = model(**batch).loss\n    accelerator.backward(loss)\n    optimizer.step()\n    optimizer.zero_grad()\n",
            findings=(Expected(8, 5, "Accelerate loop"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for batch in loader:
                loss = model(batch.to(device)).mean()
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
        ),
    ),
    invalid=lambda: (
        *(
            invalid(
                _UNPREPARED_LOADER,
                with_barrier(_UNPREPARED_LOADER, "    opt.step()\n", target=target),
                target=target,
                note=f"a-loader-accelerate-did-not-prepare-{target}",
                findings=(Expected(9, 5, "Accelerate loop over a loader Accelerate did not prepare"),),
            )
            for target in BARRIERS
        ),
        *(
            invalid(
                METHOD_LOADER,
                with_barrier(
                    METHOD_LOADER,
                    "            self.opt.zero_grad()\n",
                    target=target,
                    imported_after="from torch.utils.data import DataLoader\n",
                ),
                target=target,
                note=f"a-loader-a-method-returns-{target}",
                findings=(Expected(30, 17, "Accelerate loop over a loader Accelerate did not prepare"),),
            )
            for target in BARRIERS
        ),
        *(
            invalid(
                substituted(
                    METHOD_LOADER,
                    ("        return DataLoader(", "        return self.accelerator.prepare(DataLoader("),
                    ("drop_last=True)\n", "drop_last=True))\n"),
                ),
                target=target,
                note=f"a-loader-a-method-returns-prepared-{target}",
                findings=(Expected(29, 17, "nothing to port"),),
            )
            for target in BARRIERS
        ),
        *(
            invalid(
                """
                import torch


                class Runner:
                    def train_epoch(self, loader):
                        for batch in loader:
                            loss = self.model(**batch).loss
                            self.accelerator.backward(loss)
                            self.optimizer.step()
                            self.optimizer.zero_grad()
                """,
                target=target,
                note=f"an-accelerator-the-file-is-handed-{target}",
                findings=(Expected(8, 13, "Accelerate loop over a loader the tool cannot follow"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                """
                import torch
                from accelerate import Accelerator

                accelerator = Accelerator()
                accelerator.state.deepspeed_plugin.deepspeed_config["train_micro_batch_size_per_gpu"] = 4
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                for x in loader:
                    accelerator.backward(model(x).mean())
                    optimizer.step()
                """,
                target=target,
                note=f"a-file-that-trains-through-accelerates-deepspeed-{target}",
                findings=(Expected(8, 5, "the loop itself needs no step barrier, but this file trains through"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                """
                class Wrapper:
                    def backward(self, loss):
                        self.accelerator.backward(loss)
                """,
                target=target,
                note=f"a-one-line-backward-method-is-no-loop-{target}",
                findings=(Expected(3, 9, "Accelerate backward outside any loop of its function"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import torch
            import accelerate

            acc = accelerate.Accelerator(mixed_precision="no")
            model, opt, dl = acc.prepare(model, opt, dl)
            for batch in dl:
                acc.backward(model(batch).sum())
                opt.step()
            """,
            alias=True,
            findings=(Expected(7, 5, "Accelerate loop"),),
        ),
        *(
            invalid(
                """
                import torch
                from accelerate import Accelerator

                accelerator = Accelerator(log_with="all") if with_tracking else Accelerator()
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                for x, y in loader:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    accelerator.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
                """,
                target=target,
                note=f"accelerator-chosen-by-a-condition-{target}",
                findings=(Expected(8, 5, "Accelerate loop"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
            for step, batch in enumerate(loader):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
                print(f"step {step} loss {loss.item()}")
            """,
            findings=(Expected(8, 5, "Accelerate loop"),),
        ),
        *(
            invalid(
                """
                import torch
                from accelerate import Accelerator

                accelerator = Accelerator(log_with="all") if with_tracking else Accelerator()
                model = torch.nn.Linear(4, 1)
                optimizer = torch.optim.AdamW(model.parameters())
                model, optimizer, loader = accelerator.prepare(model, optimizer, make_loader())
                for step, (x, y) in enumerate(loader):
                    x, y = x.to(accelerator.device), y.to(accelerator.device)
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    accelerator.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
                for x, y in loader:
                    accelerator.backward(torch.nn.functional.mse_loss(model(x), y))
                    optimizer.step()
                """,
                target=target,
                note=f"accelerator-of-a-conditional-expression-{target}",
                findings=(Expected(11, 5, "Accelerate loop"), Expected(15, 5, "Accelerate loop")),
            )
            for target in ("2.9", "sagemaker")
        ),
    ),
)


@reports_facts(ACCELERATE_LOOP, nodes=lambda facts: set(facts.huggingface.accelerate_backwards))
def _report(ctx: Context[Facts], original: cst.Call) -> str:
    if original in ctx.facts.training.unprepared_backwards:
        return (
            "Accelerate loop over a loader Accelerate did not prepare: Accelerate places the model and "
            "all-reduces the gradients in a prepared optimizer's step, but neither its backward nor that "
            "step ends the XLA step (only a prepared loader's MpDeviceLoader, or its gather and reduce, "
            "do): the port ends each iteration with the step barrier (XLA301); preparing the loader "
            "(`accelerator.prepare(loader)`) would do it instead"
        )
    if original in ctx.facts.training.ended_backwards:
        said = (
            "Accelerate loop: on XLA, Accelerate already places the model and batches, ends each "
            "step through its prepared loaders (MpDeviceLoader) and all-reduces the gradients in a prepared "
            "optimizer's step; "
        )
        if (deepspeed := _deepspeed(ctx)) is not None:
            return said + "the loop itself needs no step barrier, but " + deepspeed
        return said + "nothing to port (launch it with an XLA accelerate config)"
    if not _in_a_loop(ctx):
        return (
            "Accelerate backward outside any loop of its function (a method or helper the training loop "
            "calls): on XLA, Accelerate places the model and all-reduces the gradients in a prepared "
            "optimizer's step; the loop that calls it ends each XLA step if its loader is prepared "
            "(MpDeviceLoader); over a loader Accelerate did not prepare it needs the step barrier at the end "
            "of each iteration"
        )
    return (
        "Accelerate loop over a loader the tool cannot follow to `accelerator.prepare` (a parameter, an "
        "attribute, a method it cannot see into): Accelerate places the model and all-reduces the gradients "
        "in a prepared optimizer's step, but only a prepared loader's MpDeviceLoader (or its gather and "
        "reduce) ends the XLA step, not its backward or that step; if the loader is not prepared, prepare it "
        "(`accelerator.prepare(loader)`) or end each iteration with the step barrier (launch it with an XLA "
        "accelerate config)"
    )


# Accelerate's DeepSpeed surface that another module of the project may hand this loop (XLA810).
_DEEPSPEED_NAMES = ("DummyOptim", "DummyScheduler", "DeepSpeedPlugin")


def _deepspeed(ctx: Context[Facts]) -> str | None:
    """What the finding says where the file (XLA810) or another module of the project (a word
    scan: Hydra and registries pick the optimizer and accelerator by name) uses Accelerate's
    DeepSpeed integration, which XLA does not run."""
    if ctx.facts.huggingface.accelerate_deepspeed:
        return (
            "this file trains through Accelerate's DeepSpeed integration, which XLA does not run (XLA810): "
            "port those uses (a torch optimizer and scheduler, an XLA accelerate config)"
        )
    context = ctx.facts.project.context
    named = [name for name in _DEEPSPEED_NAMES if context.mentioned_elsewhere(name)]
    if named:
        return (
            f"another module of the project uses Accelerate's DeepSpeed integration ({', '.join(named)}; "
            "XLA810 there), which XLA does not run: if this loop's accelerator, optimizer or scheduler comes "
            "from it (a config that picks it), it fails on XLA (a DummyOptim has no `step`); use a torch "
            "optimizer and scheduler and an XLA accelerate config"
        )
    return None


def _in_a_loop(ctx: Context[Facts]) -> bool:
    """The call being left sits in a ``for`` or ``while`` of its own function (or of the module)."""
    import libcst as cst

    for ancestor in reversed(ctx.ancestors[:-1]):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
        if isinstance(ancestor, (cst.For, cst.While)):
            return True
    return False
