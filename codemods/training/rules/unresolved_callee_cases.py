"""XLA307's programs of an optimizer handed to a callable the tool can find nowhere
(training/unresolved_callees.py): a name that only a star import of a module the tool cannot read
may bind (SEAL's ``from main import *`` of pytorch_DGCNN, cloned beside the project, then
``loop_dataset(graphs, classifier, idxes, optimizer=optimizer)``); and the names that keep their
treatment: one the file defines, one a followed package's star import may bind, one that only sets
the learning rate, and an optimizer the file steps itself.  (A module of the project whose file is
missing needs a project on disk: tests/project/test_unresolved_callees.py.)"""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_SEAL = """
import os
import sys
import torch
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "ext_lib"))
from main import *

model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for epoch in range(10):
    loop_dataset(train_graphs, model, idxes, optimizer=optimizer)
"""
_UNFOUND = (
    "`loop_dataset` is handed the optimizer `optimizer`, which no code the tool sees steps, and the tool cannot "
    "find `loop_dataset` (the file never binds `loop_dataset`: only `from main import *` may, and the tool cannot "
    "read that module): no run reads or converts its code, so the training step it runs and the batches it makes "
    "are unproven on XLA: each step needs the step barrier (xm.optimizer_step(optimizer), then "
)


def unresolved_callee_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _SEAL,
            note="an-optimizer-handed-to-a-name-only-an-unread-star-import-may-bind",
            findings=(
                Expected(
                    10,
                    5,
                    _UNFOUND + "torch_xla.sync()) and each batch on torch_xla.device(): port that code by hand, or "
                    "run the tool on a tree that holds it",
                ),
            ),
        ),
        invalid(
            _SEAL,
            target="sagemaker",
            note="an-optimizer-handed-to-a-name-only-an-unread-star-import-may-bind-sagemaker",
            findings=(
                Expected(
                    10,
                    5,
                    _UNFOUND + "xm.mark_step()) and each batch on xm.xla_device(): port that code by hand, or run "
                    "the tool on a tree that holds it",
                ),
            ),
        ),
        invalid(
            substituted(
                _SEAL,
                ("from main import *", "from .ext import *\nfrom numpy import *"),
                ("optimizer = torch.optim.Adam", "opt = torch.optim.Adam"),
                (
                    "loop_dataset(train_graphs, model, idxes, optimizer=optimizer)",
                    "run_epoch(train_graphs, model, opt)",
                ),
            ),
            alias=True,
            note="an-optimizer-handed-by-position-to-a-name-of-a-relative-star-import",
            findings=(
                Expected(
                    11,
                    5,
                    "`run_epoch` is handed the optimizer `opt`, which no code the tool sees steps, and the tool cannot "
                    "find `run_epoch` (the file never binds `run_epoch`: only `from .ext import *` may, and the tool "
                    "cannot read that module)",
                ),
            ),
        ),
    )


# Names the file binds otherwise than by an assignment or a definition: by an assignment expression, an
# ``except ... as`` clause, a ``match`` pattern's capture, a class statement (``class run_epoch:``).
_BOUND_OTHERWISE = (
    (
        "for epoch in range(10):\n    if (run := pick_loop(epoch)) is not None:\n"
        "        run(train_graphs, model, idxes, optimizer=optimizer)",
        "a-name-an-assignment-expression-binds-beside-an-unread-star-import",
    ),
    (
        "for epoch in range(10):\n    try:\n        pass\n    except Exception as handler:\n"
        "        handler(train_graphs, model, idxes, optimizer=optimizer)",
        "a-name-an-except-clause-binds-beside-an-unread-star-import",
    ),
    (
        'for epoch in range(10):\n    match loops:\n        case {"train": run, **others}:\n'
        "            run(train_graphs, model, idxes, optimizer=optimizer)\n"
        "            others(model, optimizer)",
        "names-a-match-pattern-captures-beside-an-unread-star-import",
    ),
)


def _bound_otherwise() -> tuple[Valid, ...]:
    loop = "for epoch in range(10):\n    loop_dataset(train_graphs, model, idxes, optimizer=optimizer)"
    return tuple(
        valid(substituted(_SEAL, (loop, program)), target=target, note=note + ("-sagemaker" if target != "2.9" else ""))
        for program, note in _BOUND_OTHERWISE
        for target in ("2.9", "sagemaker")
    )


def unresolved_callee_valid() -> tuple[Valid, ...]:
    return (
        *_bound_otherwise(),
        valid(
            substituted(
                _SEAL,
                (
                    "\nmodel = Classifier()",
                    "\ndef loop_dataset(graphs, model, idxes, optimizer):\n    print(graphs)\n\nmodel = Classifier()",
                ),
            ),
            note="a-name-the-file-defines-beside-an-unread-star-import",
        ),
        valid(
            substituted(_SEAL, ("from main import *", "from numpy import *")),
            note="a-name-only-a-followed-packages-star-import-may-bind",
        ),
        valid(
            substituted(
                _SEAL,
                (
                    "loop_dataset(train_graphs, model, idxes, optimizer=optimizer)",
                    "adjust_learning_rate(optimizer, epoch)",
                ),
            ),
            note="a-name-of-an-unread-star-import-that-sets-the-learning-rate",
        ),
        valid(
            substituted(_SEAL, ("optimizer=optimizer)", "optimizer=optimizer)\n    optimizer.step()")),
            substituted(
                _SEAL,
                ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
                (
                    "optimizer=optimizer)",
                    "optimizer=optimizer)\n    xm.optimizer_step(optimizer)\n    torch_xla.sync()",
                ),
            ),
            note="an-optimizer-the-file-steps-itself-beside-an-unread-star-import",
        ),
    )
