"""The maps of the code agree with the tree: the layout in docs/architecture.md names every
folder of src/ and kernels/ (and nothing that is not there), and each file it names is in the
folder it is listed under; the table "Where the code is" in docs/kernels.md names every file of
kernels/sm90/ and no other; and every path to code (src/, kernels/, bench/, scripts/, tests/,
...) either page writes exists. The checker is run on the real tree and on a planted tree holding one of each
kind of disagreement, which it must all report."""
import os
import re
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.environ.get("NVFP4_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
LISTED_ROOTS = ("src", "kernels")  # architecture.md lists every folder of these
CODE_PATH = re.compile(
    r"(?<![\w/.-])((?:src|kernels|bench|scripts|tests|cmake|configs|schemas|include|examples|fuzz)/[A-Za-z0-9_./-]*[A-Za-z0-9_])")
FILE_NAME = re.compile(r"(?<![\w/.-])([A-Za-z0-9_]+\.(?:hpp|cpp|cuh|cu|h|py|cmake|sh))(?![\w])")
SKIPPED = ("bench/results/",)
# the two maps (spelt so that doc_pointers_test does not read a quoted heading after them)
ARCHITECTURE = os.path.join("docs", "architecture.md")
KERNELS = os.path.join("docs", "kernels.md")  # results folders have their own README table and test


def read(root, page):
    with open(os.path.join(root, page), encoding="utf-8") as f:
        return f.read()


def subdirs(root, top):
    p = os.path.join(root, top)
    return {d for d in os.listdir(p) if os.path.isdir(os.path.join(p, d)) and d != "__pycache__"}


def names_below(path):
    out = set()
    for _, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out.update(names)
    return out


def layout_block(text):
    m = re.search(r"^```\n(.*?)^```", text, re.S | re.M)
    return m.group(1).splitlines() if m else []


def architecture_problems(root):
    """Where the layout in docs/architecture.md and the tree disagree: [(line, what)]."""
    problems = []
    lines = layout_block(read(root, ARCHITECTURE))
    if not lines:
        return [(ARCHITECTURE, "no layout block (```)")]
    listed = {top: set() for top in LISTED_ROOTS}
    top, where = None, None  # the root (src, kernels) and the folder the current line describes
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        first, _, described = line.strip().partition(" ")
        if indent == 0:  # a root or a top-level entry: include/..., examples/plugins/, bench/
            top = first.rstrip("/") if first.rstrip("/") in LISTED_ROOTS else None
            where = os.path.join(root, first)
            if not os.path.exists(where):
                problems.append((line.strip(), f"{first} is not in the tree"))
        elif indent == 2 and top is not None:  # a folder of src/ or kernels/, or a file of it
            where = os.path.join(root, top, first)
            if not first.endswith("/"):
                if not os.path.isfile(where):
                    problems.append((line.strip(), f"{top}/{first} is not in the tree"))
                continue
            listed[top].add(first.rstrip("/"))
            if not os.path.isdir(where):
                problems.append((line.strip(), f"{top}/{first} is not in the tree"))
                continue
        else:  # the description above, continued
            described = line
        # the files a line names are in the folder it describes
        have = names_below(where) if where and os.path.isdir(where) else set()
        for name in FILE_NAME.findall(described):
            if where and os.path.isdir(where) and name not in have:
                problems.append((line.strip(), f"{name} is not under {os.path.relpath(where, root)}"))
    for t in LISTED_ROOTS:
        for d in sorted(subdirs(root, t) - listed[t]):
            problems.append((f"{t}/{d}/", "a folder the layout does not list"))
    return problems


def kernels_table_problems(root):
    """Where the table of kernels/sm90/ in docs/kernels.md and the folder disagree."""
    text = read(root, KERNELS)
    m = re.search(r"^### Where the code is\n(.*?)(?=^#)", text, re.S | re.M)
    if not m:
        return [(KERNELS, "no section named Where the code is")]
    named = set()
    for line in m.group(1).splitlines():
        if line.startswith("| `"):
            named.update(re.findall(r"`([^`/]+)`", line.split("|")[1]))
    have = {n for n in os.listdir(os.path.join(root, "kernels/sm90")) if os.path.isfile(os.path.join(root, "kernels/sm90", n))}
    problems = [(f"kernels/sm90/{n}", "named in the table, not in the tree") for n in sorted(named - have)]
    problems += [(f"kernels/sm90/{n}", "in the tree, not in the table") for n in sorted(have - named)]
    return problems


def path_problems(root):
    """Paths to code that docs/architecture.md or docs/kernels.md write and the tree lacks."""
    problems = []
    for page in (ARCHITECTURE, KERNELS):
        for i, line in enumerate(read(root, page).splitlines(), 1):
            for p in CODE_PATH.findall(line):
                if p.startswith(SKIPPED) or p.startswith("build"):
                    continue
                # a program is written by its name: bench/sm90_stamps is bench/sm90_stamps.cu's
                if not any(os.path.exists(os.path.join(root, p + ext)) for ext in ("", ".cu", ".cpp")):
                    problems.append((f"{page}:{i}", f"{p} is not in the tree"))
    return problems


def all_problems(root):
    return architecture_problems(root) + kernels_table_problems(root) + path_problems(root)


class DocTree(unittest.TestCase):
    def test_the_docs_describe_the_tree(self):
        problems = all_problems(ROOT)
        self.assertEqual(problems, [], "\n".join(f"{w}: {what}" for w, what in problems))

    def test_a_planted_tree_is_caught(self):
        with tempfile.TemporaryDirectory() as t:
            for d in ("docs", "src/core", "src/gone_from_docs", "kernels/sm90"):
                os.makedirs(os.path.join(t, d))
            for f in ("src/core/error.hpp", "kernels/sm90/config.hpp", "kernels/sm90/unlisted.cuh"):
                open(os.path.join(t, f), "w").close()
            with open(os.path.join(t, ARCHITECTURE), "w") as f:
                f.write("# Layout\n\n```\nsrc/    base\n  core/   error.hpp, missing.hpp\n  ghost/  none\n"
                        "kernels/   kernels\n  sm90/   the kernel\n```\n")
            with open(os.path.join(t, KERNELS), "w") as f:
                f.write("# K\n\n### Where the code is\n\n| file | what |\n|---|---|\n"
                        "| `config.hpp` | c |\n| `removed.cu` | r |\n\n## Next\n\nSee `kernels/sm90/nowhere.cuh`.\n")
            got = "\n".join(f"{w}: {what}" for w, what in all_problems(t))
            for want in ("missing.hpp is not under src/core", "src/ghost/ is not in the tree",
                         "src/gone_from_docs/: a folder the layout does not list",
                         "kernels/sm90/removed.cu: named in the table, not in the tree",
                         "kernels/sm90/unlisted.cuh: in the tree, not in the table",
                         "kernels/sm90/nowhere.cuh is not in the tree"):
                self.assertIn(want, got)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + [a for a in sys.argv[1:] if a != "-v"], verbosity=2)
