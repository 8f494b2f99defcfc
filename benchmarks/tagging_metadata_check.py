"""Validate the tagging readers on the releases' real metadata (labels only, no audio).

Reads a folder laid out as ``gtzan/test_filtered.txt``, ``mtg-jamendo/autotagging_*-test.tsv``
and ``magnatagatune/cmi_test.tsv`` + ``top50_tags.txt`` and prints the counts the papers
give (290 GTZAN test clips; MTG-Jamendo's 87 / 56 / 40 / 50 tags), each vocabulary's
popularity baseline (micro-F1 of always the k most frequent tags) and whether the
MagnaTagATune tag order matches :data:`lm_eval_rul.tagging.MTT_TOP50`.

Usage:
    python benchmarks/tagging_metadata_check.py /path/to/tagging-metadata
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_rul.tagging import MTT_TOP50, popularity_baseline, popularity_tags, read_gtzan_split
from lm_eval_rul.tagging.readers import _split_paths, read_mtg_tsv, vocabulary_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    root = parser.parse_args().root
    gtzan = read_gtzan_split(root / "gtzan" / "test_filtered.txt")
    genres = {c.tags[0] for c in gtzan}
    print(f"GTZAN test: {len(gtzan)} clips, {len(genres)} genres")
    for task in ("genre", "moodtheme", "instrument", "top50tags"):
        clips = read_mtg_tsv(root / "mtg-jamendo" / f"autotagging_{task}-test.tsv", task)
        tags = vocabulary_of(clips)
        gold = [c.tags for c in clips]
        base = popularity_baseline(gold, tags)
        top = ", ".join(popularity_tags(gold, tags))
        print(f"MTG-Jamendo {task}: {len(clips)} tracks, {len(tags)} tags, popularity "
              f"baseline micro-F1 {base.micro_f1:.4f} ({top})")  # fmt: skip
    order = (root / "magnatagatune" / "top50_tags.txt").read_text().split("\n")
    listed = _split_paths(root / "magnatagatune" / "cmi_test.tsv")
    same = tuple(t for t in order if t) == MTT_TOP50
    print(f"MagnaTagATune test list: {len(listed)} clips; tag order as MTT_TOP50: {same}")


if __name__ == "__main__":
    main()
