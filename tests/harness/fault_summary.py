#!/usr/bin/env python3
"""The fault matrix across front ends: reads the "all stores" matrix that each front end's
full run printed (scripts/fault-test for the CLI, scripts/browser-test for the tab's fetch
backend in headless Chromium, scripts/worker-test for the worker in workerd; the cell
format of tests/harness/fault_matrix.py: `=N` equal, `eN` clear error, `W` wrong, `P`
panic, `H` hang, `X` crash) and prints one markdown table, mode x operation x front end.
Exits 1 when a log has no matrix or a cell holds W, P, H or X.

  fault_summary.py cli=LOG tab=LOG worker=LOG
"""
import re
import sys

BAD = set("WPHX")


def all_stores_matrix(text):
    """{(mode, command): cell} from the first "all stores" block of `text`, and the
    commands and modes in their order."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "all stores" and i + 1 < len(lines) and lines[i + 1].startswith("mode"):
            header = lines[i + 1]
            cols = [(m.start(), m.group()) for m in re.finditer(r"\S+", header)][1:]
            cells, modes = {}, []
            for row in lines[i + 2:]:
                # the block ends at a blank line or the next block's title (the tab's
                # matrices follow one another without a blank line)
                mode = row[:cols[0][0]].strip()
                if not row.strip() or row.startswith(("store ", "mode ")) or mode in modes:
                    break
                modes.append(mode)
                for k, (start, command) in enumerate(cols):
                    end = cols[k + 1][0] if k + 1 < len(cols) else len(row)
                    cells[(mode, command)] = row[start:end].strip()
            return cells, [c for _, c in cols], modes
    return None


def main():
    runs = []
    for arg in sys.argv[1:]:
        name, _, path = arg.partition("=")
        with open(path, encoding="utf-8", errors="replace") as f:
            found = all_stores_matrix(f.read())
        if found is None:
            print(f"fault summary: no 'all stores' matrix in the {name} log ({path})")
            return 1
        runs.append((name, found))
    commands, modes = [], []
    for _, (_, cs, ms) in runs:
        commands += [c for c in cs if c not in commands]
        modes += [m for m in ms if m not in modes]
    names = [n for n, _ in runs]
    print("cells: =N equal, eN clear error (within the bound), W wrong, P panic, H hang, X crash;"
          " counts of table x store reads")
    print("| mode | " + " | ".join(f"{c} ({n})" for c in commands for n in names) + " |")
    print("|---|" + "---|" * (len(commands) * len(names)))
    bad = 0
    for m in modes:
        row = []
        for c in commands:
            for _, (cells, _, _) in runs:
                cell = cells.get((m, c), "n/a")
                bad += any(tok[:1] in BAD for tok in cell.split())
                row.append(cell)
        print(f"| {m} | " + " | ".join(row) + " |")
    print(f"fault summary: {len(modes)} modes x {len(commands)} operations x {len(names)} front ends;"
          f" cells with a wrong answer, panic, hang or crash: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
