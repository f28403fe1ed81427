"""Hugging Face's part of the fact sheet: the Trainer, its arguments, tokenizers and
Accelerate (found by analysis.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

import libcst as cst


class LoaderOrigins(Protocol):
    """Where a file's loaders come from (huggingface/accelerate_loaders.py)."""

    @property
    def loader_functions(self) -> set[str]:
        """The file's functions and methods whose every return is an unprepared loader."""

    def builds(self, value: cst.BaseExpression, scope: str) -> bool:
        """``value`` (in ``scope``) is a loader an accelerator's ``prepare`` did not return."""

    def is_prepared(self, value: cst.BaseExpression, scope: str) -> bool:
        """``value`` (in ``scope``) is what an accelerator's ``prepare`` returned."""

    def unprepared_returns(self, qualname: str) -> list[cst.BaseExpression]:
        """What the function ``qualname`` returns, where every return is an unprepared loader."""

    def self_method(self, loader: cst.BaseExpression, scope: str) -> str | None:
        """The method ``m`` where a loop's loader is what ``self.m()`` returns."""


@dataclass(frozen=True)
class OptimizerChoice:
    """What a TrainingArguments(...) call does about ``optim``: add it, replace an AdamW
    spelling that does not run on XLA, ``map`` a value that is not a literal (a variable, a
    flag: such spellings become adamw_torch_xla where it is given), or ``report`` (its
    keywords come from ``**kwargs``), or ``ppo``: TRL's PPOConfig whose keywords do not tell
    which of its two classes it is (see huggingface/names.py), reported."""

    action: Literal["add", "replace", "map", "report", "ppo"]
    value: cst.BaseExpression | None = None  # the literal replaced, the value mapped


@dataclass(frozen=True)
class ParsedArguments:
    """TrainingArguments parsed by HfArgumentParser into ``name``; the optimizer is set
    after ``anchor`` (the parse statement, or the if/elif chain that parses)."""

    name: str
    anchor: cst.CSTNode


@dataclass(frozen=True)
class Padding:
    """A tokenizer call or collator that pads dynamically (``padding=True/"longest"``,
    or a collator's default), or pads to max_length without fixing the length."""

    dynamic: bool  # pads to the longest sequence of each batch
    value: cst.BaseExpression | None  # the padding argument (None: the collator's default)
    fixable: bool  # a tokenizer call with max_length: padding="max_length" is safe
    missing: tuple[str, ...]  # of max_length and truncation
    # only the encoding's input_ids are used (no attention_mask): pad tokens would reach the model
    mask_dropped: bool = False
    # labels are copied from the input_ids, pads unmasked: padding to max_length would train on pad tokens
    labels_copied: bool = False


@dataclass(frozen=True)
class ModelPlacement:
    """A ``from_pretrained(...)`` argument that places the model where XLA is not:
    ``device_map`` on a CUDA device (``cuda``), or left to accelerate (``accelerate``,
    ``unknown`` when its value is not seen), or bitsandbytes quantization (``quantized``)."""

    argument: cst.Arg
    kind: Literal["cuda", "accelerate", "unknown", "quantized"]
    values: tuple[cst.BaseExpression, ...] = ()  # what a device_map variable was assigned
    # For ``**model_kwargs``: the key of the dict it unpacks that places the model, and its value there.
    key: str = ""
    value: cst.BaseExpression | None = None


@dataclass(repr=False, eq=False)
class HuggingFaceFacts:
    trainers: list[cst.Call] = field(default_factory=list)
    # The file's classes that derive from TrainingArguments (or a TRL config), for the files
    # that import them too.
    argument_classes: set[str] = field(default_factory=set)
    # The file's classes that derive from a Trainer (transformers', TRL's, or a Trainer subclass
    # of another module of the project), for the files that import them too.
    trainer_classes: set[str] = field(default_factory=set)
    # The file builds or parses TrainingArguments (those needing a change are below).
    builds_arguments: bool = False
    training_arguments: dict[cst.Call, OptimizerChoice] = field(default_factory=dict)
    # TrainingArguments(...) calls that pass ``fp16=`` (mixed precision in float16).
    fp16_arguments: list[cst.Call] = field(default_factory=list)
    # Those whose fp16 value is False unless a flag is given (``fp16=args.fp16`` of a store_true
    # flag or a dataclass field False by default, ``fp16=not args.no_fp16`` of a store_false one).
    fp16_off_by_default: set[cst.Call] = field(default_factory=set)
    # Optimizer names that run only on CUDA, where they are written (an ``optim=`` literal, a
    # parameter's or a dataclass field's default that reaches one), with the name.
    cuda_optimizers: dict[cst.BaseExpression, str] = field(default_factory=dict)
    parsed_arguments: list[ParsedArguments] = field(default_factory=list)
    # The transformers copy the project ships, where its TrainingArguments has no ``optim`` field
    # (its ``training_args.py`` as findings name it; project/vendored.py): set only for a file
    # that builds, parses or hands on TrainingArguments.
    arguments_without_optim: str | None = None
    # TrainingArguments calls (and parse statements) that leave dataloader_num_workers at 0.
    default_workers: list[cst.CSTNode] = field(default_factory=list)
    # ``preprocessing_num_workers`` fields that default to None (one process).
    default_preprocessing_workers: list[cst.CSTNode] = field(default_factory=list)
    padding: dict[cst.Call, Padding] = field(default_factory=dict)
    # Names bound to accelerate.Accelerator(...) (or one the file is handed and steps with:
    # ``accelerator.backward(loss)`` on a parameter), and their .backward(...) calls.
    accelerators: set[str] = field(default_factory=set)
    accelerate_backwards: list[cst.Call] = field(default_factory=list)
    # Where the file's loaders come from: a ``DataLoader(...)`` an accelerator's ``prepare`` never
    # returned (built there, or returned by a function), or a prepared one; None before the walk.
    # A loop over an unprepared one gets no step barrier from Accelerate.  Read while the walk
    # finishes (the training analysis's loop plans); let go of when the analyses conclude.
    loader_origins: LoaderOrigins | None = None
    # The file's functions and methods whose every return is an unprepared loader (kept).
    # Methods whose return an Accelerate training loop of their class iterates as its loader
    # (``loader = self.create_train_dataloader()``): (class, method); a subclass's override (here or
    # in another module) that returns an unprepared loader leaves that loop without a step end.
    self_loaders: set[tuple[str, str]] = field(default_factory=set)
    # The returns of such overrides that hand an unprepared loader to that loop -> (the base class as
    # written, the method): XLA301 reports them.
    unprepared_overrides: dict[cst.BaseExpression, tuple[str, str]] = field(default_factory=dict)
    loader_functions: frozenset[str] = frozenset()
    # Uses of Accelerate's DeepSpeed integration, which XLA does not run (accelerate_deepspeed.py):
    # node -> DummyOptim, DummyScheduler, DeepSpeedPlugin, deepspeed_plugin (an attribute of
    # ``state.deepspeed_plugin``), engine (a DeepSpeedEngine method of a prepared model).
    accelerate_deepspeed: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Trainer subclasses whose ``get_train_dataloader`` (their own, or a base's of the project) returns a
    # loader ``accelerator.prepare`` never wrapped: on XLA their training steps get no barrier
    # (huggingface/trainer_loaders.py). The names of such overrides -> their class; the file's Trainer
    # calls of such a class -> (the class as written, whether it is another module's, whether the
    # Trainer it builds may train: not one bound to a name only evaluated or predicted with).
    unbarriered_trainers: set[str] = field(default_factory=set)
    unbarriered_loaders: dict[cst.Name, str] = field(default_factory=dict)
    unbarriered_calls: dict[cst.Call, tuple[str, bool, bool]] = field(default_factory=dict)
    # ``from_pretrained(...)`` calls and their arguments that place the model off XLA.
    model_placements: dict[cst.Call, list[ModelPlacement]] = field(default_factory=dict)

    @property
    def trainer_script(self) -> bool:
        return bool(self.trainers)
