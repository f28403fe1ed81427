"""References to a CUDA-only class (torch's SyncBatchNorm) that only test a value's class:
``isinstance(m, (nn.BatchNorm2d, nn.SyncBatchNorm))``, ``type(m) is nn.SyncBatchNorm``, or a
tuple of classes bound to a name that is read only by such tests (``bn_types = (...)`` then
``isinstance(m, bn_types)``).  Naming the class builds nothing: the test is False for every
module of a model that holds none, on XLA as on CUDA (cuda_only/analysis.py asks, XLA506 and
XLA508 leave them alone)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

# The CUDA-only classes (rules/runtime_apis.CUDA_ONLY) whose references are asked about.
TESTED_CLASSES = frozenset({"torch.nn.SyncBatchNorm", "torch.nn.modules.batchnorm.SyncBatchNorm"})
# The builtins whose second argument is a class or a tuple of classes.
_TYPE_TESTS = frozenset({"isinstance", "issubclass"})
_COMPARED = (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual, cst.In, cst.NotIn)


class _Reads(cst.CSTVisitor):
    """Each node's parent, and every Name the module reads or binds by its value (the
    attribute of ``x.name`` and a keyword's name are not the name)."""

    def __init__(self) -> None:
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.names: dict[str, list[cst.Name]] = {}
        self.stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        if type(node) is cst.Name:
            self.names.setdefault(node.value, []).append(node)
        elif type(node) is cst.Attribute:
            node.value.visit(self)
            return False
        elif type(node) is cst.Arg and node.keyword is not None:
            node.value.visit(self)
            return False
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


def class_tests(module: cst.Module, references: Sequence[cst.CSTNode]) -> set[cst.CSTNode]:
    """The references (to a class) that only test a value's class, as the module shows them."""
    reads = _Reads()
    module.visit(reads)
    found: set[cst.CSTNode] = set()
    for reference in references:
        holder = _holder(reads, reference)
        if _tests_a_class(reads, holder):
            found.add(reference)
            continue
        bound = _bound_name(reads, holder)
        if bound is not None and _read_only_by_tests(reads, bound):
            found.add(reference)
    return found


def _holder(reads: _Reads, node: cst.CSTNode) -> cst.CSTNode:
    """The tuple or list of classes the node is an element of (outermost), or the node."""
    while type(parent := reads.parents.get(node)) is cst.Element:
        outer = reads.parents.get(parent)
        if outer is None or type(outer) not in (cst.Tuple, cst.List):
            break
        node = outer
    return node


def _tests_a_class(reads: _Reads, node: cst.CSTNode) -> bool:
    """The class argument of isinstance/issubclass, or an operand of an identity, equality or
    membership comparison."""
    parent = reads.parents.get(node)
    if type(parent) is cst.Arg:
        call = reads.parents.get(parent)
        return (
            type(call) is cst.Call
            and type(call.func) is cst.Name
            and call.func.value in _TYPE_TESTS
            and len(call.args) == 2
            and call.args[1] is parent
        )
    if type(parent) is cst.ComparisonTarget:
        return isinstance(parent.operator, _COMPARED)
    if type(parent) is cst.Comparison:
        return parent.left is node and all(isinstance(target.operator, _COMPARED) for target in parent.comparisons)
    return False


def _bound_name(reads: _Reads, node: cst.CSTNode) -> str | None:
    """``name = node``: the name (one target, a plain name)."""
    parent = reads.parents.get(node)
    if type(parent) is cst.Assign and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0].target
        return target.value if type(target) is cst.Name else None
    return None


def _read_only_by_tests(reads: _Reads, name: str) -> bool:
    """Every other place the module writes ``name`` binds it to a value or tests a class with it."""
    for use in reads.names.get(name, ()):
        parent = reads.parents.get(use)
        if type(parent) is cst.AssignTarget:
            continue
        if not _tests_a_class(reads, use):
            return False
    return True
