#!/usr/bin/env bash
# Writes the rooms table of docs/architecture.md from the one place the rooms are declared, the
# table in tests/layering/CheckLayering.cmake (each room, what it may include, what it holds),
# with each room's files and lines counted now, so that the page cannot drift from the code:
#
#   scripts/layout.sh            rewrites the table between its markers in docs/architecture.md
#   scripts/layout.sh --check    exits 1, saying so, when the page's rooms, what they hold or may
#                                include differ from the table, or a room's files or lines are
#                                off by more than a tenth (the counts need not be rewritten for
#                                every commit, but cannot drift far)
#
# CTest runs the check (layout_doc).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
page=$root/docs/architecture.md
begin='<!-- rooms: written by scripts/layout.sh from tests/layering/CheckLayering.cmake -->'
end='<!-- end of rooms -->'

table() {
    echo "| room | holds | may include | files | lines |"
    echo "| --- | --- | --- | ---: | ---: |"
    cmake -DSOURCE_DIR="$root" -DPRINT=1 -P "$root/tests/layering/CheckLayering.cmake" 2>&1 |
        while IFS='|' read -r room allowed what; do
            [ -n "$room" ] || continue
            if [ "$room" = python ]; then
                files=$(cd "$root" && find python -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.py' -o -name '*.pyi' \) -not -path '*/__pycache__/*' | sort)
            else
                files=$(cd "$root" && find "$room" -maxdepth 1 -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.def' \) | sort)
            fi
            count=$(printf '%s\n' "$files" | grep -c . || true)
            lines=0
            if [ "$count" -gt 0 ]; then
                lines=$(cd "$root" && printf '%s\n' "$files" | xargs cat | wc -l)
            fi
            echo "| \`$room/\` | $what | ${allowed:-(nothing)} | $count | $lines |"
        done
}

generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
awk -v begin="$begin" -v end="$end" -v tablefile=<(table) '
    $0 == begin { print; while ((getline line < tablefile) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }
' "$page" >"$generated"
if ! grep -qxF "$begin" "$page" || ! grep -qxF "$end" "$page"; then
    echo "layout: docs/architecture.md has no rooms markers" >&2
    exit 1
fi

rows() { # the table's rows of a page: room, holds, may include, files, lines (| separated)
    awk -v begin="$begin" -v end="$end" '
        $0 == begin { inside = 1; next }
        $0 == end { inside = 0 }
        inside && /^\| `/ { print }' "$1"
}

if [ "${1:-}" = --check ]; then
    if ! paste -d '\n' <(rows "$page") <(rows "$generated") | awk -F'|' '
        NR % 2 == 1 { for (i = 2; i <= 6; i++) was[i] = $i; next }
        {
            for (i = 2; i <= 4; i++)
                if ($i != was[i]) { print "layout: the page says" was[i] ", the table" $i; bad = 1 }
            for (i = 5; i <= 6; i++) {
                d = was[i] - $i; if (d < 0) d = -d
                if (d > 2 && d > $i / 10) { print "layout: " $2 "counts" was[i] "where there are" $i; bad = 1 }
            }
        }
        END { exit bad }' ||
        [ "$(rows "$page" | wc -l)" != "$(rows "$generated" | wc -l)" ]; then
        echo "layout: docs/architecture.md's rooms table is out of date: run scripts/layout.sh" >&2
        exit 1
    fi
    echo "layout: docs/architecture.md's rooms table agrees with the code"
    exit 0
fi
cp "$generated" "$page"
echo "layout: wrote the rooms table of docs/architecture.md"
