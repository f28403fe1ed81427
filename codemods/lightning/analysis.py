"""Lightning (``lightning.pytorch``, ``pytorch_lightning``) and Fabric (``lightning.fabric``):
the Trainer and Fabric constructions and the accelerator, strategy and precision they
are given (literals, names bound once to a literal, argparse flags' defaults), the
Lightning 1.x ``Trainer.from_argparse_args(args)`` calls whose accelerator comes from the
command line, the CUDA values that the launcher scripts naming the file pass over a flag's
default (``run.sh``'s ``--accelerator gpu``), and whether the file is driven by Lightning at all.

Lightning does the XLA work itself once it runs on its XLA accelerator: device
placement, MpDeviceLoader, DistributedSampler, xm.optimizer_step, barriers and the
launch of one process per device.  So a Lightning or Fabric file gets none of the
tool's training-loop, optimizer, loader or launch rewrites (training.py and
distributed.py ask ``drives_training``); device code of its own (``.cuda()``,
``torch.cuda.*``) is ported as anywhere.

The names are those of the Lightning release checked (2.6.6): the XLA accelerator is
registered as "tpu", the strategies as "xla" (Trainer and Fabric) and "xla_fsdp"
(Fabric only), and XLAPrecision takes "32-true", "16-true" and "bf16-true" (not the
mixed precisions: it raises on them).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import arg_value, dotted, flag_dest, method_name, names_in, names_the_cpu, string_value, walk
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis, Walk
from codemods.lightning.facts import Kind, LightningFacts, Setting
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.facts import Facts

PACKAGES = frozenset({"lightning", "pytorch_lightning", "lightning_fabric"})
PARAMETERS = ("accelerator", "strategy", "precision")
# Fabric's methods that take over the training step: called on a ``fabric`` the file got
# from elsewhere (a parameter, an attribute), they say Fabric drives the loop.
FABRIC_METHODS = frozenset(
    {"backward", "setup", "setup_module", "setup_optimizers", "setup_dataloaders", "to_device", "clip_gradients"}
)
# Trainer arguments of Lightning 0.x and 1.x that 2.x removed (it raises on them).
LEGACY = frozenset(
    {"gpus", "tpu_cores", "num_tpu_cores", "distributed_backend", "auto_select_gpus", "amp_backend", "amp_level"}
)
# Trainer arguments that only Lightning 0.x takes (checked against its 0.7 Trainer, whose TPU
# switch is ``num_tpu_cores=``; 0.8 added ``tpu_cores=``, 1.0 dropped these): a call that
# passes one is written for that API, and the advice is given in its terms.
LIGHTNING_0X = frozenset(
    {
        "num_tpu_cores",
        "early_stop_callback",
        "distributed_backend",
        "nb_gpu_nodes",
        "max_nb_epochs",
        "min_nb_epochs",
        "train_percent_check",
        "val_percent_check",
        "test_percent_check",
        "overfit_pct",
        "row_log_interval",
        "add_row_log_interval",
        "log_save_interval",
        "show_progress_bar",
        "default_save_path",
        "print_nan_grads",
        "nb_sanity_val_steps",
        "use_amp",
    }
)


def lightning_class(qualified: str | None) -> str | None:
    """ "Trainer", "Fabric" or "LightningModule" for any of their import paths
    (``lightning.Trainer``, ``lightning.pytorch.trainer.Trainer``, ``pytorch_lightning.Trainer``...)."""
    if qualified is None or qualified.split(".", 1)[0] not in PACKAGES:
        return None
    last = qualified.rsplit(".", 1)[-1]
    return last if last in ("Trainer", "Fabric", "LightningModule") else None


# The Lightning flags a launcher passes (``--accelerator gpu``, ``--precision=bf16``).
_LAUNCH_FLAGS = re.compile(r"--(?:accelerator|devices|precision|strategy)[ =]+[\w.-]+")
_DDP = ("ddp", "ddp_spawn", "ddp_fork", "ddp_notebook")
_DDP_STRATEGIES = frozenset(
    {*_DDP, *(f"{s}_find_unused_parameters_{flag}" for s in _DDP for flag in ("true", "false"))}
)
# What each value that selects CUDA or NCCL is called on XLA (None: no XLA form, reported).
ACCELERATORS: dict[str, str | None] = {"gpu": "tpu", "cuda": "tpu"}
# Lightning 2.6.6's XLAPrecision takes "32-true", "16-true" and "bf16-true" only (it raises
# on mixed precision): 16-bit training becomes "bf16-true" (XLA_USE_BF16, the precision XLA
# devices compute in).
PRECISIONS: dict[str, str | None] = {
    "16-mixed": "bf16-true",
    "16": "bf16-true",
    "16-true": "bf16-true",
    "bf16-mixed": "bf16-true",
    "bf16": "bf16-true",
    "transformer-engine": None,
    "transformer-engine-float16": None,
}
_NO_XLA_STRATEGY = {
    "deepspeed": "DeepSpeed runs on CUDA only",
    "dp": "DataParallel drives several GPUs from one process",
    "fsdp_cpu_offload": "torch_xla's FSDP has no CPU offload",
}


def strategy_on_xla(value: str, kind: Kind) -> tuple[str | None, str]:
    """The XLA strategy for a CUDA one (None, and why, when it has none); ("", "") when
    the value does not select CUDA."""
    if value in _DDP_STRATEGIES:
        return "xla", ""
    if value == "fsdp":
        if kind == "fabric":
            return "xla_fsdp", ""
        return None, 'Lightning\'s Trainer has no XLA FSDP strategy (Fabric has strategy="xla_fsdp")'
    for prefix, why in _NO_XLA_STRATEGY.items():
        if value == prefix or value.startswith(prefix + "_"):
            return None, why
    return "", ""


def on_xla(value: str, parameter: str, kind: Kind) -> tuple[str | None, str]:
    """What an accelerator, precision or strategy value becomes on XLA (None, and why, when it
    has no XLA form); ("", "") when it does not select CUDA."""
    if parameter == "accelerator":
        return ACCELERATORS.get(value, ""), ""
    if parameter == "precision":
        new = PRECISIONS.get(value, "")
        return new, "Lightning's XLAPrecision takes 32-true, 16-true or bf16-true" if new is None else ""
    return strategy_on_xla(value, kind)


class LightningAnalysis(Analysis):
    facts: Facts

    name = "lightning"
    reads = ("project",)  # the launcher scripts that name the file (project/resolver.py)

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part: LightningFacts = self.facts.lightning
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        self.flag_defaults: dict[str, cst.BaseExpression] = {}
        self.calls: list[tuple[cst.Call, Kind]] = []
        self.argparse_trainers: list[cst.Call] = []
        # LightningModules whose ``configure_optimizers`` returns an optimizer their ``__init__`` is
        # handed: class -> (the parameter's index without self, its name, the attribute).
        self.optimizer_receivers: dict[str, tuple[int, str, str]] = {}
        self.class_calls: list[tuple[str, cst.Call]] = []
        self.moved: set[str] = set()  # names moved somewhere in the file (``model.cuda()``)
        # ``config["accelerator"] = ...`` and ``del config["accelerator"]``, by the dict's name.
        self.accelerator_edits: dict[str, list[str]] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        modules = self.part.modules
        bases = [base.value for base in node.bases]
        if any(lightning_class(self.walk.resolve(b)) == "LightningModule" or dotted(b) in modules for b in bases):
            self.part.modules.add(node.name.value)
            self._optimizer_index(node)
            self._optimizer_receiver(node)

    def _optimizer_receiver(self, node: cst.ClassDef) -> None:
        """``def configure_optimizers(self): return self.opt`` with ``self.opt = opt`` in
        ``__init__(self, model, opt)``: the optimizer is built by the caller."""
        methods = {s.name.value: s for s in node.body.body if type(s) is cst.FunctionDef}
        configure, init = methods.get("configure_optimizers"), methods.get("__init__")
        if configure is None or init is None:
            return
        returned = {
            sub.attr.value
            for ret in walk(configure)
            if type(ret) is cst.Return and ret.value is not None
            for sub in walk(ret.value)
            if type(sub) is cst.Attribute and dotted(sub.value) == "self"
        }
        params = [p.name.value for p in (*init.params.posonly_params, *init.params.params)][1:]
        for statement in walk(init):
            if type(statement) is not cst.Assign:
                continue
            for target, value in (pair for t in statement.targets for pair in _bound_pairs(t.target, statement.value)):
                attr = dotted(target) or ""
                if attr.startswith("self.") and attr[5:] in returned and value in params:
                    self.optimizer_receivers[node.name.value] = (params.index(value), value, attr)
                    self.part.optimizer_receivers.add((node.name.value, params.index(value), value, attr))

    def _optimizer_index(self, node: cst.ClassDef) -> None:
        """``def training_step(self, batch, batch_idx, optimizer_idx)`` in a LightningModule:
        Lightning 1.x's automatic optimization over several optimizers, which Lightning 2 refuses."""
        for statement in node.body.body:
            if type(statement) is cst.FunctionDef and statement.name.value == "training_step":
                params = statement.params
                for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                    if param.name.value == "optimizer_idx":
                        self.part.optimizer_indices[param] = node.name.value

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        # ``net = Net().cuda()``: the module is moved where it is built, as by ``net.cuda()``.
        built_moved = type(value) is cst.Call and _moves_to_a_device(value, self.walk.resolve)
        for target in node.targets:
            if (name := dotted(target.target)) is not None:
                self.assigned.setdefault(name, []).append(node.value)
                if built_moved:
                    self.moved.add(name)
            elif (edited := _accelerator_key(target.target)) is not None:
                self._edit(edited, f"`{code_of(target.target).strip()} = {code_of(node.value).strip()}`")

    def visit_Del(self, node: cst.Del) -> None:
        targets = [e.value for e in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        for target in targets:
            if (edited := _accelerator_key(target)) is not None:
                self._edit(edited, f"`del {code_of(target).strip()}`")

    def _edit(self, name: str, code: str) -> None:
        conds = [c for c in self.walk.conds if "__name__" not in names_in(c.test)]  # not the main guard
        where = f" (when `{code_of(conds[-1].test).strip()}`)" if conds else ""
        self.accelerator_edits.setdefault(name, []).append(code + where)

    def visit_Call(self, node: cst.Call) -> None:
        kind = lightning_class(self.walk.callee)
        if type(node.func) is cst.Name:
            self.class_calls.append((node.func.value, node))
        elif type(node.func) is cst.Attribute and _moves_to_a_device(node, self.walk.resolve):
            self.moved.add(dotted(node.func.value) or "")
        head, _, method = (self.walk.callee or "").rpartition(".")
        if method == "from_argparse_args" and lightning_class(head) == "Trainer":
            self.argparse_trainers.append(node)
        elif kind == "Trainer":
            self.calls.append((node, "trainer"))
        elif kind == "Fabric":
            self.calls.append((node, "fabric"))
        elif type(node.func) is cst.Attribute and node.func.attr.value == "add_argument":
            self._flag(node)
        elif type(node.func) is cst.Attribute and node.func.attr.value in FABRIC_METHODS:
            owner = (dotted(node.func.value) or "").rsplit(".", 1)[-1].lower()
            self.part.fabric_used = self.part.fabric_used or "fabric" in owner

    def _flag(self, node: cst.Call) -> None:
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        dest = flag_dest(node)
        if dest is not None and "default" in keywords:
            self.flag_defaults[dest] = keywords["default"]

    def finish(self) -> None:
        self._prebuilt_optimizers()
        for call in self.argparse_trainers:
            self._from_command_line(call)
        for call, kind in self.calls:
            self.part.constructions[call] = kind
            old = tuple(a.keyword.value for a in call.args if a.keyword is not None and a.keyword.value in LIGHTNING_0X)
            for arg in call.args:
                if arg.star == "**":
                    self._unpacked(arg, kind)
                elif arg.keyword is not None and arg.keyword.value in PARAMETERS:
                    self._argument(arg, arg.keyword.value, kind)
                elif arg.keyword is not None and arg.keyword.value in LEGACY and kind == "trainer":
                    self.part.legacy[arg] = old

    def _prebuilt_optimizers(self) -> None:
        """``System(model, torch.optim.Adam(model.parameters()))`` (or the optimizer through a name
        bound once) for a LightningModule that returns it from ``configure_optimizers``: Lightning
        moves the module after the optimizer exists, which on XLA makes new Parameters."""
        for name, call in self.class_calls:
            receiver = self.optimizer_receivers.get(name) or self._imported_receiver(name)
            if receiver is None:
                continue
            index, param, attr = receiver
            positional = [a for a in call.args if a.keyword is None and not a.star]
            given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param), None)
            if given is None and index < len(positional):
                given = positional[index].value
            values = self.assigned.get(dotted(given) or "", []) if given is not None else []
            built = values[0] if len(values) == 1 else given
            owners = _parameter_owners(built) if isinstance(built, cst.Call) else []
            # A module the script moves itself (``model.cuda()``) is not moved again by Lightning.
            if isinstance(built, cst.Call) and owners and not any(o in self.moved for o in owners):
                self.part.prebuilt_optimizers[built] = (name, attr)

    def _imported_receiver(self, name: str) -> tuple[int, str, str] | None:
        """A LightningModule of another module of the project (its summary) that returns the
        optimizer it is handed."""
        found = self.walk.analysis(ProjectAnalysis).origin(name)
        if found is None or found.summary is None:
            return None
        return next(((i, p, a) for c, i, p, a in found.summary.lightning_optimizer_receivers if c == found.name), None)

    def _from_command_line(self, call: cst.Call) -> None:
        """``Trainer.from_argparse_args(args, **overrides)``: the overrides are read as a
        Trainer's arguments; without ``accelerator=`` among them the accelerator comes from
        the command line, as the launchers that name the file pass it."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in PARAMETERS:
                self._argument(arg, arg.keyword.value, "trainer")
        if any(arg.keyword is not None and arg.keyword.value == "accelerator" for arg in call.args):
            return
        launched = []
        for path, text in self.facts.project.context.launchers():
            flags = " ".join(m.group(0) for m in _LAUNCH_FLAGS.finditer(text))
            if "--accelerator" in flags:
                launched.append((path, flags))
        self.part.from_command_line[call] = tuple(launched)
        config = self._namespace_of(call.args[0].value if call.args and call.args[0].keyword is None else None)
        if config is not None and (edits := self.accelerator_edits.get(config)):
            self.part.edited_accelerator[call] = (config, tuple(edits))

    def _namespace_of(self, node: cst.BaseExpression | None) -> str | None:
        """``opt`` bound once to ``argparse.Namespace(**config)``: the dict's name."""
        values = self.assigned.get(dotted(node) or "", []) if node is not None else []
        if len(values) != 1 or not isinstance(values[0], cst.Call):
            return None
        value = values[0]
        if self.walk.resolve(value.func) != "argparse.Namespace" or len(value.args) != 1 or value.args[0].star != "**":
            return None
        return dotted(value.args[0].value)

    def _config(self, node: cst.BaseExpression) -> cst.Dict | None:
        """The dict literal a name is bound to once in the file (a config dict)."""
        values = self.assigned.get(dotted(node) or "", [])
        return values[0] if len(values) == 1 and isinstance(values[0], cst.Dict) else None

    def _unpacked(self, arg: cst.Arg, kind: Kind) -> None:
        """``Trainer(**config)`` with ``config = {"accelerator": "gpu", ...}`` in the file."""
        config = self._config(arg.value)
        if config is None:
            self.part.unknown[arg] = "accelerator, strategy or precision"
            return
        for element in config.elements:
            key = string_value(element.key) if isinstance(element, cst.DictElement) else None
            if key in PARAMETERS:
                value = element.value
                if not (self._literal(value, key, kind, dotted(arg.value) or "") or self._choice(value, key, kind)):
                    self.part.unknown[arg] = key

    def _argument(self, arg: cst.Arg, parameter: str, kind: Kind) -> None:
        value = arg.value
        if self._literal(value, parameter, kind, "") or self._choice(value, parameter, kind):
            return
        if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index):
            index = value.slice[0].slice.value
            config, key = self._config(value.value), string_value(index)
            entry = (
                next(
                    (e.value for e in config.elements if isinstance(e, cst.DictElement) and string_value(e.key) == key),
                    None,
                )
                if config is not None and key is not None
                else None
            )
            if entry is not None and self._literal(entry, parameter, kind, code_of(value).strip()):
                return
        name = dotted(value)
        sources: list[cst.BaseExpression] = []
        if name is not None:
            sources = list(self.assigned.get(name, []))
            last = name.rsplit(".", 1)[-1]
            if "." in name and last in self.flag_defaults:
                sources.append(self.flag_defaults[last])
        if sources and all(_is_literal(s) or self._picked_by_availability(s) for s in sources):
            for source in sources:
                if not self._literal(source, parameter, kind, name or "") and isinstance(source, cst.IfExp):
                    self._availability_choice(source, parameter, kind, name or "")
            if name is not None and "." in name and name.rsplit(".", 1)[-1] in self.flag_defaults:
                self._launched(arg, parameter, kind, name.rsplit(".", 1)[-1])
            return
        if not isinstance(value, cst.Name) or value.value != "None":
            self.part.unknown[arg] = parameter

    def _launched(self, arg: cst.Arg, parameter: str, kind: Kind, dest: str) -> None:
        """``Trainer(accelerator=args.accelerator)``: the launchers that pass the flag a CUDA
        value (``run.sh``'s ``--accelerator gpu``), which overrides the default the port changes."""
        pattern = re.compile(rf"--{re.escape(dest)}[ =]+[\"']?([\w.-]+)")
        passed = []
        for path, text in self.facts.project.context.launchers():
            values = [m.group(1) for m in pattern.finditer(text)]
            if cuda := [v for v in values if on_xla(v, parameter, kind)[0] != ""]:
                passed.append((path, " ".join(f"--{dest} {v}" for v in dict.fromkeys(cuda))))
        if passed:
            self.part.launched[arg] = tuple(passed)

    def _choice(self, value: cst.BaseExpression, parameter: str, kind: Kind) -> bool:
        """``"cuda" if args.gpu else "cpu"``: each literal is mapped, unless the test asks
        CUDA (False on XLA: the choice would pick the other branch there)."""
        if not isinstance(value, cst.IfExp):
            return False
        leaves = [value.body, value.orelse]
        if not all(_is_literal(leaf) for leaf in leaves):
            return False
        if self._asks_availability(value.test):
            return self._availability_choice(value, parameter, kind)
        if any("cuda" in name for name in names_in(value.test)):
            return False
        for leaf in leaves:
            self._literal(leaf, parameter, kind, "")
        return True

    def _picked_by_availability(self, value: cst.BaseExpression) -> bool:
        return (
            isinstance(value, cst.IfExp)
            and _is_literal(value.body)
            and _is_literal(value.orelse)
            and self._asks_availability(value.test)
        )

    def _asks_availability(self, test: cst.BaseExpression) -> bool:
        return any(
            type(sub) is cst.Call and self.walk.resolve(sub.func) in apis.AVAILABILITY_CHECKS for sub in walk(test)
        )

    def _availability_choice(self, value: cst.IfExp, parameter: str, kind: Kind, source: str = "") -> bool:
        """``"gpu" if torch.cuda.is_available() else "cpu"``: the check is False on XLA, where
        the CUDA branch is the one to take: the whole choice becomes that branch's XLA value
        (the device concern leaves such a check to this one: it is not a device to fold)."""
        mapped = [
            (leaf, on_xla(_text(leaf), parameter, kind)) for leaf in (value.body, value.orelse) if _is_literal(leaf)
        ]
        cuda = [(leaf, result) for leaf, result in mapped if result[0] != ""]
        if len(cuda) != 1:
            return False
        leaf, (new, why) = cuda[0]
        self.part.settings[value] = Setting(parameter, kind, new, why, source, chosen=code_of(leaf).strip())
        return True

    def _literal(self, node: cst.BaseExpression, parameter: str, kind: Kind, source: str) -> bool:
        """Record what a literal value becomes; False if it is not a literal."""
        if not _is_literal(node):
            return False
        new, why = on_xla(_text(node), parameter, kind)
        if new != "":
            self.part.settings[node] = Setting(parameter, kind, new, why, source)
        return True


def _bound_pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[cst.BaseExpression, str]]:
    """The targets an assignment binds to a plain name, and the name: ``self.opt = opt``, and each
    element of ``self.net, self.opt = net, opt`` (tuples of the same length, no starred element)."""
    if type(value) is cst.Name:
        return [(target, value.value)]
    if (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements)
        and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))
    ):
        return [(t.value, v.value.value) for t, v in zip(target.elements, value.elements) if type(v.value) is cst.Name]
    return []


def _parameter_owners(call: cst.Call) -> list[str]:
    """The modules whose ``.parameters()`` a call is given (an optimizer over them)."""
    return [
        dotted(sub.func.value) or "?"
        for arg in call.args
        for sub in walk(arg.value)
        if type(sub) is cst.Call
        and type(sub.func) is cst.Attribute
        and sub.func.attr.value == "parameters"
        and dotted(sub.func.value) != "self"
    ]


def _accelerator_key(target: cst.BaseExpression) -> str | None:
    """``config["accelerator"]``: the name of the dict."""
    if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
        return None
    index = target.slice[0].slice
    if not isinstance(index, cst.Index) or string_value(index.value) != "accelerator":
        return None
    return dotted(target.value)


def _text(node: cst.BaseExpression) -> str:
    return node.value if isinstance(node, cst.Integer) else string_value(node) or ""


def _is_literal(node: cst.BaseExpression) -> bool:
    return string_value(node) is not None or isinstance(node, cst.Integer)


def _moves_to_a_device(call: cst.Call, resolve: Callable[[cst.CSTNode], str | None]) -> bool:
    """``m.cuda()``, ``m.to(device)``: a move to an accelerator, after which Lightning's own
    move to the XLA device re-makes the Parameters; not a cast (``m.to(torch.bfloat16)``,
    ``m.to(dtype=...)``) nor a move to the CPU, which Lightning's move still follows."""
    method = method_name(call)
    if method == "cuda":
        return True
    device = arg_value(call, 0, "device") if method == "to" else None
    return device is not None and not names_the_cpu(device) and not apis.is_dtype(dotted(device), resolve(device))
