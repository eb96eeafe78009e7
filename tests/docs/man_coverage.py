#!/usr/bin/env python3
"""man_coverage.py SRC BINDIR - the manual names everything the code knows:
every file of the mount's node table, every ini key in its section, every
option of each program's --help, every trace command, every ctl/graph
and ctl/mempool verb, and every environment variable a program reads. Each list is taken from the code's own tables, so a
file, key or option added without its page fails here."""
import glob, re, subprocess, sys

src, bindir = sys.argv[1], sys.argv[2]
def read(path): return open(f"{src}/{path}").read()
def page(name): return read(f"contrib/man/{name}.scd")
missing = []

def need(where, words, text, how):
    for w in words:
        if not re.search(how(re.escape(w)), text, re.M):
            missing.append(f"{where}: {w}")

def table(path, start, pattern):
    body = read(path)
    body = body[body.index(start):]
    body = body[:body.index("};")]
    return re.findall(pattern, body)

# The mount's files: rows of the node table that are not folders.
rows = re.findall(r'"(/[^"]*)"', read("src/fs/tree.c").split("nodes[] =")[1].split("};")[0])
files = [r for r in rows if r != "/" and not any(o.startswith(r + "/") for o in rows)]
files = [f[1:].replace("{N}", "N").replace("{S}", "S").replace("{NAME}", "NAME") for f in files]
need("npumemfs(8) file", files, page("npumemfs.8"), lambda w: r"^(?:\*[^*\n]+\*, )?\*" + w + r"\*")

# ini keys, each under its section's heading.
ini = page("npumemfs.ini.5")
for sect, key in re.findall(r'KEY\("(\w+)", "(\w+)"', read("src/tools/config.c")):
    part = ini.split(f"# [{sect}]\n", 1)
    body = part[1].split("\n# ", 1)[0] if len(part) > 1 else ""
    need(f"npumemfs.ini(5) [{sect}]", [key], body, lambda w: r"^\*(?:\w+, )*" + w + r"[*,]")

# Each program's options, as its --help lists them.
for prog, name in (("npumemfs", "npumemfs.8"), ("npumem-replay", "npumem-replay.1"),
                   ("npumem-gentrace", "npumem-gentrace.1"), ("npumem-whatif", "npumem-whatif.1")):
    out = subprocess.run([f"{bindir}/{prog}", "--help"], capture_output=True, text=True)
    text = out.stdout + out.stderr
    opts = set()
    for short, long in re.findall(r"^ +(?:(-\w), )?(--[a-z][a-z-]*|-\w)\b", text, re.M):
        opts |= {o for o in (short, long) if o}
    # An option is an entry of OPTIONS: it starts a line, after its short form.
    need(f"{name} option", sorted(opts), page(name), lambda w: r"^(?:\*-\w\*, )?\*" + w + r"\*")
    words = set(re.findall(r"^ +-o (\w+)", text, re.M)) - {"OPT"}
    if prog == "npumem-gentrace":
        words |= set(re.findall(r"^  ([a-z][a-z-]+) ", text.split("KIND:")[1].split("Options:")[0], re.M))
    need(f"{name} -o option or kind", sorted(words), page(name), lambda w: r"\*" + w + r"[*=]")

# Trace commands, each at the start of a line of the format.
cmds = table("src/workload/trace_parse.c", "{ \"alloc\", WL_ALLOC", r'\{ "(\w+)", WL_')
need("npumemfs-trace(5) command", cmds + ["loop_start"], page("npumemfs-trace.5"), lambda w: r"^\*" + w + r"\*")

# Verbs of ctl/graph and ctl/mempool.
eight = page("npumemfs.8")
for path, what in (("src/fs/graphs.c", "ctl/graph"), ("src/fs/mempools.c", "ctl/mempool")):
    verbs = table(path, "verbs[] = {", r'\{ "(\w+)",')
    need(f"npumemfs(8) {what} verb", verbs, eight, lambda w: r"\*" + w + r"[ *]")

# Environment variables the programs read, each in the ENVIRONMENT of a page.
names = set()
for path in glob.glob(f"{src}/src/**/*.c", recursive=True):
    names |= set(re.findall(r'getenv\("(\w+)"\)', open(path).read()))
environment = "".join(page(p[len(f"{src}/contrib/man/"):-4]).split("# ENVIRONMENT\n", 1)[-1].split("\n# ", 1)[0]
                      for p in glob.glob(f"{src}/contrib/man/*.scd") if "# ENVIRONMENT\n" in open(p).read())
need("ENVIRONMENT", sorted(names), environment, lambda w: r"^\*(?:\w+\*, \*)*" + w + r"\*")

for m in missing:
    print(f"FAIL: not in the manual: {m}", file=sys.stderr)
if missing:
    sys.exit(1)
print(f"PASS: {len(files)} files, the ini keys, options, trace commands and verbs are in the manual")
