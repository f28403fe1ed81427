"""The Python calls that run a shell command and what each does where the command is missing:
XLA513's question about nvidia-smi, kept out of its rule module so that the rule loads no LibCST
until a file needs it."""

from __future__ import annotations

import re

import libcst as cst

from codemods.engine.nodes import arg_value, call_args, is_true, string_value

# Python calls that run a command, and whether they read its output or raise when it fails
# (whatever their arguments).
READS = frozenset({"os.popen", "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput"})
CHECKS = frozenset({"subprocess.check_call"})
RUNS = frozenset({"subprocess.run", "subprocess.call", "subprocess.Popen"})
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
    if callee in READS or callee in CHECKS:
        if listed:
            return "raises FileNotFoundError"
        if callee in CHECKS or callee == "subprocess.check_output":
            return "raises CalledProcessError (the shell finds no such command)"
        return "gives the shell's error and no output to read (what parses it raises)"
    if callee in RUNS:
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


def runs_nvidia_smi(call: cst.Call, callee: str) -> tuple[str, str] | None:
    """The command ``call`` (a call of ``callee``, one of the calls that run a command) runs and
    what the call does on an XLA host, where that command runs nvidia-smi; None where it does not
    run it or only prints the shell's error and goes on."""
    command = _text(arg_value(call, 0, "args" if callee.startswith("subprocess.") else "cmd"))
    if command is None or not _COMMAND.search(command) or (outcome := _outcome(call, callee)) is None:
        return None
    return command, outcome
