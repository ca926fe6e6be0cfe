"""The exercises that check themselves (``exercises/``): every "extend dpmia" exercise of the book has a stub and a
test file; the tests pass on the reference solutions and fail on the stubs, so they grade a student's work."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "exercises"
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))
POINTER = re.compile(r"write `(\w+)` in `exercises/(\w+)\.py`.*?`pytest exercises/test_(\w+)\.py`", re.S)


def _extend_exercises(nb):
    out = []
    for cell in json.loads(nb.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            out += re.findall(r"```\{exercise\} Extend dpmia[^\n]*\n(.*?)\n```", text, re.S)
    return out


def _pytest(*args):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(EX),
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("nb", CHAPTERS, ids=lambda p: p.stem)
def test_each_extend_exercise_has_its_test(nb):
    bodies = _extend_exercises(nb)
    assert bodies, f"{nb.name}: no 'Extend dpmia' exercise"
    for body in bodies:
        m = POINTER.search(body)
        assert m, f"{nb.name}: an 'Extend dpmia' exercise does not name its test file:\n{body[:200]}"
        fn, module, test = m.groups()
        assert module == test
        for path in (EX / f"{module}.py", EX / "solutions" / f"{module}.py", EX / f"test_{module}.py"):
            assert path.exists(), path
        for path in (EX / f"{module}.py", EX / "solutions" / f"{module}.py"):
            assert re.search(rf"^def {fn}\(", path.read_text(), re.M), f"{path} does not define {fn}"
        assert fn in body


def test_reference_solutions_pass():
    r = _pytest("exercises", "--solutions")
    assert r.returncode == 0, r.stdout[-3000:]
    assert re.search(r"(\d+) passed", r.stdout)


def test_stubs_fail_every_test():
    r = _pytest("exercises")
    passed = re.search(r"(\d+) passed", r.stdout)
    failed = re.search(r"(\d+) failed", r.stdout)
    assert r.returncode == 1 and failed and not passed, r.stdout[-3000:]
    assert r.stdout.count("NotImplementedError") >= int(failed.group(1))
