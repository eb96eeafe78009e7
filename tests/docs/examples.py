#!/usr/bin/env python3
"""examples.py FILE - the shell examples of README.md (its ```sh blocks) or
of a manual page's source (the blocks of its EXAMPLES section), in order,
as JSON: [{"line": N, "text": ...}, ...]. A block right after a
"<!-- not run: ... -->" line (markdown) or a "; not run: ..." comment
(scdoc) is left out; the reason must be given."""
import json, re, sys

path = sys.argv[1]
lines = open(path).read().split("\n")
markdown = path.endswith(".md")
if not markdown:
    start = lines.index("# EXAMPLES")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# ")), len(lines))
else:
    start, end = 0, len(lines)
blocks, i = [], start
while i < end:
    opening = lines[i] == "```sh" if markdown else lines[i] == "```"
    if not opening:
        i += 1
        continue
    j = lines.index("```", i + 1)
    before = lines[i - 1] if i > 0 else ""
    skip = re.match(r"<!-- not run\b.*\S.*-->$", before) if markdown else before.startswith("; not run:")
    if not skip:
        blocks.append({"line": i + 2, "text": "\n".join(lines[i + 1:j]) + "\n"})
    i = j + 1
if not blocks:
    sys.exit(f"{path}: no examples found")
print(json.dumps(blocks))
