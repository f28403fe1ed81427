"""XLA203's cases for an optimizer a library builds over the module it is handed (mmcv's
``build_optimizer(model, cfg.optimizer)``, mmengine's ``build_optim_wrapper``) before a move of that
module, also one written inside a wrapper's call (``MMDataParallel(model.cuda(), ...)``): on XLA
the move replaces the Parameter objects and the optimizer steps the stale CPU copies."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# OpenMMLab 2.x's train_detector, reduced: the optimizer is built before the wrap moves the model.
BUILT_BEFORE_THE_WRAP = """
from mmcv.parallel import MMDataParallel
from mmcv.runner import build_optimizer, build_runner


def train_detector(model, cfg, data_loaders):
    optimizer = build_optimizer(model, cfg.optimizer)
    model = MMDataParallel(model.cuda(), device_ids=cfg.gpu_ids)
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer))
    runner.run(data_loaders, cfg.workflow)
"""

BUILT_BEFORE_THE_WRAP_PORTED = substituted(
    BUILT_BEFORE_THE_WRAP,
    (
        "from mmcv.runner import build_optimizer, build_runner\n",
        "from mmcv.runner import build_optimizer, build_runner\nimport torch_xla\n",
    ),
    ("build_optimizer(model, cfg.optimizer)", "build_optimizer(model.to(torch_xla.device()), cfg.optimizer)"),
    ("model.cuda()", "model.to(torch_xla.device())"),
)

BUILT_BEFORE_THE_WRAP_SAGEMAKER = substituted(
    BUILT_BEFORE_THE_WRAP_PORTED,
    ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
    ("torch_xla.device()", "xm.xla_device()"),
)

# The module handed by keyword, the builder through a module alias (mmengine's, in an OptimWrapper).
BUILT_BEFORE_THE_MOVE_ALIASED = """
import mmengine.optim as mo


def fit(detector, cfg):
    wrapper = mo.build_optim_wrapper(model=detector, cfg=cfg.optim_wrapper)
    detector.cuda()
    return wrapper
"""

BUILT_BEFORE_THE_MOVE_ALIASED_PORTED = """
import mmengine.optim as mo
import torch_xla


def fit(detector, cfg):
    wrapper = mo.build_optim_wrapper(model=detector.to(torch_xla.device()), cfg=cfg.optim_wrapper)
    detector.to(torch_xla.device())
    return wrapper
"""

# Built after the wrap moved the model (from the wrapper, whose parameters are the moved module's):
# the optimizer holds the parameters that train.
BUILT_AFTER_THE_WRAP = """
from mmcv.parallel import MMDataParallel
from mmcv.runner import build_optimizer, build_runner


def train_detector(model, cfg, data_loaders):
    model = MMDataParallel(model.cuda(), device_ids=cfg.gpu_ids)
    optimizer = build_optimizer(model, cfg.optimizer)
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer))
    runner.run(data_loaders, cfg.workflow)
"""

BUILT_AFTER_THE_WRAP_PORTED = substituted(
    BUILT_AFTER_THE_WRAP,
    (
        "from mmcv.runner import build_optimizer, build_runner\n",
        "from mmcv.runner import build_optimizer, build_runner\nimport torch_xla\n",
    ),
    ("model.cuda()", "model.to(torch_xla.device())"),
)

# A builder of the project's own named like mmcv's, that builds nothing over the module: not a library's
# (a file that moves no batch and steps nothing is not rewritten).
PROJECT_BUILDER = """
def build_optimizer(model, cfg):
    return cfg.make()


def fit(model, cfg):
    optimizer = build_optimizer(model, cfg)
    model.cuda()
    return optimizer
"""


_MESSAGE = (
    "`build_optimizer` builds an optimizer while `model`, handed in, may be on the CPU and `model.cuda()` in "
    "`train_detector` moves the model later"
)


def library_builder_valid() -> tuple[Valid, ...]:
    return (
        valid(
            BUILT_AFTER_THE_WRAP,
            BUILT_AFTER_THE_WRAP_PORTED,
            note="a-library-optimizer-builder-after-the-wrap-moved-the-model",
        ),
        valid(
            BUILT_AFTER_THE_WRAP,
            substituted(
                BUILT_AFTER_THE_WRAP_PORTED,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
            ),
            target="sagemaker",
            note="a-library-optimizer-builder-after-the-wrap-moved-the-model-sagemaker",
        ),
        valid(
            PROJECT_BUILDER,
            note="a-project-function-named-like-a-library-optimizer-builder",
        ),
    )


def library_builder_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            BUILT_BEFORE_THE_WRAP,
            BUILT_BEFORE_THE_WRAP_PORTED,
            note="a-library-optimizer-builder-handed-the-model-before-a-move-inside-a-wrapper-call",
            findings=(Expected(7, 17, _MESSAGE),),
        ),
        invalid(
            BUILT_BEFORE_THE_WRAP,
            BUILT_BEFORE_THE_WRAP_SAGEMAKER,
            target="sagemaker",
            note="a-library-optimizer-builder-handed-the-model-before-a-move-inside-a-wrapper-call-sagemaker",
            findings=(Expected(7, 17, _MESSAGE),),
        ),
        invalid(
            BUILT_BEFORE_THE_MOVE_ALIASED,
            BUILT_BEFORE_THE_MOVE_ALIASED_PORTED,
            alias=True,
            note="a-library-optimizer-builder-by-keyword-through-a-module-alias-mmengine",
            findings=(
                Expected(
                    6,
                    15,
                    "`mo.build_optim_wrapper` builds an optimizer while `detector`, handed in, may be on the CPU and "
                    "`detector.cuda()` in `fit` moves the model later",
                ),
            ),
        ),
    )
