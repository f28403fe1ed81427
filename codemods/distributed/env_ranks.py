"""The module functions whose code, as converted, still takes the rank or world size from the
variables torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE): the reads the rank
rules could not port (a loop over the names of several launchers, ``for v in ('SLURM_PROCID',
'RANK'): if v in os.environ: ...``; a check ``'WORLD_SIZE' in os.environ`` in a helper module),
and the module functions that call such a function.  torch_xla.launch sets none of them, so
under it each of those functions answers rank 0 of 1 in every process.  A quick scan of the
converted text with Python's own parser (kept in the module's summary for the script that
launches the processes: XLA603)."""

from __future__ import annotations

import ast

# The variables torchrun / torch.distributed.launch set in each process (ranks.ENV_CONCEPTS).
LAUNCHER_VARIABLES = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"})
_READ_METHODS = frozenset({"get", "getenv", "pop"})
# Calls of another reader followed at most this deep among the module's functions.
_MAX_CALL_HOPS = 4


def env_rank_readers(text: str | bytes, loops_only: bool = False) -> tuple[tuple[str, str], ...]:
    """``(function, what it reads)`` for each module-level function that reads one of the
    launcher's variables from the environment (``what``: the variables, ``RANK, WORLD_SIZE``),
    or calls such a function of the module (``what``: ``WORLD_SIZE through `world_info```).
    ``loops_only``: count only the reads of a loop over the variables' names, the form the rank
    rules leave (for a module not yet converted, whose other reads XLA602 ports)."""
    raw = text.encode() if isinstance(text, str) else text
    if b"environ" not in raw and b"getenv" not in raw:
        return ()
    if not any(name.encode() in raw for name in LAUNCHER_VARIABLES):
        return ()
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError):
        return ()
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: dict[str, str] = {}
    for name, function in functions.items():
        variables = _read_variables(function, loops_only)
        if variables:
            found[name] = ", ".join(sorted(variables))
    for _ in range(_MAX_CALL_HOPS):
        added = False
        for name, function in functions.items():
            if name in found:
                continue
            callee = next((c for c in _called_names(function) if c in found and c != name), None)
            if callee is not None:
                found[name] = f"{found[callee].split(' through ')[0]} through `{callee}`"
                added = True
        if not added:
            break
    return tuple(sorted(found.items()))


def _read_variables(function: ast.AST, loops_only: bool) -> list[str]:
    """The launcher's variables the function reads from the environment."""
    if not any(_is_environ(n) or _is_getenv(n) for n in ast.walk(function)):
        return []
    read: dict[str, None] = {}
    for node in ast.walk(function):
        if loops_only and not isinstance(node, (ast.For, ast.comprehension)):
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            names = [_launcher_variable(node.slice)]
        elif isinstance(node, ast.Call) and node.args and _reads_by_call(node.func):
            names = [_launcher_variable(node.args[0])]
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            names = [_launcher_variable(node.left)] if _is_environ(node.comparators[0]) else []
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, (ast.Tuple, ast.List)):
            # ``for v in ('SLURM_PROCID', 'RANK'): if v in os.environ: ...``
            names = [_launcher_variable(e) for e in node.iter.elts]
        else:
            continue
        read.update(dict.fromkeys(n for n in names if n is not None))
    return list(read)


def _called_names(function: ast.AST) -> list[str]:
    return [n.func.id for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def _launcher_variable(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in LAUNCHER_VARIABLES:
        return node.value
    return None


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def _is_getenv(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "getenv") or (
        isinstance(node, ast.Name) and node.id == "getenv"
    )


def _reads_by_call(func: ast.AST) -> bool:
    """``os.environ.get(...)``, ``environ.pop(...)``, ``os.getenv(...)``."""
    if _is_getenv(func):
        return True
    return isinstance(func, ast.Attribute) and func.attr in _READ_METHODS and _is_environ(func.value)
