"""Every chapter: stored without outputs, has a `parameters` cell, and runs in FAST mode."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_chapters():
    assert CHAPTERS, "no notebooks found under notebooks/"


def _staged(path):
    """The notebook as staged in git (what a commit would record), else the file on disk.

    Running a chapter in JupyterLab autosaves outputs into the working copy; that must not fail
    the tests, but committing them must.
    """
    rel = path.relative_to(ROOT).as_posix()
    try:
        out = subprocess.run(["git", "show", f":{rel}"], cwd=ROOT, capture_output=True,
                             check=True, timeout=60)
        return out.stdout.decode()
    except (OSError, subprocess.SubprocessError):
        return path.read_text()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = json.loads(_staged(path))
    dirty = [i for i, c in enumerate(nb["cells"])
             if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs; clear them before committing"
    widgets_state = nb.get("metadata", {}).get("widgets")
    assert not widgets_state, f"{path.name}: stored widget state; clear it before committing"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_has_parameters_cell_with_fast_false(path):
    nb = json.loads(path.read_text())
    params = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
    src = "".join(params[0]["source"])
    assert "FAST = False" in src and "SEED" in src


def _build_fast_run(path):
    """The FAST run `make book` made for the run-time datasheet (book/_ext/datasheet.py), if it is current: the same
    papermill run with ``FAST = True``, keyed on the chapter's code cells, the library and the requirements."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import datasheet
    finally:
        sys.path.pop(0)
    store = ROOT / "_build" / ".datasheet"
    rec = datasheet.record(path, store, [ROOT / "requirements.txt", ROOT / "requirements-dev.txt"])
    return None if rec is None else (rec, json.loads((store / f"{path.stem}.ipynb").read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_runs_in_fast_mode(path, tmp_path):
    import papermill as pm

    built = _build_fast_run(path)
    if built is not None:
        rec, nb = built
        errors = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
                  and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
        assert not errors and nb["metadata"]["papermill"]["exception"] is None, f"{path.name}: cells {errors} failed"
        assert nb["metadata"]["papermill"]["parameters"] == {"FAST": True}
        print(f"{path.name}: FAST run {rec['fast_seconds']:.1f} s (the build's, for the run-time datasheet)")
        return
    t0 = time.perf_counter()
    pm.execute_notebook(str(path), str(tmp_path / path.name), parameters={"FAST": True},
                        cwd=str(path.parent), kernel_name="python3", progress_bar=False,
                        execution_timeout=120)
    print(f"{path.name}: FAST run {time.perf_counter() - t0:.1f} s")
