#!/usr/bin/env python3
"""Checks the include graph of the code against docs/design.md's levels.

The rules are the design page's, read from it, so the page and the code
cannot drift apart:

- The level table ("Architecture in one page") places the code: each
  backquoted path of a row's last column is a header (relative to
  include/crema/, or to the repository where it starts with src/ or is a
  top-level folder), a folder (ending in /) or a glob. A file takes the level
  of the most specific path that names it; a source file (.cpp, .cu) takes
  the level of its own header: the .hpp of its stem beside it, or for
  src/crema/D/foo.cpp, include/crema/D/foo.hpp. Every file of the library, the tools and the bindings has a
  level, or the check fails naming it.
- A file may include the headers of its own level and of the levels below,
  never those above.
- "Levels that do not know each other" lists pairs of levels neither of
  which includes the other.
- "Where the code breaks the rule today" lists, one per line, the includes
  that break a rule on purpose or for now, as `file` -> `header`. Each must
  still exist (a mended one is taken off the page).

Usage: design_include_graph.py [repository root]. Exit status 1 on a broken
rule, with one line per break.
"""

import fnmatch
import os
import re
import sys

CODE_ROOTS = ("include/crema", "src/crema", "tools", "python/src")
CODE_SUFFIXES = (".hpp", ".h", ".cpp", ".cu", ".cuh")
SOURCE_SUFFIXES = (".cpp", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_page(root):
    with open(os.path.join(root, "docs", "design.md"), encoding="utf-8") as f:
        return f.read()


def section(page, title):
    """The text of the section whose heading starts with title."""
    match = re.search(r"^#+ " + re.escape(title) + r".*?$(.*?)(?=^#+ |\Z)", page, re.M | re.S)
    if not match:
        sys.exit("docs/design.md has no section '%s'" % title)
    return match.group(1)


def levels_from_table(page):
    """[(level, name, [path patterns])] from the level table."""
    rows = []
    for line in section(page, "Architecture in one page").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].isdigit():
            continue
        name = cells[1].strip("*")
        paths = re.findall(r"`([^`]+)`", cells[-1])
        rows.append((int(cells[0]), name, paths))
    if not rows:
        sys.exit("docs/design.md: no level table found")
    return rows


def resolve_pattern(root, path):
    """A table path, as a repository-relative pattern."""
    top = path.split("/")[0]
    if top in ("src", "include", "tools", "python", "cmake", "tests"):
        return path
    if path.startswith("proto/"):
        return "src/crema/" + path
    public = "include/crema/" + path
    if os.path.exists(os.path.join(root, public)) or path.endswith("/") or "*" in path:
        return public
    return "src/crema/" + path


def specificity(pattern):
    return (0 if pattern.endswith("/") else 1 if "*" in pattern else 2, len(pattern))


def place(file, patterns):
    """The level of the most specific pattern naming file, or None."""
    best = None
    for level, pattern in patterns:
        if pattern.endswith("/"):
            hit = file.startswith(pattern)
        elif "*" in pattern:
            hit = fnmatch.fnmatch(file, pattern)
        else:
            hit = file == pattern or (
                pattern.endswith(".proto") and file == pattern[: -len(".proto")] + ".pb.h")
        if hit and (best is None or specificity(pattern) > specificity(best[1])):
            best = (level, pattern)
    return best[0] if best else None


def code_files(root):
    for code_root in CODE_ROOTS:
        for folder, _, names in os.walk(os.path.join(root, code_root)):
            for name in sorted(names):
                if name.endswith(CODE_SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, name), root)


def includes(root, file):
    """The repository files file includes (crema's own and its folder's)."""
    found = []
    with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
        for line in f:
            match = INCLUDE.match(line)
            if not match:
                continue
            name = match.group(1)
            for candidate in ("include/" + name, "src/" + name,
                              os.path.join(os.path.dirname(file), name)):
                if os.path.exists(os.path.join(root, candidate)):
                    found.append(os.path.normpath(candidate))
                    break
            else:
                if name == "crema/proto/crema.pb.h":
                    found.append("src/crema/proto/crema.pb.h")
    return found


def own_header(root, file):
    """A source file's own header: its stem's .hpp beside it, or for
    src/crema/D/foo.cpp, include/crema/D/foo.hpp."""
    if not file.endswith(SOURCE_SUFFIXES):
        return None
    base = os.path.splitext(file)[0] + ".hpp"
    candidates = [base]
    if base.startswith("src/crema/"):
        candidates.append("include/" + base[len("src/"):])
    for candidate in candidates:
        if os.path.exists(os.path.join(root, candidate)):
            return candidate
    return None


def level_pairs(page):
    text = section(page, "Levels that do not know each other")
    return {tuple(sorted((int(a), int(b)))) for a, b in re.findall(r"levels (\d+) and (\d+)", text)}


def allowed_breaks(page):
    text = section(page, "Where the code breaks the rule today")
    return set(re.findall(r"`([^`]+)`\s*(?:->|→)\s*`([^`]+)`", text))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    page = read_page(root)
    rows = levels_from_table(page)
    names = {level: name for level, name, _ in rows}
    patterns = [(level, resolve_pattern(root, p)) for level, _, paths in rows for p in paths]
    apart = level_pairs(page)
    breaks = allowed_breaks(page)

    files = list(code_files(root))
    graph = {f: includes(root, f) for f in files}
    level_of = {}
    for f in files:
        level_of[f] = place(f, patterns)
    for f in files:
        own = own_header(root, f)
        if own and place(own, patterns) is not None:
            level_of[f] = place(own, patterns)
    level_of["src/crema/proto/crema.pb.h"] = place("src/crema/proto/crema.pb.h", patterns)

    problems = []
    for f in files:
        if level_of[f] is None:
            problems.append("%s: in no level of the table" % f)
    used_breaks = set()
    for f in files:
        mine = level_of[f]
        if mine is None:
            continue
        for header in graph[f]:
            theirs = level_of.get(header)
            if theirs is None:
                continue
            upward = theirs > mine
            across = tuple(sorted((mine, theirs))) in apart
            if not (upward or across):
                continue
            if (f, header) in breaks:
                used_breaks.add((f, header))
                continue
            problems.append("%s (%d %s) includes %s (%d %s)%s" % (
                f, mine, names[mine], header, theirs, names[theirs],
                ": levels that do not know each other" if across else ""))
    for f, header in sorted(breaks - used_breaks):
        problems.append("design.md lists %s -> %s as a break, but it is not one (any more)"
                        % (f, header))

    counts = {}
    for f in files:
        counts[level_of[f]] = counts.get(level_of[f], 0) + 1
    for level, name, _ in rows:
        print("level %2d %-20s %4d files" % (level, name, counts.get(level, 0)))
    print("%d files, %d includes, %d listed breaks" % (
        len(files), sum(len(v) for v in graph.values()), len(breaks)))
    for p in problems:
        print("BROKEN: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
