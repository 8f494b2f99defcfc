"""QA audit: rules that flag questions a listener cannot answer from the audio.

MuChoMusic's questions were written by an LLM from a text caption of each clip, and
some of them show it: an answer that says the caption did not specify something, a
question that points at "the description", facts about how the recording was made,
answers too vague or too short to answer their own question. Each rule below is a
small, documented pattern, checked on the parts of a question it names; every hit is a
:class:`Flag` carrying the rule's name, where it matched and the matched words.

Rules (:data:`RULES`, in report order):

``not_specified``
    An option saying the information is missing: "Not specified in the description",
    "Not mentioned", "Unspecified", "Unknown", "Cannot be determined", "(unspecified)".
    A listener cannot hear that a caption left something out. Checked on every option.
``refers_to_description``
    Text pointing at a caption or annotation the listener never sees: "the
    description", "based on the description", "the described song", "is described
    as/to", "mentioned", "according to", "caption", "the tags". "Describe ..." and "how
    would you describe" are ordinary questions and do not match. Question and options.
``recording_metadata``
    Facts about how the music was made rather than how it sounds: "recorded in/at/on/
    during" (not "in mono/stereo"), "released in/on/by/as", "produced/written/composed/
    mixed/mastered/engineered/arranged by", "record label". "Performed by" does not
    match (who performs can be heard). Question and options.
``too_short``
    A one-word correct answer that cannot answer its question: a generic word
    ("Effect", "Sound", "Instrument", ...) or one echoing a word of the question
    ("Which keyboard instrument ...?" -> "Keyboard"), unless the question offers it as
    an alternative ("fast or slow?" -> "Fast"). Correct answer only.
``gender_only_who``
    A "who" question answered only with a gender ("Male", "Female voice", "Male
    vocalist"): it names no one. Correct answer only.
``annotation_leak``
    An option carrying the annotator's reasoning ("... - Explanation: ..."), which gives
    the answer away. Every option.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..questions import Question

__all__ = ["Flag", "AuditRule", "RULES", "RULE_NAMES", "audit_question", "audit_questions"]

#: Where a rule looks: ``question``, ``correct_answer``, ``distractors``.
QUESTION, CORRECT, DISTRACTORS = "question", "correct_answer", "distractors"
_OPTIONS = (CORRECT, DISTRACTORS)
_EVERYWHERE = (QUESTION, CORRECT, DISTRACTORS)


@dataclass(frozen=True)
class Flag:
    """One rule hit.

    Attributes:
        rule: The rule's name.
        field: ``question``, ``correct_answer`` or ``distractors[i]``.
        text: The whole text the rule looked at.
        match: The words that matched.
    """

    rule: str
    field: str
    text: str
    match: str

    def to_dict(self) -> dict:
        return {"rule": self.rule, "field": self.field, "text": self.text, "match": self.match}


@dataclass(frozen=True)
class AuditRule:
    """A named pattern, where it applies, and why a hit makes a question unanswerable.

    Attributes:
        name: Rule name, as written in the findings.
        matches: What it matches, in words.
        why: Why a hit means the audio cannot settle the question.
        fields: Parts of the question it looks at (``question``, ``correct_answer``,
            ``distractors``).
        match: ``(text, question) -> matched words or None``.
    """

    name: str
    matches: str
    why: str
    fields: tuple[str, ...]
    match: Callable[[str, Question], str | None]


def _regex_rule(*patterns: str) -> Callable[[str, Question], str | None]:
    compiled = [re.compile(p, re.IGNORECASE) for p in patterns]

    def match(text: str, _question: Question) -> str | None:
        for pattern in compiled:
            found = pattern.search(text)
            if found:
                return found.group(0).strip()
        return None

    return match


_MISSING = r"(?:specified|mentioned|stated|given|provided|indicated|described|known|determinable)"
_not_specified = _regex_rule(
    rf"^\W*(?:it\s+is\s+|is\s+)?(?:not|never)\s+{_MISSING}\b",
    r"^\W*(?:unspecified|unknown|undetermined|indeterminate|n/a|none\s+(?:given|mentioned))\b",
    r"^\W*can(?:not|'t|\s+not)\s+be\s+(?:determined|told|known|specified)\b",
    r"\(\s*(?:unspecified|not\s+specified|unknown|not\s+mentioned)\s*\)",
)

_NOTES = r"(?:descriptions?|captions?|tags|annotations?|metadata)"
_refers_to_description = _regex_rule(
    rf"\b(?:based\s+on|according\s+to|from|in|per|fits)\s+(?:the\s+)?(?:\w+\s+)?{_NOTES}\b",
    rf"\b(?:the|this|that)\s+(?:\w+\s+)?{_NOTES}\b",
    r"\bcaptions?\b",
    r"\b(?:the|as)\s+described\b",
    r"\b(?:is|are|was|were)\s+described\s+(?:as|to|in|by)\b",
    r"\bmentioned\b",
    r"\baccording\s+to\b",
)

_recording_metadata = _regex_rule(
    r"\brecorded\s+(?:in|at|on|during)\b(?!\s+(?:mono|stereo)\b)",
    r"\breleased\s+(?:in|on|by|as|under|through)\b",
    r"\b(?:produced|written|composed|mixed|mastered|engineered|arranged)\s+by\b",
    r"\brecord\s+label\b",
)

#: One-word answers too generic to answer any question on their own.
GENERIC_ANSWERS = frozenset(
    "effect effects sound sounds instrument instruments instrumentation music audio thing "
    "things something element elements part parts other various stuff type kind style "
    "technique".split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'&/-]*")
_ARTICLES = frozenset({"a", "an", "the"})


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _too_short(text: str, question: Question) -> str | None:
    words = [w for w in _WORD.findall(text.lower()) if w not in _ARTICLES]
    if len(words) != 1:
        return None
    word = words[0]
    if word in GENERIC_ANSWERS:
        return text.strip()
    asked = question.question.lower()
    if _stem(word) not in {_stem(w) for w in _WORD.findall(asked)}:
        return None
    offered = rf"\b{re.escape(word)}\w*\s+or\b|\bor\s+(?:an?\s+|the\s+)?{re.escape(word)}"
    return None if re.search(offered, asked) else text.strip()


_WHO = re.compile(
    r"^\W*who\b|\bwho\s+(?:is|are|was|were|sings?|plays?|performs?|provides?)\b", re.I
)
_GENDERS = frozenset(
    "male males female females man men woman women boy boys girl girls masculine feminine".split()
)
_VOICE_WORDS = frozenset(
    "voice voices vocal vocals vocalist vocalists singer singers singing lead backing main "
    "primary solo soloist and a an the".split()
)


def _gender_only_who(text: str, question: Question) -> str | None:
    if not _WHO.search(question.question):
        return None
    words = _WORD.findall(text.lower())
    if (
        words
        and any(w in _GENDERS for w in words)
        and all(w in _GENDERS or w in _VOICE_WORDS for w in words)
    ):
        return text.strip()
    return None


_annotation_leak = _regex_rule(r"\b(?:explanation|reasoning|justification|rationale)\s*:")

#: The audit rules, in report order.
RULES: tuple[AuditRule, ...] = (
    AuditRule(
        "not_specified",
        'an option saying the information is missing ("Not specified in the description", '
        '"Unspecified", "Unknown", "Cannot be determined", "(unspecified)")',
        "a listener cannot hear that a caption left something out",
        _OPTIONS,
        _not_specified,
    ),
    AuditRule(
        "refers_to_description",
        'a reference to a text the listener never sees ("the description", "based on the '
        'description", "the described ...", "mentioned", "according to", "caption", "tags")',
        "the question is about the caption, not the audio",
        _EVERYWHERE,
        _refers_to_description,
    ),
    AuditRule(
        "recording_metadata",
        'how the music was made ("recorded in/at/on/during", "released in/by", '
        '"produced/written/composed/mixed by", "record label")',
        "recording and release facts cannot be heard",
        _EVERYWHERE,
        _recording_metadata,
    ),
    AuditRule(
        "too_short",
        "a one-word correct answer that is a generic word or echoes its own question's "
        "wording (unless offered as an alternative: 'fast or slow?')",
        "the answer does not answer the question, so no option is clearly right",
        (CORRECT,),
        _too_short,
    ),
    AuditRule(
        "gender_only_who",
        'a "who" question answered only with a gender ("Male", "Female voice")',
        "a gender names no one: the answer does not fit the question",
        (CORRECT,),
        _gender_only_who,
    ),
    AuditRule(
        "annotation_leak",
        'an option carrying the annotator\'s reasoning ("... - Explanation: ...")',
        "the option's own text gives the answer away",
        _OPTIONS,
        _annotation_leak,
    ),
)
RULE_NAMES: tuple[str, ...] = tuple(rule.name for rule in RULES)


def audit_question(question: Question, rules: Sequence[AuditRule] = RULES) -> list[Flag]:
    """Every rule hit on ``question``, in rule order, then question / answer / distractors."""
    parts = [(QUESTION, QUESTION, question.question), (CORRECT, CORRECT, question.correct_answer)]
    parts += [
        (DISTRACTORS, f"distractors[{i}]", text) for i, text in enumerate(question.distractors)
    ]
    flags = []
    for rule in rules:
        for kind, field, text in parts:
            if kind in rule.fields:
                found = rule.match(text, question)
                if found:
                    flags.append(Flag(rule.name, field, text, found))
    return flags


def audit_questions(
    questions: Sequence[Question], rules: Sequence[AuditRule] = RULES
) -> dict[str, list[Flag]]:
    """``{question id: flags}`` for every question (an empty list when clean)."""
    return {q.id: audit_question(q, rules) for q in questions}
