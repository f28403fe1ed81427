"""XLA303's cases for a loop that only moves one step's inputs to the device through a
container's own move method (LibRecommender's ``GraphTrainer._to_device``: ``d =
d.to_device(self.device)`` for a message, ``d.to(self.device)`` for a tensor): it computes nothing
and gets no barrier; a loop that also runs a model's forward on them still does.  Kept apart from
the rule so that its module holds the rule, its messages and its hooks.  So does a loop that moves
each item of a container that is no data set and reshapes or reduces it there (AdelaiDet's FCPose
``process_gt_instances``, called in the model's forward: per-image heatmaps ``.to(device)`` and
``.max(dim=0)[0]``); over a loader the same loop keeps its barrier."""

from __future__ import annotations

import textwrap

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_MOVED = textwrap.dedent(
    """
    import torch

    device = torch.device("cuda")


    def to_device(data):
        moved = []
        for d in data:
            if isinstance(d, torch.Tensor):
                d = d.to(device)
            else:
                d = d.to_device(device)
            moved.append(d)
        return moved
    """
)

_EVALUATED = textwrap.dedent(
    """
    import torch

    device = torch.device("cuda")


    def evaluate(model, batches):
        outs = []
        for x, graph in batches:
            x = x.to(device)
            graph = graph.to_device(device)
            outs.append(model(x, graph))
        return outs
    """
)


# A model's targets, built per image from the ground truth the forward is handed.
_TARGETS = textwrap.dedent(
    """
    import torch


    def process_gt_instances(gt_instances, device):
        heatmaps, heads = [], []
        for instances in gt_instances:
            heatmap = instances.keypoint_heatmap.to(device=device, dtype=torch.float)
            heatmaps.append(heatmap.max(dim=0)[0])
            head = instances.head_heatmap.to(device=device, dtype=torch.float)
            for i in range(len(instances)):
                heads.append(head[i])
        return torch.stack(heatmaps), torch.cat(heads)
    """
)
# The same loop over a loader: a data set's statistics on the device.
_OVER_A_LOADER = _TARGETS.replace("(gt_instances, device)", "(val_loader, device)").replace(
    "for instances in gt_instances:", "for instances in val_loader:"
)


def move_loop_valid() -> tuple[Valid, ...]:
    return (
        valid(
            _MOVED,
            _MOVED.replace("import torch\n", "import torch\nimport torch_xla\n").replace(
                'torch.device("cuda")', "torch_xla.device()"
            ),
            note="a-loop-that-only-moves-inputs-with-a-containers-to-device",
        ),
        valid(
            _MOVED,
            _MOVED.replace("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n").replace(
                'torch.device("cuda")', "xm.xla_device()"
            ),
            target="sagemaker",
            note="a-loop-that-only-moves-inputs-with-a-containers-to-device-sagemaker",
        ),
        valid(_TARGETS, note="a-loop-that-moves-and-reduces-each-items-targets"),
        valid(_TARGETS, target="sagemaker", note="a-loop-that-moves-and-reduces-each-items-targets-sagemaker"),
    )


def move_loop_invalid() -> tuple[Invalid, ...]:
    ported = _EVALUATED.replace("import torch\n", "import torch\nimport torch_xla\n").replace(
        'torch.device("cuda")', "torch_xla.device()"
    )
    return (
        invalid(
            _EVALUATED,
            ported.replace(
                "        outs.append(model(x, graph))\n",
                "        outs.append(model(x, graph))\n        torch_xla.sync()\n",
            ),
            note="a-loop-that-moves-with-to-device-and-runs-a-forward",
            findings=(Expected(13, 9, "evaluation loop over the device"),),
        ),
        invalid(
            _EVALUATED,
            _EVALUATED.replace("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n")
            .replace('torch.device("cuda")', "xm.xla_device()")
            .replace(
                "        outs.append(model(x, graph))\n",
                "        outs.append(model(x, graph))\n        xm.mark_step()\n",
            ),
            target="sagemaker",
            note="a-loop-that-moves-with-to-device-and-runs-a-forward-sagemaker",
            findings=(Expected(13, 9, "xm.mark_step() ends every iteration"),),
        ),
        invalid(
            _OVER_A_LOADER,
            _OVER_A_LOADER.replace("import torch\n", "import torch\nimport torch_xla\n").replace(
                "            heads.append(head[i])\n", "            heads.append(head[i])\n        torch_xla.sync()\n"
            ),
            note="a-loop-over-a-loader-that-moves-and-reduces-keeps-its-barrier",
            findings=(Expected(13, 9, "evaluation loop over the device"),),
        ),
    )
