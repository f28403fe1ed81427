"""XLA805 padding-length."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

PADDING_LENGTH = Rule(
    code="XLA805",
    name="padding-length",
    severity="warning",
    summary='padding="max_length" without max_length or truncation=True: lengths are not fixed',
    fixable=False,
    why="Without max_length the tokenizer pads to its model_max_length (may be huge or unset); without "
    "truncation longer texts keep their own length, each a new shape to compile.",
    examples=lambda: (
        Invalid(
            'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
            'batch = tokenizer(texts, padding="max_length")\n',
            findings=(Expected(4, 9, 'padding="max_length" without max_length= and truncation=True'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained("gpt2")
            a = tok(texts, padding="max_length", truncation=True, max_length=32)
            b = tok(texts)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from transformers import AutoTokenizer as AT


            def encode(texts, tokenizer):
                return tokenizer(texts, padding='max_length', max_length=128)
            """,
            alias=True,
            findings=(Expected(5, 12, 'padding="max_length" without truncation=True'),),
        ),
        invalid(
            """
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained("gpt2")
            a = tok(texts, padding="max_length")
            b = tok(texts, padding="max_length", max_length=32)
            """,
            findings=(
                Expected(4, 5, 'padding="max_length" without max_length= and truncation=True'),
                Expected(5, 5, 'padding="max_length" without truncation=True'),
            ),
        ),
    ),
)
