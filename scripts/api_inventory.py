"""Write the API inventory of a target release (tests/data/api_inventory/), from the release itself.

    python scripts/api_inventory.py 2.9
        introspects the installed torch / torch_xla (run it with the interpreter that has
        torch 2.9.0 and torch_xla 2.9.0, PJRT_DEVICE=CPU is set here);
    python scripts/api_inventory.py sagemaker --xla-repo PATH --torch-wheel PATH
        reads torch_xla 1.13 from the v1.13.0 tag of a clone of pytorch/xla (``git show``)
        and torch 1.13.1 from its wheel (``pip download torch==1.13.1 --no-deps
        --python-version 3.10 --only-binary=:all: --platform manylinux1_x86_64``): parsed with
        ``ast``, never imported.

An inventory lists, for each module the tool may write or name (``MODULES``), its names
with a short form of what they are: ``module``, ``value``, a callable's parameters
(``def (a, b=, *, c=, **kwargs)``: names and kinds, ``=`` marks a default), a class's
constructor (``class (...)``) and its methods (``Class.method``), ``def ?`` where the
parameters are not known (C functions, overloads).  Beside the names: the registered
torch.distributed backends and rendezvous schemes (after importing
torch_xla.distributed.xla_backend), the autocast device types, the PJRT device types,
the torch.compile backends and xm.all_reduce's reduce types.  ``sources`` says where each part came from.
tests/targets/test_inventory.py checks the tool's output and messages against it.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codemods.targets import TARGETS  # noqa: E402

OUT = ROOT / "tests" / "data" / "api_inventory"

# The modules whose names the tool writes or its messages name (either release); a module
# a release lacks is recorded as missing.  torch modules list public names only.
MODULES = (
    "torch",
    "torch._dynamo",
    "torch._inductor",
    "torch.amp",
    "torch.cuda",
    "torch.cuda.amp",
    "torch.distributed",
    "torch.distributed.checkpoint",
    "torch.distributed.checkpoint.state_dict",
    "torch.distributed.fsdp",
    "torch.distributed.fsdp.sharded_grad_scaler",
    "torch.hub",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.parallel",
    "torch.nn.parallel.distributed",
    "torch.optim",
    "torch.utils.checkpoint",
    "torch.utils.data",
    "torch.utils.data.distributed",
    "torch.utils.model_zoo",
    "torch_xla",
    "torch_xla.amp",
    "torch_xla.amp.syncfree",
    "torch_xla.core.xla_model",
    "torch_xla.debug.metrics",
    "torch_xla.debug.profiler",
    "torch_xla.distributed.fsdp",
    "torch_xla.distributed.fsdp.wrap",
    "torch_xla.distributed.parallel_loader",
    "torch_xla.distributed.spmd",
    "torch_xla.distributed.xla_backend",
    "torch_xla.distributed.xla_multiprocessing",
    "torch_xla.experimental.custom_kernel",
    "torch_xla.experimental.pjrt",
    "torch_xla.experimental.spmd_fully_sharded_data_parallel",
    "torch_xla.runtime",
)
# Device types tried with torch.autocast, and PJRT_DEVICE values tried, on 2.9.
AUTOCAST_CANDIDATES = ("cpu", "cuda", "hpu", "mps", "xla", "xpu")
PJRT_CANDIDATES = ("CPU", "CUDA", "GPU", "NEURON", "TPU", "XPU")


def _public(module: str, name: str) -> bool:
    return not name.startswith("__") and (module.startswith("torch_xla") or not name.startswith("_"))


def _params(items: list[tuple[str, str, bool]]) -> str:
    """``(a, b=, /, c, *args, d=, **kw)`` from (name, kind, has default); kinds as inspect's."""
    out: list[str] = []
    positional_only = False
    star = False
    for name, kind, default in items:
        if kind != "POSITIONAL_ONLY" and positional_only:
            out.append("/")
            positional_only = False
        if kind == "POSITIONAL_ONLY":
            positional_only = True
        if kind == "KEYWORD_ONLY" and not star:
            out.append("*")
            star = True
        if kind == "VAR_POSITIONAL":
            star = True
            out.append(f"*{name}")
        elif kind == "VAR_KEYWORD":
            out.append(f"**{name}")
        else:
            out.append(name + ("=" if default else ""))
    if positional_only:
        out.append("/")
    return "(" + ", ".join(out) + ")"


def write(target: str, inventory: dict[str, object], folder: Path = OUT) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"torch_xla_{TARGETS[target].torch_xla_version.replace('.', '_')}.json"
    path.write_text(json.dumps(inventory, indent=1, sort_keys=True) + "\n")
    return path


# --- torch_xla 2.9: the installed release, introspected -------------------------------------------


def _signature(obj: object, skip_self: bool) -> str:
    import inspect

    try:
        signature = inspect.signature(obj)  # type: ignore[arg-type]  # obj is any attribute of a module: inspect.signature raises (caught) for what is not callable
    except (TypeError, ValueError):
        return "?"
    items = [(p.name, p.kind.name, p.default is not p.empty) for p in signature.parameters.values()]
    if skip_self and items and items[0][0] in ("self", "cls"):
        items = items[1:]
    return _params(items)


def _describe(obj: object) -> str:
    import inspect

    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class " + _signature(obj, skip_self=False)
    if callable(obj):
        return "def " + _signature(obj, skip_self=False)
    return "value"


def _introspect_module(module_name: str) -> dict[str, str] | None:
    import importlib
    import inspect

    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    names: dict[str, str] = {}
    for name in dir(module):
        if not _public(module_name, name):
            continue
        obj = getattr(module, name)
        home = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
        if isinstance(home, str) and home.split(".")[0] in sys.stdlib_module_names:
            continue  # os, typing...: the module's own helpers, not the release's API
        names[name] = _describe(obj)
        if inspect.isclass(obj) and getattr(obj, "__module__", "").startswith(module_name.split(".")[0]):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and inspect.isfunction(member):
                    names[f"{name}.{attr}"] = "def " + _signature(member, skip_self=True)
    return names


def _pjrt_device_known(device: str) -> bool:
    """Whether torch_xla has a PJRT client for ``device`` (on a machine without it the
    client fails to start, but not with "No PjRtPlugin registered")."""
    probe = "import torch_xla\ntry:\n    torch_xla.device()\nexcept Exception as e:\n    print(e)\n"
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PJRT_DEVICE": device},
    )
    return "No PjRtPlugin registered" not in result.stdout + result.stderr


def inventory_2_9() -> dict[str, object]:
    os.environ["PJRT_DEVICE"] = "CPU"
    import torch
    import torch._dynamo
    import torch.distributed as dist
    import torch_xla
    import torch_xla.core.xla_model as xm

    rendezvous = sys.modules["torch.distributed.rendezvous"]
    before_xla_backend = sorted(rendezvous._rendezvous_handlers)
    import torch_xla.distributed.xla_backend  # registers the "xla" backend (and xla://, if torch_xla has not)

    modules = {name: _introspect_module(name) for name in MODULES}

    autocast = []
    for device_type in AUTOCAST_CANDIDATES:
        try:
            with torch.autocast(device_type):
                autocast.append(device_type)
        except (RuntimeError, ValueError):
            pass
    return {
        "release": {"torch": torch.__version__, "torch_xla": torch_xla.__version__},
        "sources": {
            "all": f"introspected: torch {torch.__version__}, torch_xla {torch_xla.__version__} "
            f"(installed), Python {sys.version.split()[0]}"
        },
        "modules": {name: names for name, names in modules.items() if names is not None},
        "missing_modules": sorted(name for name, names in modules.items() if names is None),
        "distributed_backends": sorted(dist.Backend.backend_list),
        "rendezvous_schemes": sorted(rendezvous._rendezvous_handlers),
        "rendezvous_schemes_after_import_torch_xla": before_xla_backend,
        "autocast_device_types": autocast,
        "pjrt_devices": [device for device in PJRT_CANDIDATES if _pjrt_device_known(device)],
        "compile_backends": sorted(torch._dynamo.list_backends(exclude_tags=())),
        "reduce_types": sorted(getattr(xm, name) for name in dir(xm) if name.startswith("REDUCE_")),
    }


# --- torch_xla 1.13 and torch 1.13.1: sources read with ast ---------------------------------------


class SourceTree:
    """Python sources of one release, by module name: ``module -> (path, text)``."""

    def __init__(self, files: dict[str, str]):
        self.files = files  # relative path -> text

    def path_of(self, module: str) -> str | None:
        base = module.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py", f"{base}.pyi", f"{base}/__init__.pyi"):
            if candidate in self.files:
                return candidate
        return None

    def is_package(self, module: str) -> bool:
        path = self.path_of(module)
        return path is not None and "/__init__." in path

    def submodules(self, module: str) -> set[str]:
        prefix = module.replace(".", "/") + "/"
        found = set()
        for path in self.files:
            if path.startswith(prefix):
                head = path[len(prefix) :].split("/")[0]
                name = head.removesuffix(".pyi").removesuffix(".py")
                if name.isidentifier() and name != "__init__":
                    found.add(name)
        return found


class AstReader:
    """A module's names as its source defines them: functions, classes (constructor and
    methods), assignments, imports (``from x import y``, ``*``), both branches of
    ``if``/``try`` at module level."""

    def __init__(self, tree: SourceTree):
        self.tree = tree
        self.cache: dict[str, dict[str, str]] = {}
        self.in_progress: set[str] = set()

    def names(self, module: str) -> dict[str, str] | None:
        if module in self.cache:
            return self.cache[module]
        path = self.tree.path_of(module)
        if path is None or module in self.in_progress:
            return None
        self.in_progress.add(module)
        found: dict[str, str] = {name: "module" for name in self.tree.submodules(module)}
        syntax = ast.parse(self.tree.files[path])
        package = module if self.tree.is_package(module) else module.rpartition(".")[0]
        self._read(syntax.body, module, package, found, {})
        self.in_progress.discard(module)
        self.cache[module] = found
        return found

    def entry(self, qualified: str) -> str | None:
        """What ``qualified`` is, following modules and their names."""
        if self.tree.path_of(qualified) is not None:
            return "module"
        module, _, name = qualified.rpartition(".")
        while module:
            names = self.names(module)
            if names is not None:
                return names.get(name)
            module, _, head = module.rpartition(".")
            name = f"{head}.{name}"
        return None

    def _read(
        self, body: list[ast.stmt], module: str, package: str, found: dict[str, str], classes: dict[str, ast.ClassDef]
    ) -> None:
        overloaded: set[str] = set()
        for node in body:
            if isinstance(node, (ast.If, ast.Try)):
                branches = [node.body, node.orelse] + (
                    [h.body for h in node.handlers] + [node.finalbody] if isinstance(node, ast.Try) else []
                )
                for branch in branches:
                    self._read(branch, module, package, found, classes)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name in found and node.name in overloaded or _is_overload(node):
                    overloaded.add(node.name)
                    found[node.name] = "def ?"
                else:
                    found[node.name] = "def " + _ast_params(node.args, skip_self=False)
            elif isinstance(node, ast.ClassDef):
                classes[node.name] = node
                found[node.name] = "class " + self._constructor(node, module, package, found)
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_"):
                        found[f"{node.name}.{item.name}"] = "def " + _ast_params(item.args, skip_self=True)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node, package)
                if source.split(".")[0] not in ("torch", "torch_xla"):
                    continue  # typing, os...: the module's own helpers, not the release's API
                for alias in node.names:
                    if alias.name == "*":
                        names = self.names(source) or {}
                        exported = self._all(source)
                        for name, what in names.items():
                            if "." not in name and (name in exported if exported else not name.startswith("_")):
                                found[name] = what
                    else:
                        found[alias.asname or alias.name] = self.entry(f"{source}.{alias.name}") or "value"
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                what = "value"
                if value is not None:
                    referenced = _dotted(value)
                    if referenced is not None:
                        what = self._resolve_local(referenced, module, package, found) or "value"
                for target in targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = what

    def _resolve_local(self, dotted: str, module: str, package: str, found: dict[str, str]) -> str | None:
        head, _, rest = dotted.partition(".")
        if not rest:
            return found.get(head)
        if head in ("torch", "torch_xla"):
            return self.entry(dotted)
        return found.get(dotted)

    def _all(self, module: str) -> set[str]:
        path = self.tree.path_of(module)
        if path is None:
            return set()
        for node in ast.parse(self.tree.files[path]).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                try:
                    return set(ast.literal_eval(node.value))
                except ValueError:
                    return set()
        return set()

    def _constructor(self, node: ast.ClassDef, module: str, package: str, found: dict[str, str]) -> str:
        inits = [item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"]
        if len(inits) == 1 and not _is_overload(inits[0]):
            return _ast_params(inits[0].args, skip_self=True)
        if inits:
            return "?"
        for base in node.bases:
            dotted = _dotted(base)
            what = self._resolve_local(dotted, module, package, found) if dotted else None
            if what is not None and what.startswith("class "):
                return what.removeprefix("class ")
        return "?" if node.bases else "()"


def _is_overload(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_dotted(d) in ("overload", "typing.overload") for d in node.decorator_list)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def _ast_params(args: ast.arguments, skip_self: bool) -> str:
    items: list[tuple[str, str, bool]] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        kind = "POSITIONAL_ONLY" if index < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        items.append((arg.arg, kind, index >= first_default))
    if args.vararg:
        items.append((args.vararg.arg, "VAR_POSITIONAL", False))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        items.append((arg.arg, "KEYWORD_ONLY", default is not None))
    if args.kwarg:
        items.append((args.kwarg.arg, "VAR_KEYWORD", False))
    if skip_self and items and items[0][0] in ("self", "cls"):
        items = items[1:]
    return _params(items)


def _git_files(repo: Path, tag: str, prefix: str) -> Iterator[tuple[str, str]]:
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", tag, prefix],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for path in listing:
        if path.endswith((".py", ".pyi")):
            text = subprocess.run(
                ["git", "-C", str(repo), "show", f"{tag}:{path}"], capture_output=True, text=True, check=True
            ).stdout
            yield path, text


def _string_constants(text: str, where: Callable[[ast.Call], bool]) -> set[str]:
    """The first string argument of every call that ``where`` accepts."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if (
            isinstance(node, ast.Call)
            and where(node)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def _assigned_strings(text: str, prefix: str) -> set[str]:
    """The strings assigned at module level to names that start with ``prefix``."""
    return {
        node.value.value
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and any(isinstance(t, ast.Name) and t.id.startswith(prefix) for t in node.targets)
    }


def _calls_named(name: str) -> Callable[[ast.Call], bool]:
    return lambda call: (_dotted(call.func) or "").rpartition(".")[2] == name


def inventory_1_13(xla_repo: Path, torch_wheel: Path, tag: str = "v1.13.0") -> dict[str, object]:
    commit = subprocess.run(
        ["git", "-C", str(xla_repo), "rev-parse", f"{tag}^{{commit}}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    files = dict(_git_files(xla_repo, tag, "torch_xla"))
    with zipfile.ZipFile(torch_wheel) as wheel:
        for path in wheel.namelist():
            if path.startswith("torch/") and path.endswith((".py", ".pyi")):
                files[path] = wheel.read(path).decode("utf-8")
        metadata = wheel.read(next(p for p in wheel.namelist() if p.endswith(".dist-info/METADATA"))).decode()
    torch_version = re.search(r"^Version: (.+)$", metadata, re.M)
    digest = hashlib.sha256(torch_wheel.read_bytes()).hexdigest()
    tree = SourceTree(files)
    reader = AstReader(tree)
    modules = {name: reader.names(name) for name in MODULES}
    modules = {
        name: {k: v for k, v in names.items() if _public(name, k)} if names is not None else None
        for name, names in modules.items()
    }

    # Backends: torch's Backend class attributes, plus register_backend calls (torch_xla's "xla").
    distributed_c10d = files["torch/distributed/distributed_c10d.py"]
    backends: set[str] = set()
    for node in ast.walk(ast.parse(distributed_c10d)):
        if isinstance(node, ast.ClassDef) and node.name == "Backend":
            for item in node.body:
                if (
                    isinstance(item, ast.Assign)
                    and isinstance(item.value, ast.Constant)
                    and isinstance(item.value.value, str)
                    and item.targets[0].id.isupper()  # type: ignore[attr-defined]  # targets[0] of a module constant is a Name: ast's target type is expr
                ):
                    backends.add(item.value.value)
    backends |= _string_constants(files["torch_xla/distributed/xla_backend.py"], _calls_named("register_backend"))
    schemes = _string_constants(files["torch/distributed/rendezvous.py"], _calls_named("register_rendezvous_handler"))
    for path, text in files.items():
        if path.startswith("torch_xla/"):
            schemes |= _string_constants(text, _calls_named("register_rendezvous_handler"))
    # Autocast device types: the strings torch.amp.autocast.__init__ compares self.device with.
    autocast: set[str] = set()
    for node in ast.walk(ast.parse(files["torch/amp/autocast_mode.py"])):
        if (
            isinstance(node, ast.Compare)
            and _dotted(node.left) == "self.device"
            and isinstance(node.comparators[0], ast.Constant)
            and isinstance(node.comparators[0].value, str)
        ):
            autocast.add(node.comparators[0].value)
    # PJRT devices: the device types the 1.13 PJRT client starts (C++).
    client = subprocess.run(
        ["git", "-C", str(xla_repo), "show", f"{tag}:third_party/xla_client/pjrt_computation_client.cc"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pjrt = sorted(set(re.findall(r'device_type == "(\w+)"', client)))
    return {
        "release": {"torch": torch_version.group(1) if torch_version else "?", "torch_xla": tag.removeprefix("v")},
        "sources": {
            "torch_xla": f"pytorch/xla tag {tag}, commit {commit}: torch_xla/**/*.py parsed with ast "
            "(PJRT devices from third_party/xla_client/pjrt_computation_client.cc)",
            "torch": f"{torch_wheel.name} (sha256 {digest}): torch/**/*.py and *.pyi parsed with ast",
        },
        "modules": {name: names for name, names in modules.items() if names is not None},
        "missing_modules": sorted(name for name, names in modules.items() if names is None),
        "distributed_backends": sorted(backends),
        "rendezvous_schemes": sorted(schemes),
        "autocast_device_types": sorted(autocast),
        "pjrt_devices": pjrt,
        # torch.compile arrived in torch 2.0.
        "compile_backends": [],
        "reduce_types": sorted(_assigned_strings(files["torch_xla/core/xla_model.py"], "REDUCE_")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--xla-repo", type=Path, help="a clone of pytorch/xla holding the v1.13.0 tag (sagemaker)")
    parser.add_argument("--torch-wheel", type=Path, help="the torch 1.13.1 wheel (sagemaker)")
    parser.add_argument("--out", type=Path, default=OUT, help="the folder to write to (default: %(default)s)")
    args = parser.parse_args()
    if args.target == "2.9":
        inventory = inventory_2_9()
    else:
        if args.xla_repo is None or args.torch_wheel is None:
            parser.error("sagemaker needs --xla-repo and --torch-wheel")
        inventory = inventory_1_13(args.xla_repo, args.torch_wheel)
    print(write(args.target, inventory, args.out))


if __name__ == "__main__":
    main()
