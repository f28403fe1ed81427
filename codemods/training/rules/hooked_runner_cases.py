"""XLA307's cases for a runner class of the project's own over mmcv's (a subclass of its runners, or
one registered in mmcv's ``RUNNERS`` over a base the project copied) whose training loop calls
``self.call_hook('after_train_iter')``: mmcv's OptimizerHook steps the optimizer there, and the loop
ends no iteration with a barrier (training/hooked_runners.py)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# QueryInst's mmcv_custom runner, reduced: registered in mmcv's RUNNERS, over a base the project copied.
REGISTERED_RUNNER = """
from mmcv.runner import RUNNERS
from .base_runner import BaseRunner


@RUNNERS.register_module()
class MyRunner(BaseRunner):
    def train(self, data_loader, **kw):
        self.model.train()
        for i, data_batch in enumerate(data_loader):
            self.call_hook("before_train_iter")
            self.outputs = self.model.train_step(data_batch, self.optimizer)
            self.call_hook("after_train_iter")
            self._iter += 1
"""

# A subclass of mmcv's EpochBasedRunner, through a module alias.
SUBCLASSED_RUNNER = """
import mmcv.runner as mr


class LoggedRunner(mr.EpochBasedRunner):
    def train(self, data_loader, **kwargs):
        for data_batch in data_loader:
            self.run_iter(data_batch, train_mode=True, **kwargs)
            self.call_hook('after_train_iter')
"""

# The loop ends each iteration with the barrier itself: nothing to report.
SYNCED_RUNNER = substituted(
    REGISTERED_RUNNER,
    ("from mmcv.runner import RUNNERS\n", "import torch_xla\nfrom mmcv.runner import RUNNERS\n"),
    (
        '            self.call_hook("after_train_iter")\n',
        '            self.call_hook("after_train_iter")\n            torch_xla.sync()\n',
    ),
)

# A class of the project's own that is no mmcv runner: its call_hook is its own.
OWN_HOOKS = substituted(
    REGISTERED_RUNNER,
    ("from mmcv.runner import RUNNERS\nfrom .base_runner import BaseRunner\n\n\n@RUNNERS.register_module()\n", ""),
    ("class MyRunner(BaseRunner):", "class MyRunner:"),
)

_MESSAGE = '`self.call_hook("after_train_iter")` in `MyRunner`, an mmcv runner class, runs the hooks where mmcv\'s OptimizerHook steps the optimizer'


def hooked_runner_valid() -> tuple[Valid, ...]:
    return (
        valid(SYNCED_RUNNER, note="an-mmcv-runner-class-whose-loop-ends-each-iteration-with-the-barrier"),
        valid(
            substituted(
                SYNCED_RUNNER,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.sync()", "xm.mark_step()"),
            ),
            target="sagemaker",
            note="an-mmcv-runner-class-whose-loop-ends-each-iteration-with-the-barrier-sagemaker",
        ),
        valid(OWN_HOOKS, note="a-project-class-with-its-own-call-hook-is-no-mmcv-runner"),
    )


def hooked_runner_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            REGISTERED_RUNNER,
            note="an-mmcv-runner-class-registered-in-runners-whose-loop-steps-in-the-after-train-iter-hook",
            findings=(Expected(12, 13, _MESSAGE + ", and nothing in this loop ends the step on XLA"),),
        ),
        invalid(
            REGISTERED_RUNNER,
            target="sagemaker",
            note="an-mmcv-runner-class-registered-in-runners-whose-loop-steps-in-the-after-train-iter-hook-sagemaker",
            findings=(Expected(12, 13, _MESSAGE),),
        ),
        invalid(
            SUBCLASSED_RUNNER,
            alias=True,
            note="a-subclass-of-mmcvs-epoch-based-runner-through-a-module-alias-whose-loop-steps-in-the-hook",
            findings=(
                # the base, as any reference to mmcv's runner (its own run() steps with no barrier)
                Expected(4, 20, "`mr.EpochBasedRunner` (mmcv): its run() steps the optimizer"),
                Expected(
                    8,
                    13,
                    "`self.call_hook('after_train_iter')` in `LoggedRunner`, an mmcv runner class, runs the hooks "
                    "where mmcv's OptimizerHook steps the optimizer",
                ),
            ),
        ),
    )
