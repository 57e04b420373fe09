"""Pointers that stay true: every docs/ page, heading and anchor that code, help text and docs
cite exists. Scans src/, kernels/, scripts/, include/, examples/, cmake/, configs/, tests/,
docs/ and README.md for
  - docs/PAGE.md (and Markdown links to a file, relative to the page that links),
  - PAGE.md#anchor (GitHub's anchor of a heading),
  - docs/PAGE.md, 'Heading' / docs/PAGE.md "Heading" and README "Heading" citations,
  - DIR/README: the folder's README.md.
The checker is run on the real tree and on a planted tree holding one of each kind of broken
pointer, which it must all report."""
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.environ.get("NVFP4_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
SCANNED = ["src", "kernels", "scripts", "include", "examples", "cmake", "configs", "tests", "docs",
           "README.md", "CMakeLists.txt"]
TEXT = (".cpp", ".hpp", ".cu", ".cuh", ".h", ".c", ".py", ".sh", ".md", ".cmake", ".txt", ".json")

PAGE = re.compile(r"(?<![\w/.-])(docs/[A-Za-z0-9_./-]+?\.md)(?![\w-])")
ANCHOR = re.compile(r"(?<![\w-])((?:docs/)?[A-Za-z0-9_-]+\.md)#([A-Za-z0-9_-]+)")
HEADING = re.compile(r"(?<![\w/.-])((?:docs/[A-Za-z0-9_./-]+?\.md)|README(?:\.md)?)[,:]? ?\\?[\"']([^\"'\\\n]{2,80})\\?[\"']")
README_DIR = re.compile(r"(?<![\w.-])((?:[A-Za-z0-9_-]+/)+)README(?![\w.])")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#([A-Za-z0-9_-]+))?\)")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def headings(path):
    out = set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            elif not in_code and re.match(r"#{1,6} ", line):
                out.add(line.lstrip("#").strip())
    return out


def files(root):
    for top in SCANNED:
        p = os.path.join(root, top)
        if os.path.isfile(p):
            yield p
        for d, dirs, names in os.walk(p):
            dirs[:] = [x for x in dirs if x not in ("results", "__pycache__")]
            for n in sorted(names):
                if n.endswith(TEXT):
                    yield os.path.join(d, n)


def broken_pointers(root):
    """Every pointer under `root` that names a missing page, heading or anchor: (file:line, what)."""
    problems = []
    cache = {}

    def heads(page):
        if page not in cache:
            cache[page] = headings(page) if os.path.isfile(page) else None
        return cache[page]

    def resolve(page, here):
        if page.startswith("docs/") or page in ("README.md", "README"):
            return os.path.join(root, "README.md" if page.startswith("README") else page)
        if here.endswith(".md"):  # pages link relatively
            return os.path.normpath(os.path.join(os.path.dirname(here), page))
        return os.path.join(root, "docs", page)  # code names a page by its name: docs/

    for path in files(root):
        rel = os.path.relpath(path, root)
        if rel == os.path.join("tests", "unit", "doc_pointers_test.py"):
            continue  # its own examples are patterns, not pointers
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for no, line in enumerate(lines, 1):
            where = f"{rel}:{no}"
            for m in PAGE.finditer(line):
                if not os.path.isfile(os.path.join(root, m.group(1))):
                    problems.append((where, f"{m.group(1)}: no such page"))
            for m in ANCHOR.finditer(line):
                page = resolve(m.group(1), path)
                h = heads(page)
                if h is None:
                    problems.append((where, f"{m.group(1)}#{m.group(2)}: no such page"))
                elif m.group(2) not in {slug(x) for x in h}:
                    problems.append((where, f"{m.group(1)}#{m.group(2)}: no such heading"))
            for m in HEADING.finditer(line):
                page = resolve(m.group(1), path)
                h = heads(page)
                if h is not None and m.group(2) not in h:
                    problems.append((where, f"{m.group(1)} '{m.group(2)}': no such heading"))
            for m in README_DIR.finditer(line):
                if "://" in line[:m.start()] or m.group(1).startswith(("bench/results", "tmp/")):
                    continue
                if not os.path.isfile(os.path.join(root, m.group(1), "README.md")):
                    problems.append((where, f"{m.group(1)}README: no such file"))
            if rel.endswith(".md"):
                for m in LINK.finditer(line):
                    target = m.group(1)
                    if "://" in target or target.startswith("mailto:"):
                        continue
                    full = os.path.normpath(os.path.join(os.path.dirname(path), target))
                    if not os.path.exists(full):
                        problems.append((where, f"link {target}: no such file"))
                    elif m.group(2) and full.endswith(".md") and m.group(2) not in {slug(x) for x in heads(full)}:
                        problems.append((where, f"link {target}#{m.group(2)}: no such heading"))
    return problems


class DocPointers(unittest.TestCase):
    def test_the_tree_has_no_broken_pointer(self):
        problems = broken_pointers(ROOT)
        self.assertEqual(problems, [], "\n".join(f"{w}: {p}" for w, p in problems))

    def test_every_kind_of_broken_pointer_is_caught(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "docs"))
            os.makedirs(os.path.join(d, "src", "app"))
            with open(os.path.join(d, "README.md"), "w") as f:
                f.write("# Tool\n\n## Set up\n\n[cli](docs/cli.md)\n[gone](docs/gone.md)\n")
            with open(os.path.join(d, "docs", "cli.md"), "w") as f:
                f.write("# CLI\n\n## Comparing two runs (CI)\n\n[ok](cli.md#comparing-two-runs-ci) "
                        "[bad](cli.md#no-such-part)\n```\n# not a heading\n```\n")
            with open(os.path.join(d, "src", "app", "x.cpp"), "w") as f:
                f.write('// docs/cli.md, "Comparing two runs (CI)" and README "Set up" are fine\n'
                        '// docs/missing.md\n'
                        '// docs/cli.md#not-there\n'
                        '// docs/cli.md, "Nowhere"\n'
                        '"run the cases (README \\"Sweeps\\")"\n'
                        '// configs/README: nothing there\n'
                        '// cli.md#not-a-heading in the code\n')
            got = broken_pointers(d)
        whats = [p for _, p in got]
        for want in ["link docs/gone.md: no such file", "cli.md#no-such-part: no such heading",
                     "link cli.md#no-such-part: no such heading", "docs/missing.md: no such page",
                     "cli.md#not-a-heading: no such heading",
                     "docs/cli.md#not-there: no such heading", "docs/cli.md 'Nowhere': no such heading",
                     "README 'Sweeps': no such heading", "configs/README: no such file"]:
            self.assertIn(want, whats)
        self.assertNotIn("README 'Set up': no such heading", whats)
        self.assertFalse(any("comparing-two-runs-ci" in w for w in whats), whats)
        self.assertFalse(any("not a heading" in w for w in whats), whats)


if __name__ == "__main__":
    sys.exit(unittest.main())
