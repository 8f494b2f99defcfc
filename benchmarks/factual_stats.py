"""Item counts, label distributions and model-free baselines of the factual tasks.

Reads the real tables (no audio needed) and prints, per task: the number of items and
labels, the most frequent labels with their share of items, the mean gold-set size,
the majority-label baseline and the exact expected scores of the label-frequency
guesser (:mod:`lm_eval_rul.factual.baselines`), and the share of items for which no
``random`` clip without a shared gold label exists.

What the released tables (``--data``) lack is said, not guessed:
MusicNet's note-label files (instrument gold) and FMA's ``tracks.csv`` (genre gold).
For MusicNet instruments the script shows an *approximation* from the metadata's
``ensemble`` column, marked as such; give ``--musicnet`` (the extracted archive) or
``--fma-metadata`` (``fma_metadata/``) for the real figures.

Usage::

    python benchmarks/factual_stats.py
    python benchmarks/factual_stats.py --data path/to/factuality --top 8 --json out.json
    python benchmarks/factual_stats.py --musicnet ~/musicnet --fma-metadata ~/fma_metadata \\
        --fma-subset small
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path

from lm_eval_rul.factual.baselines import frequency_baseline, label_frequencies, majority_baseline
from lm_eval_rul.factual.datasets.fma import read_fma
from lm_eval_rul.factual.datasets.musicnet import (
    MUSICNET_STUDY_RECORDINGS,
    read_musicnet,
    read_musicnet_metadata,
)
from lm_eval_rul.factual.datasets.ocremix import read_ocremix
from lm_eval_rul.factual.items import Item, assign_random_clips
from lm_eval_rul.factual.reading.genres import read_genre_tree
from lm_eval_rul.factual.reading.labels import MUSICNET_PROGRAMS
from lm_eval_rul.factual.reading.lexicon import lexicon_for

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "factuality"

#: Instruments a MusicNet ``ensemble`` normally has: an APPROXIMATION of the gold sets,
#: which come from the note-label files (e.g. MusicNet's "Piano Quintet" is Schubert's
#: Trout quintet, with a double bass).
ENSEMBLE_HINT: dict[str, tuple[str, ...]] = {
    "Solo Piano": ("piano",),
    "String Quartet": ("violin", "viola", "cello"),
    "Accompanied Violin": ("violin", "piano"),
    "Solo Cello": ("cello",),
    "Wind Quintet": ("flute", "oboe", "clarinet", "bassoon", "horn"),
    "Solo Violin": ("violin",),
    "Piano Quartet": ("piano", "violin", "viola", "cello"),
    "Piano Trio": ("piano", "violin", "cello"),
    "Accompanied Cello": ("cello", "piano"),
    "Pairs Clarinet-Horn-Bassoon": ("clarinet", "horn", "bassoon"),
    "String Sextet": ("violin", "viola", "cello"),
    "Piano Quintet": ("piano", "violin", "viola", "cello", "contrabass"),
    "Accompanied Clarinet": ("clarinet", "piano"),
    "Horn Piano Trio": ("horn", "piano", "violin"),
    "Violin and Harpsichord": ("violin", "harpsichord"),
    "Wind Octet": ("oboe", "clarinet", "horn", "bassoon"),
    "Clarinet Quintet": ("clarinet", "violin", "viola", "cello"),
    "Solo Flute": ("flute",),
    "Clarinet-Cello-Piano Trio": ("clarinet", "cello", "piano"),
    "Wind and Strings Octet": (
        "clarinet",
        "horn",
        "bassoon",
        "violin",
        "viola",
        "cello",
        "contrabass",
    ),
    "Viola Quintet": ("violin", "viola", "cello"),
}


def _items(task: str, golds: dict[str, tuple[str, ...]]) -> list[Item]:
    return [Item(k, task, "stats", Path(f"{k}.audio"), g) for k, g in golds.items() if g]


def task_stats(task: str, items: Sequence[Item], *, top: int, overlap=None) -> dict:
    """Counts, distribution and baselines of one task's items."""
    golds = [it.gold for it in items]
    freqs = label_frequencies(golds)
    majority = majority_baseline(golds)
    frequency = frequency_baseline(golds)
    clips = assign_random_clips(items, overlap_labels=overlap) if len(items) > 1 else None
    return {
        "task": task,
        "items": len(items),
        "labels": len(freqs),
        "mean_gold_size": sum(map(len, golds)) / len(golds),
        "top_labels": [[label, share] for label, share in list(freqs.items())[:top]],
        "majority": {
            "label": next(iter(freqs)),
            "precision": majority.precision,
            "recall": majority.recall,
            "f1": majority.f1,
            "micro_f1": majority.micro_f1,
            "macro_f1": majority.macro_f1,
        },
        "frequency": frequency.to_dict(),
        "random_no_disjoint_share": clips.no_disjoint_share if clips else None,
    }


def print_stats(stats: dict, note: str = "") -> None:
    print(f"\n## {stats['task']}" + (f"  ({note})" if note else ""))
    print(
        f"items {stats['items']}, labels {stats['labels']}, "
        f"mean gold labels per item {stats['mean_gold_size']:.2f}"
    )
    shares = ", ".join(f"{label} {share:.1%}" for label, share in stats["top_labels"])
    print(f"top labels (share of items): {shares}")
    m, f = stats["majority"], stats["frequency"]
    print(
        f"majority baseline ({m['label']}): P {m['precision']:.3f} R {m['recall']:.3f} "
        f"F1 {m['f1']:.3f} (micro F1 {m['micro_f1']:.3f}, macro F1 {m['macro_f1']:.3f})"
    )
    print(
        f"frequency baseline (expected): P {f['precision']:.3f} R {f['recall']:.3f} "
        f"F1 {f['f1']:.3f} (micro F1 {f['micro_f1']:.3f}; empty {f['empty_share']:.1%}, "
        f"mean size {f['mean_pred_size']:.2f})"
    )
    if stats["random_no_disjoint_share"] is not None:
        share = stats["random_no_disjoint_share"]
        print(f"items with no random clip free of their labels: {share:.1%}")


def musicnet_from_metadata(path: Path, top: int) -> list[dict]:
    rows = read_musicnet_metadata(path)
    composers = lexicon_for("composer")
    composer_gold = {
        k: (composers.canonical(r["composer"]) or r["composer"].strip(),) for k, r in rows.items()
    }
    seconds = [float(r["seconds"]) for r in rows.values() if r.get("seconds")]
    print(f"\n# MusicNet (metadata only: {path})")
    print(
        f"recordings in the metadata copy: {len(rows)} (the study reports "
        f"{MUSICNET_STUDY_RECORDINGS}); total {sum(seconds) / 3600:.1f} h, "
        f"{min(seconds):.0f}-{max(seconds):.0f} s, median {statistics.median(seconds):.0f} s"
    )
    for chunk in (60, 30):
        windows = sum(math.ceil(s / chunk) for s in seconds)
        print(f"  {chunk} s windows: {windows} ({windows / len(seconds):.1f} per recording)")
    out = [task_stats("composer", _items("composer", composer_gold), top=top)]
    print_stats(out[0])
    hint = {k: ENSEMBLE_HINT.get(r["ensemble"].strip(), ()) for k, r in rows.items()}
    unknown = sorted({r["ensemble"] for k, r in rows.items() if not hint[k]})
    approx = task_stats("instrument (approximate)", _items("instrument", hint), top=top)
    print_stats(approx, "from the ensemble column, NOT the gold: the note-label CSVs are missing")
    if unknown:
        print(f"ensembles without a hint: {unknown}")
    return [*out, approx]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the factuality tables")
    parser.add_argument("--musicnet", type=Path, help="extracted MusicNet archive (optional)")
    parser.add_argument("--fma-metadata", type=Path, help="fma_metadata/ with tracks.csv")
    parser.add_argument("--fma-subset", default="small", help="small|medium|large|full")
    parser.add_argument("--top", type=int, default=6, help="labels listed per task")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args(argv)
    data, results = args.data, []

    if args.musicnet:
        found = read_musicnet(args.musicnet, metadata_csv=data / "musicnet_metadata.csv")
        print(f"\n# MusicNet ({args.musicnet}): {found['instrument'].counts}")
        for task in ("instrument", "composer"):
            results.append(task_stats(task, found[task].items, top=args.top))
            print_stats(results[-1])
    else:
        results += musicnet_from_metadata(data / "musicnet_metadata.csv", args.top)
    programs = ", ".join(f"{p} {name}" for p, name in MUSICNET_PROGRAMS.items())
    print(f"MIDI programs: {programs}")

    tree = read_genre_tree(data / "fma_genres.csv")
    print(
        f"\n# FMA genre tree ({data / 'fma_genres.csv'}): {len(tree.titles)} genres, "
        f"{len(tree.roots)} roots"
    )
    by_root = sorted(((tree.counts[tree.id_of(r)], r) for r in tree.roots), reverse=True)
    print(
        "roots by #tracks (FMA's count over the full dataset): "
        + ", ".join(f"{r} {n}" for n, r in by_root)
    )
    if args.fma_metadata:
        genre = read_fma(
            args.fma_metadata, Path(f"fma_{args.fma_subset}"), subset=args.fma_subset, tree=tree
        )
        print(f"FMA {args.fma_subset}: {genre.counts}")
        roots = [
            Item(it.id, "genre", "fma", it.audio, tree.to_roots(it.gold)) for it in genre.items
        ]
        for task, items in (("genre (same-node)", genre.items), ("genre (same-tree)", roots)):
            results.append(
                task_stats(task, items, top=args.top, overlap=lambda it: tree.to_roots(it.gold))
            )
            print_stats(results[-1])
    else:
        print(
            "genre items and gold sets need FMA's tracks.csv (fma_metadata.zip), which the "
            "shared copy does not have: pass --fma-metadata"
        )

    tags = data / "ocremix_remix_mood_regional_timesig_genre.csv"
    found = read_ocremix(tags, Path("<no audio needed>"))
    print(f"\n# OverClocked ReMix ({tags}): {found['mood'].counts['remixes']} remixes")
    for task in ("regional", "mood", "timesig"):
        results.append(task_stats(task, found[task].items, top=args.top))
        print_stats(results[-1])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
