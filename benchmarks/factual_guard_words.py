"""Which real English words the misspelling reader would take for a lexicon form.

Reads every lower-case word of an English word list (Debian's ``wamerican``:
``apt-get install wamerican`` puts it at ``/usr/share/dict/words``) through the fuzzy
index of each shipped lexicon (genre with FMA's ``genres.csv``), and prints the words
read as a form that :mod:`lm_eval_rul.factual.reading.guards` does not list yet, plain
inflections of the form itself ("violins", "cheerfully") left out. Run it when a lexicon
gains a form, and add what it prints to ``GUARD_WORDS`` (5+ letters) or ``SHORT_WORDS``
(4 letters), after a look: a printed word that is only a variant spelling of the form
should stay readable.

Usage:
    python benchmarks/factual_guard_words.py --fma_genres fma_metadata/genres.csv
    python benchmarks/factual_guard_words.py --words /usr/share/dict/words --fma_genres G
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_rul.factual.reading.fuzzy import SHORT_LENGTH
from lm_eval_rul.factual.reading.genres import read_genre_tree
from lm_eval_rul.factual.reading.guards import GUARD_WORDS, SHORT_WORDS
from lm_eval_rul.factual.reading.lexicon import lexicon_for

_INFLECTIONS = ("s", "es", "ly", "ally", "ness")


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--words", type=Path, default=Path("/usr/share/dict/words"))
    cli.add_argument("--fma_genres", type=Path, default=None, help="FMA genres.csv (genre)")
    args = cli.parse_args()
    words = {
        w.strip() for w in args.words.read_text(encoding="utf-8", errors="ignore").splitlines()
    }
    words = {w for w in words if w.isascii() and w.isalpha() and w.islower()}
    lexicons = [lexicon_for(t) for t in ("instrument", "composer", "mood", "regional")]
    if args.fma_genres is not None:
        lexicons.append(lexicon_for("genre", read_genre_tree(args.fma_genres)))
    missing: dict[str, str] = {}
    for lexicon in lexicons:
        exact = {a.text for a in lexicon.aliases}
        for word in sorted(words - exact):
            if len(word) < SHORT_LENGTH or word in GUARD_WORDS or word in SHORT_WORDS:
                continue
            hit = lexicon.fuzzy_index.lookup(word)
            if hit is None:
                continue
            form = hit[0]
            if word.startswith(form) and word[len(form) :] in _INFLECTIONS:
                continue
            missing[word] = f"{lexicon.task}: {form}"
    print(f"{len(words)} words read; {len(missing)} read as a form and not guarded")
    for word, where in sorted(missing.items()):
        print(f"  {word} -> {where}")


if __name__ == "__main__":
    main()
