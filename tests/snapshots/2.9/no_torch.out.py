"""Helpers for reading a CSV of text records and building a word vocabulary.

Usage:
    python build_vocab.py corpus.csv --column text --min-count 2
"""
import argparse
import csv
import re
import sys
from collections import Counter

TOKEN_RE = re.compile(r"[A-Za-z0-9']+|[^\sA-Za-z0-9]")

SPECIAL_TOKENS = ['<pad>', '<unk>', '<bos>', '<eos>']


def tokenize(text, lowercase=True):
    """Splits text into words and single punctuation characters."""
    if lowercase:
        text = text.lower()
    return TOKEN_RE.findall(text)


def read_column(path, column):
    with open(path, newline='', encoding='utf-8') as f:
        reader = csv.DictReader(f)
        if column not in (reader.fieldnames or []):
            raise KeyError("column %r not found in %s" % (column, path))
        for row in reader:
            yield row[column]


def build_vocab(texts, min_count=1, max_size=None):
    counts = Counter()
    for text in texts:
        counts.update(tokenize(text))
    words = [w for w, c in counts.most_common() if c >= min_count]
    if max_size is not None:
        words = words[:max_size - len(SPECIAL_TOKENS)]
    itos = SPECIAL_TOKENS + words
    stoi = {w: i for i, w in enumerate(itos)}
    return stoi, itos


def encode(text, stoi, add_bos_eos=True):
    unk = stoi['<unk>']
    ids = [stoi.get(tok, unk) for tok in tokenize(text)]
    if add_bos_eos:
        ids = [stoi['<bos>']] + ids + [stoi['<eos>']]
    return ids


def pad_batch(sequences, pad_id=0):
    width = max(len(s) for s in sequences)
    return [s + [pad_id] * (width - len(s)) for s in sequences]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('path')
    parser.add_argument('--column', default='text')
    parser.add_argument('--min-count', type=int, default=1)
    parser.add_argument('--max-size', type=int, default=None)
    parser.add_argument('--out', default='vocab.txt')
    args = parser.parse_args(argv)

    texts = list(read_column(args.path, args.column))
    stoi, itos = build_vocab(texts, args.min_count, args.max_size)
    with open(args.out, 'w', encoding='utf-8') as f:
        for word in itos:
            f.write(word + '\n')
    print("%d records, vocabulary of %d entries written to %s" % (len(texts), len(itos), args.out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
