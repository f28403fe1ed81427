"""Quick textual scans of a file's bytes, read before (or instead of) parsing it: the imports
it asks for, whether it names an FSDP wrapper, whether it takes a training step, and which names
it calls under a rank check."""

from __future__ import annotations

import re
from collections.abc import Iterator

from codemods.project.import_context import outside_project

# A line that may test the rank (what calls_under_rank_checks parses a file for): an ``if`` on a
# name that says one of these words (distributed/ranks.py's RANK_WORDS), in any case.
_RANK_WORDS = (b"rank", b"master", b"main_process", b"is_main", b"ordinal", b"gpu_id", b"process_index")
RANK_CHECK = re.compile(rb"^\s*(?:el)?if\b[^\n]*(?:" + b"|".join(_RANK_WORDS) + b")", re.IGNORECASE | re.MULTILINE)

_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w., \t]*)|import[ \t]+([\w., \t]+))", re.MULTILINE
)


def import_requests(data: bytes) -> Iterator[tuple[str, str]]:
    """The ``(module, name)`` pairs a file's imports ask for (a quick textual scan), torch's left out."""
    for module, names, plain in _import_lines(data):
        if plain:
            requests = [(m.split()[0].decode(), "") for m in plain.split(b",") if m.strip()]
        else:
            requests = [(module.decode(), n.split()[0].decode()) for n in names.split(b",") if n.strip()] or [
                (module.decode(), "")
            ]
        yield from (request for request in requests if not outside_project(request[0]))


def _import_lines(data: bytes) -> Iterator[tuple[bytes, bytes, bytes]]:
    """What ``_IMPORT.findall(data)`` finds, tried only at the start of the lines that say ``import``
    (each match is within one line, and says it): a regular expression that starts with ``^``
    is tried at every byte, which costs more than finding the word."""
    at = data.find(b"import")
    while at != -1:
        found = _IMPORT.match(data, data.rfind(b"\n", 0, at) + 1)
        if found is not None:
            module, names, plain = found.groups(b"")
            yield module, names, plain
        end = data.find(b"\n", at)
        at = -1 if end == -1 else data.find(b"import", end)


def wraps_fsdp(data: bytes) -> bool:
    """The file names torch's or torch_xla's FSDP wrapper (a quick textual scan, as for
    the imports: its steps' optimizers may be handed to the files it imports)."""
    return b"FullyShardedDataParallel" in data or b"fully_shard" in data


# Calls that take a training step (a backward pass, an optimizer's step or its zero_grad): a file
# that makes one is parsed even if it never names torch (its model and optimizer come from
# other modules: SPADE's trainers), and so is a file that imports one (its loop drives the step).
# ``.step()`` without arguments: an environment's ``env.step(action)`` (gym wrappers, many files
# without torch in RL repositories) is no reason to parse.
_TRAINING_CALLS = (b".backward(", b".step()", b"zero_grad(")


# Other deep-learning frameworks: a file without torch that imports one of them trains with its
# optimizers and tensors (a PaddlePaddle trainer's ``loss.backward(); optimizer.step()``), not torch's.
_OTHER_FRAMEWORKS = frozenset(
    {"paddle", "tensorflow", "keras", "jax", "flax", "mindspore", "oneflow", "mxnet", "jittor", "megengine"}
)


def takes_a_training_step(data: bytes) -> bool:
    """The file calls ``.backward(``, ``.step()`` or ``zero_grad(`` (a quick textual scan), and
    imports no other deep-learning framework (its steps would be that framework's)."""
    return any(call in data for call in _TRAINING_CALLS) and not imports_another_framework(data)


def imports_another_framework(data: bytes) -> bool:
    """The file imports PaddlePaddle, TensorFlow, JAX, MindSpore, OneFlow, ... (a quick textual scan)."""
    for module, _, plain in _import_lines(data):
        modules = [module] if module else [m.split()[0] for m in plain.split(b",") if m.strip()]
        if any(m.split(b".")[0].decode() in _OTHER_FRAMEWORKS for m in modules):
            return True
    return False


def tests_the_rank(data: bytes) -> bool:
    """Some line of the file may test the rank (RANK_CHECK).  The expression, which starts with
    ``^``, is tried at every byte: only when the file says one of its words (ASCII letters in any
    case, as RANK_CHECK reads them)."""
    lowered = data.lower()
    return any(word in lowered for word in _RANK_WORDS) and RANK_CHECK.search(data) is not None


def calls_under_rank_checks(data: bytes) -> set[str]:
    """The names a file calls in the body of an ``if`` on the rank (``if rank == 0:
    save_checkpoint(...)``, ``misc.save_on_master(...)``: the callee's last name), as the
    distributed analysis tells a rank check (a name of its test says rank, master, ...)."""
    import libcst as cst

    from codemods.distributed.ranks import RANK_WORDS, run_there
    from codemods.engine.nodes import dotted, names_in, walk

    try:
        module = cst.parse_module(data)
    except (cst.ParserSyntaxError, RecursionError, UnicodeDecodeError):
        return set()
    found: set[str] = set()
    calls_in: dict[str, set[str]] = {}  # what the file's functions call (run_there)
    for node in walk(module):
        if type(node) is cst.FunctionDef:
            calls_in.setdefault(node.name.value, set()).update(
                name.rsplit(".", 1)[-1]
                for call in walk(node.body)
                if type(call) is cst.Call and (name := dotted(call.func))
            )
        if type(node) is not cst.If or not any(word in n.lower() for n in names_in(node.test) for word in RANK_WORDS):
            continue
        for call in walk(node.body):
            if type(call) is cst.Call and (name := dotted(call.func)) is not None:
                found.add(name.rsplit(".", 1)[-1])
    return run_there(found, calls_in)


# torch.utils.cpp_extension's descriptions of an extension module that setuptools builds.
_EXTENSION_CLASSES = frozenset({"CUDAExtension", "CppExtension"})


def built_extensions(data: bytes) -> list[str]:
    """The dotted names of the extension modules a ``setup.py`` builds with
    torch.utils.cpp_extension (``CUDAExtension(name="pointnet2._ext", sources=[...])``, or the
    name first: ``CppExtension("ops._C", [...])``); a name the file does not write as a string
    is not known.  A name the file binds to one of the classes is one too (``extension =
    CppExtension``, then ``extension = CUDAExtension`` where CUDA is found: ``extension("ops._C", ...)``)."""
    if not any(kind.encode() in data for kind in _EXTENSION_CLASSES):
        return []
    import libcst as cst

    from codemods.engine.nodes import arg_value, dotted, string_value, walk

    try:
        module = cst.parse_module(data)
    except (cst.ParserSyntaxError, RecursionError, UnicodeDecodeError):
        return []
    classes = set(_EXTENSION_CLASSES)
    for node in walk(module):
        if (
            type(node) is cst.Assign
            and len(node.targets) == 1
            and type(node.targets[0].target) is cst.Name
            and (dotted(node.value) or "").rsplit(".", 1)[-1] in _EXTENSION_CLASSES
        ):
            classes.add(node.targets[0].target.value)
    found: list[str] = []
    for node in walk(module):
        if type(node) is cst.Call and (dotted(node.func) or "").rsplit(".", 1)[-1] in classes:
            name = string_value(arg_value(node, 0, "name"))
            if name and all(part.isidentifier() for part in name.split(".")):
                found.append(name)
    return found
