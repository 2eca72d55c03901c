"""Every example the README and docs/ mark runnable runs, against the bundled models.

A fenced block whose info string is ``sh runnable`` is run line by line with ``bash`` in a folder
of its own that sees the repository's ``resources``, ``tests`` and ``docs`` (so a file an example
writes lands there), the build's ``placer`` first on PATH, in a workspace of its own; each
command must exit 0 (a line ending in a backslash goes on to the next). A ``text output`` block
right after it (no other block between) is the output the page shows:
every line of it must appear in what the commands printed, with its numbers taken as any number
(times differ from run to run) and runs of spaces as any space. A ``python runnable`` block runs
with the build's module, in such a folder too, and must not raise.

  PLACER_BIN_DIR=build/app PYTHONPATH=build/python python3 -m pytest tests/docs
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"^```(.*)$")
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


def blocks(page):
    """(info string, text, first line) of each fenced block of a page, in order."""
    out, info, body, start = [], None, [], 0
    for number, line in enumerate(page.read_text().split("\n"), 1):
        fence = FENCE.match(line)
        if fence and info is None:
            info, body, start = fence.group(1).strip(), [], number
        elif line.startswith("```") and info is not None:
            out.append((info, "\n".join(body), start))
            info = None
        elif info is not None:
            body.append(line)
    return out


def examples(kind):
    found = []
    for page in PAGES:
        listed = blocks(page)
        for i, (info, text, line) in enumerate(listed):
            if info != f"{kind} runnable":
                continue
            shown = None
            if i + 1 < len(listed) and listed[i + 1][0] == "text output":
                shown = listed[i + 1][1]
            name = f"{page.relative_to(ROOT)}:{line}"
            found.append(pytest.param(text, shown, id=name))
    return found


def sandbox(folder):
    """A folder that sees the repository's data by the same relative paths."""
    folder.mkdir()
    for name in ("resources", "tests", "docs"):
        (folder / name).symlink_to(ROOT / name)
    return folder


def commands(text):
    """The commands of a shell block: continued lines joined, comments and blanks left out."""
    out, pending = [], ""
    for line in text.split("\n"):
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line = (pending + line).split("  # ")[0].strip()
        pending = ""
        if line and not line.startswith("#"):
            out.append(line)
    return out


def loose(line):
    # Spaces around numbers and words are any space; numbers any number.
    tokens = re.findall(f"{NUMBER}|\\S+", line.strip())
    regex = r"\s*".join(NUMBER if re.fullmatch(NUMBER, t) else re.escape(t) for t in tokens)
    return re.compile(regex)


@pytest.mark.parametrize("text,shown", examples("sh"))
def test_shell_example(text, shown, tmp_path):
    bin_dir = os.path.abspath(os.environ.get("PLACER_BIN_DIR", str(ROOT / "build" / "app")))
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}",
               XDG_DATA_HOME=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    printed = ""
    folder = sandbox(tmp_path / "example")
    for command in commands(text):
        done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        printed += done.stdout
    if shown:
        lines = printed.split("\n")
        for want in shown.split("\n"):
            if want.strip():
                regex = loose(want)
                assert any(regex.fullmatch(got.strip()) for got in lines), \
                    f"the page shows '{want}', which the commands did not print:\n{printed}"


@pytest.mark.parametrize("text,shown", examples("python"))
def test_python_example(text, shown, monkeypatch, tmp_path):
    monkeypatch.chdir(sandbox(tmp_path / "example"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    exec(compile(text, "<doc example>", "exec"), {"__name__": "doc_example"})


def test_every_page_has_its_examples_found():
    """The runnable markers are spelt right: a block that looks runnable but is not marked so
    would silently go unchecked."""
    for page in PAGES:
        for info, _, line in blocks(page):
            if "runnable" in info:
                assert info in ("sh runnable", "python runnable"), f"{page}:{line}: '{info}'"
            if info.startswith("text") and info not in ("text", "text output"):
                raise AssertionError(f"{page}:{line}: '{info}' (text or text output)")


def test_command_pages_agree_with_help():
    """Each command's page ends with its options as `placer COMMAND --help` prints them."""
    bin_dir = os.path.abspath(os.environ.get("PLACER_BIN_DIR", str(ROOT / "build" / "app")))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_command_pages.py"),
                           os.path.join(bin_dir, "placer"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def heading_anchors(page):
    """The anchors a Markdown page offers: its headings as GitHub writes them, and id="..."."""
    text = page.read_text(encoding="utf-8")
    found = set(re.findall(r'id="([^"]+)"', text))
    for heading in re.findall(r"^#+ (.*)$", text, re.M):
        found.add(re.sub(r"[^\w\- ]", "", heading.lower()).strip().replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", [ROOT / "CONTRIBUTING.md", ROOT / "NEWS.md"] + PAGES,
                         ids=lambda page: str(page.relative_to(ROOT)))
def test_links_reach_their_pages_and_anchors(page):
    broken = []
    for match in re.finditer(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        link = match.group(1)
        if re.match(r"^[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in heading_anchors(target):
            broken.append(f"{link}: no heading or id '{anchor}' there")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)
