"""Throughput of the lexicon parser (answers per second), before and after, in one run.

"Before" is the parser as on a git ref (default ``main``): the modules of
``lm_eval_rul/factual/reading/`` are read with ``git show REF:PATH`` (or from another
checkout's folder, ``--old-root``) into a throw-away package and timed on
the same answers as the current parser. The answers are synthetic but worded the way
audio LMs word them (lists, hedges, negations, questions answered "no", agent nouns,
misspellings, filler sentences), a few thousand per run, seeded.

Two passes per parser: *cold* (new lexicon, empty caches: the compile and the first
fuzzy look-ups are paid) and *warm* (the same answers again: a run's steady state).

Usage:
    python benchmarks/bench_factual_parser.py
    python benchmarks/bench_factual_parser.py --answers 5000 --ref main
    python benchmarks/bench_factual_parser.py --old-root /work/main
"""

from __future__ import annotations

import argparse
import importlib
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]

_LABELS = {
    "instrument": ["piano", "violin", "viola", "cello", "double bass", "French horn", "oboe",
                   "bassoon", "clarinet", "flute", "harpsichord", "guitar", "drums", "organ"],
    "composer": ["Bach", "Beethoven", "Brahms", "Dvorak", "Faure", "Haydn", "Mozart", "Ravel",
                 "Schubert", "Chopin", "Vivaldi", "Debussy", "Tchaikovsky"],
    "mood": ["sad", "happy", "energetic", "calm", "dark", "epic", "mysterious", "playful",
             "melancholic", "uplifting", "tense", "romantic"],
    "regional": ["Celtic", "Japanese", "Indian", "Middle Eastern", "Latin American", "African",
                 "Chinese", "Slavic", "Caribbean", "Irish", "Egyptian"],
    "timesig": ["4/4", "3/4", "6/8", "5/4", "7/8", "common time", "three-four time"],
}  # fmt: skip
_TEMPLATES = [
    "The recording features {a} and {b}.",
    "I can hear {a}, possibly with {b} in the background.",
    "This sounds like {a}. There is no {b}.",
    "Is that {b}? No, it's actually {a}.",
    "Mostly {a}, more {a} than {b}, with a warm and expressive tone throughout the piece.",
    "{a}, {b}, and maybe {c}.",
    "It could be {a}, although the texture also suggests {b}; the dynamics are gentle.",
    "The piece is performed with great expression. I'd say {a}.",
    "Not {b} - {a}, played with rubato and a clear, singing line.",
    "A lively piece with {a} taking the lead while {b} accompanies.",
]
_FILLER = [
    "The tempo is moderate and the recording quality is good.",
    "The melody is lyrical and the harmony is rich.",
    "Overall, it is a well-balanced performance with clear phrasing.",
    "",
]


def _misspell(word: str, rng: random.Random) -> str:
    if len(word) < 6 or rng.random() > 0.3:
        return word
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def answers(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (task, answer) pairs, seeded."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        task = rng.choice(sorted(_LABELS))
        a, b, c = (_misspell(x, rng) for x in rng.sample(_LABELS[task], 3))
        text = rng.choice(_TEMPLATES).format(a=a, b=b, c=c) + " " + rng.choice(_FILLER)
        out.append((task, text.strip()))
    return out


def _old_package(ref: str, old_root: Path | None) -> str:
    """Write the old parser's modules into a temp package and return its name.

    Every module of ``lm_eval_rul/factual/reading/`` at the ref is copied (the parser's
    helpers: names, senses, fuzzy, scopes, trie...); ``genres`` is this tree's (only its
    ``GenreTree`` type is needed, and it imports the package's errors).
    """
    folder = Path(tempfile.mkdtemp(prefix="old_parser_")) / "old_factual"
    folder.mkdir()
    base = "lm_eval_rul/factual/reading"
    if old_root is not None:
        names = sorted(p.stem for p in (old_root / base).glob("*.py"))
    else:
        listing = subprocess.run(
            ["git", "ls-tree", "--name-only", f"{ref}:{base}"], cwd=ROOT, check=True,
            capture_output=True, text=True,
        ).stdout  # fmt: skip
        names = sorted(Path(n).stem for n in listing.split() if n.endswith(".py"))
    for name in names:
        rel = f"{base}/{name}.py"
        if old_root is not None:
            text = (old_root / rel).read_text(encoding="utf-8")
        else:
            text = subprocess.run(
                ["git", "show", f"{ref}:{rel}"], cwd=ROOT, check=True, capture_output=True,
                text=True,
            ).stdout  # fmt: skip
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "genres.py").write_text(
        "from lm_eval_rul.factual.reading.genres import GenreTree  # noqa: F401\n", encoding="utf-8"
    )
    sys.path.insert(0, str(folder.parent))
    return "old_factual"


def _time(parser: ModuleType, lexicon: ModuleType, cases: list[tuple[str, str]]) -> float:
    lexicons = {task: lexicon.lexicon_for(task) for task in _LABELS}
    start = time.perf_counter()
    for task, text in cases:
        parser.parse_labels(text, lexicons[task])
    return len(cases) / (time.perf_counter() - start)


def _agree(old: ModuleType, new: ModuleType, old_lex: ModuleType, new_lex: ModuleType,
           cases: list[tuple[str, str]]) -> int:  # fmt: skip
    return sum(
        old.parse_labels(t, old_lex.lexicon_for(k)).labels
        == new.parse_labels(t, new_lex.lexicon_for(k)).labels
        for k, t in cases
    )


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--answers", type=int, default=3000, help="synthetic answers (3000)")
    cli.add_argument("--ref", default="main", help="git ref of the old parser (main)")
    cli.add_argument("--old-root", type=Path, default=None, help="or a checkout's folder")
    cli.add_argument("--seed", type=int, default=0)
    args = cli.parse_args()
    cases = answers(args.answers, args.seed)
    name = _old_package(args.ref, args.old_root)
    old_lex = importlib.import_module(f"{name}.lexicon")
    old_parser = importlib.import_module(f"{name}.parser")
    new_lex = importlib.import_module("lm_eval_rul.factual.reading.lexicon")
    new_parser = importlib.import_module("lm_eval_rul.factual.reading.parser")
    figures = {}
    for label, parser, lexicon in (("before", old_parser, old_lex), ("after", new_parser, new_lex)):
        lexicon._fixed_lexicon.cache_clear()
        figures[label] = (_time(parser, lexicon, cases), _time(parser, lexicon, cases))
    print(f"{len(cases)} synthetic answers over {len(_LABELS)} tasks (seed {args.seed})")
    print(f"{'parser':<8} {'cold answers/s':>15} {'warm answers/s':>15}")
    for label, (cold, warm) in figures.items():
        source = f" ({args.old_root or args.ref})" if label == "before" else " (this tree)"
        print(f"{label:<8} {cold:>15.0f} {warm:>15.0f}{source}")
    (cold_old, warm_old), (cold_new, warm_new) = figures["before"], figures["after"]
    print(f"after / before: cold {cold_new / cold_old:.2f}x, warm {warm_new / warm_old:.2f}x")
    same = _agree(old_parser, new_parser, old_lex, new_lex, cases)
    print(f"same labels before and after: {same} of {len(cases)} answers")


if __name__ == "__main__":
    main()
