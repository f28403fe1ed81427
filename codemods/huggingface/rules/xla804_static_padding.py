"""XLA804 static-padding."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

STATIC_PADDING = Rule(
    code="XLA804",
    name="static-padding",
    severity="warning",
    summary="Tokenizer calls and collators that pad to the longest sequence pad to max_length instead",
    fixable=True,
    why='`padding=True` or `"longest"` gives each batch its own sequence length, and every new shape '
    'compiles a new graph; `padding="max_length"` with a fixed max_length gives one shape.',
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
    ),
)
