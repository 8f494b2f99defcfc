"""The factual datasets in their public layouts, read into items with gold labels.

:mod:`.musicnet` (MusicNet: instruments from the note-label files, composer from
``musicnet_metadata.csv``), :mod:`.fma` (FMA: genres from ``tracks.csv`` with the
hierarchy of ``genres.csv``), :mod:`.ocremix` (OverClocked ReMix: mood, regional style and
time-signature tags), :mod:`.audio_files` (each item's recording checked before any model
loads) and :mod:`.sources` (a task's items read, sampled and paired with random partners:
``prepare_task``).
"""
