"""The device's parts of the fact sheet: CUDA devices and their uses (analysis.py), where
device values end after the port (values.py) and the obligations proved on them
(obligations.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from codemods import apis
from codemods.engine.imports import ImportTable
from codemods.engine.nodes import string_value, walk
from codemods.engine.rule import Rule
from codemods.project.module_summary import UnmovedFeeding

_PRINTER = cst.Module([])


@dataclass(repr=False, eq=False)
class DeviceFacts:
    table: ImportTable
    # "cuda", "cuda:1", f"cuda:{rank}" where a device goes (.to(), device=, a device
    # variable, --device defaults): they become "xla".
    strings: set[cst.CSTNode] = field(default_factory=set)
    # CUDA strings handed to a library with devices of its own and none for XLA
    # (``ctranslate2.Generator(path, device="cuda")``) -> the callee: reported, never made "xla".
    foreign_device_strings: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Of those, the ones a test of a device flag compares it with (``args.device in ['cpu',
    # 'cuda']``, ``args.device == 'cuda'``): the flag's default becomes "xla" (device/device_flags.py).
    flag_test_strings: set[cst.SimpleString] = field(default_factory=set)
    # Membership tests of such a flag against values the tool cannot follow (``args.device in
    # DEVICES``): the new default may fail them (reported, XLA101).
    unfollowed_flag_tests: set[cst.Comparison] = field(default_factory=set)
    # torch.device("cuda", ...) and torch.accelerator.current_accelerator(): replaced whole.
    calls: set[cst.Call] = field(default_factory=set)
    # What the index of such a call holds (``torch.cuda.current_device()``), and what a
    # ``torch.cuda.set_device(...)`` statement, removed whole, reads (``torch.cuda.device(i)``):
    # it goes with the call (the value: the call, and the rule that replaces or removes it).
    replaced_parts: dict[cst.CSTNode, tuple[cst.Call, Rule]] = field(default_factory=dict)
    # `x if torch.cuda.is_available() else y` that picks a device: folded to x.
    selections: set[cst.IfExp] = field(default_factory=set)
    # `if torch.cuda.is_available():` around device code: the check is dropped.
    ifs: set[cst.If] = field(default_factory=set)
    # Those checks (in `selections` and `ifs` too) that guard only a move to the host, which an
    # XLA tensor needs as well (device/host_moves.py).
    host_moves: set[cst.If | cst.IfExp] = field(default_factory=set)
    # Such an `if` that also guards code failing without CUDA (the value): left as is, so on
    # XLA its path without CUDA runs and the model and tensors stay on the CPU; reported.
    blocked_ifs: dict[cst.If, cst.CSTNode] = field(default_factory=dict)
    # Of ``ifs``, the checks around nothing but a CUDA wait (``if torch.cuda.is_available():
    # torch.cuda.synchronize()``): skipped on XLA, the code ran as it is (XLA122, a note).
    wait_ifs: set[cst.If | cst.IfExp] = field(default_factory=set)
    # Of those, the checks that stay because, dropped, their code would read a name that only the
    # code of another check that stays binds (the value: that name; the other check's blocker is
    # their value in blocked_ifs).
    paired_ifs: dict[cst.If, str] = field(default_factory=dict)
    # `if not torch.cuda.is_available(): config.device = "cpu"` where nothing else in the file sets
    # `config.device` (its default is in another module): left as is and reported (the value: the
    # attribute); removing it alone would leave that default, often "cuda" (device/fallbacks.py).
    unset_fallbacks: dict[cst.If, str] = field(default_factory=dict)
    # The "cpu" default of a device flag whose choices name CUDA or XLA (`--device`, default "cpu",
    # choices ["cpu", "cuda"]): where the model trains unless the run names another device (the
    # value: the flag's attribute); reported (XLA111, device/device_flags.py).
    cpu_flag_defaults: dict[cst.BaseExpression, str] = field(default_factory=dict)
    # Values of flags like `use_cuda = ... and torch.cuda.is_available()` that pick the
    # device or switch on mixed precision (the check is dropped; the value: the flag and
    # what it switches on), and flags that may not be switched on (they also guard code
    # that fails without CUDA; the value is that code).
    flag_values: dict[cst.BaseExpression, tuple[str, str]] = field(default_factory=dict)
    blocked_flags: dict[cst.BaseExpression, tuple[str, cst.CSTNode]] = field(default_factory=dict)
    # Of that code, ``cmd_args.mode = 'gpu' if args.cuda else 'cpu'`` where only star imports of modules the
    # tool cannot read may bind ``cmd_args`` (the value: those imports): code the tool cannot see reads the
    # CUDA choice there (device/unread_holders.py).
    unread_holders: dict[cst.Assign, tuple[cst.ImportFrom, ...]] = field(default_factory=dict)
    # Of those, the ones a check chooses itself (``cmd_args.mode = 'gpu' if torch.cuda.is_available() else
    # 'cpu'``): the conditional expression, and the assignment: it stays, with an error (XLA104).
    unread_choices: dict[cst.IfExp, cst.Assign] = field(default_factory=dict)
    # `if cfg["use_cuda"] and not torch.cuda.is_available(): cfg["use_cuda"] = False` where the flag
    # picks the device (the value: the flag): the check goes, or stays with an error (device/cuda_defaults.py).
    cleared_flags: dict[cst.If, str] = field(default_factory=dict)
    # `torch.set_default_tensor_type("torch.cuda.FloatTensor")`, `torch.set_default_device("cuda")`:
    # new tensors go to CUDA (XLA107; the value: the type or the device string it names); and whether
    # the file sets the default dtype itself.
    cuda_defaults: dict[cst.Call, str] = field(default_factory=dict)
    sets_default_dtype: bool = False
    # Names used as CUDA device numbers (.cuda(gpu), set_device(gpu), device_ids=[gpu]).
    cuda_indices: set[str] = field(default_factory=set)
    # `device = 0` literals that serve as devices.
    int_devices: set[cst.Integer] = field(default_factory=set)
    # A CUDA device count tested for truth in a condition (``if torch.cuda.device_count():``, ``...
    # > 0``, ``>= 1``, ``!= 0``; the comparison and its call): 0 on an XLA host, where the XLA device
    # is always present, so an availability check like ``torch.cuda.is_available()``.
    count_checks: set[cst.CSTNode] = field(default_factory=set)
    # Availability checks the device rewrites do not consume: they stay, False on XLA.
    kept_availability_checks: set[cst.Call] = field(default_factory=set)
    # Functions that choose a device (qualified names), for other files.
    choosers: set[str] = field(default_factory=set)
    # Top-level callables and classes whose code names an op of a third-party module of compiled
    # CUDA kernels (device/third_party.py) -> that op, for the files that import them.
    kernel_users: dict[str, str] = field(default_factory=dict)
    # Code under a CUDA check that runs such an op (XLA104 keeps the check): the node -> the op, and
    # for a callable of another module, that module's path.
    kernel_calls: dict[cst.CSTNode, tuple[str, str | None]] = field(default_factory=dict)
    # Checks for CUDA that stay (`x.is_cuda`, `device == 'cuda'`): False on XLA.
    cuda_checks: set[cst.CSTNode] = field(default_factory=set)
    # Tests of a caught error's text for CUDA's out-of-memory message (`"CUDA out of memory" in str(e)`):
    # False on XLA, whose out-of-memory error is RESOURCE_EXHAUSTED (not XLA105's: no device check).
    cuda_error_tests: set[cst.Comparison] = field(default_factory=set)
    # Those that compare a name with "cuda" (or test its prefix) where the file does not show that the name holds
    # the XLA device (``device = get_device()`` of another module, a parameter): False on
    # XLA only if it does (the value: the name).
    unproven_checks: dict[cst.CSTNode, str] = field(default_factory=dict)
    # What the file assigns such a name, as written (``torch.device(cfg.run.device)``): a value
    # that names no device the file can tell (a config's, a flag's), shown where a check is reported.
    unproven_values: dict[str, str] = field(default_factory=dict)
    # Those of ``strings`` and ``calls`` in a function or method that no code of the project
    # calls (device/uncalled.py): its qualified name. XLA120's info, not XLA101's error.
    uncalled: dict[cst.CSTNode, str] = field(default_factory=dict)
    # CPU tensors indexed with a tensor on the XLA device (device/indexed_host_tensors.py): the
    # subscript -> (the tensor, the index, where the tensor comes from). XLA116 reports them.
    host_indexings: dict[cst.Subscript, tuple[str, str, str]] = field(default_factory=dict)
    # `torch.cuda.synchronize()` statement lines right before a clock is read: they time work.
    timing_syncs: set[cst.SimpleStatementLine] = field(default_factory=set)
    # `.cuda(...)` moves; `.to(gpu)` moves to a CUDA index and calls that make a tensor on one
    # (`torch.tensor(x, device=gpu)`): the value, the device argument that names the index.
    dot_cuda: set[cst.Call] = field(default_factory=set)
    # ``lambda storage, loc: storage.cuda(i)``: the `.cuda()` of a checkpoint's CUDA map_location under a
    # CUDA check that stays because its ``else`` loads on the CPU (device/analysis.py): never run on XLA.
    location_moves: set[cst.Call] = field(default_factory=set)
    # ``try: torch.sort(x.cuda()) except: torch.sort(x)``: `.cuda()` calls the try hands to another call, whose
    # handler falls back to the CPU (device/shapes.py ``cpu_fallback_moves``): they raise on XLA, the fallback runs.
    fallback_moves: set[cst.Call] = field(default_factory=set)
    # Of the `.cuda()` calls of a project class's own method (device/own_cuda.py, left as they are),
    # those whose class's module this run does not convert: (the class, that module's path).
    own_cuda_pending: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    # ``utils.cuda(batch)``: a function of a project module (left as it is), whose module this run
    # does not convert: (that module's path, the function there).
    module_cuda_pending: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    # ``utils.cuda(batch)`` where ``utils`` may be that module or another binding of the name (a
    # ``global``, a module-level assignment, a comprehension's target elsewhere in the function):
    # left as it is, reported (XLA102).  The name.
    module_cuda_unsure: dict[cst.Call, str] = field(default_factory=dict)
    # ``self.cuda()`` in the method ``to`` of a class of this file that has its own ``to`` and no
    # ``cuda`` of its own (left: as ``self.to(...)`` it would call that method itself): the class.
    self_to_recursion: dict[cst.Call, str] = field(default_factory=dict)
    # ``self.cuda()`` that runs a base's own ``cuda``, of a project module this run does not convert:
    # (the base, that module's path).
    self_cuda_pending: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    # Those moved as a module or tensor whose receiver ``__init__`` binds to a parameter of a class
    # with its own ``cuda`` (``self.mac = mac``) that no file of the run is seen to hand a known
    # instance: (the class, the parameter), for XLA102's message.
    own_cuda_unproven: dict[cst.Call, tuple[str, str]] = field(default_factory=dict)
    # What this file hands such classes (ModuleSummary.own_cuda_arguments).
    own_cuda_arguments: set[tuple[str, str, int, str, str, str]] = field(default_factory=set)
    # What this file hands callables of the project's other modules whose attributes are CUDA
    # indices here (ModuleSummary.index_attributes_handed).
    index_attributes_handed: set[tuple[str, str, int, str, str]] = field(default_factory=set)
    # Moves to an attribute of a parameter (``.to(args.device)`` in ``Net.__init__(self, args)``):
    # (the callable, the parameter's index without self, the parameter, the attribute, the move's code
    # and line) (ModuleSummary.parameter_attribute_moves).
    parameter_attribute_moves: set[tuple[str, int, str, str, str]] = field(default_factory=set)
    # A namespace handed to a callable of a module this run does not convert that moves to an
    # attribute of it which is a CUDA index here (``Net(args)``): the argument -> the message (XLA103).
    pending_index_moves: dict[cst.CSTNode, str] = field(default_factory=dict)
    index_moves: dict[cst.Call, cst.BaseExpression] = field(default_factory=dict)
    # Of those, why the value is a CUDA index where the file does not hand it to `.cuda()` itself
    # (`net.to(gpu_ids[0])`: an element of a list of indices, device/listed_indices.py).
    index_why: dict[cst.Call, str] = field(default_factory=dict)
    # `t.pin_memory()`: raises without CUDA ("Found no NVIDIA driver"); pinning only speeds
    # up copies to a CUDA device, so on XLA the tensor itself is what it gives.
    pin_memory_calls: set[cst.Call] = field(default_factory=set)
    # `.to(self.gpu_id)`, `.to(rank)`: named like a device number, but nothing in the file
    # says it is one (no `.cuda(x)`, `set_device(x)`, `device_ids=[x]`): reported.
    unsure_index_moves: set[cst.Call] = field(default_factory=set)
    # `if args.gpu is not None:` around nothing but moves to that CUDA index (`images =
    # images.cuda(args.gpu)`): without the index, DataParallel moved the inputs (the
    # value: the index's name).  Training decides what happens to them.
    index_guards: dict[cst.If, str] = field(default_factory=dict)
    # `torch.Generator(device=device)` on a device that becomes XLA (which has no device
    # generators in torch_xla 2.9): the device argument goes.
    generators: set[cst.Call] = field(default_factory=set)
    # `assert torch.cuda.is_available(), ...`: fails on XLA, where the XLA device is always there.
    cuda_asserts: set[cst.Assert] = field(default_factory=set)
    # `if device.type == 'cuda':` (`device == 'cuda'`, `'cuda' in str(device)`) around device
    # code, where `device` is the device the script picked and it becomes the XLA device: the
    # check asks "is this the accelerator?", so "cuda" becomes "xla" (the value: None), or, where
    # the guarded code also fails without CUDA, it is reported (the value: that code).
    type_checks: dict[cst.Comparison, cst.CSTNode | None] = field(default_factory=dict)
    # Of those, the checks that stay because their branch taken on XLA once ported would read a
    # name that only the untaken branch of another check of the device binds (the value: that
    # name; the check that binds it is their value in type_checks).
    paired_checks: dict[cst.Comparison, str] = field(default_factory=dict)
    # The checks of the device the script picked (one that becomes the XLA device) that stay: around
    # no device code, around code that fails without CUDA, around CUDA-event timing, or paired with
    # one of those. False on XLA: the code they guard never runs there.
    kept_type_checks: set[cst.Comparison] = field(default_factory=set)
    # A tensor's own CUDA check (``x.is_cuda``, ``x.device.type == 'cuda'``) around device code
    # (``t.cuda()``, ``x.device if ... else 'cpu'``): False for an XLA tensor, so that code never
    # runs there; it asks "is x on the accelerator?", so it becomes ``x.device.type == 'xla'`` (the
    # value: None), or, where the guarded code also fails without CUDA, it is reported (the value:
    # that code).
    tensor_checks: dict[cst.Attribute | cst.Comparison, cst.CSTNode | None] = field(default_factory=dict)
    # ``'cuda' if x.is_cuda else 'cpu'``: the CUDA string such a ported check chooses for a tensor on
    # the accelerator; it becomes the target's device string ("xla").
    tensor_chosen_strings: set[cst.SimpleString] = field(default_factory=set)
    # ``FT = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor`` whose CPU tensors (``FT([0])``)
    # only meet XLA tensors in arithmetic and host reads (device/host_tensors.py): on XLA it picks the
    # CPU type, which runs there; neither its check nor its CUDA type is reported.
    cpu_type_choices: set[cst.IfExp] = field(default_factory=set)
    # ``x.get_device()`` where a device goes (``t.to(x.get_device())``, ``device=x.get_device()``): a
    # CUDA index, 0 for an XLA tensor (so cuda:0, which fails without CUDA): becomes ``x.device``.
    index_of_tensor: set[cst.Call] = field(default_factory=set)
    # `if not verify_min_gpu_count(): ...; sys.exit()`: a function of the file that checks for
    # CUDA devices and counts them, guarding an exit. Always True on XLA (no CUDA device):
    # removed (the value: the function's name).
    gpu_requirements: dict[cst.If, str] = field(default_factory=dict)
    # `if cuda.is_available():` (`if cuda_ok():`) that picks the device, where that method or
    # function of the file returns `torch.cuda.is_available()` (or `torch.cuda.device_count() >
    # 0`, or `x and` one of them), or such a function of another module of the project (its summary's
    # ``check_wrappers``): False on XLA, so the path without CUDA runs (the value: the call in the test,
    # the wrapper's name, the code it returns, and where it is: "" in this file, else the module's path).
    # Reported; left as is.
    wrapped_checks: dict[cst.If | cst.IfExp, tuple[cst.Call, str, str, str]] = field(default_factory=dict)
    # For other files: the functions and methods of this one that return such a check (qualified name
    # -> the code returned).
    check_wrappers: dict[str, str] = field(default_factory=dict)
    # Module-level names that alias a torch name (``Device = torch.device``): name -> the
    # torch name; for the files that import them (the module's summary carries them).
    aliases: dict[str, str] = field(default_factory=dict)
    # For other files: the attributes that conditions around device code read (``use_gpu`` of
    # ``if self.args.use_gpu:``): a flag of that name handed here picks the device.
    condition_attributes: set[str] = field(default_factory=set)
    # A CUDA check that stays, False on an XLA host after the port, and the only way a move to the
    # device runs (in the ``if`` it tests, through a name, a property or function of the file that
    # holds or returns it, or a flag handed to a function that moves only if it is true): reported
    # as an error (XLA119) in place of XLA105's warning (the value: the message).
    guarded_moves: dict[cst.CSTNode, str] = field(default_factory=dict)
    # A module's check of where its own parameters are (``next(self.parameters()).is_cuda``) that alone
    # runs a swap of its own parts between devices (DALLE2's ``one_unet_in_gpu``): on XLA the swap is
    # skipped and the parts are where the module is; neither XLA119 nor XLA105 reports it.
    own_swaps: set[cst.CSTNode] = field(default_factory=set)
    # DistributedDataParallel constructions that run only under such a check: on XLA the model
    # trains without DDP, its gradients never all-reduced: the check, and XLA609's message.
    guarded_ddp: dict[cst.Call, tuple[cst.CSTNode, str]] = field(default_factory=dict)
    # The checks under which alone a process group starts (``if world > 1 and
    # torch.cuda.is_available(): dist.init_process_group(...)``): on XLA no group starts; XLA609's
    # message for each.
    guarded_groups: dict[cst.CSTNode, str] = field(default_factory=dict)
    # For other files: the functions that move an argument to the device only if a parameter of
    # theirs is true (``def prepare_sample(samples, cuda_enabled=True): if cuda_enabled: ...``):
    # (function, its index without self or -1 for a keyword-only one, the parameter).
    flag_moves: set[tuple[str, int, str]] = field(default_factory=set)
    # For other files: the parameters a function picks the device with (``torch.device("cuda" if
    # use_cuda else "cpu")``, ``if self.use_cuda: x = x.cuda()`` where ``__init__`` set it from the
    # parameter; device/flag_choices.py): (function, its index without self or -1, the parameter).
    flag_choices: set[tuple[str, int, str]] = field(default_factory=set)
    # A CUDA check that stays, handed as a keyword to a method the file cannot follow
    # (``self.task.train_epoch(..., cuda_enabled=self.cuda_enabled)``): (the method's name, the
    # keyword, XLA119's message, what it ends with); held until the run's files say whether a
    # function of that name moves only if that parameter is true (device/held_conditions.py).
    unfollowed_flags: dict[cst.CSTNode, tuple[str, str, str, str]] = field(default_factory=dict)

    def availability_within(self, original: cst.CSTNode) -> Callable[[cst.BaseExpression], bool]:
        """``is_available_call`` for the rewritten copy of ``original``: a rewrite inside it makes new
        nodes, so its count checks (known by identity) are matched by their code there."""
        codes = {_PRINTER.code_for_node(n) for n in walk(original) if n in self.count_checks}
        if not codes:
            return self.is_available_call
        return lambda node: (
            self.is_available_call(node)
            or (type(node) in (cst.Call, cst.Comparison) and _PRINTER.code_for_node(node) in codes)
        )

    def is_available_call(self, node: cst.BaseExpression) -> bool:
        """``torch.cuda.is_available()``; or a probe for the CUDA driver's tool, which is not on an XLA
        host either (``shutil.which("nvidia-smi")``, also as ``... is not None``); or a CUDA device
        count tested for truth in a condition (``count_checks``)."""
        if node in self.count_checks:
            return True
        if type(node) is cst.Comparison and len(node.comparisons) == 1:
            return type(node.comparisons[0].operator) is cst.IsNot and self._probe(node.left, node.comparisons[0])
        if type(node) is not cst.Call:
            return False
        return self.table.resolve(node.func) in apis.AVAILABILITY_CHECKS if not node.args else self._probe(node)

    def _probe(self, node: cst.BaseExpression, compared: cst.ComparisonTarget | None = None) -> bool:
        if compared is not None and not (type(compared.comparator) is cst.Name and compared.comparator.value == "None"):
            return False
        return (
            type(node) is cst.Call
            and len(node.args) == 1
            and self.table.resolve(node.func) in apis.CUDA_TOOL_PROBES
            and string_value(node.args[0].value) in apis.CUDA_TOOLS
        )

    def false_on_xla(self, node: cst.CSTNode) -> bool:
        """A check for CUDA that stays and is False on the XLA device, as XLA105 says of it
        (``device_type == "cuda"``, ``x.is_cuda``): not negated, and the file shows what it
        compares, or a check of the device the script picked that stays (``kept_type_checks``); or a
        test of a caught error for CUDA's out-of-memory message (``cuda_error_tests``)."""
        if negated_check(node):
            return False
        if node in self.cuda_error_tests:  # ``"CUDA out of memory" in str(e)``
            return True
        return (node in self.cuda_checks and node not in self.unproven_checks) or node in self.kept_type_checks


def negated_check(check: cst.CSTNode) -> bool:
    """``device != "cuda"``, ``"cuda" not in device``: True where the device is not CUDA."""
    return isinstance(check, cst.Comparison) and all(
        isinstance(c.operator, (cst.NotEqual, cst.NotIn, cst.IsNot)) for c in check.comparisons
    )


@dataclass(repr=False, eq=False)
class DeviceValueFacts:
    # For other files (project/summary_from_facts.py): functions and methods of the file that return
    # a device, and where it ends (the message names its line).
    returns: dict[str, tuple[bool | None, str]] = field(default_factory=dict)
    # ``if backend == "nccl":`` where every value of ``backend`` is a string the port rewrote
    # (``"nccl"`` -> ``"xla"``): the literal compared with, and what it becomes.
    ported_comparisons: dict[cst.SimpleString, tuple[str, str]] = field(default_factory=dict)
    # ``torch_geometric.device("auto")`` and the like: replaced by the target's device.
    library_devices: set[cst.Call] = field(default_factory=set)
    # ``assert device in ["cuda", "mps", "cpu"]`` where the device is "xla" after the port: the
    # choices it lists (the value: the assertion, and the value to add).
    asserted_choices: dict[cst.List | cst.Tuple | cst.Set, tuple[cst.Assert, str]] = field(default_factory=dict)
    # ``device == "cuda"`` of a device string the run may hand a string the port rewrote to "xla"
    # (device/widened_checks.py): the check -> the name compared; XLA123 makes it accept "xla" too.
    widened_checks: dict[cst.CSTNode, str] = field(default_factory=dict)
    # For other files: flags that a function returns on an object (``args.cuda = ... and
    # torch.cuda.is_available(); return args``): (function, attribute) -> what the flag is on an
    # XLA host after the port (None: not known, its user's choice) and the code of its value.
    flags: dict[tuple[str, str], tuple[bool | None, str]] = field(default_factory=dict)
    # For other files: the defaults of the file's argparse flags named like a device (``--device``,
    # default -1): the attribute -> the default as written.
    flag_defaults: dict[str, str] = field(default_factory=dict)
    # For other files: functions that set a device on an attribute of a parameter
    # (``def parse_gpu(args): args.device = torch.device("cuda")``): (function, index of the
    # parameter without self, attribute) -> where it ends on an XLA host after the port, and why.
    parameter_devices: dict[tuple[str, int, str], tuple[bool | None, str]] = field(default_factory=dict)
    # For other files: module-level names like a device bound only to None at module level, which
    # only top-level functions that the file itself never calls set (``global device``; rlkit's
    # ``set_gpu_mode``): the name -> those functions.
    unset_devices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # A device flag the port rewrote ("cuda" -> "xla") handed to a function of the file that returns
    # a device off XLA for "xla" (``init_device(args.device)``, device/flag_helpers.py): the flag's
    # attribute -> the function.
    flag_helpers: dict[str, str] = field(default_factory=dict)
    # For other files: functions whose returns end off XLA when the parameter at an index (without
    # self) is "xla" (``init_device(device_str)``, device/flag_helpers.py): (function, index) -> why;
    # and the file's device flags whose default or a choice the port makes "xla".
    xla_string_returns: dict[tuple[str, int], str] = field(default_factory=dict)
    ported_flags: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class LoaderWrap:
    """A loader to wrap in the device loader where it is handed (ObligationFacts.loader_wraps)."""

    device: str | None  # the device as the caller names it; None: the target's device
    message: str  # what the fix says
    # The module goes to the XLA device only as torch_xla's FSDP wraps it (``model = FSDP(model)``):
    # only a target that ports FSDP puts it there.
    sharded: bool = False


@dataclass(repr=False, eq=False)
class ObligationFacts:
    # Where the proof of an obligation breaks: the node the finding points at, and what it says.
    broken: dict[cst.CSTNode, tuple[Rule, str]] = field(default_factory=dict)
    # The same, for a module that reaches the XLA device only through torch_xla's FSDP: said
    # where the target ports FSDP.
    broken_if_sharded: dict[cst.CSTNode, tuple[Rule, str]] = field(default_factory=dict)
    # Modules the run does not convert that those findings name (the chain breaks there): the
    # file's XLA003 at the import does not name them again.
    named_modules: set[str] = field(default_factory=set)
    # For other files (project/summary_from_facts.py): functions whose loops feed batches to a module
    # that comes in as a parameter (``def evaluate(model, loader): for x in loader: model(x)``).
    feeding_callables: set[str] = field(default_factory=set)
    # For this file and others: callables whose loop over a loader handed in feeds batches it
    # does not move to a module handed in.
    unmoved_feeding: set[UnmovedFeeding] = field(default_factory=set)
    # Loaders handed to such a callable with a module on the XLA device, to wrap where they are
    # handed.
    loader_wraps: dict[cst.BaseExpression, LoaderWrap] = field(default_factory=dict)
    # ``if n_gpu == 1:`` around nothing but a loop's batch moves, where the CUDA device count
    # becomes the XLA runtime's count of this host's processes (more than 1 on a host with
    # several devices) and nothing else moves the batches on XLA: the guard goes (XLA108),
    # with why.
    count_guards: dict[cst.If, str] = field(default_factory=dict)
    # For other files: callables that move tensors to a device their caller hands in
    # (``Trainer(..., device=...)``, whose ``__init__`` does ``self.device = device`` and whose
    # methods ``.to(self.device)``): (callable, the parameter's index without self or -1 for one
    # passed by keyword only, the parameter, a move as written).
    device_parameters: set[tuple[str, int, str, str]] = field(default_factory=set)
