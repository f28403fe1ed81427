"""A device taken from a YAML config (issue 32, an RL repository): Hydra's
``@hydra.main(config_path="config", config_name="train")`` hands ``main`` the config, which
goes on to a class of the file (``Workspace(cfg)``, kept as ``self.cfg``), and
``torch.device(cfg.device)`` reads ``device: cuda`` from config/train.yaml; ``OmegaConf.load(
"conf.yaml")`` and PyYAML's loaders (``yaml.safe_load(open(path))``, the path a string, a name
or an argparse default; YAML text the script writes) likewise; keys read as attributes,
subscripts or ``get`` calls, and followed through Hydra's defaults list into its config
groups.  The tool does not rewrite config files, so on an XLA host the script asks for CUDA:
an error at the first read of each device key (XLA112), naming the file, the key and its
line, and what to set there (an accelerator key, ``accelerator: gpu``, only where the config
is read and names one).  A config the run cannot read (a single file whose folder is not
known, a path not written as a string, a file not there) is said to be one; a device key
that neither the file nor the files its defaults list picks hold is said too.  A config whose device is "xla", "cpu" (the author's choice: an evaluation tool on the
CPU) or anything else that names no CUDA or MPS device gives nothing, and so does a key the
script sets itself (``cfg.device = ...``: the device values follow that).

The config is followed into the classes and functions of the file it is handed to by their
names, by a name assigned them (``W = Workspace``) and by an import of the script's own module
(``from train import Workspace as W`` in train.py, which the script's folder makes itself).  A
key that a call handed the config before the read sets (``cfg = setup_gpu(cfg)``, a helper of
another module that does ``cfg.device = ...``) is what is read, not the config's: where that
helper's device ends after the port (its module's summary) decides the finding.  The keys that
interpolate the device key (``agent: {device: ${device}}``) are named with it.

ruamel.yaml loads one too (``YAML(typ="safe").load(stream)``, its older ``safe_load``), the stream
a file beside the script (``(Path(sys.argv[0]).parent / "configs.yaml").read_text()``); and a
script may make its flags from a loaded config's keys (``for key, value in cfg.items():
parser.add_argument(f"--{key}", default=value)``): the namespace its parser returns holds that
config, a key read in it looked up at the file's top or under its ``defaults`` section (where
such scripts keep the defaults that named sections override).

A config whose file is chosen at run time (``OmegaConf.load(args.cfg_path)``, or a config handed
in to a module that loads none itself: ``torch.device(self.config.run_cfg.device)`` in a runner
given ``cfg``, read through a name that holds a config) may be any of the project's YAML files,
which the project reads once per run: where some set the key to CUDA (``run: {device: cuda}``),
the read is an error naming how many and one or two of them; nothing where none does, or where
the file makes that config itself (``config = ckpt["config"]``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.config_messages import ConfigSource, device_message
from codemods.device.config_shapes import (
    beside_the_script,
    config_chain,
    device_key,
    hydra_path,
    index_key,
    named_off_xla_configs,
    off_xla_configs,
    read_key,
)
from codemods.device.yaml_values import (
    hydra_defaults,
    is_global_package,
    yaml_scalars,
    yaml_source,
)
from codemods.engine.nodes import arg_value, call_args, dotted, flag_dest, method_name, string_value
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis, Walk
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.facts import Facts

_LOADERS = frozenset({"omegaconf.OmegaConf.load"})
# Hydra's instantiation: the section's keys (but ``_target_``) become the arguments of the
# callable its ``_target_`` names.
_INSTANTIATES = frozenset({"hydra.utils.instantiate", "hydra.utils.call"})
# PyYAML's loaders, handed an open file (``yaml.safe_load(open(path))``, ``yaml.load(f, Loader=...)``).
_YAML_LOADERS = frozenset(
    {
        "yaml.safe_load",
        "yaml.load",
        "yaml.full_load",
        "yaml.unsafe_load",
        "ruamel.yaml.safe_load",
        "ruamel.yaml.load",
        "ruamel.yaml.round_trip_load",
    }
)
# ruamel.yaml's loader object: ``YAML(typ="safe").load(stream)``.
_YAML_OBJECT = "ruamel.yaml.YAML"
_PARSE_CALLS = ("parse_args", "parse_known_args")
# A name that holds a config (``cfg``, ``self.config``, ``run_cfg``, ``model_conf``): a device read
# through it with no config the file loads may come from a config file chosen at run time.
_CONFIG_NAME = re.compile(r"(?:^|_)(?:cfg|cfgs|conf|config|configs)(?:_|$)")


@dataclass(frozen=True)
class _Handed:
    """A name handed to a call by position: in ``scope``, ``callee`` as written (and as the
    imports resolve it: ``W`` of ``from train import Workspace as W``), the argument's index,
    the name, and when (the walk's order: a key set by a call before a read is what it reads)."""

    scope: str
    callee: str
    resolved: str | None
    index: int
    name: str
    order: int
    call: cst.Call


class ConfigDeviceAnalysis(Analysis):
    facts: Facts

    name = "config_devices"
    reads = ("imports",)
    conclude_reads = ("project",)

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.in_use = False  # the file imports hydra, omegaconf or yaml
        # (scope, name) -> the config it holds; scope "" for module-level names and ``self.`` attributes
        # ("Class" for those: the class's methods share them).
        self.holders: dict[tuple[str, str], ConfigSource] = {}
        self.positions: dict[str, list[str]] = {}  # function -> its positional parameters without self
        self.handed: list[_Handed] = []
        # The calls a holder was handed to before it was handed on (the holder in the callee ->
        # those calls): a call of the project that sets a key (``setup_gpu(cfg)``) is followed.
        self.handed_before: dict[tuple[str, str], tuple[_Handed, ...]] = {}
        self.aliases: dict[str, str] = {}  # ``W = Workspace``: W -> Workspace
        self.order = 0  # the walk's order of the calls handed a name and of the reads
        self.kept: list[tuple[str, str, str]] = []  # (class, ``self.cfg``, the name kept there) in its methods
        # (scope, the chain, its node: ``cfg.device``, ``cfg["device"]``, ``cfg.get("device")``, its order)
        self.device_reads: list[tuple[str, str, cst.BaseExpression, int]] = []
        self.strings: dict[str, str] = {}  # a name the file sets to a string once (``CONFIG = "conf.yaml"``)
        self.flag_defaults: dict[str, str] = {}  # an argparse flag's string default (``args.config``)
        self.opened: dict[str, cst.BaseExpression] = {}  # ``with open(path) as f``: f -> path
        self.parameters: set[tuple[str, str]] = set()  # (function, parameter)
        self.targets: set[int] = set()  # the chains assigned to, which are no reads
        self.assigned: set[str] = set()  # the chains the file sets (``cfg.device = ...``), in any function
        self.assigned_in: set[tuple[str, str]] = set()  # (scope, chain) of those
        # The chains the file sets to what is no name (``config = ckpt["config"]``): made here,
        # not handed in.
        self.made: set[str] = set()
        self.yaml_objects: set[str] = set()  # names bound to ruamel's ``YAML(...)``
        # Parsers whose flags are a loaded config's keys (``for key, value in cfg.items():
        # parser.add_argument(f"--{key}", default=value)``): (scope, parser) -> the config.
        self.key_parsers: dict[tuple[str, str], ConfigSource] = {}
        # What concluding found: the read that a finding points at -> its message.
        self.broken: dict[cst.CSTNode, str] = {}
        # ``hydra.utils.instantiate(cfg.agent)``: (scope, the section's chain, the call, its order); the
        # section's device keys reach the class its ``_target_`` names as arguments.
        self.instantiated: list[tuple[str, str, cst.Call, int]] = []

    # -- walk -------------------------------------------------------------------------------

    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
        names = [dotted(a.name) for a in node.names] if isinstance(node.names, (list, tuple)) else []
        module = dotted(node.module) if isinstance(node, cst.ImportFrom) and node.module is not None else None
        if any((name or "").split(".")[0] in ("hydra", "omegaconf", "yaml", "ruamel") for name in (module, *names)):
            self.in_use = True

    visit_Import = _import
    visit_ImportFrom = _import

    def _scope(self) -> str:
        return self.walk.qualname if self.walk.enclosing_function is not None else ""

    def _class(self) -> str | None:
        scope = self.walk.qualname
        return scope.rsplit(".", 1)[0] if self.walk.class_depth and "." in scope else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        positional = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        self.parameters.update((self.walk.qualname, name) for name in positional)
        if not self.in_use:
            return
        if self.walk.class_depth and positional[:1] in (["self"], ["cls"]):
            positional = positional[1:]
        self.positions[self.walk.qualname] = positional
        for decorator in node.decorators:
            call = decorator.decorator
            if type(call) is cst.Call and self.walk.resolve(call.func) == "hydra.main" and positional:
                self.holders[(self.walk.qualname, positional[0])] = ConfigSource(hydra_path(call), True)

    def visit_Assign(self, node: cst.Assign) -> None:
        scope = self._scope()
        for target in node.targets:
            name = config_chain(target.target)
            if name is None:
                continue
            self.targets.add(id(target.target))  # (set, not read)
            if not (self.walk.conds and device_key(name.rsplit(".", 1)[-1])):
                self.assigned.add(
                    name
                )  # (set under an `if`, as on one branch: the config's value is read on the other)
            self.assigned_in.add((scope, name))
            handed = config_chain(node.value)  # ``config = params["config"]``: part of a parameter, handed in
            if dotted(node.value) is None and (handed is None or (scope, handed.split(".")[0]) not in self.parameters):
                self.made.add(name)
            if not self.in_use:
                continue
            value = node.value
            if type(target.target) is cst.Name and type(value) is cst.Name:
                self.aliases[name] = value.value
            loaded = self._loaded(value) if type(value) is cst.Call else None
            if type(value) is cst.SimpleString and (text := string_value(value)) is not None:
                self.strings[name] = text
            if type(value) is cst.Call and self.walk.resolve(value.func) == _YAML_OBJECT:
                self.yaml_objects.add(name)
            if loaded is None and type(value) is cst.Call:
                loaded = self._parsed(value)
            if loaded is not None:
                self.holders[("" if "." in name else scope, name)] = loaded
            elif name.startswith("self.") and (cls := self._class()) is not None and type(value) is cst.Name:
                self.kept.append((cls, name, value.value))

    def _loaded(self, call: cst.Call) -> ConfigSource | None:
        """The config that a call loads (``OmegaConf.load(path)``, ``yaml.safe_load(open(path))``,
        ``yaml.load(f)`` after ``with open(path) as f``, ``yaml.safe_load(TEXT)`` of YAML text the
        script writes); None if the call loads none."""
        loader = self.walk.resolve(call.func)
        if method_name(call) == "load" and type(call.func) is cst.Attribute:
            owner = call.func.value
            if (type(owner) is cst.Call and self.walk.resolve(owner.func) == _YAML_OBJECT) or (
                dotted(owner) in self.yaml_objects
            ):
                loader = "ruamel.yaml.load"
        if loader in _LOADERS:
            return ConfigSource(self._path(arg_value(call, 0, "file_")), False)
        if loader not in _YAML_LOADERS or (stream := arg_value(call, 0, "stream")) is None:
            return None
        if type(stream) is cst.Call and dotted(stream.func) == "open":
            return ConfigSource(self._path(arg_value(stream, 0, "file")) or beside_the_script(stream), False)
        if type(stream) is cst.Name and stream.value in self.opened:
            return ConfigSource(self._path(self.opened[stream.value]), False)
        if (beside := beside_the_script(stream)) is not None:
            return ConfigSource(beside, False)
        text = string_value(stream) if type(stream) is cst.SimpleString else self.strings.get(dotted(stream) or "")
        return ConfigSource(None, False, text)

    def _parsed(self, call: cst.Call) -> ConfigSource | None:
        """The config whose keys the flags of the parser that ``call`` parses are."""
        if method_name(call) not in _PARSE_CALLS or type(call.func) is not cst.Attribute:
            return None
        parser = dotted(call.func.value)
        if parser is None:
            return None
        return self.key_parsers.get((self._scope(), parser)) or self.key_parsers.get(("", parser))

    def _path(self, path: cst.BaseExpression | None) -> str | None:
        """A config path written as a string, a name set to one, or a flag's default."""
        if (text := string_value(path)) is not None:
            return text
        name = dotted(path) if path is not None else None
        if name is None:
            return None
        if name in self.strings:
            return self.strings[name]
        return self.flag_defaults.get(name.rsplit(".", 1)[-1]) if "." in name else None

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if (
                type(call) is cst.Call
                and dotted(call.func) == "open"
                and item.asname is not None
                and type(item.asname.name) is cst.Name
                and (path := arg_value(call, 0, "file")) is not None
            ):
                self.opened[item.asname.name.value] = path

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if (key := index_key(node)) is not None and read_key(key):
            self._read(node)

    def visit_Call(self, node: cst.Call) -> None:
        if method_name(node) == "get" and read_key(string_value(arg_value(node, 0, "key")) or ""):
            self._read(node)
        if not self.in_use:
            return
        if method_name(node) == "add_argument" and "default" in (keywords := call_args(node)[1]):
            default = string_value(keywords["default"].value)
            if default is not None and (dest := flag_dest(node)) is not None:
                self.flag_defaults[dest] = default
            self._key_flags(node)
        if (callee := dotted(node.func)) is None:
            return
        resolved = self.walk.resolve(node.func)
        if resolved in _INSTANTIATES and (section := arg_value(node, 0, "config")) is not None:
            if (chain := config_chain(section)) is not None and "." in chain:
                self.order += 1
                self.instantiated.append((self._scope(), chain, node, self.order))
        for index, arg in enumerate(node.args):
            handed = None
            if arg.keyword is None and not arg.star and (handed := dotted(arg.value)) is not None:
                pass
            elif arg.keyword is None and type(arg.value) is cst.Call and (parsed := self._parsed(arg.value)):
                # ``main(parser.parse_args(remaining))``: the namespace handed on as it is made
                handed = f"<{self.walk.resolve(arg.value.func) or dotted(arg.value.func)}>"
                self.holders[(self._scope(), handed)] = parsed
            if handed is not None:
                self.order += 1
                self.handed.append(_Handed(self._scope(), callee, resolved, index, handed, self.order, node))

    def _key_flags(self, node: cst.Call) -> None:
        """``parser.add_argument(f"--{key}", default=...)`` in ``for key, value in X:`` (a
        loop over a config's items) with one config loaded in this scope or at module level:
        the parser's flags are that config's keys."""
        flag = arg_value(node, 0, "name")
        loop = next((n for n in reversed(self.walk.loops) if type(n) is cst.For), None)
        if (
            type(flag) is not cst.FormattedString
            or loop is None
            or type(node.func) is not cst.Attribute
            or (parser := dotted(node.func.value)) is None
        ):
            return
        keys = [e.value for e in loop.target.elements] if type(loop.target) is cst.Tuple else [loop.target]
        if not keys or type(keys[0]) is not cst.Name:
            return
        parts = [p for p in flag.parts if not (type(p) is cst.FormattedStringText and p.value.strip("-") == "")]
        if len(parts) != 1 or type(parts[0]) is not cst.FormattedStringExpression:
            return
        if dotted(parts[0].expression) != keys[0].value:
            return
        scope = self._scope()
        loaded = {source for (s, _), source in self.holders.items() if s in (scope, "") and not source.hydra}
        if len(loaded) == 1:
            self.key_parsers[(scope, parser)] = replace(loaded.pop(), flags=True)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if read_key(node.attr.value):
            self._read(node)

    def _read(self, node: cst.BaseExpression) -> None:
        if id(node) not in self.targets and (chain := config_chain(node)) is not None:
            self.order += 1
            self.device_reads.append((self._scope(), chain, node, self.order))

    # -- results ----------------------------------------------------------------------------

    def conclude(self) -> None:
        if not self.device_reads and not self.instantiated:
            return
        self._follow()
        said: set[tuple[ConfigSource, str]] = set()
        said_set: set[str] = set()
        said_at_run_time: set[str] = set()
        sections = {call: section for _, section, call, _ in self.instantiated}
        for scope, chain, node, order in [*self.device_reads, *self._instantiated_keys()]:
            if chain in self.assigned:
                continue
            found = self._holder(scope, chain)
            if found is None:  # in a file that loads no config itself: one handed in, perhaps
                key = chain.rsplit(".", 1)[-1]
                if (
                    not self.holders
                    and key not in said_at_run_time
                    and (message := self._chosen_at_run_time(chain)) is not None
                ):
                    said_at_run_time.add(key)
                    self.broken[node] = message
                continue
            held, holder, source = found
            key = chain.removeprefix(holder + ".")
            setters = (*self._handed_to(scope, holder, order), *self.handed_before.get(held, ()))
            set_here = self._set_in_code(chain, key, setters)
            if set_here is not None:
                if set_here and set_here not in said_set:  # once per helper and key
                    said_set.add(set_here)
                    self.broken[node] = set_here
                continue
            call = node if type(node) is cst.Call else None
            section = sections.get(call) if call is not None else None
            if (source, key) in said or (section is not None and (source, self._held_key(source, key)) in said):
                continue  # (an instantiated section's key that interpolates one already named)
            said.add((source, key))
            message = device_message(self.facts.project.context, chain, key, source)
            if message is not None and call is not None and section is not None:
                if node in self.broken:
                    continue  # one finding per call: its first device key
                message = self._instantiating(call, section, source) + message
            if message is not None:
                self.broken[node] = message + self._unread_setter(setters)

    def _instantiated_keys(self) -> list[tuple[str, str, cst.BaseExpression, int]]:
        """The device keys that ``hydra.utils.instantiate(cfg.agent)`` hands the class its
        section's ``_target_`` names, as reads at the call (``cfg.agent.device``): those the
        section of the config, or the file of its config group that the defaults list picks,
        holds, but not a key the call sets itself (``device=...``)."""
        reads: list[tuple[str, str, cst.BaseExpression, int]] = []
        for scope, section, call, order in self.instantiated:
            found = self._holder(scope, f"{section}._target_")
            read = self._config_text(found[2]) if found is not None else None
            if found is None or read is None:
                continue
            keys = section.removeprefix(found[1] + ".").split(".")
            overridden = set(call_args(call)[1])
            for path, _, _ in _section_scalars(read[1], keys, self._group_text(found[2], read[1], keys)):
                if device_key(path[-1]) and path[len(keys)] not in overridden:
                    reads.append((scope, ".".join([section, *path[len(keys) :]]), call, order))
        return reads

    def _config_text(self, source: ConfigSource) -> tuple[str, str] | None:
        if source.text is not None:
            return "that the script loads", source.text
        return self.facts.project.context.config_file(source.path) if source.path is not None else None

    def _group_text(self, source: ConfigSource, text: str, keys: list[str]) -> str | None:
        """The text of the config group file that the defaults list picks for the section
        ``keys`` (``defaults: [agent: drq]`` and agent/drq.yaml), its keys at its root."""
        if not source.hydra or source.path is None:
            return None
        folder = source.path.rsplit("/", 1)[0] if "/" in source.path else ""
        for group, option, _ in hydra_defaults(text):
            if group is None or group.split("/") != keys:
                continue
            relative = f"{group}/{option}" if option.endswith((".yaml", ".yml")) else f"{group}/{option}.yaml"
            read = self.facts.project.context.config_file(f"{folder}/{relative}" if folder else relative)
            if read is not None and not is_global_package(read[1]):
                return read[1]
        return None

    def _held_key(self, source: ConfigSource, key: str) -> str:
        """The key that holds the value read at ``key`` (``agent.device``: ``device`` where it is
        ``${device}``)."""
        read = self._config_text(source)
        held = yaml_source(read[1], key.split(".")) if read is not None else None
        return ".".join(held[2]) if held is not None else key

    def _instantiating(self, call: cst.Call, section: str, source: ConfigSource) -> str:
        """How the section's keys reach code: ``hydra.utils.instantiate(cfg.agent)`` builds its ``_target_``."""
        read = self._config_text(source)
        keys = section.split(".")[1:]
        scalars = _section_scalars(read[1], keys, self._group_text(source, read[1], keys)) if read is not None else []
        target = next((f"`{value}`" for path, value, _ in scalars if path == [*keys, "_target_"]), None)
        return f"`{code_of(call)}` builds {target or 'what its `_target_` names'} with the keys of `{section}` as arguments: "

    def _chosen_at_run_time(self, chain: str) -> str | None:
        """A device read through a name that holds a config (``self.config.run_cfg.device``) in
        a file that loads none (what it loads is followed there): the object was handed in, its file chosen at run time
        (``--cfg-path``), so the project's config files that set the key to CUDA are what it may
        read; None where none does (or the project is not known)."""
        holder, _, key = chain.rpartition(".")
        parts = holder.split(".")
        if not device_key(key) or not any(_CONFIG_NAME.search(part) for part in parts):
            return None
        if any(".".join(parts[:cut]) in self.made for cut in range(1, len(parts) + 1)):
            return None  # made in this file (``config = ckpt["config"]``), not handed in
        configs = off_xla_configs(self.facts.project.context.project_config_files(), key)
        if not configs:
            return None
        return (
            f"`{chain}` is read from a config handed in here, whose file is chosen at run time (a path on the "
            f"command line or a parameter, which the tool cannot follow), and {named_off_xla_configs(configs, key)}, which the "
            f"tool does not rewrite: on an XLA host the script asks for a device there is none of; set `{key}: xla` "
            f"in the config files the runs load (or override it where the run sets its options), with torch_xla "
            f"imported (it registers that device)"
        )

    def _handed_to(self, scope: str, holder: str, before: int) -> tuple[_Handed, ...]:
        """The calls of ``scope`` handed ``holder`` before ``before`` (the walk's order)."""
        return tuple(h for h in self.handed if h.scope == scope and h.name == holder and h.order < before)

    def _unread_setter(self, setters: tuple[_Handed, ...]) -> str:
        """What the finding adds where a callable of a module this run does not read was handed
        the config before the read: it may set the key itself."""
        project = self.walk.analysis(ProjectAnalysis)
        for handed in setters:
            if self._function(handed.scope, handed.callee, handed.resolved) is not None:
                continue
            origin = project.origin(handed.callee)
            if origin is not None and origin.summary is None:
                return (
                    f"; `{handed.callee}()` in {project.module_file(handed.callee)}, handed the config before the read, "
                    "may set it itself: this run does not read that module, a run on the project folder follows it"
                )
        return ""

    def _set_in_code(self, chain: str, key: str, setters: tuple[_Handed, ...]) -> str | None:
        """Where a call the config was handed to before the read sets the key itself: "" for a
        function of this file (``cfg.device = ...`` on its parameter: the device values follow
        it) or a module of the project whose device ends on the XLA device; what the read
        depends on, for one whose device does not, or that this run does not convert; None
        where no call sets it (the config's value is read)."""
        for handed in setters:
            function = self._function(handed.scope, handed.callee, handed.resolved)
            if function is not None:
                params = self.positions.get(function, [])
                param = params[handed.index] if handed.index < len(params) else None
                if param is not None and any(
                    scope == function and name == f"{param}.{key}" for scope, name in self.assigned_in
                ):
                    return ""
                continue
            if "." in key:
                continue
            origin = self.walk.analysis(ProjectAnalysis).origin(handed.callee)
            if origin is None or origin.summary is None:
                continue
            found = origin.summary.device_set_on(origin.name, handed.index, key)
            if found is None:
                continue
            on_xla, why = found
            where = (
                f"`{chain}` is set by `{handed.callee}()` in {origin.summary.path} before it is read, not by the config"
            )
            if origin.summary.pending:
                return (
                    f"{where}, and this run does not convert that module: the device it sets there is not ported; "
                    "convert it too (a run on the project folder ports it)"
                )
            if on_xla:
                return ""
            if on_xla is False:
                ends = f"it ends on {why}" if why else "it ends"
                return f"{where}: {ends}, off the XLA device; make it the XLA device there"
            return (
                f"{where}, and the tool cannot tell which device it sets there: make it the XLA device "
                f"(`torch_xla.device()`)"
            )
        return None

    def _follow(self) -> None:
        """The config handed on, by position, to functions and classes of the file, and kept
        on ``self`` in their methods, until nothing more holds it."""
        grew = True
        while grew:
            grew = False
            for handed in self.handed:
                scope, name = handed.scope, handed.name
                held = (scope, name) if (scope, name) in self.holders else ("", name)
                source = self.holders.get(held)
                function = self._function(scope, handed.callee, handed.resolved)
                params = self.positions.get(function or "", [])
                if source is not None and function is not None and handed.index < len(params):
                    into = (function, params[handed.index])
                    if self._hold(into, source):
                        grew = True
                        before = self._handed_to(scope, name, handed.order)
                        self.handed_before[into] = (*self.handed_before.get(held, ()), *before)
            for cls, attribute, name in self.kept:
                for (scope, kept), source in list(self.holders.items()):
                    if kept == name and scope.rsplit(".", 1)[0] == cls and self._hold((cls, attribute), source):
                        grew = True
                        self.handed_before[(cls, attribute)] = self.handed_before.get((scope, kept), ())

    def _hold(self, key: tuple[str, str], source: ConfigSource) -> bool:
        if key in self.holders:
            return False
        self.holders[key] = source
        return True

    def _function(self, scope: str, callee: str, resolved: str | None = None) -> str | None:
        """The function of this file a call in ``scope`` runs (a class: its ``__init__``),
        by its name, a name assigned it (``W = Workspace``) or an import of the script's own
        module (``from train import Workspace as W`` in train.py, which runs it as a script)."""
        if callee.startswith("self.") and "." in scope:
            callee = f"{scope.rsplit('.', 1)[0]}.{callee.removeprefix('self.')}"
        names = [callee]
        if callee in self.aliases:
            names.append(self.aliases[callee])
        context = self.facts.project.context
        own = context.own_module() if resolved is not None else None
        if own is not None and resolved is not None and resolved.startswith(own + "."):
            module, _, name = resolved.rpartition(".")
            if module == own and context.lookup(own, name) is None:
                names.append(name)  # the project holds no other module of that name
        for name in names:
            for function in (name, f"{name}.__init__"):
                if function in self.positions:
                    return function
        return None

    def _holder(self, scope: str, chain: str) -> tuple[tuple[str, str], str, ConfigSource] | None:
        """The config that ``chain`` (``self.cfg.device``) reads a key of: (its key among the
        holders, the holder as written, its source)."""
        parts = chain.split(".")
        scopes = [scope, ""] + ([scope.rsplit(".", 1)[0]] if "." in scope and chain.startswith("self.") else [])
        for cut in range(len(parts) - 1, 0, -1):
            holder = ".".join(parts[:cut])
            held = next(((s, holder) for s in scopes if (s, holder) in self.holders), None)
            if held is not None:
                return held, holder, self.holders[held]
        return None


def _section_scalars(text: str, keys: list[str], group: str | None) -> list[tuple[list[str], str, int]]:
    """The scalars under the section ``keys`` of a config (``agent: {device: ..., lr: ...}``), or
    at the root of the config group file that the defaults list picks for it (their keys
    prefixed with the section's)."""
    found = [
        (path, value, line)
        for path, value, line in yaml_scalars(text)
        if path[: len(keys)] == keys and len(path) > len(keys)
    ]
    if group is not None:
        found += [([*keys, *path], value, line) for path, value, line in yaml_scalars(group)]
    return found
