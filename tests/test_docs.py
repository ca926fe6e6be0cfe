"""The README's and CONTRIBUTING's examples run as printed, and every stable entry point's Examples pass."""
import doctest
import importlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "CONTRIBUTING.md"]


def _blocks(lang):
    for name in DOCS:
        text = (ROOT / name).read_text(encoding="utf-8")
        for i, block in enumerate(re.findall(rf"```{lang}\n(.*?)```", text, re.S)):
            yield pytest.param(block, id=f"{name}-{lang}-{i}")


@pytest.mark.parametrize("code", list(_blocks("python")))
def test_python_blocks_run(code):
    # each block in a fresh interpreter, as a reader would paste it
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip(), "a quick-start block should print what it computes"


def _dpmia_lines(block):
    for line in block.splitlines():
        cmd = line.split("#")[0].strip()
        if cmd.startswith("dpmia "):
            yield cmd


@pytest.mark.parametrize("block", list(_blocks("bash")))
def test_shell_examples_run(block, tmp_path, monkeypatch, capsys):
    """Each block's dpmia lines in order, in a fresh directory (a line may write a file, ``> file``, that a
    later one reads)."""
    from dpmia import cli
    monkeypatch.chdir(tmp_path)
    for cmd in _dpmia_lines(block):
        argv = shlex.split(cmd)[1:]
        target = None
        if ">" in argv:
            target = argv[argv.index(">") + 1]
            argv = argv[:argv.index(">")]
        assert cli.main(argv) in (0, None), cmd
        out = capsys.readouterr().out
        if target:
            (tmp_path / target).write_text(out)


def test_there_are_examples():
    lines = [c for b in _blocks("bash") for c in _dpmia_lines(b.values[0])]
    assert len(list(_blocks("python"))) >= 1 and len(lines) >= 4


#: DESIGN's stable entry points, each with an ``Examples`` section run as a doctest
STABLE = ["gaussian.delta", "gaussian.epsilon", "gaussian.calibrate_sigma", "gaussian.tradeoff",
          "bounds.humphries_advantage", "bounds.posterior_upper", "sgm.advantage_bound", "sgm.epsilon",
          "sgm.tpr_at_fpr", "sgm.calibrate_sigma", "glrt.roc", "glrt.delta", "glrt.epsilon", "mip.eta_from_dp",
          "mip.eps_from_eta", "mip.exact_eta_laplace", "pmp.exponential_mechanism", "report.risk_report",
          "audit.one_run_epsilon", "audit.audit_scores"]


def _entry(name):
    mod, fn = name.split(".")
    return getattr(importlib.import_module(f"dpmia.{mod}"), fn)


@pytest.mark.parametrize("name", STABLE)
def test_stable_entry_point_examples(name):
    fn = _entry(name)
    assert "Examples\n" in (fn.__doc__ or ""), f"{name} has no Examples section"
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(fn, name, globs={})
    assert tests and tests[0].examples, f"{name}: no doctest examples"
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{name}: {runner.failures} failing example(s)"
