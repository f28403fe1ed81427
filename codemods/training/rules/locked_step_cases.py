"""XLA301's cases for a training loop whose step runs under a thread lock (training/locked_steps.py,
torchbeast's monobeast and polybeast learners): the barrier goes inside the lock, right after the
statement that takes the step or makes the call that reaches it, never at the end of the
iteration; where it cannot go there, an error on the loop and no barrier."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# Learner threads each run ``batch_and_learn``, whose ``learn`` steps under its default lock.
_THREADED = """
import threading

import torch

device = torch.device("cuda")
model = torch.nn.Linear(16, 4).to(device)
optimizer = torch.optim.RMSprop(model.parameters())


def learn(x, lock=threading.Lock()):
    with lock:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stats = {"loss": loss.item()}
        return stats


def batch_and_learn(steps):
    for _ in range(steps):
        learn(torch.randn(8, 16).to(device))


threads = [threading.Thread(target=batch_and_learn, args=(10,)) for _ in range(2)]
"""

_THREADED_PORTED = substituted(
    _THREADED,
    ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
    ('torch.device("cuda")', "torch_xla.device()"),
    ("        optimizer.step()\n", "        xm.optimizer_step(optimizer)\n        torch_xla.sync()\n"),
)

# The lock is an instance's (``self._lock = RLock()`` imported by name, aliased torch), and the
# loop takes it itself around the call that reaches the step.
_HELD_AROUND_THE_CALL = """
from threading import RLock

import torch as th


class Learner:
    def __init__(self, net):
        self.net = net.cuda()
        self.opt = th.optim.SGD(self.net.parameters(), lr=0.1)
        self._lock = RLock()

    def update(self, x):
        self.opt.zero_grad()
        self.net(x.cuda()).sum().backward()
        self.opt.step()

    def run(self, batches):
        for x in batches:
            with self._lock:
                self.update(x)
            print("done")
"""

# polybeast's learner: ``lock.acquire()`` ... ``lock.release()`` around the step in the loop.
_ACQUIRED = """
import threading

import torch


def learn(model, optimizer, queue, lock=threading.Lock()):
    for x in queue:
        x = x.cuda()
        lock.acquire()
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        lock.release()
"""

# The step's statement returns from the function inside the lock: no statement after it runs there.
_RETURNS_INSIDE = """
import threading

import torch

lock = threading.Lock()


def learn(model, optimizer, x):
    with lock:
        optimizer.zero_grad()
        model(x.cuda()).sum().backward()
        return optimizer.step()


def batch_and_learn(model, optimizer, batches):
    for x in batches:
        learn(model, optimizer, x)
"""

# A lock around the logging only: the step is outside it, the loop's iteration ends with the barrier.
_LOCK_ELSEWHERE = """
import threading

import torch

lock = threading.Lock()


def train(model, optimizer, batches, log):
    for x in batches:
        optimizer.zero_grad()
        model(x.cuda()).sum().backward()
        optimizer.step()
        with lock:
            log.append(1)
"""

# A ``with`` over something that is no lock (a timer, a profiler range) around the step.
_NO_LOCK = """
import torch


def train(model, optimizer, batches, timer):
    for x in batches:
        with timer("step"):
            optimizer.zero_grad()
            model(x.cuda()).sum().backward()
            optimizer.step()
"""

LOCKED_STEP_VALID: tuple[Valid, ...] = (
    # Converted once, the barrier inside the lock stays the loop's barrier: nothing to add again.
    valid(_THREADED_PORTED, note="a-barrier-inside-the-lock-after-the-step-is-the-loops-barrier"),
)

LOCKED_STEP_INVALID: tuple[Invalid, ...] = (
    invalid(
        _THREADED,
        _THREADED_PORTED,
        note="a-step-under-a-lock-gets-the-barrier-inside-the-lock",
        findings=(Expected(18, 9, "training step under the lock `lock`: torch_xla.sync() right after it, inside"),),
    ),
    invalid(
        _THREADED,
        substituted(
            _THREADED,
            ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n"),
            ('torch.device("cuda")', "xm.xla_device()"),
            ("        optimizer.step()\n", "        xm.optimizer_step(optimizer)\n        xm.mark_step()\n"),
        ),
        target="sagemaker",
        note="a-step-under-a-lock-gets-the-barrier-inside-the-lock-sagemaker",
        findings=(Expected(17, 9, "training step under the lock `lock`: xm.mark_step() right after it, inside"),),
    ),
    invalid(
        _HELD_AROUND_THE_CALL,
        substituted(
            _HELD_AROUND_THE_CALL,
            ("import torch as th\n", "import torch as th\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
            ("net.cuda()", "net.to(torch_xla.device())"),
            ("x.cuda()", "x.to(torch_xla.device())"),
            ("        self.opt.step()\n", "        xm.optimizer_step(self.opt)\n"),
            ("                self.update(x)\n", "                self.update(x)\n                torch_xla.sync()\n"),
        ),
        alias=True,
        note="a-call-reaching-the-step-under-an-instances-rlock",
        findings=(Expected(23, 17, "training step under the lock `self._lock`: torch_xla.sync() right after"),),
    ),
    invalid(
        _ACQUIRED,
        substituted(
            _ACQUIRED,
            ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
            ("x.cuda()", "x.to(torch_xla.device())"),
            ("        optimizer.step()\n", "        xm.optimizer_step(optimizer)\n        torch_xla.sync()\n"),
        ),
        note="a-step-between-acquire-and-release-gets-the-barrier-before-the-release",
        findings=(Expected(16, 9, "training step under the lock `lock`: torch_xla.sync() right after it"),),
    ),
    invalid(
        _RETURNS_INSIDE,
        substituted(
            _RETURNS_INSIDE,
            ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
            ("x.cuda()", "x.to(torch_xla.device())"),
            ("return optimizer.step()", "return xm.optimizer_step(optimizer)"),
        ),
        note="a-step-returned-inside-the-lock-is-reported-on-the-loop",
        findings=(
            Expected(
                18,
                5,
                "training loop whose step runs under the lock `lock`, but the statement that takes it returns "
                "from the function inside the lock: no barrier added",
            ),
        ),
    ),
    invalid(
        _LOCK_ELSEWHERE,
        substituted(
            _LOCK_ELSEWHERE,
            ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
            ("x.cuda()", "x.to(torch_xla.device())"),
            ("        optimizer.step()\n", "        xm.optimizer_step(optimizer)\n"),
            ("            log.append(1)\n", "            log.append(1)\n        torch_xla.sync()\n"),
        ),
        note="a-lock-that-holds-no-step-leaves-the-barrier-at-the-end-of-the-iteration",
        findings=(Expected(17, 9, "training loop: torch_xla.sync() ends every iteration"),),
    ),
    invalid(
        _NO_LOCK,
        substituted(
            _NO_LOCK,
            ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
            ("x.cuda()", "x.to(torch_xla.device())"),
            ("            optimizer.step()\n", "            xm.optimizer_step(optimizer)\n        torch_xla.sync()\n"),
        ),
        note="a-with-over-no-lock-leaves-the-barrier-at-the-end-of-the-iteration",
        findings=(Expected(12, 9, "training loop: torch_xla.sync() ends every iteration"),),
    ),
)
