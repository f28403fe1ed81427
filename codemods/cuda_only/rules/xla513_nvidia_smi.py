"""XLA513 nvidia-smi: a Python call that runs ``nvidia-smi`` and reads what it gives
(``os.popen("nvidia-smi --query-gpu=memory.total,memory.used ...").read()``,
``subprocess.check_output(["nvidia-smi", ...])``): an XLA host has no nvidia-smi, so the call
raises or gives nothing to parse."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from codemods.engine.hooks import on_calls
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

NVIDIA_SMI = Rule(
    code="XLA513",
    name="nvidia-smi",
    severity="error",
    summary="A Python call that runs nvidia-smi and reads its output or its success: an XLA host has no "
    "nvidia-smi (use xm.get_memory_info(device) for the device's memory)",
    fixable=False,
    why="nvidia-smi comes with NVIDIA's driver, which an XLA host (a TPU VM, a Trainium instance) does not "
    "have. `os.popen(...)` and `subprocess.getoutput(...)` then give the shell's error or nothing, so the "
    "parsing that follows (`total, used = out.split('\\n')[dev].split(',')`) raises; `subprocess.check_output` "
    "and `check_call` raise CalledProcessError (through a shell) or FileNotFoundError (a list of arguments), as "
    "does any subprocess call of a list of arguments; one through a shell whose output is captured gives "
    "nothing. A script that reserves or reports GPU memory this way (YOLOX's `occupy_mem`) asks the XLA device "
    "instead: `xm.get_memory_info(device)` gives its memory (`bytes_used` and `bytes_limit` on torch_xla 2.9, "
    "`kb_free` and `kb_total` on 1.13); anything else it asks of the GPU has no meaning there (drop the call). "
    "A call that only prints (`os.system('nvidia-smi')`, `subprocess.run('nvidia-smi', shell=True)` without "
    "`check=True` or captured output) prints the shell's error and goes on: not reported.",
    examples=lambda: (
        invalid(
            """
            import os

            import torch


            def occupy_mem(dev):
                out = os.popen("nvidia-smi --query-gpu=memory.total,memory.used --format=csv,nounits,noheader").read()
                total, used = out.strip().split("\\n")[dev].split(",")
                return int(total), int(used)
            """,
            findings=(
                Expected(
                    7, 11, '`os.popen("nvidia-smi --query-gpu=memory.total,memory.used --format=csv,nounit...` gives'
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import os
            import subprocess

            import torch

            os.system("nvidia-smi")
            subprocess.run("nvidia-smi -L", shell=True)
            out = subprocess.check_output(["git", "rev-parse", "HEAD"])
            note = os.popen("echo nvidia-smi-free").read()
            """,
            note="prints-only-or-other-commands",
        ),
        valid(
            """
            import torch_xla.core.xla_model as xm

            info = xm.get_memory_info(xm.xla_device())
            used, limit = info["kb_total"] - info["kb_free"], info["kb_total"]
            """,
            target="sagemaker",
            note="asks-the-xla-device-1.13",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import subprocess as sp

            import torch

            out = sp.check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])
            """,
            alias=True,
            note="list-of-arguments-aliased",
            findings=(
                Expected(
                    5,
                    7,
                    "raises FileNotFoundError: an XLA host has no nvidia-smi; xm.get_memory_info(device) gives the "
                    "XLA device's memory (bytes_used, bytes_limit)",
                ),
            ),
        ),
        invalid(
            """
            from subprocess import run

            import torch

            result = run("nvidia-smi -L", shell=True, capture_output=True, text=True)
            gpus = result.stdout.splitlines()
            print(torch.cuda.device_count(), gpus)
            """,
            target="sagemaker",
            note="captured-through-a-shell-1.13",
            findings=(Expected(5, 10, "gives the shell's error and no output to read"),),
        ),
        invalid(
            """
            import subprocess

            import torch

            free = subprocess.getoutput(f"nvidia-smi -i {dev} --query-gpu=memory.free --format=csv")
            """,
            target="sagemaker",
            note="formatted-command-memory-1.13",
            findings=(Expected(5, 8, "xm.get_memory_info(device) gives the XLA device's memory (kb_free, kb_total)"),),
        ),
    ),
)

# Python calls that run a command (rules/shell_commands.py tells what each does).
_CALLS = frozenset(
    {
        "os.popen",
        "subprocess.check_output",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "subprocess.check_call",
        "subprocess.run",
        "subprocess.call",
        "subprocess.Popen",
    }
)


@on_calls(NVIDIA_SMI, names=_CALLS)
def _nvidia_smi(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    from codemods.cuda_only.rules.shell_commands import runs_nvidia_smi

    if (ran := runs_nvidia_smi(original, callee)) is None:
        return updated
    command, outcome = ran
    memory = ctx.target.name == "sagemaker" and "(kb_free, kb_total)" or "(bytes_used, bytes_limit)"
    advice = (
        f"xm.get_memory_info(device) gives the XLA device's memory {memory}"
        if "mem" in command
        else "there is no GPU to ask about there: drop the call (xm.get_memory_info(device) gives the XLA "
        f"device's memory {memory})"
    )
    code = re.sub(r"([(\[]) ", r"\1", re.sub(r"\s*\n\s*", " ", ctx.code(original)))  # on one line
    shown = code if len(code) <= 80 else code[:77] + "..."
    ctx.report(NVIDIA_SMI, original, f"`{shown}` {outcome}: an XLA host has no nvidia-smi; {ctx.target.advice(advice)}")
    return updated
