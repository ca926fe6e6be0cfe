"""The ``dpmia`` command's conventions: whole numbers in scientific notation, "did you mean"
for mistyped options, and ``--help`` examples that really run."""

import json
import shlex
import subprocess
import sys

import pytest

from dpmia.cli import _whole, main


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``dpmia argv``, in this process."""
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("text, value", [("1e4", 10_000), ("10000", 10_000), ("5e4", 50_000), ("1E6", 10**6),
                                         ("1e7", 10**7), ("1e17", 10**17), ("123456789e9", 123456789 * 10**9),
                                         ("2.5e1", 25), ("7.0", 7), ("-3", -3)])
def test_whole_numbers_exact(text, value):
    assert _whole(text) == value and type(_whole(text)) is int


def test_steps_in_scientific_notation_same_output(capsys):
    # the table, not --json: repeated in-process reports may differ in the last float digits
    base = ["risk", "--q", "0.01", "--sigma", "1", "--delta", "1e-5", "--steps"]
    sci, plain = run(capsys, *base, "1e3"), run(capsys, *base, "1000")
    assert sci[0] == 0 and sci == plain
    assert "T = 1,000 steps" in sci[1]


@pytest.mark.parametrize("bad", ["1.5", "1e-3", "abc", "nan", "inf", ""])
def test_non_integer_refused_naming_the_option(capsys, bad):
    status, out, err = run(capsys, "calibrate", "--q", "0.01", "--steps", bad, "--advantage", "0.1")
    assert status == 2 and out == ""
    assert f"argument --steps: must be a whole number, got {bad!r}" in err


def test_dataset_size_in_scientific_notation(capsys):
    sci = run(capsys, "calibrate", "--dataset-size", "5e4", "--batch-size", "5e2", "--epochs", "10",
              "--advantage", "0.1")
    plain = run(capsys, "calibrate", "--dataset-size", "50000", "--batch-size", "500", "--epochs", "10",
                "--advantage", "0.1")
    assert sci[0] == 0 and sci == plain and "q = 0.01, T = 1,000" in sci[1]
    status, _, err = run(capsys, "calibrate", "--dataset-size", "5.5e0", "--batch-size", "1", "--epochs", "1",
                         "--advantage", "0.1")
    assert status == 2 and "argument --dataset-size: must be a whole number, got '5.5e0'" in err


@pytest.mark.parametrize("argv, hint", [
    (["risk", "--sigmaa", "1", "--q", "0.01", "--steps", "100"], "--sigma"),  # --sigma is required
    (["calibrate", "--stpes", "100", "--q", "0.01", "--advantage", "0.1"], "--steps"),
    (["risk", "--q", "0.01", "--sigma", "1", "--steps", "100", "--dleta=1e-5"], "--delta"),
    (["--verison"], "--version"),
])
def test_typo_gets_a_suggestion(capsys, argv, hint):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert f"did you mean {hint}?" in err


def test_abbreviations_and_negative_values_unchanged(capsys):
    # argparse's unambiguous prefixes still work; ambiguous ones keep argparse's message
    assert run(capsys, "calibrate", "--q", "0.01", "--ste", "1e3", "--adv", "0.1")[0] == 0
    status, _, err = run(capsys, "risk", "--d", "5", "--q", "0.01", "--sigma", "1", "--steps", "10")
    assert status == 2 and "ambiguous option" in err and "did you mean" not in err
    # a negative number is a value, not a mistyped option: the library's own check answers it
    status, _, err = run(capsys, "risk", "--q", "-0.5", "--sigma", "1", "--steps", "10")
    assert status == 2 and "did you mean" not in err and "q must lie in [0, 1]" in err


def help_text(capsys, *argv):
    status, out, _ = run(capsys, *argv, "--help")
    assert status == 0
    return out


@pytest.mark.parametrize("command", [[], ["risk"], ["calibrate"]], ids=["dpmia", "risk", "calibrate"])
def test_help_examples_run(capsys, command):
    text = help_text(capsys, *command)
    epilog = text.split("\nexamples:\n", 1)[1]
    examples = [line.strip() for line in epilog.splitlines() if line.strip().startswith("dpmia ")]
    assert len(examples) == {(): 2, ("risk",): 4, ("calibrate",): 3}[tuple(command)]
    for example in examples:
        argv = shlex.split(example)[1:]
        assert command == [] or argv[0] == command[0]
        status, out, err = run(capsys, *argv)
        assert status == 0, (example, err)
        assert out.strip() and err == ""


def test_python_dash_m():
    done = subprocess.run([sys.executable, "-m", "dpmia.cli", "calibrate", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "examples:\n  dpmia calibrate " in done.stdout


def test_sigma_given_to_calibrate_says_what_calibrate_does(capsys):
    for opt in ("--sigma", "--sigmaa"):
        with pytest.raises(SystemExit) as e:
            main(["calibrate", "--q", "0.01", "--steps", "1e3", opt, "1.1"])
        assert e.value.code == 2
        assert "calibrate finds the noise multiplier" in capsys.readouterr().err


@pytest.mark.parametrize("argv, words", [
    (["calibrate", "--q", "0.01", "--steps", "1e3"], "--advantage ..., or --fpr ... with --tpr"),
    (["risk", "--dataset-size", "100", "--batch-size", "256", "--epochs", "3", "--sigma", "1"],
     "--batch-size must be at most --dataset-size (100)"),
    (["risk", "--q", "0.01", "--steps", "100", "--sigma", "1", "--fpr", "0"], "--fpr must lie in (0, 1)"),
])
def test_library_errors_speak_in_options(capsys, argv, words):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert words in capsys.readouterr().err


def test_risk_under_other_games(capsys):
    status, out, _ = run(capsys, "risk", "--q", "0.01", "--sigma", "1", "--steps", "1000", "--neighbours",
                         "replace-one", "--sampler", "fixed", "--baseline", "0.01", "--json")
    assert status == 0
    d = json.loads(out)
    assert d["setting"]["sampler"] == "fixed" and d["setting"]["baseline"] == 0.01
    assert any(r["quantity"] == "reconstruction-type success, baseline 0.01" for r in d["rows"])
    status, _, err = run(capsys, "risk", "--q", "0.01", "--sigma", "1", "--steps", "1000", "--sampler", "fixed")
    assert status == 2 and "--neighbours replace-one" in err
    status, out, _ = run(capsys, "calibrate", "--q", "0.01", "--steps", "1000", "--advantage", "0.1",
                         "--neighbours", "replace-one")
    assert status == 0 and "replace-one neighbours" in out


def test_audit_help_examples_run(capsys, tmp_path, monkeypatch):
    """Every example of `dpmia audit --help`, on the example file it prints (and the second shard the merge needs)."""
    monkeypatch.chdir(tmp_path)
    status, out, _ = run(capsys, "audit", "--example-csv")
    assert status == 0 and out.startswith("score,member,group\n")
    (tmp_path / "scores.csv").write_text(out)
    text = help_text(capsys, "audit")
    examples = [ln.strip() for ln in text.split("\nexamples:\n", 1)[1].splitlines() if ln.strip().startswith("dpmia ")]
    assert len(examples) == 5
    for example in examples:
        if "--merge" in example:                # the other shard of the example before
            shard1 = examples[3].replace("0/2", "1/2").replace("part0", "part1")
            assert run(capsys, *shlex.split(shard1)[1:])[0] == 0
        status, out, err = run(capsys, *shlex.split(example)[1:])
        assert status == 0, (example, err)
        assert out.strip() and err == ""
    status, out, _ = run(capsys, "audit", "scores.csv", "--one-run", "--json", "--q", "0.01", "--sigma", "1",
                         "--steps", "1e4")
    d = json.loads(out)
    assert d["method"] == "one-run" and 0 < d["epsilon_lower"] < d["certified"]["epsilon_upper"]


@pytest.mark.parametrize("content, message", [
    ("", "is empty"),
    ("score,label\n1,0\n", "no 'member' column"),
    ("score,member\n0.5,1\nabc,0\n", "line 3: score 'abc' is not a number"),
    ("score,member\nnan,1\n", "line 2: score is 'nan'"),
    ("score,member\n0.5,2\n", "line 2: member must be 0 or 1, got '2'"),
    ("score,member\n0.5,1\n0.4\n", "line 3: 1 fields"),
    ("score,member\n", "no scores"),
    ("score,member\n0.5,1\n0.4,0\n", "1 non-members cannot measure an FPR of 0.1 or less"),
    ("score,member,group\n" + "".join(f"{i % 7},{i % 2},a\n" for i in range(2400)), "groups must name at least two"),
    ("score;member\n0.5;1\n", "the separator must be a comma"),
])
def test_audit_refuses_malformed_files(capsys, tmp_path, content, message):
    f = tmp_path / "s.csv"
    f.write_text(content)
    status, _, err = run(capsys, "audit", str(f))
    assert status == 2 and message in err, err


def test_audit_needs_one_mode(capsys):
    status, _, err = run(capsys, "audit")
    assert status == 2 and "give exactly one of: a scores CSV file, --digits" in err
    status, _, err = run(capsys, "audit", "--digits", "--q", "0.1")
    assert status == 2 and "--digits needs --sigma, --q and --epochs" in err
    status, _, err = run(capsys, "audit", "--digits", "--sigma", "1", "--q", "0.1", "--epochs", "1", "--shard", "3/2")
    assert status == 2 and "--shard must be 'i/n'" in err


def test_audit_reads_what_spreadsheets_write_and_refuses_what_it_cannot_use(capsys, tmp_path):
    rows = "".join(f"{(i * 7919) % 1000 / 100:.2f},{['True', 'False'][i % 2]}\n" for i in range(2400))
    f = tmp_path / "s.csv"
    f.write_text("\ufeffscore,member\n" + rows, encoding="utf-8")          # a byte-order mark, labels True/False
    status, out, err = run(capsys, "audit", str(f), "--fpr", "0.01", "--fpr", "0.01")
    assert status == 0 and out.count("\n      0.01") == 1, (out, err)       # a repeated FPR counted once
    status, _, err = run(capsys, "audit", "--digits", "--sigma", "1", "--q", "0.1", "--epochs", "1",
                         "--out", str(tmp_path / "no" / "dir" / "p.jsonl"))
    assert status == 2 and "--out: cannot write" in err
    status, _, err = run(capsys, "audit", "--merge", str(f), "--one-run")
    assert status == 2 and "--merge uses the setting the shards were trained with; --one-run" in err
