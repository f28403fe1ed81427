"""XLA0: imports, and setup that lives in another file."""

from __future__ import annotations

from codemods.rules.base import Example, Rule, example

RULES = (
    Rule(
        "XLA001", "add-import", "info", "Add the torch_xla imports that rewritten code uses", True,
        why="Rewritten code calls torch_xla, so its imports are added: once, after the file's torch imports, "
        "under the file's own alias where it has one.",
        examples=(
            example(
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
            ),
        ),
    ),
    Rule(
        "XLA002", "remove-stale-import", "info", "Remove an import that a rewrite left unused", True,
        why="A rewrite can leave an import unused (`xm` once `xm.xla_device()` is `torch_xla.device()`); it is "
        "removed so the file imports what it uses. Imports the tool did not make unused are left alone.",
        examples=(
            example(
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
            ),
        ),
    ),
    Rule(
        "XLA003", "cross-file", "error", "Setup that comes from another file must be converted there", False,
        why="Each file is converted on its own terms: when the device or the optimizer comes from, or goes to, "
        "a function of another file of the project, the code there (device choice, training loop) still runs on "
        "CUDA terms until that file is converted too.",
        examples=(
            example(
                """
                import torch
                from helpers import train_one_epoch

                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                train_one_epoch(model, loader, optimizer)
                """
            ),
        ),
    ),
    Rule(
        "XLA004",
        "third-party-cuda",
        "error",
        "A third-party API that runs only on CUDA (DeepSpeed, Apex, bitsandbytes, flash-attn, xformers, Triton "
        "kernels, timm's CUDA scalers)",
        False,
        why="These libraries call CUDA kernels or CUDA's gradient scaler directly: on an XLA machine they fail, "
        "or silently do nothing. One table (codemods/apis.py: THIRD_PARTY and THIRD_PARTY_MODULES) names each "
        "API or module with its XLA alternative, or none: torch.nn.functional.scaled_dot_product_attention (or "
        "torch_xla's flash_attention kernel on TPU) for flash-attn and xformers attention, torch.optim.AdamW or "
        "torch_xla.amp.syncfree for fused and 8-bit optimizers, torch.autocast for Apex AMP, the xla process group "
        "for DeepSpeed and Apex multi-GPU code, torch operations for Triton kernels. Each use is reported at its "
        "line. Imports of other third-party packages never need converting.",
        examples=(Example("import torch\nfrom apex import amp\nmodel, optimizer = amp.initialize(model, optimizer)\n"),),
    ),
    Rule(
        "XLA005",
        "no-device",
        "warning",
        "A training script that names no device runs on the CPU: it is left unchanged",
        False,
        why="A script that never moves its model or data (no `.to()`, `.cuda()`, `device=`; pytorch/examples' "
        "time_sequence_prediction) trains on the CPU. Porting only its loop (a barrier, `xm.optimizer_step`, step "
        "closures) would leave it on the CPU with XLA calls that do nothing; where its tensors should live is a "
        "choice the tool cannot make (numpy data, float64 models), so the file is left as it is and this one "
        "finding says so. Once the model and its tensors move to `torch_xla.device()`, a second conversion ports "
        "the rest.",
        examples=(Example(
            "import torch\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for x, y in data:\n    model(x).sum().backward()\n    opt.step()\n"
        ),),
    ),
)
