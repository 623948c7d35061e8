"""Puts a benchmark's section into docs/benchmarks.md: the text on stdin, a Markdown section whose first
line is its "## " heading, replaces the section of that heading, or goes at the end when there is none.

Usage: python3 tests/bench/section.py PATH <SECTION
"""
import re
import sys

path, new = sys.argv[1], sys.stdin.read().strip()
heading = new.splitlines()[0]
text = open(path).read()
parts = re.split(r"(?m)^(?=## )", text)
kept = [p for p in parts if not p.startswith(heading)]
at = next((i for i, p in enumerate(parts) if p.startswith(heading)), len(parts))
kept.insert(min(at, len(kept)), new + "\n\n")
open(path, "w").write("".join(p.rstrip("\n") + "\n\n" for p in kept).rstrip("\n") + "\n")
