"""XLA804 static-padding."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, substituted, valid
from codemods.huggingface.rules.xla805_padding_length import PADDING_LENGTH

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


STATIC_PADDING = Rule(
    code="XLA804",
    name="static-padding",
    severity="warning",
    summary="Tokenizer calls and collators that pad to the longest sequence pad to max_length instead",
    fixable=True,
    why='`padding=True` or `"longest"` gives each batch its own sequence length, and every new shape '
    'compiles a new graph; `padding="max_length"` with a fixed max_length gives one shape. '
    "Where only the encoding's input_ids reach the model (no attention_mask), `padding=True` stays "
    "(followed through one return of a function of the file: `return tokenizer(...)`, each call of it taking "
    "only `.input_ids`): "
    "the extra pad tokens would change the model's outputs. "
    "Nor where the function that tokenizes copies the input_ids into the labels (`labels = input_ids.clone()`, "
    '`enc["labels"] = enc["input_ids"]`) without setting the pad positions to -100: '
    "the loss would train on pad tokens.",
    examples=lambda: (
        Invalid(
            'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
            "batch = tokenizer(texts, padding=True, truncation=True, max_length=128)\n",
            'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
            'batch = tokenizer(texts, padding="max_length", truncation=True, max_length=128)\n',
            findings=(Expected(4, 34, 'padding=True -> "max_length"'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import AutoTokenizer, DataCollatorWithPadding

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            enc = tokenizer(texts, padding="max_length", truncation=True, max_length=64)
            collator = DataCollatorWithPadding(tokenizer, padding="max_length", max_length=64)
            other = {"padding": True}
            """,
        ),
        valid(
            """
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained("gpt2")
            ids = tokenizer(prompts, return_tensors="pt", padding="max_length", max_length=64).input_ids
            """,
            note="input-ids-already-static",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import transformers

            tok = transformers.BertTokenizerFast.from_pretrained("bert-base-uncased")
            batch = tok.batch_encode_plus(texts, padding=True, truncation=True, max_length=16)
            collate = transformers.DataCollatorForSeq2Seq(tok, padding="longest")
            """,
            """
            import transformers

            tok = transformers.BertTokenizerFast.from_pretrained("bert-base-uncased")
            batch = tok.batch_encode_plus(texts, padding="max_length", truncation=True, max_length=16)
            collate = transformers.DataCollatorForSeq2Seq(tok, padding="longest")
            """,
            alias=True,
            findings=(
                Expected(4, 46, 'padding=True -> "max_length"'),
                Expected(5, 11, 'padding="longest" pads each batch to its longest sequence, a new shape to'),
            ),
        ),
        invalid(
            """
            from transformers import AutoTokenizer, DataCollatorWithPadding

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            enc = tokenizer(texts, padding=True, truncation=True, max_length=64)
            enc2 = tokenizer(texts, padding="longest", max_length=64, return_tensors="pt")
            enc3 = tokenizer(texts, padding=True)
            collator = DataCollatorWithPadding(tokenizer)


            def preprocess(batch, tokenizer):
                return tokenizer(batch["text"], padding='longest', truncation=True, max_length=32)
            """,
            """
            from transformers import AutoTokenizer, DataCollatorWithPadding

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            enc = tokenizer(texts, padding="max_length", truncation=True, max_length=64)
            enc2 = tokenizer(texts, padding="max_length", max_length=64, return_tensors="pt")
            enc3 = tokenizer(texts, padding=True)
            collator = DataCollatorWithPadding(tokenizer)


            def preprocess(batch, tokenizer):
                return tokenizer(batch["text"], padding='max_length', truncation=True, max_length=32)
            """,
            findings=(
                Expected(4, 32, 'padding=True -> "max_length"'),
                Expected(5, 33, 'padding="longest" -> "max_length"'),
                Expected(
                    6, 8, "padding=True pads each batch to its longest sequence, a new shape to compile each time"
                ),
                Expected(7, 12, "the collator's default padding pads each batch to its longest sequence, a new"),
                Expected(11, 45, "padding='longest' -> 'max_length'"),
            ),
        ),
        invalid(
            """
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained("gpt2")


            def embed(prompts, llm, device):
                ids = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64).input_ids
                enc = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64)
                out = llm(input_ids=enc["input_ids"].to(device))
                moved = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64).to(device)
                return llm(ids), out, llm(moved.input_ids)


            def masked(prompts, llm):
                enc = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64)
                whole = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64)
                return llm(enc.input_ids, attention_mask=enc.attention_mask), llm(**whole)
            """,
            """
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained("gpt2")


            def embed(prompts, llm, device):
                ids = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64).input_ids
                enc = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64)
                out = llm(input_ids=enc["input_ids"].to(device))
                moved = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64).to(device)
                return llm(ids), out, llm(moved.input_ids)


            def masked(prompts, llm):
                enc = tokenizer(prompts, return_tensors="pt", padding="max_length", truncation=True, max_length=64)
                whole = tokenizer(prompts, return_tensors="pt", padding="max_length", truncation=True, max_length=64)
                return llm(enc.input_ids, attention_mask=enc.attention_mask), llm(**whole)
            """,
            note="input-ids-only-stay-dynamic",
            findings=(
                Expected(7, 11, "padding=True stays: only the encoding's input_ids reach the model"),
                Expected(8, 11, "padding=True stays: only the encoding's input_ids reach the model"),
                Expected(10, 13, "padding=True stays: only the encoding's input_ids reach the model"),
                Expected(15, 59, 'padding=True -> "max_length"'),
                Expected(16, 61, 'padding=True -> "max_length"'),
            ),
        ),
        invalid(
            """
            import transformers as hf

            tok = hf.AutoTokenizer.from_pretrained("gpt2")
            ids = tok(prompts, return_tensors="pt", padding="longest", truncation=True, max_length=32)["input_ids"]
            batch = tok(prompts, return_tensors="pt", padding="longest", truncation=True, max_length=32)
            """,
            """
            import transformers as hf

            tok = hf.AutoTokenizer.from_pretrained("gpt2")
            ids = tok(prompts, return_tensors="pt", padding="longest", truncation=True, max_length=32)["input_ids"]
            batch = tok(prompts, return_tensors="pt", padding="max_length", truncation=True, max_length=32)
            """,
            target="sagemaker",
            alias=True,
            note="input-ids-only-alias",
            findings=(
                Expected(4, 7, 'padding="longest" stays: only the encoding\'s input_ids reach the model'),
                Expected(5, 51, 'padding="longest" -> "max_length"'),
            ),
        ),
        *(
            invalid(
                _RETURNED_ENCODING,
                _RETURNED_ENCODING.replace(
                    'masked(prompts):\n    return tokenizer(prompts, return_tensors="pt", padding=True',
                    'masked(prompts):\n    return tokenizer(prompts, return_tensors="pt", padding="max_length"',
                ),
                target=target,
                note=f"input-ids-only-of-an-encoding-a-helper-returns-{target}",
                findings=(
                    Expected(7, 11, "padding=True stays: only the encoding's input_ids reach the model"),
                    Expected(12, 12, "padding=True stays: only the encoding's input_ids reach the model"),
                    Expected(16, 60, 'padding=True -> "max_length"'),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                _LABELS_FROM_IDS,
                target=target,
                note=f"labels-copied-from-input-ids-stay-{target}",
                findings=(
                    Expected(9, 18, "padding='longest' stays: the labels are copied from the input_ids"),
                    Expected(16, 11, 'padding="longest" stays: the labels are copied from the input_ids'),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                _LABELS_MASKED,
                substituted(_LABELS_MASKED, ('padding="longest"', 'padding="max_length"')),
                target=target,
                note=f"labels-with-pads-masked-or-not-from-ids-ported-{target}",
                findings=(
                    Expected(7, 57, 'padding="longest" -> "max_length"'),
                    Expected(15, 57, 'padding="longest" -> "max_length"'),
                    Expected(20, 57, 'padding="longest" -> "max_length"'),
                    Expected(26, 57, 'padding="longest" -> "max_length"'),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import transformers as hf

            tok = hf.AutoTokenizer.from_pretrained("gpt2")


            def tokenize(text):
                enc = tok(text, return_tensors="pt", padding=True, max_length=512, truncation=True)
                enc["labels"] = enc["input_ids"].clone()
                return enc
            """,
            target="sagemaker",
            alias=True,
            note="labels-copied-from-input-ids-alias",
            findings=(Expected(7, 11, "padding=True stays: the labels are copied from the input_ids"),),
        ),
        invalid(
            """
            import transformers as hf

            tok = hf.AutoTokenizer.from_pretrained("gpt2")

            def encode(texts):
                return tok(texts, return_tensors="pt", padding="longest", truncation=True, max_length=32)

            ids = encode(prompts)["input_ids"]
            """,
            target="sagemaker",
            alias=True,
            note="input-ids-only-of-an-encoding-a-helper-returns-alias",
            findings=(Expected(6, 12, 'padding="longest" stays: only the encoding\'s input_ids reach the model'),),
        ),
    ),
)

# Helpers of the file that return an encoding: where each call takes only its input_ids, the
# padding stays (one return followed); one whose encoding reaches the model whole is ported.
_RETURNED_ENCODING = """
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("gpt2")


def encode(prompts):
    enc = tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64)
    return enc


def encode_moved(prompts, device):
    return tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64).to(device)


def masked(prompts):
    return tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=64)


def step(llm, prompts, device):
    ids = encode(prompts).input_ids
    batch = encode_moved(prompts, device)
    return llm(ids), llm(batch["input_ids"]), llm(**masked(prompts))
"""


# The labels copied from the input_ids (a list of single-text encodings; one encoding cloned):
# padding to max_length would leave pad_token_id in the labels, trained on.  Both calls stay.
_LABELS_FROM_IDS = """
import copy

from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("gpt2", model_max_length=512)


def tokenize_all(strings):
    encodings = [tokenizer(s, return_tensors="pt", padding='longest', max_length=512, truncation=True) for s in strings]
    input_ids = labels = [e.input_ids[0] for e in encodings]
    lens = [e.input_ids.ne(tokenizer.pad_token_id).sum().item() for e in encodings]
    return dict(input_ids=input_ids, labels=labels, lens=lens)


def example(model, text, prompt_len):
    enc = tokenizer(text, return_tensors="pt", padding="longest", max_length=512, truncation=True)
    input_ids = enc.input_ids[0]
    labels = copy.deepcopy(input_ids)
    labels[:prompt_len] = -100
    return model(input_ids=input_ids[None], labels=labels[None], attention_mask=enc.attention_mask).loss
"""

# The pads masked to -100 in the labels, or labels that are not the input_ids: ported.
_LABELS_MASKED = """
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("gpt2")


def masked(model, texts):
    enc = tokenizer(texts, return_tensors="pt", padding="longest", max_length=64, truncation=True)
    labels = enc.input_ids.clone()
    labels[labels == tokenizer.pad_token_id] = -100
    return model(**enc, labels=labels).loss


def classify(model, texts, classes):
    labels = torch.tensor(classes)
    enc = tokenizer(texts, return_tensors="pt", padding="longest", max_length=64, truncation=True)
    return model(**enc, labels=labels).loss


def classify_pairs(model, texts, y):
    enc = tokenizer(texts, return_tensors="pt", padding="longest", max_length=64, truncation=True)
    input_ids, labels = enc["input_ids"], y
    return model(input_ids=input_ids, attention_mask=enc["attention_mask"], labels=labels).loss


def masked_by_attention(model, texts):
    enc = tokenizer(texts, return_tensors="pt", padding="longest", max_length=64, truncation=True)
    labels = enc.input_ids.masked_fill(enc.attention_mask == 0, -100)
    return model(**enc, labels=labels).loss
"""


@on_facts(STATIC_PADDING, nodes=lambda facts: facts.huggingface.padding)
def _padding(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """A tokenizer call (or collator) that pads each batch to its longest sequence: padded
    to max_length.  What padding to max_length still leaves to the text's length is XLA805's,
    reported here as the call is ported (its finding depends on the port's)."""
    from codemods.engine.nodes import call_args, quoted_like

    padding = ctx.facts.huggingface.padding[original]
    missing = " and ".join(f"{m}=" if m == "max_length" else "truncation=True" for m in padding.missing)
    if not padding.dynamic:
        ctx.report(
            PADDING_LENGTH,
            original,
            f'padding="max_length" without {missing}: '
            + (
                "it pads to the tokenizer's model_max_length (may be huge or unset); "
                if "max_length" in padding.missing
                else ""
            )
            + "longer texts keep their own length, a new shape each",
        )
        return updated
    value = padding.value
    if padding.labels_copied and value is not None:
        ctx.report(
            STATIC_PADDING,
            original,
            f"padding={ctx.code(value)} stays: the labels are copied from the input_ids, so padding to "
            "max_length would put pad_token_id into the labels at every pad position and train the loss on "
            "them (a change of results); each batch length compiles a new graph: to pad to max_length, also "
            "set the labels to -100 where input_ids == tokenizer.pad_token_id",
        )
        return updated
    if padding.mask_dropped and value is not None:
        ctx.report(
            STATIC_PADDING,
            original,
            f"padding={ctx.code(value)} stays: only the encoding's input_ids reach the model, without its "
            "attention_mask, so padding to max_length would feed it pad tokens and change its outputs; "
            "each batch length compiles a new graph: pass the attention_mask along and pad to max_length",
        )
        return updated
    if not padding.fixable or value is None:
        what = f"padding={ctx.code(value)}" if value is not None else "the collator's default padding"
        ctx.report(
            STATIC_PADDING,
            original,
            f"{what} pads each batch to its longest sequence, a new shape to compile "
            f'each time: pass padding="max_length" with a fixed max_length (and truncation=True)',
        )
        return updated
    new_args = [
        a.with_changes(value=quoted_like(value, "max_length")) if a.keyword and a.keyword.value == "padding" else a
        for a in updated.args
    ]
    new = ctx.fix(
        STATIC_PADDING,
        original,
        f"padding={ctx.code(value)} -> {{new}}: one shape for every batch",
        lambda: updated.with_changes(args=new_args),
        result=lambda call: call_args(call)[1]["padding"].value,
    )
    if new is not None and padding.missing:
        ctx.report(PADDING_LENGTH, original, f"no {missing}: longer texts keep their own length, a new shape each")
    return new if new is not None else updated
