#!/usr/bin/env python3
"""A synthetic class for timing the summary's similarity check (not run in CI).

Makes N submissions of lab 01 as a batch's --out folder would hold them (a minimal record.json
and the sources/ copy per submission), each a copy of one of a few real submissions from
autograder/selftest/submissions with its identifiers renamed, its functions in another order and
its comments changed; then times `workbook-grade summary` on it.

  tools/similarity_class.py GRADER TRUSTED OUT [--count 300] [--bases a,b,c]
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import time

FOLDER = "01_vectorized_relu"
FILE = "vector_ops.cpp"
KEYWORDS = set("""alignas alignof auto bool break case catch char class const constexpr continue
default delete do double else enum explicit extern false float for friend if inline int long
namespace new noexcept nullptr operator private protected public return short signed sizeof static
struct switch template this throw true try typedef typename union unsigned using virtual void
volatile while include define pragma once std size_t uint8_t int8_t int32_t int64_t uint64_t
xsimd batch span workbook lab01 load_unaligned store_unaligned load_aligned store_aligned max
min size data""".split())


def rename(text, rng):
    # Identifiers declared in the file (a type or auto before them), renamed consistently.
    names = set(re.findall(r"\b(?:auto|float|int|size_t|std::size_t|double|const)\s+&?\s*([a-z_]\w*)\b(?!\s*\()", text))
    names -= KEYWORDS
    mapping = {n: "%s_%d" % (rng.choice(["tmp", "val", "acc", "idx", "v"]), rng.randrange(1000))
               for n in names}
    return re.sub(r"\b[a-z_]\w*\b", lambda m: mapping.get(m.group(0), m.group(0)), text)


def reorder(text):
    # The function definitions at the namespace's depth, in reverse order.
    lines = text.split("\n")
    depth, blocks, start = 0, [], None
    for i, line in enumerate(lines):
        code = line.split("//")[0]
        if start is None and depth == 1 and "(" in code and code.rstrip().endswith("{"):
            start = i
        depth += code.count("{") - code.count("}")
        if start is not None and depth == 1:
            blocks.append((start, i))
            start = None
    if len(blocks) < 2:
        return text
    pieces = ["\n".join(lines[a:b + 1]) for a, b in blocks]
    out, last = [], 0
    for (a, b), piece in zip(blocks, reversed(pieces)):
        out += lines[last:a] + [piece]
        last = b + 1
    return "\n".join(out + lines[last:])


def recomment(text, rng):
    text = re.sub(r"//[^\n]*", lambda m: "// " + rng.choice(["note", "see above", "fast path", "todo"]), text)
    return text


def main():
    p = argparse.ArgumentParser()
    p.add_argument("grader")
    p.add_argument("trusted")
    p.add_argument("out")
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--bases", default="wrong,caching,forged_output,huge_output")
    p.add_argument("--threshold", default="60")
    a = p.parse_args()
    rng = random.Random(20261128)
    shutil.rmtree(a.out, ignore_errors=True)
    bases = a.bases.split(",")
    for i in range(a.count):
        base = bases[i % len(bases)]
        src = os.path.join(a.trusted, "autograder/selftest/submissions", base, "labs", FOLDER, FILE)
        text = recomment(reorder(rename(open(src).read(), rng)), rng)
        sid = "student%03d" % i
        d = os.path.join(a.out, "submissions", sid)
        os.makedirs(os.path.join(d, "sources/labs", FOLDER))
        path = "labs/%s/%s" % (FOLDER, FILE)
        open(os.path.join(d, "sources", path), "w").write(text)
        record = {"format": 1, "id": sid, "score": 0, "max_score": 0,
                  "files": [{"path": path, "bytes": len(text), "hash": ""}],
                  "labs": [{"lab": "01", "folder": FOLDER, "status": "graded", "items": []}]}
        json.dump(record, open(os.path.join(d, "record.json"), "w"))
    start = time.time()
    subprocess.run([a.grader, "summary", a.out, "--trusted", a.trusted,
                    "--similarity-threshold", a.threshold], check=True)
    print("summary of %d submissions: %.1f s" % (a.count, time.time() - start))


if __name__ == "__main__":
    main()
