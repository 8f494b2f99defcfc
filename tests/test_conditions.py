"""The audio conditions as objects: the registry, unchanged keys and draws, ``reversed``'s waveform.

The keys and random draws pinned here are those ea782eb (before the conditions became
objects) computed for the same inputs: they key users' resume caches (``lalm``'s
``lalm_results.sqlite``, ``lalm-api``'s) and decide which clip ``random`` plays, so they
must never change.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from lm_eval_rul.audio import (
    AudioError,
    AudioSpec,
    Condition,
    MissingAudioError,
    UnknownConditionError,
    check_audio_available,
    condition_audio,
    condition_key,
    condition_named,
    condition_names,
    random_clip,
    refs_to_check,
    register_clip_pool,
    register_condition,
    registered_conditions,
)
from lm_eval_rul.audio.arrays import register_array
from lm_eval_rul.audio.conditions import READS
from lm_eval_rul.audio.requests import describe_heard
from lm_eval_rul.audio.sources import file_ref
from lm_eval_rul.cache import digest
from lm_eval_rul.factual.items import Item, assign_random_clips
from lm_eval_rul.models.core import StoredResults
from lm_eval_rul.testing.audio import synth_clip, write_clip

FIELDS = ("name", "description", "reads", "audio_slot", "synthetic_length", "alters_clip",
          "report_order", "colour", "key_kind")  # fmt: skip


def test_every_condition_declares_every_field():
    conditions = registered_conditions()
    assert [c.name for c in conditions] == list(condition_names())
    assert set(condition_names()) == {
        "original", "reversed", "noise", "silence", "random", "none", "excerpt"
    }
    for condition in conditions:
        for field in FIELDS:
            assert hasattr(condition, field), (condition.name, field)
        for method in ("key", "waveform", "describe"):
            assert getattr(type(condition), method) is not getattr(Condition, method)
        assert isinstance(condition.description, str) and len(condition.description) > 10
        assert condition.reads in READS
        assert re.fullmatch(r"#[0-9A-F]{6}", condition.colour), condition.colour
        assert condition_named(condition.name) is condition
    for field in ("name", "report_order", "colour"):
        values = [getattr(c, field) for c in conditions]
        assert len(set(values)) == len(values), field
    assert condition_named(None).name == "none"  # lm-eval parses model_args none to None


def test_a_condition_missing_a_field_or_reusing_a_colour_is_refused():
    class NoColour(Condition):
        name, description, reads, report_order = "x-no-colour", "no colour", "nothing", 99

        def key(self, doc, spec):
            return ("x",)

        def waveform(self, key, doc, spec):
            return None

        def describe(self, key):
            return "x"

    with pytest.raises(TypeError, match="does not declare colour"):
        register_condition(NoColour)
    NoColour.colour = condition_named("noise").colour
    with pytest.raises(TypeError, match="colour '#C44E52' is already noise's"):
        register_condition(NoColour)
    assert "x-no-colour" not in condition_names()
    with pytest.raises(UnknownConditionError, match="use one of original, reversed, noise"):
        condition_named("x-no-colour")


def _golden_inputs():
    docs = [
        {"id": "448", "audio_ref": "clip-a.wav", "audio_track": "t1"},
        {"id": "7", "audio_ref": "clip-b.wav", "audio_track": "t2", "audio_window": [3.0, 9.0]},
    ]
    pool = register_clip_pool([(f"clip-{c}.wav", f"t{i // 2}") for i, c in enumerate("abcdefghij")])
    for doc in docs:
        doc["audio_pool"] = pool
    return docs, pool


def test_existing_keys_are_those_of_ea782eb():
    docs, _ = _golden_inputs()
    keys = {}
    for cond in ("original", "noise", "silence", "random", "none"):
        for sr, limit in ((16000, 30.0), (24000, None)):
            spec = AudioSpec(sr, limit, condition=cond, seed=3, noise_seconds=5.0, noise_std=0.5)
            keys[f"{cond}/{sr}"] = [condition_key(d, spec) for d in docs]
    assert keys["original/16000"] == [
        ("clip", "clip-a.wav", 16000, 30.0),
        ("clip", "clip-b.wav", 16000, 30.0, 3.0, 9.0),
    ]
    assert keys["noise/24000"] == [
        ("noise", 3, "448", 120000, 0.5, 24000),
        ("noise", 3, "7", 120000, 0.5, 24000),
    ]
    assert keys["silence/16000"] == [("silence", 80000, 16000)] * 2
    assert keys["none/24000"] == [("none",)] * 2
    assert keys["random/16000"] == [
        ("clip", "clip-i.wav", 16000, 30.0),
        ("clip", "clip-i.wav", 16000, 30.0, 3.0, 9.0),
    ]
    assert {k: digest([list(key) for key in v]) for k, v in keys.items()} == KEY_DIGESTS_ALL


#: digest() of every key list above, computed by ea782eb's code on the same inputs.
KEY_DIGESTS_ALL: dict[str, str] = {
    "original/16000": "b20f7d3e879a9e7a481a6d515e7c56b321b9c51ad3a15ab1318b49164beffec6",
    "original/24000": "be5642703a64345f92af878987fbde2fa63eca5f11302dcfda476423c0d31c35",
    "noise/16000": "b6f291dab3713530dc0f60ea7522f055b0d1f6feb499e040369883e4820e578c",
    "noise/24000": "7f99663c4a1d54de835c808ffb1de2e4ba69f8335252f7f594712a0de5047742",
    "silence/16000": "de64753f07ee52dbf454af5f3a5cd7ade08adf4fa54a24e390455b7f14a1d7c5",
    "silence/24000": "1cc63193dcc510bcb3603ac12e228471c33c4c34205598cc853a42aec41b8aa1",
    "random/16000": "49ae9ca282e6636e6f21977113a28c63d3edc3fcab63dda25c4a57cc839e00df",
    "random/24000": "e51b98dfb4f4d061bff52d12e7c2a342a61b8cbb9e1cf226328f225677e67394",
    "none/16000": "c247a2879ec531e9903e7d3a5fff17d936fa7a996034779fffdb2e9a07b820eb",
    "none/24000": "c247a2879ec531e9903e7d3a5fff17d936fa7a996034779fffdb2e9a07b820eb",
}


def test_random_draws_are_those_of_ea782eb():
    _, pool = _golden_inputs()
    docs = [
        {
            "id": str(i),
            "audio_ref": f"clip-{c}.wav",
            "audio_track": f"t{i // 2}",
            "audio_pool": pool,
        }
        for i, c in enumerate("abcdefghij")
    ]
    assert {s: "".join(random_clip(d, s)[5] for d in docs) for s in (0, 1, 7)} == MC_DRAWS
    labels = ["piano", "violin", "cello", "flute", "organ"]
    items = [
        Item(
            f"r{i}",
            "instrument",
            "musicnet",
            Path(f"/data/{i % 17}.wav"),
            tuple(sorted({labels[i % 5], labels[(i * 3) % 5]})),
        )  # fmt: skip
        for i in range(40)
    ]
    for seed, expected in FACTUAL_DRAWS.items():
        partners = assign_random_clips(items, seed=seed).partner
        assert [partners[f"r{i}"] for i in range(40)] == expected


#: random_clip(doc, seed) of the ten pool documents (the clip's letter), by ea782eb's code.
MC_DRAWS: dict[int, str] = {
    0: "cdehaceaba",
    1: "fihfbaccda",
    7: "hfbggcecga",
}
#: assign_random_clips(items, seed).partner of r0..r39, by ea782eb's code.
FACTUAL_DRAWS: dict[int, list[str]] = {
    0: [
        "r24",
        "r25",
        "r3",
        "r2",
        "r15",
        "r2",
        "r9",
        "r3",
        "r15",
        "r21",
        "r16",
        "r15",
        "r23",
        "r37",
        "r6",
        "r22",
        "r0",
        "r33",
        "r25",
        "r30",
        "r11",
        "r35",
        "r18",
        "r37",
        "r20",
        "r4",
        "r10",
        "r8",
        "r15",
        "r0",
        "r1",
        "r4",
        "r8",
        "r32",
        "r15",
        "r8",
        "r25",
        "r35",
        "r2",
        "r36",
    ],
    1234: [
        "r4",
        "r39",
        "r25",
        "r5",
        "r15",
        "r36",
        "r29",
        "r30",
        "r27",
        "r31",
        "r16",
        "r35",
        "r23",
        "r10",
        "r0",
        "r22",
        "r9",
        "r5",
        "r0",
        "r6",
        "r17",
        "r9",
        "r35",
        "r30",
        "r26",
        "r19",
        "r30",
        "r18",
        "r10",
        "r15",
        "r17",
        "r4",
        "r0",
        "r2",
        "r25",
        "r3",
        "r35",
        "r35",
        "r7",
        "r21",
    ],
}


def test_stored_results_keys_of_a_file_are_unchanged_and_reversed_wraps_them(tmp_path):
    path = write_clip(tmp_path / "a.wav", synth_clip("tone", sr=16_000, seed=1), 16_000)
    doc = {"id": "1", "audio_ref": file_ref(path)}
    stored = StoredResults(None, {})
    original = condition_key(doc, AudioSpec(16_000, 30.0))
    backwards = condition_key(doc, AudioSpec(16_000, 30.0, "reversed"))
    heard = stored.heard_key(original)
    assert heard[0] == "clip" and heard[1] != file_ref(path) and heard[2:] == [16_000, 30.0]
    assert stored.heard_key(backwards) == ["reversed", heard]
    assert backwards == ("reversed", original) and backwards != original
    assert stored.heard_key(("clips", original, backwards)) == ["clips", heard, ["reversed", heard]]


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    """A 3 s clip at 22.05 kHz whose first and second halves differ (a rising sweep)."""
    folder = tmp_path_factory.mktemp("reversed")
    return write_clip(
        folder / "sweep.flac", synth_clip("sweep", sr=22_050, seed=2, seconds=3.0), 22_050
    )


@pytest.mark.parametrize(("rate", "limit"), [(16_000, None), (16_000, 1.25), (24_000, 2.0)])
def test_reversed_is_the_heard_clip_backwards_sample_for_sample(clip, rate, limit):
    doc = {"id": "9", "audio_ref": file_ref(clip)}
    key, heard = condition_audio(doc, AudioSpec(rate, limit))
    rkey, backwards = condition_audio(doc, AudioSpec(rate, limit, "reversed"))
    # decoded, resampled and trimmed to the limit first, then reversed: the window the model
    # hears under original, backwards (not the clip's last `limit` seconds)
    assert rkey == ("reversed", key) and backwards.dtype == np.float32
    np.testing.assert_array_equal(backwards, heard[::-1])
    assert not backwards.flags.writeable
    if limit is not None:
        whole = condition_audio(doc, AudioSpec(rate, None))[1]
        assert heard.size == round(limit * rate) < whole.size
        assert not np.array_equal(backwards, whole[::-1][: heard.size])
    assert describe_heard(rkey) == f"{describe_heard(key)}, reversed"


def test_reversed_plays_a_documents_window_backwards_and_harness_arrays_too(clip):
    spec, rspec = AudioSpec(16_000, 2.0), AudioSpec(16_000, 2.0, "reversed")
    doc = {"id": "9", "audio_ref": file_ref(clip), "audio_window": [0.5, 2.0]}
    window = condition_audio(doc, spec)[1]
    assert window.size == 24_000
    np.testing.assert_array_equal(condition_audio(doc, rspec)[1], window[::-1])
    assert describe_heard(condition_key(doc, rspec)).endswith("[0.5-2 s], reversed")
    wave = synth_clip("chord", sr=16_000, seed=3, seconds=1.0)
    array_doc = {"id": "h", "audio_ref": register_array(wave, 16_000)}
    np.testing.assert_array_equal(condition_audio(array_doc, rspec)[1], wave[::-1])


def test_reversed_reads_the_items_own_clip(clip, tmp_path):
    with pytest.raises(MissingAudioError, match="audio=reversed needs the clips"):
        check_audio_available([{"id": "1", "benchmark": "b"}], "reversed")
    with pytest.raises(MissingAudioError, match="No audio for 1 of 1 items: ids 1"):
        condition_key({"id": "1"}, AudioSpec(16_000, None, "reversed"))
    docs = [
        {
            "id": "1",
            "audio_ref": file_ref(clip),
            "audio_pool": register_clip_pool([(file_ref(clip), "t")]),
        }
    ]
    assert refs_to_check(docs, "reversed") == refs_to_check(docs, "original") == [file_ref(clip)]
    assert refs_to_check(docs, "noise") == []
    too_long = r"window 0.0-3.0 s is 3.0 s long, but the model hears at most 2 s"
    with pytest.raises(AudioError, match=too_long):
        condition_key(dict(docs[0], audio_window=[0.0, 3.0]), AudioSpec(16_000, 2.0, "reversed"))
