"""Hugging Face scripts: Trainer (and Seq2SeqTrainer, subclasses), their
TrainingArguments (built in code or parsed with HfArgumentParser), tokenizer calls
and padding collators, and Accelerate (``accelerator.backward(loss)``).

The Trainer does the XLA work itself (device placement, step barriers, loaders); what
it cannot choose for the script is the optimizer (``optim="adamw_torch_xla"``, the
sync-free AdamW; with torch >= 2.8 the default ``adamw_torch_fused`` raises on XLA)
and static input shapes (``padding="max_length"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import (
    arg_value,
    call_args,
    dotted,
    flag_dest,
    is_false,
    is_none,
    method_name,
    parents_of,
    receiver,
    string_value,
    unpacked_keywords,
    walk,
)
from codemods.engine.walk import Analysis, Walk
from codemods.huggingface.accelerate_loaders import PREPARE_METHODS, LoaderOrigins
from codemods.huggingface.facts import ModelPlacement, OptimizerChoice, Padding, ParsedArguments
from codemods.huggingface.names import TRAINERS, TRAINING_ARGUMENTS, plain_ppo_trainer, ppo_config_era
from codemods.huggingface.padded_labels import labels_from_input_ids
from codemods.huggingface.rules.xla801_trainer_xla_optimizer import RUNNING_ADAMW, TORCH_ADAMW, XLA_OPTIMIZER
from codemods.huggingface.trainer_loaders import drop_evaluated_only, maybe_trained, note_trainer_class, unbarriered
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.facts import Facts

# Accelerator methods that take over the training step: called on an ``accelerator`` the file got
# from elsewhere (a parameter, an attribute: ``train(model, loader, accelerator, optimizer)``), they
# say Accelerate prepared the loop's model, optimizer and loaders (as Fabric's methods do for Fabric).
ACCELERATOR_METHODS = frozenset(
    {"backward", "prepare", "accumulate", "clip_grad_norm_", "clip_grad_value_", "unscale_gradients"}
)
# Names whose optimizer runs only on CUDA (bitsandbytes' kernels) and whose result no
# optimizer of the Trainer's computes on XLA: 8-bit states (quantized), Lion, AdEMAMix,
# bitsandbytes' RMSprop (its own defaults).
CUDA_ONLY_OPTIMIZERS = frozenset(
    {
        "adamw_bnb_8bit",
        "adamw_8bit",
        "paged_adamw_8bit",
        "ademamix",
        "ademamix_8bit",
        "paged_ademamix_32bit",
        "paged_ademamix_8bit",
        "lion_8bit",
        "lion_32bit",
        "paged_lion_8bit",
        "paged_lion_32bit",
        "rmsprop_bnb",
        "rmsprop_bnb_8bit",
        "rmsprop_bnb_32bit",
        "galore_adamw_8bit",
        "galore_adamw_8bit_layerwise",
    }
)

# HfArgumentParser, and TRL's subclass of it (``parse_args_and_config`` reads a YAML config
# file, then parses like ``parse_args_into_dataclasses``).
ARGUMENT_PARSERS = frozenset(
    {"transformers.HfArgumentParser", "trl.TrlParser", "trl.scripts.TrlParser", "trl.scripts.utils.TrlParser"}
)
PARSE_METHODS = frozenset(
    {"parse_args_into_dataclasses", "parse_json_file", "parse_yaml_file", "parse_dict", "parse_args_and_config"}
)
ACCELERATOR = "accelerate.Accelerator"
# Collators that pad each batch to its longest sequence unless told otherwise.
PADDING_COLLATORS = frozenset(
    {
        "transformers.DataCollatorWithPadding",
        "transformers.DataCollatorForSeq2Seq",
        "transformers.DataCollatorForTokenClassification",
    }
)
TOKENIZER_METHODS = frozenset({"encode_plus", "batch_encode_plus", "pad", "__call__"})
BITSANDBYTES_CONFIG = frozenset(
    {"transformers.BitsAndBytesConfig", "transformers.utils.quantization_config.BitsAndBytesConfig"}
)
# device_map strings that ask accelerate to spread the model over the devices it knows
# (CUDA and the like, else the CPU and the disk: never XLA).
ACCELERATE_DEVICE_MAPS = frozenset({"auto", "balanced", "balanced_low_0", "sequential"})
# device_map values that keep the model on the host (the Trainer or `.to()` moves it).
HOST_DEVICES = frozenset({"cpu", "disk", "meta"})


class HuggingFaceAnalysis(Analysis):
    facts: Facts

    name = "huggingface"
    reads = ("imports", "project")

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.part = self.facts.huggingface
        self.trainer_classes: set[str] = set()
        self.argument_classes: set[str] = set()
        self.tokenizers: set[str] = set()
        self.parsers: dict[str, int] = {}  # parser name -> index of the TrainingArguments dataclass
        self.parser_classes: dict[str, str] = {}  # parser name -> the TrainingArguments dataclass as written
        # This file's TrainingArguments dataclasses whose ``optim`` field defaults to an optimizer that
        # runs on XLA as it is (``"adamw_torch"``): parsed or built, they need no optim of the port's.
        self.running_optim_classes: set[str] = set()
        self.parses: list[tuple[str, cst.CSTNode, str]] = []  # (training args name, anchor, its class as written)
        self.optim_assigned: set[str] = set()  # ``training_args.optim = ...`` in the file
        self.workers_assigned: set[str] = set()
        self.backward_candidates: list[tuple[str, cst.Call]] = []
        # An Accelerator the file got from elsewhere (a parameter, an attribute) and steps with.
        self.handed_accelerators: set[str] = set()
        # Calls that may build a Trainer, its arguments, a collator: with the function and scope.
        self.candidate_calls: list[tuple[cst.Call, cst.FunctionDef | None, str]] = []
        self.statement_parent: list[cst.CSTNode | None] = [None]  # compound statements around
        self.elif_heads: dict[int, cst.If] = {}  # an elif's If -> the If that starts its chain
        self.statement: cst.SimpleStatementLine | None = None
        # (scope, name) -> the values assigned to it; from_pretrained calls and their scope.
        self.assigned: dict[tuple[str, str], list[cst.BaseExpression]] = {}
        self.model_loads: list[tuple[cst.Call, str]] = []
        # (scope, name, accelerator) of the names an accelerator's ``prepare`` binds.
        self.prepared: list[tuple[str, str, str]] = []
        self.returns: dict[str, list[cst.BaseExpression | None]] = {}  # function -> what it returns
        self.attributes: dict[tuple[str, str], list[cst.BaseExpression]] = {}  # (class, ``self.x``) -> values
        # Command-line flags and class fields (dataclass arguments) -> their default truth
        # value (None: not a literal, or two defaults of the same name that differ).
        self.switch_defaults: dict[str, bool | None] = {}
        self.module: cst.Module | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    # -- what names are ---------------------------------------------------------------

    def _is(self, node: cst.BaseExpression, qualified: frozenset[str], local: set[str]) -> bool:
        return self.walk.resolve(node) in qualified or (bool(local) and dotted(node) in local)

    def is_trainer(self, node: cst.BaseExpression) -> bool:
        """transformers' Trainers, TRL's, and their subclasses of this file or of another module
        of the project (``class CustomSeq2SeqTrainer(Seq2SeqTrainer)`` in sft/trainer.py)."""
        if self._is(node, TRAINERS, self.trainer_classes):
            return True
        return self._project_class(node, "trainer_classes")

    def is_training_arguments(self, node: cst.BaseExpression) -> bool:
        """TrainingArguments, TRL's configs, and their subclasses of this file or of another
        module of the project (``class RunConfig(trl.SFTConfig)`` in config.py)."""
        if self._is(node, TRAINING_ARGUMENTS, self.argument_classes):
            return True
        return self._project_class(node, "argument_classes")

    def _project_class(self, node: cst.BaseExpression, kind: str) -> bool:
        """``node`` names a class of another module of the project that its summary lists under ``kind``."""
        name = dotted(node)
        found = self.walk.analysis(ProjectAnalysis).origin(name) if name is not None else None
        return found is not None and found.summary is not None and found.name in getattr(found.summary, kind)

    def _unbarriered_elsewhere(self, node: cst.BaseExpression) -> bool:
        return self._project_class(node, "unbarriered_trainers")

    # -- walk -------------------------------------------------------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            if self.is_trainer(base.value):
                self.trainer_classes.add(node.name.value)
                self.part.trainer_classes.add(node.name.value)
                note_trainer_class(node, self.walk.resolve, self.part, self._unbarriered_elsewhere)
            if self.is_training_arguments(base.value):
                self.argument_classes.add(node.name.value)
                self.part.argument_classes.add(node.name.value)
        self.statement_parent.append(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        """``preprocessing_num_workers: Optional[int] = field(default=None, ...)``; ``optim:
        str = field(default="adamw_bnb_8bit")`` in a TrainingArguments dataclass."""
        if node.value is None or not self.walk.class_depth:
            return
        if (name := dotted(node.target)) is not None:
            default: cst.BaseExpression | None = node.value  # None: no default, _truth gives None
            if isinstance(default, cst.Call) and dotted(default.func) in ("field", "dataclasses.field"):
                default = arg_value(default, 99, "default")
            self._switch_default(name, _truth(default))
        if dotted(node.target) == "optim":
            self._optim_field(node.value)
            return
        if dotted(node.target) != "preprocessing_num_workers":
            return
        default = node.value  # (None: no default, which the isinstance test below takes as such)
        if isinstance(default, cst.Call) and dotted(default.func) in ("field", "dataclasses.field"):
            default = arg_value(default, 99, "default")
        if isinstance(default, cst.Name) and default.value == "None":
            self.part.default_preprocessing_workers.append(node)

    def _optim_field(self, value: cst.BaseExpression) -> None:
        """A CUDA-only optimizer as the default of a TrainingArguments subclass's ``optim``
        (the default AdamW forms are mapped after parsing, or given where it is built)."""
        owner = self.statement_parent[-1]
        if not (isinstance(owner, cst.ClassDef) and owner.name.value in self.argument_classes):
            return
        default: cst.BaseExpression | None = value  # None: no default, string_value gives None
        if isinstance(value, cst.Call) and dotted(value.func) in ("field", "dataclasses.field"):
            default = arg_value(value, 99, "default")
        name = string_value(default)
        if name in CUDA_ONLY_OPTIMIZERS and default is not None:  # (a string's value: default is a node)
            self.part.cuda_optimizers[default] = name
        elif name in RUNNING_ADAMW:
            self.running_optim_classes.add(owner.name.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        for target in node.targets:
            name = dotted(target.target)
            if type(target.target) is cst.Name:
                self.assigned.setdefault((self.walk.qualname, target.target.value), []).append(value)
            elif name is not None and name.startswith("self.") and name.count(".") == 1 and "." in self.walk.qualname:
                self.attributes.setdefault((self.walk.qualname.split(".")[0], name), []).append(value)
            if name is not None and name.endswith((".optim", ".dataloader_num_workers")):
                owner, _, attr = name.rpartition(".")
                (self.optim_assigned if attr == "optim" else self.workers_assigned).add(owner)
            if name is not None and self._builds_accelerator(value):
                self.part.accelerators.add(name)
                continue
            if type(value) is not cst.Call:
                continue
            if method_name(value) in PREPARE_METHODS and (preparer := dotted(receiver(value))) is not None:
                bound = target.target
                for element in (
                    [e.value for e in bound.elements] if isinstance(bound, (cst.Tuple, cst.List)) else [bound]
                ):
                    if type(element) is cst.Name:
                        self.prepared.append((self.walk.qualname, element.value, preparer))
                    elif type(element) is cst.Attribute and (attribute := dotted(element)) is not None:
                        self.prepared.append(("", attribute, preparer))  # ``self.loader = acc.prepare(...)``
            callee = self.walk.resolve(value.func)
            if name is not None and callee in ARGUMENT_PARSERS:
                self._parser(name, value)
            elif name is not None and _builds_tokenizer(callee, name, value):
                self.tokenizers.add(name)
            elif method_name(value) in PARSE_METHODS and (parser := dotted(receiver(value))) in self.parsers:
                self._parse(target.target, self.parsers[parser], self.parser_classes[parser])
            elif (
                method_name(value) in PARSE_METHODS
                and type(built := receiver(value)) is cst.Call
                and self.walk.resolve(built.func) in ARGUMENT_PARSERS
                and (parsed := self._parsed_class(built)) is not None
            ):  # ``(training_args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()``
                self._parse(target.target, *parsed)

    def _builds_accelerator(self, value: cst.BaseExpression) -> bool:
        """``Accelerator(...)``, or a conditional expression each of whose branches builds one
        (``Accelerator(log_with="all") if with_tracking else Accelerator()``: the Hugging Face
        no_trainer examples)."""
        if type(value) is cst.IfExp:
            return self._builds_accelerator(value.body) and self._builds_accelerator(value.orelse)
        return type(value) is cst.Call and self.walk.resolve(value.func) == ACCELERATOR

    def _parser(self, name: str, call: cst.Call) -> None:
        if (parsed := self._parsed_class(call)) is not None:
            self.parsers[name], self.parser_classes[name] = parsed

    def _parsed_class(self, call: cst.Call) -> tuple[int, str] | None:
        """The position and the class as written of the TrainingArguments an argument parser
        built by ``call`` parses (the last one, if it parses several)."""
        found = None
        classes = arg_value(call, 0, "dataclass_types")
        elements = (
            classes.elements
            if isinstance(classes, (cst.Tuple, cst.List))
            else [cst.Element(classes)]
            if classes
            else []
        )
        for index, element in enumerate(elements):
            if self.is_training_arguments(element.value):
                found = (index, dotted(element.value) or "")
        return found

    def _parse(self, target: cst.BaseExpression, index: int, written: str) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) > index:
            name = dotted(target.elements[index].value)
        else:
            name = dotted(target) if index == 0 else None
        statement = self.statement
        if name is None or statement is None:
            return
        parent = self.statement_parent[-1]
        anchor: cst.CSTNode = statement
        # Parsed in each branch of ``if json_file: ... else: ...``: set it after the chain.
        if id(parent) in self.elif_heads:
            anchor = self.elif_heads[id(parent)]
        elif isinstance(parent, cst.If) and parent.orelse is not None:
            anchor = parent
        self.parses.append((name, anchor, written))

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    def _compound(self, node: cst.CSTNode) -> None:
        self.statement_parent.append(node)

    def _leave_compound(self, node: cst.CSTNode) -> None:
        self.statement_parent.pop()

    visit_For = visit_While = visit_With = visit_Try = visit_FunctionDef = _compound
    leave_For = leave_While = leave_With = leave_Try = leave_FunctionDef = leave_ClassDef = _leave_compound

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self.elif_heads[id(node.orelse)] = self.elif_heads.get(id(node), node)
        self.statement_parent.append(node)

    leave_If = _leave_compound

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.setdefault(self.walk.qualname, []).append(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        if "tokeni" in node.name.value.lower():
            self.tokenizers.add(node.name.value)

    def _switch_default(self, name: str, value: bool | None) -> None:
        self.switch_defaults[name] = value if self.switch_defaults.get(name, value) == value else None

    def _flag(self, node: cst.Call) -> None:
        """``add_argument("--fp16", action="store_true")``: off unless given; ``store_false``: on."""
        dest = flag_dest(node)
        if dest is None:
            return
        keywords = call_args(node)[1]
        action = string_value(keywords["action"].value) if "action" in keywords else None
        if "default" in keywords:
            value = _truth(keywords["default"].value)
        else:
            value = {"store_true": False, "store_false": True}.get(action or "")
        self._switch_default(dest, value)

    def visit_Call(self, node: cst.Call) -> None:
        if method_name(node) == "add_argument":
            self._flag(node)
        if method_name(node) == "backward" and (owner := dotted(receiver(node))) is not None:
            self.backward_candidates.append((owner, node))
        if (
            method_name(node) in ACCELERATOR_METHODS
            and (owner := dotted(receiver(node))) is not None
            and "accelerator" in owner.rsplit(".", 1)[-1].lower()
        ):
            self.handed_accelerators.add(owner)
        self.candidate_calls.append((node, self.walk.enclosing_function, self.walk.qualname))
        if method_name(node) == "from_pretrained" and any(
            (a.keyword is not None and a.keyword.value in _PLACING_KEYWORDS) or a.star == "**" for a in node.args
        ):
            self.model_loads.append((node, self.walk.qualname))

    # -- results ------------------------------------------------------------------------

    def conclude(self) -> None:
        """Keep what the project summary needs of the loaders' origins and let go of them: they
        hold the walk's resolution and the project analysis, which hold the facts (a cycle)."""
        origins = self.part.loader_origins
        if origins is not None:
            self.part.loader_functions = frozenset(origins.loader_functions)
            self.part.loader_origins = None

    def finish(self) -> None:
        part = self.part
        calls = [(call, scope) for call, _, scope in self.candidate_calls]
        for call, function, scope in self.candidate_calls:
            callee = self.walk.resolve(call.func)
            if self.is_trainer(call.func):
                if not plain_ppo_trainer(callee, call):
                    part.trainers.append(call)
                if unbarriered(call.func, part, self._unbarriered_elsewhere):
                    trains = maybe_trained(call, scope, self.assigned, calls, self.returns)
                    part.unbarriered_calls[call] = (
                        dotted(call.func) or "",
                        self._unbarriered_elsewhere(call.func),
                        trains,
                    )
            elif self.is_training_arguments(call.func):
                era = ppo_config_era(callee, call)
                if era == "plain":
                    continue  # (TRL <= 0.11's PPOConfig: no TrainingArguments, no optim field)
                if era == "unknown":
                    self.part.builds_arguments = True
                    self.part.training_arguments[call] = OptimizerChoice("ppo")
                    continue
                self._training_arguments(call, function, scope)
            elif callee in PADDING_COLLATORS:
                self._collator(call)
            elif self._is_tokenizer_call(call):
                self._tokenizer_call(call, function or self.module)
        if part.unbarriered_loaders and self.module is not None:  # (a trainer class only evaluated here)
            drop_evaluated_only(part, self.module, self.facts.project.context.mentioned_elsewhere)
        for call, scope in self.model_loads:
            placements = self._placements(call, scope)
            if placements:
                part.model_placements[call] = placements
        part.accelerators |= self.handed_accelerators
        part.accelerate_backwards = [call for owner, call in self.backward_candidates if owner in part.accelerators]
        prepared = {(scope, name) for scope, name, owner in self.prepared if owner in part.accelerators}
        project = self.walk.analysis(ProjectAnalysis)
        part.loader_origins = LoaderOrigins(
            self.assigned, prepared, self.returns, self.attributes, self.walk.resolve, project.origin
        )
        part.builds_arguments = part.builds_arguments or bool(self.parses)
        if part.trainers or part.training_arguments or self.parses:
            part.arguments_without_optim = self.facts.project.context.arguments_without_optim()
        for name, anchor, written in self.parses:
            if (
                name not in self.optim_assigned
                and written not in self.running_optim_classes
                and not any(p.name == name for p in part.parsed_arguments)
            ):
                part.parsed_arguments.append(ParsedArguments(name, anchor))
            if name not in self.workers_assigned and anchor not in part.default_workers:
                part.default_workers.append(anchor)

    def _placements(self, call: cst.Call, scope: str) -> list[ModelPlacement]:
        placements = []
        for argument in call.args:
            keyword = argument.keyword.value if argument.keyword is not None else None
            if argument.star == "**":
                # ``**model_kwargs`` with ``model_kwargs = {"device_map": "balanced"} if ... else {}``
                # (a dict literal, a conditional of them, ``dict(...)``, assigned in the function or file)
                for key, value in unpacked_keywords(self._values(argument.value, scope)):
                    placements += self._placement(argument, key, value, scope, key)
            elif keyword is not None:
                placements += self._placement(argument, keyword, argument.value, scope)
        return placements

    def _placement(
        self, argument: cst.Arg, keyword: str, value: cst.BaseExpression, scope: str, key: str = ""
    ) -> list[ModelPlacement]:
        """What ``keyword=value`` (written in the call, or ``key`` of a dict it unpacks) does to the model."""
        if keyword == "device_map":
            values = self._values(value, scope)
            kinds = {_device_map_kind(each, self.walk.resolve) for each in values} - {None}
            kind = next((k for k in ("cuda", "accelerate", "unknown") if k in kinds), None)
            if kind is not None:
                shown = tuple(values) if values != [value] else ()
                return [ModelPlacement(argument, kind, shown, key, value if key else None)]
        elif keyword in ("load_in_8bit", "load_in_4bit") and not (is_false(value) or is_none(value)):
            return [ModelPlacement(argument, "quantized", (), key, value if key else None)]
        elif keyword == "quantization_config" and any(
            type(each) is cst.Call and self.walk.resolve(each.func) in BITSANDBYTES_CONFIG
            for each in self._values(value, scope)
        ):
            return [ModelPlacement(argument, "quantized", (), key, value if key else None)]
        return []

    def _values(self, value: cst.BaseExpression, scope: str) -> list[cst.BaseExpression]:
        """A variable's assigned values (in its function, else at module level); the
        expression itself otherwise (and for a parameter or a variable never assigned)."""
        if type(value) is not cst.Name:
            return [value]
        return self.assigned.get((scope, value.value)) or self.assigned.get(("", value.value)) or [value]

    def _training_arguments(self, call: cst.Call, function: cst.FunctionDef | None, scope: str) -> None:
        self.part.builds_arguments = True
        keywords = call_args(call)[1]
        unpacked = any(a.star for a in call.args)
        if "dataloader_num_workers" not in keywords and not unpacked:
            self.part.default_workers.append(call)
        if "fp16" in keywords and not is_false(keywords["fp16"].value):
            self.part.fp16_arguments.append(call)
            if self._off_by_default(keywords["fp16"].value):
                self.part.fp16_off_by_default.add(call)
        optim = keywords.get("optim")
        if optim is None and dotted(call.func) in self.running_optim_classes:
            return  # the dataclass's own default runs on XLA
        if optim is None:
            self.part.training_arguments[call] = OptimizerChoice("report" if unpacked else "add")
            return
        name = string_value(optim.value)
        if name in TORCH_ADAMW:
            self.part.training_arguments[call] = OptimizerChoice("replace", optim.value)
        elif name in CUDA_ONLY_OPTIMIZERS:
            self.part.cuda_optimizers[optim.value] = name
        elif name is None and dotted(optim.value) is not None:
            # A variable, a flag, a config value: mapped where it is given.
            self.part.training_arguments[call] = OptimizerChoice("map", optim.value)
            for default in self._defaults(optim.value, function, scope):
                if (chosen := string_value(default)) in CUDA_ONLY_OPTIMIZERS:
                    self.part.cuda_optimizers[default] = chosen

    def _off_by_default(self, value: cst.BaseExpression) -> bool:
        """``args.fp16`` of a flag (or field) False by default, ``not args.no_fp16`` of one True."""
        negated, named = False, value
        if type(value) is cst.UnaryOperation and type(value.operator) is cst.Not:
            negated, named = True, value.expression
        name = dotted(named)
        if name is None or "." not in name:
            return False
        return self.switch_defaults.get(name.rsplit(".", 1)[-1]) is negated

    def _defaults(
        self, value: cst.BaseExpression, function: cst.FunctionDef | None, scope: str
    ) -> list[cst.BaseExpression]:
        """What a name may hold: the values it is assigned in its function (or the module),
        and the default of the enclosing function's parameter of that name."""
        if type(value) is not cst.Name:
            return []
        found = [v for v in self._values(value, scope) if v is not value and not _maps_to_xla(v)]
        if function is not None:
            params = function.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if param.name.value == value.value and param.default is not None:
                    found.append(param.default)
        return found

    def _is_tokenizer_call(self, call: cst.Call) -> bool:
        if not self.tokenizers:
            return False
        name = dotted(call.func)
        if name in self.tokenizers:
            return True
        method = method_name(call)
        return method in TOKENIZER_METHODS and dotted(receiver(call)) in self.tokenizers

    def _tokenizer_call(self, call: cst.Call, scope: cst.CSTNode | None) -> None:
        keywords = call_args(call)[1]
        padding = keywords.get("padding")
        if padding is None:
            return
        missing = tuple(k for k in ("max_length", "truncation") if k not in keywords)
        if _pads_dynamically(padding.value):
            dropped = scope is not None and _drops_attention_mask(call, scope, self.module)
            labels = scope is not None and labels_from_input_ids(scope)
            self.part.padding[call] = Padding(True, padding.value, "max_length" in keywords, missing, dropped, labels)
        elif string_value(padding.value) == "max_length" and missing:
            self.part.padding[call] = Padding(False, padding.value, False, missing)

    def _collator(self, call: cst.Call) -> None:
        keywords = call_args(call)[1]
        padding = keywords.get("padding")
        if padding is None or _pads_dynamically(padding.value):
            missing = tuple(k for k in ("max_length",) if k not in keywords)
            self.part.padding[call] = Padding(True, padding.value if padding else None, False, missing)


def _truth(value: cst.BaseExpression | None) -> bool | None:
    """A literal default's truth value (True, False, None, 0, 1); None for anything else."""
    if type(value) is cst.Name and value.value in ("True", "False", "None"):
        return value.value == "True"
    if type(value) is cst.Integer:
        return value.value != "0"
    return None


def _drops_attention_mask(call: cst.Call, scope: cst.CSTNode, module: cst.Module | None) -> bool:
    """Only the encoding's ``input_ids`` are used: ``tokenizer(...).input_ids`` (or
    ``["input_ids"]``, through ``.to(...)``), or ``enc = tokenizer(...)`` whose every use in
    its function is ``enc.input_ids``/``enc["input_ids"]``; or a function of the file returns
    the encoding (``return tokenizer(...)``, ``return enc``) and every call of it takes only
    the ``input_ids`` so (one return followed). The mask goes along otherwise (the whole
    encoding passed on, ``enc.attention_mask`` read)."""
    parents = parents_of(module if module is not None else scope)
    only_ids = _input_ids_only(call, scope, parents)
    if only_ids is not None:
        return only_ids
    if type(scope) is not cst.FunctionDef or module is None:
        return False
    helper = scope.name.value
    sites = [node for node in walk(module) if type(node) is cst.Call and _calls_function(node, helper)]
    return bool(sites) and all(_input_ids_only(site, _function_of(site, parents) or module, parents) for site in sites)


def _input_ids_only(encoding: cst.CSTNode, scope: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool | None:
    """Whether only the ``input_ids`` of an encoding (a call that makes one) are used in
    ``scope``; None where it leaves the function by its return (as it is, or by a name)."""
    while (outer := _moved(encoding, parents)) is not None:
        encoding = outer
    parent = parents.get(id(encoding))
    if _selects_input_ids(encoding, parent):
        return True
    if type(parent) is cst.Return:
        return None
    if type(parent) is not cst.Assign or len(parent.targets) != 1 or type(parent.targets[0].target) is not cst.Name:
        return False
    name = parent.targets[0].target.value
    uses = [
        node
        for node in walk(scope)
        if type(node) is cst.Name and node.value == name and node is not parent.targets[0].target
    ]
    if not uses or not all(
        _selects_input_ids(use, parents.get(id(use))) or type(parents.get(id(use))) is cst.Return for use in uses
    ):
        return False
    return None if any(type(parents.get(id(use))) is cst.Return for use in uses) else True


def _calls_function(call: cst.Call, name: str) -> bool:
    """``name(...)`` or ``self.name(...)``."""
    func = call.func
    if type(func) is cst.Name:
        return func.value == name
    return type(func) is cst.Attribute and dotted(func.value) == "self" and func.attr.value == name


def _function_of(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> cst.FunctionDef | None:
    parent = parents.get(id(node))
    while parent is not None and type(parent) is not cst.FunctionDef:
        parent = parents.get(id(parent))
    return parent


def _moved(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> cst.Call | None:
    """``node.to(device)``: the encoding moved (the same keys)."""
    attribute = parents.get(id(node))
    if type(attribute) is not cst.Attribute or attribute.value is not node or attribute.attr.value != "to":
        return None
    moved = parents.get(id(attribute))
    return moved if type(moved) is cst.Call and moved.func is attribute else None


def _selects_input_ids(node: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
    if type(parent) is cst.Attribute:
        return parent.value is node and parent.attr.value == "input_ids"
    if type(parent) is cst.Subscript and parent.value is node and len(parent.slice) == 1:
        index = parent.slice[0].slice
        return type(index) is cst.Index and string_value(index.value) == "input_ids"
    return False


def _pads_dynamically(value: cst.BaseExpression) -> bool:
    text = string_value(value)
    if text is not None:
        return text == "longest"
    return (isinstance(value, cst.Name) and value.value == "True") or (dotted(value) or "").endswith(".LONGEST")


def _maps_to_xla(value: cst.BaseExpression) -> bool:
    """``"adamw_torch_xla" if optim in (...) else optim``: what the port writes (run again)."""
    return type(value) is cst.IfExp and string_value(value.body) == XLA_OPTIMIZER


def _builds_tokenizer(callee: str | None, name: str, value: cst.Call) -> bool:
    """``AutoTokenizer.from_pretrained(...)``, ``BertTokenizerFast(...)``,
    ``PreTrainedTokenizerFast(tokenizer_object=...)``; any ``tokenizer = ...from_pretrained(...)``."""
    if callee is not None and callee.startswith("transformers.") and "Tokenizer" in callee:
        return True
    return "tokeni" in name.rsplit(".", 1)[-1].lower() and method_name(value) == "from_pretrained"


# from_pretrained keywords that place (or quantize) the model.
_PLACING_KEYWORDS = frozenset({"device_map", "load_in_8bit", "load_in_4bit", "quantization_config"})


def _device_map_kind(value: cst.BaseExpression, resolve: Callable[[cst.CSTNode], str | None]) -> str | None:
    """Where a device_map value puts the model: on a CUDA device ("cuda": an int is a
    CUDA ordinal, "cuda" means cuda:LOCAL_RANK), where accelerate chooses
    ("accelerate"), on the host or XLA (None), or "unknown"."""
    if is_none(value):
        return None
    if type(value) is cst.Integer:
        return "cuda"
    text = string_value(value)
    if text is not None:
        if text in ACCELERATE_DEVICE_MAPS:
            return "accelerate"
        if text in HOST_DEVICES or text.startswith("xla"):
            return None
        return "cuda" if text.startswith("cuda") else "unknown"
    if type(value) is cst.Dict:
        kinds = {
            _device_map_kind(element.value, resolve)
            for element in value.elements
            if isinstance(element, cst.DictElement)
        }
        return next((k for k in ("cuda", "accelerate", "unknown") if k in kinds), None)
    if type(value) is cst.Call:
        callee = resolve(value.func)
        if (type(value.func) is cst.Name and value.func.value == "int") or (callee or "").startswith("torch.cuda."):
            return "cuda"  # int(os.environ["LOCAL_RANK"]), torch.cuda.current_device()
        if callee == "torch.device":
            return _device_map_kind(value.args[0].value, resolve) if value.args else "unknown"
        if callee is not None and callee.startswith("torch_xla."):
            return None
    return "unknown"
