#!/usr/bin/env python3
"""Writes the man pages placer.1 and placement-explorer.1 (and their .gz) from the programs' own --help texts,
so that the pages say exactly what the programs do: the build runs it (app/CMakeLists.txt) and
`cmake --install` installs the pages.

usage: make_manpages.py PLACER GUI OUTDIR VERSION
"""

import gzip
import os
import re
import subprocess
import sys

COMMANDS = ["plan", "compile", "run", "generate", "devices", "calibrate", "plans", "profile", "machine"]


def help_of(program, *args, env=None):
    done = subprocess.run([program, *args, "--help"], capture_output=True, text=True, env=env,
                          timeout=60)
    text = done.stdout or done.stderr
    if not text.strip():
        sys.exit(f"make_manpages: '{program} {' '.join(args)} --help' printed nothing")
    return text


def roff(text):
    """Escapes text for roff: backslashes, leading dots and quotes, and hyphens in options."""
    text = text.replace("\\", "\\e")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def options_section(text):
    """A help text's option list as roff tagged paragraphs (.TP), the rest as it is."""
    out = []
    entry = None
    for line in text.rstrip("\n").split("\n"):
        match = re.match(r"^\s{2,}(-\S.*?)(?:\s{2,}(\S.*))?$", line)
        continuation = re.match(r"^\s{6,}(\S.*)$", line)
        if match and not (entry and continuation and not line.lstrip().startswith("-")):
            if entry:
                out.append(entry)
            entry = [match.group(1), match.group(2) or ""]
        elif entry and continuation:
            entry[1] = (entry[1] + " " + continuation.group(1)).strip()
        else:
            if entry:
                out.append(entry)
                entry = None
            out.append(line)
    if entry:
        out.append(entry)
    lines = []
    for item in out:
        if isinstance(item, list):
            lines += [".TP", "\\fB" + roff(item[0]).replace("-", "\\-") + "\\fR", roff(item[1])]
        elif item.strip():
            lines.append(roff(item.strip()) if not item.startswith(" ") else roff(item))
        else:
            lines.append(".PP")
    return "\n".join(lines)


def header(name, version, summary):
    return (f'.TH {name.upper()} 1 "" "Placement Explorer {version}" "User Commands"\n'
            f".SH NAME\n{name} \\- {summary}\n")


def placer_page(placer, version):
    main = help_of(placer)
    page = header("placer", version,
                  "plan where each operator of a dataflow graph runs, and run it")
    page += ".SH SYNOPSIS\n\\fBplacer\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIMODEL\\fR]\n"
    page += ".SH DESCRIPTION\n.nf\n" + roff(main.strip()) + "\n.fi\n"
    page += ".SH COMMANDS\n"
    for command in COMMANDS:
        text = help_of(placer, command)
        page += f'.SS "placer {command}"\n' + options_section(text) + "\n"
    page += (".SH FILES\n.TP\n\\fI$XDG_DATA_HOME/placement-explorer/workspace.db\\fR\n"
             "The default workspace (~/.local/share when XDG_DATA_HOME is unset): saved plans, "
             "their runs, the calibration and measured node times.\n"
             ".TP\n\\fI~/.cache/placement-explorer/\\fR\nCached choices of CUDA convolution "
             "algorithms.\n")
    page += ".SH SEE ALSO\n\\fBplacement-explorer\\fR(1); in Python, \\fBimport placer\\fR "
    page += "(pydoc placer).\n"
    return page


def gui_page(gui, version):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    text = help_of(gui, env=env)
    text = re.sub(r"^Usage: \S+", "Usage: placement-explorer", text)
    page = header("placement-explorer", version,
                  "the desktop application for placing the operators of a dataflow graph")
    page += ".SH SYNOPSIS\n\\fBplacement-explorer\\fR [\\fIOPTIONS\\fR] [\\fIMODEL\\fR]\n"
    page += ".SH DESCRIPTION\n"
    page += ("Opens a Relay, ONNX or JSON graph, lays it out, and lets you drag devices onto "
             "operators: after every edit the whole graph is planned again, and its copies, "
             "conflicts, memory and predicted timeline shown. The plan runs on the host CPU, "
             "virtual CPUs and CUDA GPUs from the Run panel, which shows per-operator times and "
             "a per-device timeline. Plans and runs are saved in the workspace.\n")
    page += ".SH OPTIONS\n" + options_section(text.split("Options:", 1)[-1]) + "\n"
    page += (".SH ENVIRONMENT\n.TP\n\\fBQT_QPA_PLATFORM\\fR=offscreen\nRuns without a display; "
             "with \\fB\\-\\-screenshot\\fR it writes the window to a PNG file.\n")
    page += ".SH SEE ALSO\n\\fBplacer\\fR(1)\n"
    return page


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    placer, gui, outdir, version = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    pages = {"placer.1": placer_page(placer, version)}
    if gui != "-":
        pages["placement-explorer.1"] = gui_page(gui, version)
    for name, text in pages.items():
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as out:
            out.write(text)
        # Compressed as Debian installs man pages, without a time stamp (reproducible).
        with open(os.path.join(outdir, name + ".gz"), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw,
                               mtime=0) as out:
                out.write(text.encode("utf-8"))


if __name__ == "__main__":
    main()
