"""One tiny-model builder per row of :data:`~lm_eval_rul.models.families.FAMILIES`.

:data:`FAMILY_BUILDERS` maps each family's key, the ``model_type`` its tiny checkpoint
writes in ``config.json`` (which :func:`~lm_eval_rul.models.families.family_for` resolves
to the row), to a :class:`FamilyBuilder`: what the published checkpoint ships (chat
template, audio special tokens, feature-extractor settings) and the function that writes a
random-weight model of the real class carrying them. Tests parametrise over
:func:`family_keys`, which walks ``FAMILIES`` and asks this mapping, so a row without a
builder fails collection, and :func:`builder_problems` names a row without a builder and
a builder without a row (``tests/test_family_builders.py``).

A family whose model cannot be built in CI (an optional package that does not install
beside CI's CPU torch) keeps its row here: :attr:`FamilyBuilder.not_in_ci` says why, and
:attr:`FamilyBuilder.processor_layer` builds what CI can check (its processor, or its
tokenizer and template); ``benchmarks/verify_families_by_hand.py`` builds the model where
the package is installed (docs/models.md, "Families verified by hand").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models.families import FAMILIES, Family, family_for
from .audio import TINY_FAMILIES
from .gemma3n import (
    GEMMA3N_CHAT_TEMPLATE,
    GEMMA3N_FEATURES,
    GEMMA3N_SPECIAL_TOKENS,
    gemma3n_processor,
    make_tiny_gemma3n,
)
from .granite_speech import (
    GRANITE_CHAT_TEMPLATE,
    GRANITE_FEATURES,
    GRANITE_TOKENS,
    granite_tokenizer,
    make_tiny_granite_speech,
)
from .phi4_multimodal import (
    PHI4_CHAT_TEMPLATE,
    PHI4_FEATURES,
    PHI4_TOKENS,
    make_tiny_phi4_multimodal,
)
from .published import (
    PUBLISHED_FEATURES,
    PUBLISHED_TEMPLATES,
    PUBLISHED_TOKENS,
    make_published_lm,
)

__all__ = [
    "FamilyBuilder",
    "FAMILY_BUILDERS",
    "family_keys",
    "builder_problems",
    "TinyModels",
]


@dataclass(frozen=True)
class FamilyBuilder:
    """How to build a tiny model of one ``FAMILIES`` row, and what it must carry.

    Args:
        key: The ``model_type`` the tiny checkpoint writes (a thinker's, for Qwen Omni).
        build: ``build(directory, seed=0) -> directory``: a random-weight model of the real
            class with the published template, tokens and processor settings.
        chat_template: The published chat template, or None where the processor renders
            its own (Qwen2-Audio's ``default_chat_template``; Voxtral's mistral-common).
        special_tokens: The audio (and turn) special tokens the published tokenizer carries,
            one id each.
        features: The published feature extractor's class (``feature_extractor``) and the
            settings it is built with.
        not_in_ci: Why CI cannot build the model ("" where it can).
        processor_layer: Where CI cannot build the model: builds, in a folder, what CI can
            check (the processor, or the tokenizer with its template) and returns it.
    """

    key: str
    build: Callable[..., Path]
    chat_template: str | None
    special_tokens: tuple[str, ...]
    features: Mapping[str, Any] = field(default_factory=dict)
    not_in_ci: str = ""
    processor_layer: Callable[[Path], Any] | None = None

    @property
    def family(self) -> Family:
        """The ``FAMILIES`` row this builder's checkpoints load as."""
        return family_for(self.key)

    @property
    def fast(self) -> bool:
        """Also built by :func:`~lm_eval_rul.testing.audio.make_tiny_audio_lm` (one generic
        template, a 2-second window: the fast fixtures of the scoring machinery)."""
        return self.key in TINY_FAMILIES


def _published(key: str) -> FamilyBuilder:
    def build(directory: str | Path, seed: int = 0) -> Path:
        return make_published_lm(directory, key, seed=seed)

    return FamilyBuilder(
        key=key,
        build=build,
        chat_template=PUBLISHED_TEMPLATES[key],
        special_tokens=PUBLISHED_TOKENS[key],
        features=PUBLISHED_FEATURES[key],
    )


#: The one mapping from a family's key to its builder, one per row of ``FAMILIES``.
FAMILY_BUILDERS: dict[str, FamilyBuilder] = {
    builder.key: builder
    for builder in (
        *(_published(key) for key in PUBLISHED_TEMPLATES),
        FamilyBuilder(
            key="phi4_multimodal",
            build=make_tiny_phi4_multimodal,
            chat_template=PHI4_CHAT_TEMPLATE,
            special_tokens=PHI4_TOKENS,
            features=PHI4_FEATURES,
        ),
        FamilyBuilder(
            key="gemma3n",
            build=make_tiny_gemma3n,
            chat_template=GEMMA3N_CHAT_TEMPLATE,
            special_tokens=tuple(GEMMA3N_SPECIAL_TOKENS.values()),
            features=GEMMA3N_FEATURES,
            not_in_ci=(
                "Gemma3nForConditionalGeneration's vision tower is a timm model, and timm does not "
                "install beside CI's CPU torch; CI checks the real Gemma3nProcessor against lalm's "
                "audio-span logic (tests/test_lalm_gemma3n.py)"
            ),
            processor_layer=gemma3n_processor,
        ),
        FamilyBuilder(
            key="granite_speech",
            build=make_tiny_granite_speech,
            chat_template=GRANITE_CHAT_TEMPLATE,
            special_tokens=GRANITE_TOKENS,
            features=GRANITE_FEATURES,
            not_in_ci=(
                "GraniteSpeechFeatureExtractor needs torchaudio, which does not install beside "
                "CI's CPU torch; CI checks its tokenizer, special tokens and chat template"
            ),
            processor_layer=granite_tokenizer,
        ),
    )
}


def family_keys(
    *, in_ci: bool | None = None, content: str | None = None, fast: bool | None = None
) -> list[str]:
    """The builder keys of ``FAMILIES``' rows, in the table's order, optionally filtered.

    Args:
        in_ci: True: rows whose model CI builds; False: rows CI checks by their
            processor layer only.
        content: Only rows whose family writes audio this way (``typed``, ``inline``).
        fast: True: rows :func:`~lm_eval_rul.testing.audio.make_tiny_audio_lm` builds too.

    Raises:
        LookupError: naming a row without a builder (so a test parametrised over this
            fails at collection).
    """
    keys = []
    for family in FAMILIES:
        found = [b for b in FAMILY_BUILDERS.values() if b.key in family.model_types]
        if len(found) != 1:
            raise LookupError(f"FAMILIES row {family.name!r}: {len(found)} builders, want 1")
        builder = found[0]
        if in_ci is not None and (not builder.not_in_ci) is not in_ci:
            continue
        if content is not None and family.content != content:
            continue
        if fast is not None and builder.fast is not fast:
            continue
        keys.append(builder.key)
    return keys


def builder_problems(
    families: Iterable[Family] = FAMILIES,
    builders: Mapping[str, FamilyBuilder] | None = None,
) -> list[str]:
    """What ties rows and builders one to one does not: a row without a builder, a row with
    two, a builder whose key is no row's ``model_type`` or is not its mapping key."""
    builders = FAMILY_BUILDERS if builders is None else builders
    families = tuple(families)
    problems = []
    for family in families:
        count = sum(key in family.model_types for key in builders)
        if count != 1:
            problems.append(f"row {family.name!r} has {count} builders (want 1)")
    for key, builder in builders.items():
        if builder.key != key:
            problems.append(f"builder {key!r} writes model_type {builder.key!r}")
        if not any(key in family.model_types for family in families):
            problems.append(f"builder {key!r} is for no FAMILIES row")
    return problems


class TinyModels:
    """Tiny published-conventions models, each built on first use into ``root`` (one per
    key for a whole test session: the test files share one instance)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._built: dict[str, Path] = {}
        self._layers: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Path:
        if key not in self._built:
            builder = FAMILY_BUILDERS[key]
            if builder.not_in_ci:
                raise RuntimeError(f"{key}: CI builds no model: {builder.not_in_ci}")
            self._built[key] = builder.build(self.root / key)
        return self._built[key]

    def processor_layer(self, key: str) -> Any:
        """What CI checks of a family it cannot build (see :class:`FamilyBuilder`), built
        once into :meth:`layer_dir`."""
        if key not in self._layers:
            layer = FAMILY_BUILDERS[key].processor_layer
            if layer is None:
                raise ValueError(f"{key}: CI builds the model; load its processor instead")
            self._layers[key] = layer(self.layer_dir(key))
        return self._layers[key]

    def layer_dir(self, key: str) -> Path:
        """The folder :meth:`processor_layer` saves ``key``'s files in."""
        return self.root / f"{key}_processor"
