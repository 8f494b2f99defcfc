"""The README and docs/ hold together: every relative link and ``#anchor`` in README.md
and docs/*.md resolves (anchors as GitHub slugs its headings), each docs page opens by
saying what it covers, the README stays a front door (<= 300 lines) with the test command
CI runs, and the docs map lists every page."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code removed."""
    lines, fence = [], None
    for line in text.splitlines():
        marker = re.match(r"\s*(```|~~~)", line)
        if marker:
            fence = None if fence == marker.group(1) else (fence or marker.group(1))
            continue
        if fence is None:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return lines


def github_slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.

    >>> github_slug("Audio conditions (`--model_args audio=...`)")
    'audio-conditions---model_args-audio'
    >>> github_slug("Factual comprehension, robustness studies: true/false, the parser")
    'factual-comprehension-robustness-studies-truefalse-the-parser'
    """
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a Markdown page (duplicates numbered -1, -2 as GitHub does)."""
    seen: dict[str, int] = {}
    found = set()
    fence = None
    for line in page.read_text(encoding="utf-8").splitlines():
        marker = re.match(r"\s*(```|~~~)", line)
        if marker:
            fence = None if fence == marker.group(1) else (fence or marker.group(1))
            continue
        match = _HEADING.match(line) if fence is None else None
        if not match:
            continue
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(page: Path) -> list[str]:
    return [
        m.group(1)
        for line in _prose_lines(page.read_text(encoding="utf-8"))
        for m in _LINK.finditer(line)
    ]


def broken_links(page: Path) -> list[str]:
    """The links of ``page`` whose file or anchor does not exist."""
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        file = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not file.exists():
            broken.append(f"{target} (no file {file.relative_to(ROOT)})")
        elif anchor and file.suffix == ".md" and unquote(anchor) not in anchors(file):
            broken.append(f"{target} (no heading #{anchor} in {file.relative_to(ROOT)})")
    return broken


def test_the_checker_finds_a_broken_file_and_a_broken_anchor(tmp_path):
    (tmp_path / "a.md").write_text("# A page\n\n## Audio conditions (`audio=`)\n")
    page = tmp_path / "b.md"
    page.write_text(
        "# B\n\nsee [a](a.md#audio-conditions-audio), [gone](gone.md), [bad](a.md#nope),\n"
        "[self](#b), [web](https://example.com/x#y)\n\n```\n[in code](nowhere.md)\n```\n"
    )
    global ROOT  # noqa: PLW0603 - the messages name files relative to the checked tree
    saved, ROOT = ROOT, tmp_path
    try:
        assert broken_links(page) == [
            "gone.md (no file gone.md)",
            "a.md#nope (no heading #nope in a.md)",
        ]
    finally:
        ROOT = saved


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_and_anchor_resolves(page):
    assert links(page) or page.name != "README.md"
    assert broken_links(page) == []


def test_the_readme_is_a_front_door_and_docs_has_a_page_per_concern():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    docs = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md")
    assert len(docs) >= 6
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for name in docs:  # the docs map of the README and of docs/ name every page
        assert f"(docs/{name}" in readme, f"README's docs map lacks docs/{name}"
        assert f"({name}" in index, f"docs/README.md lacks {name}"


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_each_docs_page_opens_with_what_it_covers(page):
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ")
    opening = " ".join(lines[1:12])
    assert re.search(r"\b(covers|This page|is the|describes)\b", opening), opening


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = "python -m pytest -q -n 2 --dist loadfile tests"
    assert f"```bash\n{command}\n```" in readme
    assert ci.rstrip().splitlines()[-1] == command
    install = re.search(r"pip install torch==(\S+) && pip install -e \"\.\[test\]\"", readme)
    assert install, "the README's one install recipe"
    assert f"pip install -q torch=={install.group(1)}" in ci
    assert 'pip install -q -e ".[test]"' in ci


def test_the_cpu_install_note_creates_the_venv_before_the_cpu_build():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    note = readme[readme.index("**CPU-only machine?**") :]
    block = note[note.index("```bash") : note.index("```", note.index("```bash") + 3)]
    venv, cpu = block.find(". .venv/bin/activate"), block.find("whl/cpu")
    package = block.find('pip install -e ".[test]"')
    assert 0 <= venv < cpu < package, block
