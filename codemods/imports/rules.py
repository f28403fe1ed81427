"""XLA001, XLA002: imports that rewritten code needs, and imports that rewrites left unused."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

ADD_IMPORT = Rule(
    code="XLA001",
    name="add-import",
    severity="info",
    summary="Add the torch_xla imports that rewritten code uses",
    fixable=True,
    why="Rewritten code calls torch_xla, so its imports are added: once, after the file's torch imports, "
    "under the file's own alias where it has one.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = torch.nn.Linear(4, 2)
            torch.save(model.state_dict(), "model.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            model = torch.nn.Linear(4, 2)
            xm.save(model.state_dict(), "model.pt")
            """,
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            torch.save(model.state_dict(), "m.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save(model.state_dict(), "m.pt")
            """,
            note="already-imported",
        ),
        valid(
            """
            import torch
            from torch_xla.core import xla_model as xmod

            torch.save(state, "m.pt")
            """,
            """
            import torch
            from torch_xla.core import xla_model as xmod

            xmod.save(state, "m.pt")
            """,
            note="existing-alias-honoured",
        ),
    ),
    invalid=lambda: (
        # Findings of ``rule`` the case must give: (line in the output, text in the message).
        invalid(
            """
            \"\"\"Trainer.\"\"\"
            import os
            import torch
            import numpy as np

            model = torch.nn.Linear(2, 2)
            torch.save(model.state_dict(), "m.pt")
            """,
            """
            \"\"\"Trainer.\"\"\"
            import os
            import torch
            import torch_xla.core.xla_model as xm
            import numpy as np

            model = torch.nn.Linear(2, 2)
            xm.save(model.state_dict(), "m.pt")
            """,
            note="after-torch-import",
            findings=(Expected(4, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
        invalid(
            """
            import torch as th
            import torch.nn as nn

            th.save(state, "m.pt")
            """,
            """
            import torch as th
            import torch.nn as nn
            import torch_xla.core.xla_model as xm

            xm.save(state, "m.pt")
            """,
            alias=True,
            findings=(Expected(3, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
        invalid(
            """
            import torch

            xm = build_experiment_manager()
            torch.save(state, "m.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model

            xm = build_experiment_manager()
            torch_xla.core.xla_model.save(state, "m.pt")
            """,
            note="alias-taken",
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model` for the rewritten code"),),
        ),
        invalid(
            """
            import torch
            import pytorch_lightning as pl

            device = torch.device("cuda")
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.parallel_loader
            import pytorch_lightning as pl

            device = torch_xla.device()
            for x, y in torch_xla.distributed.parallel_loader.MpDeviceLoader(train_loader, device):
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            note="alias-bound-by-an-unused-import",
            findings=(
                Expected(2, 1, "`import torch_xla` for the rewritten code"),
                Expected(3, 1, "`import torch_xla.distributed.parallel_loader` for the rewritten code"),
            ),
        ),
        invalid(
            """
            import torch

            def get_device():
                import torch_xla.core.xla_model as xm
                return xm.xla_device()

            def step(optimizer):
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model

            def get_device():
                import torch_xla.core.xla_model as xm
                return torch_xla.device()

            def step(optimizer):
                torch_xla.core.xla_model.optimizer_step(optimizer)
            """,
            note="function-local-import-is-not-module-wide",
            findings=(
                Expected(2, 1, "`import torch_xla` for the rewritten code"),
                Expected(3, 1, "`import torch_xla.core.xla_model` for the rewritten code"),
            ),
        ),
        # An import that module-level code runs before binds nothing there: the rewritten
        # loop gets its own import (converting the output again then changes nothing).
        invalid(
            """
            import torch

            for x, y in loader:
                loss_fn(model(x), y).backward()
                optimizer.step()
            import torch_xla.core.xla_model as xm
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for x, y in loader:
                loss_fn(model(x), y).backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            import torch_xla.core.xla_model as xm
            """,
            note="import-after-code-is-not-module-wide",
            findings=(
                Expected(2, 1, "`import torch_xla` for the rewritten code"),
                Expected(3, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),
            ),
        ),
        invalid(
            """
            import torch

            for x, y in loader:
                loss_fn(model(x), y).backward()
                optimizer.step()
            import torch_xla.core.xla_model as xm
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            for x, y in loader:
                loss_fn(model(x), y).backward()
                xm.optimizer_step(optimizer)
                xm.mark_step()
            import torch_xla.core.xla_model as xm
            """,
            target="sagemaker",
            note="import-after-code-is-not-module-wide-sagemaker",
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
        # A name used before its import (here on the loop's first pass) means what the
        # import binds: once the rewrite imports it at the top, the output reads the same.
        invalid(
            """
            import torch

            for x, y in loader:
                device = xm.xla_device()
                import torch_xla.core.xla_model as xm
                loss_fn(model(x.to(device)), y).backward()
            """,
            """
            import torch
            import torch_xla

            for x, y in loader:
                device = torch_xla.device()
                import torch_xla.core.xla_model as xm
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            note="name-used-before-its-import",
            findings=(Expected(2, 1, "`import torch_xla` for the rewritten code"),),
        ),
        invalid(
            """
            import torch

            for x, y in loader:
                device = xm.xla_device()
                import torch_xla.core.xla_model as xm
                loss_fn(model(x.to(device)), y).backward()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            for x, y in loader:
                device = xm.xla_device()
                import torch_xla.core.xla_model as xm
                loss_fn(model(x.to(device)), y).backward()
                xm.mark_step()
            """,
            target="sagemaker",
            note="name-used-before-its-import-sagemaker",
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
        # ``torch_xla`` never imported can only be the package: its barrier is one (the
        # rewrite's ``import torch_xla`` would make it one on a second pass).
        invalid(
            """
            import torch

            device = torch.device("cuda")
            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            note="torch-xla-never-imported",
            findings=(Expected(2, 1, "`import torch_xla` for the rewritten code"),),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda")
            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                xm.mark_step()
            """,
            target="sagemaker",
            note="torch-xla-never-imported-sagemaker",
            findings=(Expected(2, 1, "`import torch_xla.core.xla_model as xm` for the rewritten code"),),
        ),
    ),
)

REMOVE_STALE_IMPORT = Rule(
    code="XLA002",
    name="remove-stale-import",
    severity="info",
    summary="Remove an import that a rewrite left unused",
    fixable=True,
    why="A rewrite can leave an import unused (`xm` once `xm.xla_device()` is `torch_xla.device()`); it is "
    "removed so the file imports what it uses. Imports the tool did not make unused are left alone.",
    examples=lambda: (
        invalid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
            findings=(Expected(3, 1, "removed unused import `torch_xla.core.xla_model` as xm"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            import json

            device = xm.xla_device()
            xm.master_print("ready")
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            import json

            device = torch_xla.device()
            xm.master_print("ready")
            """,
            note="still-used-and-untouched-unused",
        ),
        valid(
            """
            import os
            import torch

            device = torch.device(f"cuda:{os.environ['LOCAL_RANK']}")
            os.makedirs("out", exist_ok=True)
            """,
            """
            import os
            import torch
            import torch_xla

            device = torch_xla.device()
            os.makedirs("out", exist_ok=True)
            """,
            note="name-still-used-after-a-replacement",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from torch.cuda import synchronize, memory_allocated

            synchronize()
            print(memory_allocated())
            """,
            """
            import torch
            from torch.cuda import memory_allocated
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            print(memory_allocated())
            """,
            note="from-import-name",
            alias=True,
            findings=(Expected(2, 1, "removed unused import `synchronize`"),),
        ),
    ),
)

RULES = (ADD_IMPORT, REMOVE_STALE_IMPORT)
