#!/usr/bin/env python3
"""Writes the options of each command's page in docs/user/cli/ from `placer COMMAND --help`, as
scripts/make_manpages.py writes the man pages from it: the block between a page's markers is the
help text itself, so the manual says exactly what the program does. A command without a page
gets one. tests/docs checks that every page agrees with the program (--check).

usage: make_command_pages.py PLACER [--check]
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "user" / "cli"
COMMANDS = ["plan", "compile", "run", "generate", "devices", "calibrate", "plans", "profile", "machine"]
BEGIN = "<!-- options: written by scripts/make_command_pages.py from `placer {} --help` -->"
END = "<!-- end of options -->"


def help_of(placer, command):
    done = subprocess.run([placer, command, "--help"], capture_output=True, text=True, timeout=60)
    text = (done.stdout or done.stderr).rstrip()
    if done.returncode != 0 or not text:
        sys.exit(f"make_command_pages: 'placer {command} --help' failed")
    return text


def block(command, text):
    return f"{BEGIN.format(command)}\n\n```text\n{text}\n```\n\n{END}"


def page_with_options(command, page, text):
    """The page with its options block replaced (or added at its end)."""
    begin = BEGIN.format(command)
    if begin in page and END in page:
        head, rest = page.split(begin, 1)
        tail = rest.split(END, 1)[1]
        return head + block(command, text) + tail
    return page.rstrip() + "\n\n## Options\n\n" + block(command, text) + "\n"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    placer, check = sys.argv[1], "--check" in sys.argv[2:]
    stale = []
    for command in COMMANDS:
        path = PAGES / f"{command}.md"
        page = path.read_text() if path.exists() else (
            f"# `placer {command}`\n\n`placer {command} --help` says what it does; its options "
            f"follow, as the program prints them.\n")
        wanted = page_with_options(command, page, help_of(placer, command))
        if wanted != page:
            stale.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_text(wanted)
    if check and stale:
        sys.exit("make_command_pages: out of step with --help (run scripts/make_command_pages.py "
                 "build/app/placer): " + ", ".join(stale))
    print("make_command_pages: " + ("every page agrees with --help" if check else
                                    f"wrote {len(stale)} page(s)"))


if __name__ == "__main__":
    main()
