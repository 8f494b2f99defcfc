"""Reading answers: an audio LM's words into labels, true/false or a chosen option.

The label vocabularies (:mod:`.labels`, :mod:`.genres`) and what names them
(:mod:`.aliases`, :mod:`.names`: names outside the vocabulary, :mod:`.senses`: other
senses of the same words, :mod:`.fuzzy`: bounded misspellings, :mod:`.guards`: the real words
they never take for a name, :mod:`.trie`); the lexicon
parser (:mod:`.lexicon`, :mod:`.scopes`: negation and rejection, :mod:`.parser`); the
readers of the studies' answers (:mod:`.answers`, :mod:`.truefalse`, :mod:`.binary`); and
the LLM parser (:mod:`.llm_parser`) with its re-reading of a run (:mod:`.reparse`).
``docs/factual.md`` ("How answers are read") gives the rules.
"""
