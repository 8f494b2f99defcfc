"""Test doubles of the suite: loopback HTTP servers and the bridge's research-shaped model.

Not part of the installed package (the wheel holds ``lm_eval_rul`` only): ``tests/conftest.py``
and ``tests_vllm/conftest.py`` put ``tests/`` on ``sys.path``, so tests import them as
``doubles.<module>``; a subprocess or a benchmark script gets the same with
``PYTHONPATH=tests`` (``PYTHONPATH=tests python -m doubles.openai_server PRETRAINED``).

Modules: :mod:`.openai_server` (a loopback OpenAI-compatible chat server running a tiny real
audio LM, for ``lalm-api``; its HTTP side :mod:`.openai_http`), :mod:`.scripted_http` (a
loopback server scripted byte by byte: redirects, drips, non-UTF-8 bodies), :mod:`.chat`
(a scripted ``local-chat-completions`` endpoint for the text LLMs: judge, parser,
distractor generator), :mod:`.vllm_server` (a real vLLM OpenAI server in a subprocess, for
``tests_vllm/``), :mod:`.bridge` (a tiny research-shaped audio LM, its bridge adapter, and
interpreters without ``lm_eval_rul``, for ``lm-eval-rul bridge``).
"""
