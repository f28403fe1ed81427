"""A module's summary from its fact sheet (the summary types are in codemods/project/module_summary.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.project.module_summary import ModuleSummary

if TYPE_CHECKING:
    from codemods.facts import Facts

__all__ = ["summarise"]


def summarise(
    facts: Facts,
    pending: bool,
    holds: tuple[tuple[str, str, str, bool], ...] = (),
    collectives: tuple[tuple[str, int], ...] = (),
    method_holds: tuple[tuple[str, str, tuple[str, ...]], ...] = (),
    method_findings: tuple[tuple[str, str, str, bool], ...] = (),
    env_rank_readers: tuple[tuple[str, str], ...] = (),
    caller_only_names: tuple[tuple[str, tuple[str, ...]], ...] = (),
) -> ModuleSummary:
    """The summary of a module from its fact sheet (its path is the caller's to fill;
    ``collectives``: its unchecked collectives with their lines)."""
    return ModuleSummary(
        path="",
        steps=frozenset(facts.training.step_callables),
        optimizer_steps=frozenset(facts.training.optimizer_step_callables),
        trainers=frozenset(facts.training.training_callables),
        loop_runners=frozenset(facts.training.loop_runners),
        framework_trainers=frozenset(facts.training.framework_trainers),
        synced=frozenset(facts.training.synced_callables),
        drives=frozenset(facts.training.driven_callables),
        factories=tuple(sorted(facts.training.factories.items())),
        factory_switches=tuple(sorted((f, i, p) for f, (i, p) in facts.training.factory_switches.items())),
        called_parameters=frozenset(facts.training.called_parameters),
        self_driven=frozenset(facts.training.self_driven),
        trains_fsdp=frozenset(facts.fsdp.trained_elsewhere),
        hands_optimizers=frozenset(facts.project.optimizers_handed),
        hands_wrappers=frozenset(facts.project.wrappers_handed),
        devices=frozenset(facts.device.choosers),
        kernel_users=tuple(sorted(facts.device.kernel_users.items())),
        names_device=facts.training.names_device,
        amp=frozenset(owner.split(".")[0] for owner in facts.amp.owners if owner),
        amp_scalers=frozenset(owner.split(".")[0] for owner in facts.amp.scaler_owners if owner),
        amp_autocasts=frozenset(owner.split(".")[0] for owner in facts.amp.autocast_owners if owner),
        amp_methods=frozenset(facts.amp.method_owners),
        pending=pending,
        imported=tuple((local, module, name) for local, (module, name) in facts.imports.project_names.items()),
        argument_moves=frozenset(facts.training.argument_moves),
        flag_moves=frozenset(facts.device.flag_moves),
        flag_choices=frozenset(facts.device.flag_choices),
        batch_movers=frozenset(facts.distributed.batch_movers),
        optimizer_builders=frozenset(facts.training.optimizer_builders),
        base_init_arguments=frozenset(facts.training.base_init_arguments),
        own_optimizers=frozenset(facts.training.own_optimizers),
        own_optimizer_children=frozenset(facts.training.own_optimizer_children),
        parameter_lists=frozenset(facts.training.parameter_lists),
        lightning_optimizer_receivers=frozenset(facts.lightning.optimizer_receivers),
        optimizer_methods=frozenset(facts.training.optimizer_methods),
        method_optimizers=frozenset(facts.training.method_optimizers),
        method_effects=tuple(sorted(facts.training.method_effects.items())),
        held_steppers=frozenset(facts.training.held_steppers),
        sparse_returns=frozenset(facts.cuda_only.sparse_returns),
        sparse_element_returns=frozenset(facts.cuda_only.sparse_element_returns),
        sparse_holders=frozenset(facts.cuda_only.sparse_holders),
        host_returns=frozenset(facts.host_reads.host_returns),
        loader_returns=facts.huggingface.loader_functions,
        self_loaders=frozenset(facts.huggingface.self_loaders),
        collectives=collectives,
        sparse_functions=frozenset(facts.cuda_only.sparse_functions),
        resizing_functions=frozenset(facts.cuda_only.resizing_functions),
        sparse_calls=frozenset(facts.cuda_only.sparse_calls),
        cuda_guarded_calls=frozenset(facts.cuda_only.cuda_guarded_calls),
        other_calls=frozenset(facts.cuda_only.other_calls),
        ddp_imports=_ddp_imports(facts),
        parameter_readers=frozenset(facts.training.parameter_readers),
        argument_round_trips=frozenset(facts.training.argument_round_trips),
        self_round_trips=frozenset(facts.training.self_round_trips),
        aliases=tuple(sorted(facts.device.aliases.items())),
        launch_checks=frozenset(facts.distributed.launch_checked),
        group_starters=frozenset(facts.distributed.group_starters),
        env_rank_readers=env_rank_readers,
        launched=facts.distributed.multi_process and facts.distributed.style in ("spawn", "main", "launched"),
        starts_nothing=bool(facts.distributed.spawns) and not facts.entry.starts(facts.distributed.spawns),
        launchable=bool(facts.distributed.spawns)
        or facts.entry.main_guard is not None
        or facts.entry.mp_fn is not None,
        feeding=frozenset(facts.obligations.feeding_callables),
        unmoved_feeding=frozenset(facts.obligations.unmoved_feeding),
        device_parameters=frozenset(facts.obligations.device_parameters),
        device_returns=tuple(
            sorted((name, on_xla, why) for name, (on_xla, why) in facts.device_values.returns.items())
        ),
        iterable_datasets=frozenset(facts.distributed.iterable_datasets),
        data_parallel_classes=tuple(sorted(facts.distributed.data_parallel_classes.items())),
        scattering_returns=tuple(
            sorted(
                (function, index, wrapper)
                for (function, index), wrapper in facts.distributed.scattering_returns.items()
            )
        ),
        argument_classes=frozenset(facts.huggingface.argument_classes),
        trainer_classes=frozenset(facts.huggingface.trainer_classes),
        unbarriered_trainers=frozenset(facts.huggingface.unbarriered_trainers),
        forward_classes=frozenset(facts.training.forward_classes),
        ddp_classes=frozenset(facts.distributed.ddp_classes),
        device_flags=tuple(
            sorted(
                (function, attr, on_xla, code) for (function, attr), (on_xla, code) in facts.device_values.flags.items()
            )
        ),
        flag_defaults=tuple(sorted(facts.device_values.flag_defaults.items())),
        xla_string_returns=tuple(
            sorted((function, index, why) for (function, index), why in facts.device_values.xla_string_returns.items())
        ),
        ported_flags=frozenset(facts.device_values.ported_flags),
        unset_devices=tuple(sorted(facts.device_values.unset_devices.items())),
        pending_calls=tuple(sorted(facts.project.pending_via.items())),
        condition_attributes=frozenset(facts.device.condition_attributes).union(
            *(
                found.summary.condition_attributes
                for module, name in facts.imports.project_names.values()
                if (found := facts.project.context.lookup(module, name)) is not None and found.summary is not None
            )
        ),
        parameter_devices=tuple(
            sorted(
                (function, index, attr, on_xla, why)
                for (function, index, attr), (on_xla, why) in facts.device_values.parameter_devices.items()
            )
        ),
        holds=holds,
        method_holds=method_holds,
        method_findings=method_findings,
        caller_only_names=caller_only_names,
        named_attributes=frozenset(facts.project.named_attributes),
        reaches=tuple(sorted(facts.project.references)),
        name_tables=tuple(sorted(facts.project.name_tables.items())),
        returned_instances=tuple(sorted(facts.project.returned_instances)),
        own_cuda_arguments=frozenset(facts.device.own_cuda_arguments),
        index_attributes_handed=frozenset(facts.device.index_attributes_handed),
        parameter_attribute_moves=frozenset(facts.device.parameter_attribute_moves),
        globals_lookups=frozenset(facts.project.globals_lookups),
        returned_optimizers=frozenset(facts.training.returned_optimizers),
        classes=tuple(sorted((cls, bases, methods) for cls, (bases, methods) in facts.project.classes.items())),
        check_wrappers=tuple(sorted(facts.device.check_wrappers.items())),
    )


def _ddp_imports(facts: Facts) -> frozenset[str]:
    """The paths of the project modules a file wrapping a model in DDP imports."""
    if not facts.distributed.ddp_calls:
        return frozenset()
    context = facts.project.context
    return frozenset(
        found.summary.path
        for module, name in facts.imports.project_names.values()
        for found in (context.lookup(module, name), context.lookup(module, ""))
        if found is not None and found.summary is not None
    )
