"""Pointers that stay true: every docs/ page, heading and anchor that code, help text and docs
cite exists. Scans src/, kernels/, scripts/, include/, examples/, cmake/, configs/, tests/,
docs/ and README.md for
  - docs/PAGE.md (and Markdown links to a file, relative to the page that links),
  - PAGE.md#anchor (GitHub's anchor of a heading),
  - docs/PAGE.md, 'Heading' / docs/PAGE.md "Heading" and README "Heading" citations,
  - DIR/README: the folder's README.md.
And the committed results (bench/results/MACHINE/FOLDER, the repository's rule: evidence of a
claim made now, not history):
  - every pointer to a results folder (in README.md, docs/, bench/*.md and scripts/) names a folder
    in the table its machine's README opens with (folder | backs | remade by), and a path that
    exists; a removed run is cited as `git show COMMIT:bench/results/...`, which is not a pointer;
  - every folder there is in that table and has a README.md;
  - no committed file under bench/results holds a machine path (/root/, /home/NAME, /tmp/tmp.*,
    the device machine's checkout under /work/).
The checkers are run on the real tree and on a planted tree holding one of each kind of broken
pointer, which they must all report."""
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.environ.get("NVFP4_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
SCANNED = ["src", "kernels", "scripts", "include", "examples", "cmake", "configs", "tests", "docs",
           "bench", "README.md", "CMakeLists.txt"]
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
        if top == "bench":  # its notes; its programs and results are not pages that cite
            for n in sorted(os.listdir(p)) if os.path.isdir(p) else []:
                if n.endswith(".md"):
                    yield os.path.join(p, n)
            continue
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
                if "://" in line[:m.start()] or m.group(1).startswith("tmp/"):
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


RESULTS = os.path.join("bench", "results")
# A results path: bench/results/MACHINE/NAME[/REST], or relative from docs/ (../bench/results/...)
# or from bench/*.md (results/...). A `git show COMMIT:` citation before it is history, not a pointer.
RESULTS_PTR = re.compile(r"(?<![\w.-])((?:\.\./)*(?:bench/)?)results/(h200|h100|cpu)/([A-Za-z0-9_.-]+)((?:/[A-Za-z0-9_.*-]+)*)/?")
CITED = re.compile(r"[0-9a-f]{7,40}:(?:\.\./)*(?:bench/)?$")
TABLE_ROW = re.compile(r"^\|\s*\[([^\]]+)\]\(([A-Za-z0-9_.-]+)/(?:README\.md)?\)\s*\|")
MACHINE_PATH = re.compile(r"(?<![\w.])/root/|(?<![\w.])/home/[A-Za-z_][\w-]*|(?<![\w.])/tmp/tmp\.|(?<![\w.$])/work/[\w.-]+")


def results_table(root):
    """{machine: {folder, ...}}: the folders each bench/results/MACHINE/README.md's table lists."""
    out = {}
    base = os.path.join(root, RESULTS)
    for machine in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        readme = os.path.join(base, machine, "README.md")
        if not os.path.isfile(readme):
            continue
        with open(readme, encoding="utf-8") as f:
            out[machine] = {m.group(2) for m in map(TABLE_ROW.match, f) if m}
    return out


def pointer_files(root):
    """README.md, docs/, bench/*.md and scripts/: where a claim may point at a result."""
    if os.path.isfile(os.path.join(root, "README.md")):
        yield os.path.join(root, "README.md")
    bench = os.path.join(root, "bench")
    if os.path.isdir(bench):
        for n in sorted(os.listdir(bench)):
            if n.endswith(".md"):
                yield os.path.join(bench, n)
    for top in ("docs", "scripts"):
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x != "__pycache__"]
            for n in sorted(names):
                yield os.path.join(d, n)


def results_problems(root):
    """Pointers to results folders not in their machine's table (or to paths that are gone),
    folders missing from the table or without a README, and machine paths in committed results:
    (file:line, what)."""
    problems = []
    table = results_table(root)
    base = os.path.join(root, RESULTS)
    for machine, listed in sorted(table.items()):
        here = sorted(x for x in os.listdir(os.path.join(base, machine)) if os.path.isdir(os.path.join(base, machine, x)))
        for folder in here:
            if folder not in listed:
                problems.append((f"bench/results/{machine}/README.md", f"{folder}: a results folder not in the table"))
            if not os.path.isfile(os.path.join(base, machine, folder, "README.md")):
                problems.append((f"bench/results/{machine}/{folder}", "no README.md"))
        for folder in sorted(listed - set(here)):
            problems.append((f"bench/results/{machine}/README.md", f"{folder}: in the table, no such folder"))
    for path in pointer_files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for no, line in enumerate(lines, 1):
            for m in RESULTS_PTR.finditer(line):
                if CITED.search(line[:m.start()] + m.group(1)) or "://" in line[:m.start()]:
                    continue  # `git show COMMIT:bench/results/...`: history, cited as such
                prefix, machine, name, rest = m.groups()
                if not prefix.endswith("bench/") and not (rel.startswith("bench") and line[:m.start()].endswith("](")):
                    continue  # "results/h200/..." not under bench/: not a results pointer
                if name == "README.md":
                    continue
                what = f"bench/results/{machine}/{name}{rest}"
                if machine not in table or name not in table[machine]:
                    problems.append((f"{rel}:{no}", f"{what}: not in bench/results/{machine}/README.md's table"))
                elif "*" not in rest and "$" not in rest and not os.path.exists(os.path.join(base, machine, name, rest.lstrip("/"))):
                    problems.append((f"{rel}:{no}", f"{what}: no such file"))
    for d, dirs, names in os.walk(base):
        for n in sorted(names):
            full = os.path.join(d, n)
            with open(full, encoding="utf-8", errors="replace") as f:
                for no, line in enumerate(f, 1):
                    m = MACHINE_PATH.search(line)
                    if m:
                        problems.append((f"{os.path.relpath(full, root)}:{no}", f"machine path {m.group(0)}"))
    return problems

class DocPointers(unittest.TestCase):
    def test_the_tree_has_no_broken_pointer(self):
        problems = broken_pointers(ROOT)
        self.assertEqual(problems, [], "\n".join(f"{w}: {p}" for w, p in problems))

    def test_results_hold_current_evidence_only(self):
        problems = results_problems(ROOT)
        self.assertEqual(problems, [], "\n".join(f"{w}: {p}" for w, p in problems))

    def test_every_kind_of_results_problem_is_caught(self):
        with tempfile.TemporaryDirectory() as d:
            def write(rel, text):
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(text)
            write("bench/results/h200/README.md", "# H200\n\n| folder | backs | remade by |\n|---|---|---|\n"
                  "| [kept](kept/README.md) | docs/x.md | step a |\n| [ghost](ghost/README.md) | - | - |\n")
            write("bench/results/h200/kept/README.md", "# kept\n")
            write("bench/results/h200/kept/run.log", "Test project /work/main/build-sm90\n"
                  "at /root/x and /home/alice/y, in /tmp/tmp.Ab12/z; but $OUT/a and /usr/bin/ok\n")
            write("bench/results/h200/unlisted/README.md", "# not in the table\n")
            write("bench/results/h200/bare/x.txt", "no README\n")
            write("docs/x.md", "[ok](../bench/results/h200/kept/README.md), bench/results/h200/README.md,\n"
                  "`git show b4f99c4:bench/results/h200/gone/README.md` is history;\n"
                  "[stale](../bench/results/h200/gone/README.md)\n"
                  "bench/results/h200/kept/missing.json\n")
            write("README.md", "see bench/results/h200/unlisted/README.md\n")
            write("bench/notes.md", "[old](results/h200/old-run/README.md), results/smoke.json\n")
            write("scripts/device/run.sh", 'cmp "bench/results/h200/old-run/sweep/$c.json"\n')
            got = results_problems(d)
        whats = [f"{w}: {p}" for w, p in got]
        for want in ["bench/results/h200/README.md: unlisted: a results folder not in the table",
                     "bench/results/h200/README.md: bare: a results folder not in the table",
                     "bench/results/h200/bare: no README.md",
                     "bench/results/h200/README.md: ghost: in the table, no such folder",
                     "docs/x.md:3: bench/results/h200/gone/README.md: not in bench/results/h200/README.md's table",
                     "docs/x.md:4: bench/results/h200/kept/missing.json: no such file",
                     "README.md:1: bench/results/h200/unlisted/README.md: not in bench/results/h200/README.md's table",
                     "bench/notes.md:1: bench/results/h200/old-run/README.md: not in bench/results/h200/README.md's table",
                     "scripts/device/run.sh:1: bench/results/h200/old-run/sweep: not in bench/results/h200/README.md's table",
                     "bench/results/h200/kept/run.log:1: machine path /work/main",
                     "bench/results/h200/kept/run.log:2: machine path /root/"]:
            self.assertIn(want, whats)
        self.assertEqual(len(whats), 11, "\n".join(whats))  # the git show citation, the ok link and $OUT are fine

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
