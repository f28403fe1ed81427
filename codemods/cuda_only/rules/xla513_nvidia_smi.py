"""XLA513 nvidia-smi: a Python call that runs ``nvidia-smi`` and reads what it gives
(``os.popen("nvidia-smi --query-gpu=memory.total,memory.used ...").read()``,
``subprocess.check_output(["nvidia-smi", ...])``): an XLA host has no nvidia-smi, so the call
raises or gives nothing to parse."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.hooks import on_calls
from codemods.engine.nodes import arg_value, call_args, is_true, string_value
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
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

# Python calls that run a command, and whether they read its output or raise when it fails
# (whatever their arguments).
_READS = frozenset({"os.popen", "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput"})
_CHECKS = frozenset({"subprocess.check_call"})
_RUNS = frozenset({"subprocess.run", "subprocess.call", "subprocess.Popen"})
_COMMAND = re.compile(r"(?:^|[\s;&|(`'\"/])nvidia-smi(?![\w-])")


def _text(node: cst.BaseExpression | None) -> str | None:
    """The command as written: a string (its literal parts, for an f-string or a concatenation),
    or the strings of a list or tuple of arguments that starts with one, joined."""
    if node is None:
        return None
    if type(node) is cst.SimpleString:
        return string_value(node)
    if type(node) is cst.FormattedString:
        return "".join(part.value if type(part) is cst.FormattedStringText else " " for part in node.parts)
    if type(node) is cst.ConcatenatedString:
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    if type(node) is cst.List or type(node) is cst.Tuple:
        words = [_text(element.value) for element in node.elements]
        return " ".join(w for w in words if w is not None) if words and words[0] is not None else None
    return None


def _outcome(call: cst.Call, callee: str) -> str | None:
    """What the call does on an XLA host, where that stops the script or leaves it nothing to
    read; None for a call that only prints the shell's error and goes on."""
    command = arg_value(call, 0, "args" if callee.startswith("subprocess.") else "cmd")
    listed = type(command) in (cst.List, cst.Tuple)
    if callee in _READS or callee in _CHECKS:
        if listed:
            return "raises FileNotFoundError"
        if callee in _CHECKS or callee == "subprocess.check_output":
            return "raises CalledProcessError (the shell finds no such command)"
        return "gives the shell's error and no output to read (what parses it raises)"
    if callee in _RUNS:
        keywords = {name: arg.value for name, arg in call_args(call)[1].items()}
        if listed or not is_true(keywords.get("shell")):
            return "raises FileNotFoundError"
        if is_true(keywords.get("check")):
            return "raises CalledProcessError (the shell finds no such command)"
        stdout = keywords.get("stdout")
        if is_true(keywords.get("capture_output")) or (stdout is not None and "PIPE" in _code(stdout)):
            return "gives the shell's error and no output to read"
    return None


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=()).code_for_node(node)


@on_calls(NVIDIA_SMI, names=_READS | _CHECKS | _RUNS)
def _nvidia_smi(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    command = _text(arg_value(original, 0, "args" if callee.startswith("subprocess.") else "cmd"))
    if command is None or not _COMMAND.search(command) or (outcome := _outcome(original, callee)) is None:
        return updated
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
