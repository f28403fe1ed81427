"""engine/host_arrays.py: which bindings of a function reach the argument of ``op(...)``, and
whether each binds a numpy array (XLA004's cases show it on mmcv's ops; these the shapes of
control flow)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from codemods.engine.host_arrays import holds_numpy_array
from codemods.engine.nodes import children, dotted

_IMPORTS = {"np": "numpy", "cv2": "cv2", "torch": "torch"}


def _resolve(node: cst.CSTNode) -> str | None:
    name = dotted(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    return f"{_IMPORTS[head]}.{rest}" if head in _IMPORTS and rest else None


def _argument_holds_array(body: str) -> bool:
    """Whether the first argument of the call of ``op`` in ``def f(t, model):`` + ``body`` is a numpy array."""
    module = cst.parse_module("def f(t, model):\n" + textwrap.indent(textwrap.dedent(body), "    "))
    path: list[cst.CSTNode] = []

    def find(node: cst.CSTNode) -> list[cst.CSTNode] | None:
        path.append(node)
        if isinstance(node, cst.Call) and dotted(node.func) == "op":
            return list(path)
        for child in children(node):
            found = find(child)
            if found is not None:
                return found
        path.pop()
        return None

    ancestors = find(module)
    assert ancestors is not None
    call = ancestors[-1]
    assert isinstance(call, cst.Call)
    return holds_numpy_array(call.args[0].value, ancestors, _resolve)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("x = t.cpu().numpy()\nop(x)", True),
        ("op(t)", False),  # a parameter
        ("op(self.scores)", False),  # another object's attribute
        ("x = model(t)\nop(x)", False),
        ("x = t.detach().cpu().numpy()\ny = (x[0] > 0.5).astype(np.uint8)\nop(y)", True),
        ("n, labels = cv2.connectedComponents(t.numpy())\nop(labels)", True),
        ("x = np.zeros(3)\nx = x.to(t.device)\nop(x)", False),  # a move a tensor has
        ("x = np.zeros(3)\nif t.sum() > 0:\n    x = t\nop(x)", False),  # a branch may bind a tensor
        ("x = t\nx = np.zeros(3)\nop(x)", True),  # the last binding every path goes through
        ("if t.sum() > 0:\n    x = np.zeros(3)\nelse:\n    x = t\nop(x)", False),  # none every path goes through
        ("x = np.zeros(3)\nfor i in range(3):\n    op(x)\n    x = model(t)", False),  # the loop's next turn
        ("x = np.zeros(3)\nfor i in range(3):\n    op(x)\n    x = x[1:]", True),
        ("x = np.zeros(3)\nx += 1\nop(x)", True),
        ("for x in t:\n    op(x)", False),
        ("x = np.zeros(3)\nwith open(t) as x:\n    op(x)", False),
        ("x = 1 - t.numpy()\nop(x)", True),
        ("x = t * t.numpy()\nop(x)", False),  # a tensor on the left takes the array
        ("x = t.numpy()\ny = x if t else model(t)\nop(y)", False),
    ],
)
def test_bindings_that_reach_the_argument(body: str, expected: bool) -> None:
    assert _argument_holds_array(body) is expected
