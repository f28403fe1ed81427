"""The methods of a LightningModule that Lightning's Trainer (or Lightning's own code) may call by
name, which a script therefore runs without naming them: every public name of ``LightningModule``
(Lightning 2.6, its hooks and the ``nn.Module`` methods it calls, ``train``/``eval``/``to``) and the
hook families of Lightning 1.x (``training_epoch_end``, ``validation_step_end``).  Any other method of a
LightningModule subclass (minDALL-E's ``ImageGPT.sample``) runs only where a caller names it."""

from __future__ import annotations

import re

# dir(lightning.pytorch.LightningModule) of Lightning 2.6.6, public names.
_LIGHTNING_NAMES = frozenset(
    """
    add_module all_gather apply automatic_optimization backward bfloat16 buffers call_super_init children
    clip_gradients compile configure_callbacks configure_gradient_clipping configure_model configure_optimizers
    configure_sharded_model cpu cuda current_epoch device device_mesh double dtype dump_patches eval
    example_input_array extra_repr fabric float forward freeze get_buffer get_extra_state get_parameter
    get_submodule global_rank global_step half hparams hparams_initial ipu load_from_checkpoint load_state_dict
    local_rank log log_dict logger loggers lr_scheduler_step lr_schedulers manual_backward modules mtia
    named_buffers named_children named_modules named_parameters optimizer_step optimizer_zero_grad optimizers
    parameters predict_dataloader predict_step prepare_data print register_backward_hook register_buffer
    register_forward_hook register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook
    register_load_state_dict_post_hook register_load_state_dict_pre_hook register_module register_parameter
    register_state_dict_post_hook register_state_dict_pre_hook remove_ignored_hparams requires_grad_
    save_hyperparameters set_extra_state set_submodule setup share_memory state_dict strict_loading teardown
    test_dataloader test_step to to_empty to_onnx to_tensorrt to_torchscript toggle_optimizer toggled_optimizer
    train train_dataloader trainer training_step transfer_batch_to_device type unfreeze untoggle_optimizer
    val_dataloader validation_step xpu zero_grad
    """.split()
)
# Hook families, Lightning 1.x's included: ``on_*``, ``*_step``, ``*_step_end``, ``*_epoch_end``,
# ``*_dataloader``, ``configure_*``.
_HOOK_FAMILIES = re.compile(r"on_\w+|\w+_step|\w+_step_end|\w+_epoch_end|\w+_dataloader|configure_\w+")


def lightning_hook(name: str) -> bool:
    """Whether Lightning may call a LightningModule's method ``name`` without the script naming it."""
    return name in _LIGHTNING_NAMES or _HOOK_FAMILIES.fullmatch(name) is not None
