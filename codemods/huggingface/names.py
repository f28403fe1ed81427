"""What Hugging Face's and TRL's Trainer and TrainingArguments classes are called, and which
TRL ``PPOConfig`` a call builds (the name stands for two unrelated classes across TRL's versions)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import libcst as cst

# TRL's trainers and configs (checked in huggingface/trl: v0.19.0 exports all of these from
# ``trl`` and ``trl.trainer``; 1.x keeps SFT, DPO, GRPO, KTO, Reward and RLOO there and moves
# the others to ``trl.experimental.<method>``). Each trainer is a transformers.Trainer and each
# config a TrainingArguments (through ``OnPolicyConfig``, ``OnlineDPOConfig``, ``SFTConfig`` or
# 1.x's ``_BaseConfig``), none with an ``optim`` default of its own: with transformers 5 and
# torch >= 2.8 they build the fused AdamW, which raises on XLA parameters. AlignProp and DDPO
# (diffusers trainers with their own configs) are not Trainers.
_TRL_METHODS = {
    "SFT": "sft",
    "DPO": "dpo",
    "GRPO": "grpo",
    "KTO": "kto",
    "Reward": "reward",
    "RLOO": "rloo",
    "PPO": "ppo",
    "BCO": "bco",
    "CPO": "cpo",
    "GKD": "gkd",
    "NashMD": "nash_md",
    "OnlineDPO": "online_dpo",
    "ORPO": "orpo",
    "PRM": "prm",
    "XPO": "xpo",
    "IterativeSFT": "iterative_sft",
}


def _trl(kind: str) -> frozenset[str]:
    """Where TRL's ``<Method>Trainer`` or ``<Method>Config`` classes are imported from."""
    return frozenset(
        f"{module}.{method}{kind}"
        for method, package in _TRL_METHODS.items()
        for module in ("trl", "trl.trainer", f"trl.trainer.{package}_{kind.lower()}", f"trl.experimental.{package}")
    )


TRAINERS = frozenset(
    {
        "transformers.Trainer",
        "transformers.Seq2SeqTrainer",
        "transformers.trainer.Trainer",
        "transformers.trainer_seq2seq.Seq2SeqTrainer",
    }
) | _trl("Trainer")
TRAINING_ARGUMENTS = frozenset(
    {
        "transformers.TrainingArguments",
        "transformers.Seq2SeqTrainingArguments",
        "transformers.training_args.TrainingArguments",
        "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
    }
) | _trl("Config")

# ``trl.PPOConfig`` (``trl.trainer.PPOConfig``, ``trl.trainer.ppo_config.PPOConfig``) is two classes: up
# to TRL 0.11 a plain dataclass with no ``optim`` field (``PPOConfig(optim=...)`` raises TypeError), read
# by the old PPOTrainer, which is no transformers Trainer and builds a torch Adam (it runs on XLA); from
# 0.12 the former PPOv2Config, a TrainingArguments (through OnPolicyConfig) with the fused AdamW default.
# ``trl.experimental.ppo.PPOConfig`` (TRL 1.x) is only the latter.
_PLAIN_PPO_CONFIGS = frozenset({"trl.PPOConfig", "trl.trainer.PPOConfig", "trl.trainer.ppo_config.PPOConfig"})
# Fields of the old dataclass that TrainingArguments and the later PPOConfig do not have (both have
# gamma, lam, cliprange, cliprange_value, vf_coef, whiten_rewards, learning_rate, seed, ...).
_PLAIN_PPO_FIELDS = frozenset(
    {
        "model_name",
        "query_dataset",
        "reward_model",
        "log_with",
        "task_name",
        "tracker_kwargs",
        "tracker_project_name",
        "accelerator_kwargs",
        "project_kwargs",
        "push_to_hub_if_best_kwargs",
        "steps",
        "adap_kl_ctrl",
        "init_kl_coef",
        "kl_penalty",
        "target",
        "horizon",
        "forward_batch_size",
        "ppo_epochs",
        "optimize_cuda_cache",
        "optimize_device_cache",
        "early_stopping",
        "target_kl",
        "compare_steps",
        "ratio_threshold",
        "use_score_scaling",
        "use_score_norm",
        "score_clip",
    }
)
# Fields only the TrainingArguments form has (TrainingArguments' own, OnPolicyConfig's, PPO's).
_ARGUMENT_PPO_FIELDS = frozenset(
    {
        "output_dir",
        "per_device_train_batch_size",
        "per_device_eval_batch_size",
        "num_train_epochs",
        "max_steps",
        "report_to",
        "logging_steps",
        "save_steps",
        "eval_strategy",
        "bf16",
        "fp16",
        "lr_scheduler_type",
        "warmup_steps",
        "warmup_ratio",
        "num_ppo_epochs",
        "num_mini_batches",
        "total_episodes",
        "response_length",
        "local_rollout_forward_batch_size",
        "sft_model_path",
        "reward_model_path",
        "kl_coef",
        "dataloader_num_workers",
    }
)


def ppo_config_era(resolved: str | None, call: cst.Call) -> Literal["plain", "arguments", "unknown"] | None:
    """Which ``PPOConfig`` ``call`` builds, when ``resolved`` names TRL's top-level one (None for any
    other class): ``plain`` (TRL <= 0.11, by a keyword only it has), ``arguments`` (a TrainingArguments,
    by a keyword only that form has), ``unknown`` (its keywords fit both, or come from ``**kwargs``)."""
    if resolved not in _PLAIN_PPO_CONFIGS:
        return None
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if keywords & _PLAIN_PPO_FIELDS:
        return "plain"
    if keywords & _ARGUMENT_PPO_FIELDS:
        return "arguments"
    return "unknown"


# ``trl.PPOTrainer`` likewise: up to TRL 0.11 no transformers Trainer (``PPOTrainer(config, model,
# ref_model, tokenizer, dataset=..., optimizer=...)``, a torch Adam by default), from 0.12 one.
_PLAIN_PPO_TRAINERS = frozenset({"trl.PPOTrainer", "trl.trainer.PPOTrainer", "trl.trainer.ppo_trainer.PPOTrainer"})
_PLAIN_PPO_TRAINER_KEYWORDS = frozenset(
    {"tokenizer", "dataset", "optimizer", "num_shared_layers", "lr_scheduler", "training_data_collator"}
)


def plain_ppo_trainer(resolved: str | None, call: cst.Call) -> bool:
    """``call`` builds TRL <= 0.11's PPOTrainer (by a keyword only it takes): no transformers Trainer."""
    return resolved in _PLAIN_PPO_TRAINERS and any(
        a.keyword is not None and a.keyword.value in _PLAIN_PPO_TRAINER_KEYWORDS for a in call.args
    )
