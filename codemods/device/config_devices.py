"""A device taken from a YAML config (issue 32, an RL repository): Hydra's
``@hydra.main(config_path="config", config_name="train")`` hands ``main`` the config, which
goes on to a class of the file (``Workspace(cfg)``, kept as ``self.cfg``), and
``torch.device(cfg.device)`` reads ``device: cuda`` from config/train.yaml; ``OmegaConf.load(
"conf.yaml")`` likewise.  The tool does not rewrite config files, so on an XLA host the script
asks for CUDA: an error at the first read of each device key (XLA112), naming the file, the
key and its line, and what to set there.  A config the run cannot read (a single file whose
folder is not known, a path not written as a string, a file not there) is said to be one;
a device key the file does not hold (Hydra may compose it from its defaults list) is said
too.  A config whose device is "xla", "cpu" (the author's choice: an evaluation tool on the
CPU) or anything else that names no CUDA or MPS device gives nothing, and so does a key the
script sets itself (``cfg.device = ...``: the device values follow that)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.yaml_values import yaml_value
from codemods.engine.nodes import arg_value, dotted, string_value
from codemods.engine.walk import Analysis, Walk

if TYPE_CHECKING:
    from codemods.facts import Facts

_LOADERS = frozenset({"omegaconf.OmegaConf.load"})
_OFF_XLA = ("cuda", "mps")


@dataclass(frozen=True)
class _Source:
    """Where a config comes from: the path the script names (relative to its folder; None
    when not written as a string), and whether Hydra loads it (its keys can be set on the
    command line)."""

    path: str | None
    hydra: bool


class ConfigDeviceAnalysis(Analysis):
    facts: Facts

    name = "config_devices"
    reads = ("imports",)
    conclude_reads = ("project",)

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.in_use = False  # the file imports hydra or omegaconf
        # (scope, name) -> the config it holds; scope "" for module-level names and ``self.`` attributes
        # ("Class" for those: the class's methods share them).
        self.holders: dict[tuple[str, str], _Source] = {}
        self.positions: dict[str, list[str]] = {}  # function -> its positional parameters without self
        self.handed: list[tuple[str, str, int, str]] = []  # (scope, callee as written, position, name handed)
        self.kept: list[tuple[str, str, str]] = []  # (class, ``self.cfg``, the name kept there) in its methods
        self.device_reads: list[tuple[str, str, cst.Attribute]] = []  # (scope, the chain, its node)
        self.assigned: set[str] = set()  # the chains the file sets (``cfg.device = ...``), in any function
        # What concluding found: the read that a finding points at -> its message.
        self.broken: dict[cst.CSTNode, str] = {}

    # -- walk -------------------------------------------------------------------------------

    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
        names = [dotted(a.name) for a in node.names] if isinstance(node.names, (list, tuple)) else []
        module = dotted(node.module) if isinstance(node, cst.ImportFrom) and node.module is not None else None
        if any((name or "").split(".")[0] in ("hydra", "omegaconf") for name in (module, *names)):
            self.in_use = True

    visit_Import = _import
    visit_ImportFrom = _import

    def _scope(self) -> str:
        return self.walk.qualname if self.walk.enclosing_function is not None else ""

    def _class(self) -> str | None:
        scope = self.walk.qualname
        return scope.rsplit(".", 1)[0] if self.walk.class_depth and "." in scope else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.in_use:
            return
        positional = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        if self.walk.class_depth and positional[:1] in (["self"], ["cls"]):
            positional = positional[1:]
        self.positions[self.walk.qualname] = positional
        for decorator in node.decorators:
            call = decorator.decorator
            if type(call) is cst.Call and self.walk.resolve(call.func) == "hydra.main" and positional:
                self.holders[(self.walk.qualname, positional[0])] = _Source(_hydra_path(call), True)

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.in_use:
            return
        scope = self._scope()
        for target in node.targets:
            name = dotted(target.target)
            if name is None:
                continue
            self.assigned.add(name)
            value = node.value
            if type(value) is cst.Call and self.walk.resolve(value.func) in _LOADERS:
                self.holders[("" if "." in name else scope, name)] = _Source(
                    string_value(arg_value(value, 0, "file_")), False
                )
            elif name.startswith("self.") and (cls := self._class()) is not None and type(value) is cst.Name:
                self.kept.append((cls, name, value.value))

    def visit_Call(self, node: cst.Call) -> None:
        if not self.in_use or (callee := dotted(node.func)) is None:
            return
        for index, arg in enumerate(node.args):
            if arg.keyword is None and not arg.star and (handed := dotted(arg.value)) is not None:
                self.handed.append((self._scope(), callee, index, handed))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.in_use and _device_key(node.attr.value) and (chain := dotted(node)) is not None:
            self.device_reads.append((self._scope(), chain, node))

    # -- results ----------------------------------------------------------------------------

    def conclude(self) -> None:
        if not self.holders:
            return
        self._follow()
        said: set[tuple[_Source, str]] = set()
        for scope, chain, node in self.device_reads:
            found = self._holder(scope, chain)
            if found is None or chain in self.assigned:
                continue
            holder, source = found
            key = chain.removeprefix(holder + ".")
            if (source, key) in said:
                continue
            said.add((source, key))
            message = self._message(chain, key, source)
            if message is not None:
                self.broken[node] = message

    def _follow(self) -> None:
        """The config handed on, by position, to functions and classes of the file, and kept
        on ``self`` in their methods, until nothing more holds it."""
        grew = True
        while grew:
            grew = False
            for scope, callee, index, name in self.handed:
                source = self.holders.get((scope, name)) or self.holders.get(("", name))
                function = self._function(scope, callee)
                params = self.positions.get(function or "", [])
                if source is not None and function is not None and index < len(params):
                    grew |= self._hold((function, params[index]), source)
            for cls, attribute, name in self.kept:
                for (scope, held), source in list(self.holders.items()):
                    if held == name and scope.rsplit(".", 1)[0] == cls:
                        grew |= self._hold((cls, attribute), source)

    def _hold(self, key: tuple[str, str], source: _Source) -> bool:
        if key in self.holders:
            return False
        self.holders[key] = source
        return True

    def _function(self, scope: str, callee: str) -> str | None:
        """The function of this file a call in ``scope`` runs (a class: its ``__init__``)."""
        if callee.startswith("self.") and "." in scope:
            callee = f"{scope.rsplit('.', 1)[0]}.{callee.removeprefix('self.')}"
        for name in (callee, f"{callee}.__init__"):
            if name in self.positions:
                return name
        return None

    def _holder(self, scope: str, chain: str) -> tuple[str, _Source] | None:
        """The config that ``chain`` (``self.cfg.device``) reads a key of: (the holder as
        written, its source)."""
        parts = chain.split(".")
        scopes = [scope, ""] + ([scope.rsplit(".", 1)[0]] if "." in scope and chain.startswith("self.") else [])
        for cut in range(len(parts) - 1, 0, -1):
            holder = ".".join(parts[:cut])
            source = next((self.holders[(s, holder)] for s in scopes if (s, holder) in self.holders), None)
            if source is not None:
                return holder, source
        return None

    def _message(self, chain: str, key: str, source: _Source) -> str | None:
        what = "the Hydra config" if source.hydra else "the config"
        override = f" (or run the script with `{key}=xla`)" if source.hydra else ""
        todo = f"set `{key}: xla` there{override}, with torch_xla imported (it registers that device)"
        read = self.facts.project.context.config_file(source.path) if source.path is not None else None
        if read is None:
            named = f" {source.path}" if source.path is not None else ""
            return (
                f"`{chain}` comes from {what}{named}, which this run did not read, and the tool does not rewrite "
                f"config files: if it names CUDA (`{key}: cuda`), on an XLA host the script asks for a CUDA device "
                f"there is none of; {todo}"
            )
        path, text = read
        found = yaml_value(text, key.split("."))
        if found is None:
            return (
                f"`{chain}` comes from {what} {path}, which holds no `{key}` the tool can read (a file its defaults "
                f"list names may set it): if it names CUDA, on an XLA host the script asks for a CUDA device there "
                f"is none of; make sure it is `xla`{override}"
            )
        value, line = found
        if value.split(":")[0].lower() not in _OFF_XLA:
            return None
        return (
            f"`{chain}` is `{value}` in {what} {path} (`{key}`, line {line}), which the tool does not rewrite: on an "
            f"XLA host the script asks for a device there is none of; {todo}"
        )


def _hydra_path(call: cst.Call) -> str | None:
    """The config file ``@hydra.main(...)`` loads, relative to the script's folder: its
    ``config_path`` (a file, in Hydra before 1.0, or a folder) joined with ``config_name``."""
    folder = arg_value(call, 0, "config_path")
    name = arg_value(call, 1, "config_name")
    folder_text = string_value(folder) if folder is not None else ""
    name_text = string_value(name) if name is not None else ""
    if folder_text is None or name_text is None:
        return None
    if not name_text:
        return folder_text if folder_text.endswith((".yaml", ".yml")) else None
    name_text = name_text if name_text.endswith((".yaml", ".yml")) else f"{name_text}.yaml"
    return "/".join(p.strip("/") for p in (folder_text, name_text) if p.strip("/") not in ("", "."))


def _device_key(key: str) -> bool:
    """A config key that names a device (``device``, ``train_device``), not a ``device_map``."""
    return key in ("device", "dev") or key.endswith("_device")
