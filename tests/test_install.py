"""The package installs what it imports: ``pip install .`` into a fresh virtual environment, then the
README's quick start and one audit call run there (from outside the source tree)."""
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

AUDIT = """
from dpmia import audit, learning
data = learning.load_digits()            # scikit-learn's bundled digits: needs scikit-learn installed
res = audit.lira_audit(data, sigma=1.0, q=0.2, epochs=2, n_train=60, n_canaries=8, n_models=8, n_null=2, seed=0)
print(type(res).__name__, res.steps)
"""


@pytest.mark.timeout(1200)
def test_pip_install_into_a_fresh_environment(tmp_path):
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # the same package index as the Makefile's installs (pip's own configuration)
    res = subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(ROOT)], capture_output=True, text=True,
                         timeout=1100)
    assert res.returncode == 0, res.stderr[-3000:]
    quick = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)[0]
    for code in (quick, AUDIT):
        out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.stdout.strip()
    where = subprocess.run([str(py), "-c", "import dpmia; print(dpmia.__file__)"], capture_output=True, text=True,
                           cwd=tmp_path, check=True).stdout
    assert str(env_dir) in where, "the test must exercise the installed copy, not the source tree"
    assert sys.prefix != str(env_dir)


def test_lab_environment_is_consistent():
    """The Binder/reader environment (requirements.txt) has JupyterLab, and Lab accepts every extension it has."""
    reqs = (ROOT / "requirements.txt").read_text()
    assert re.search(r"^jupyterlab==", reqs, re.M) and re.search(r"^jupyterlab-myst==", reqs, re.M)
    jupyter = Path(sys.executable).with_name("jupyter")
    out = subprocess.run([str(jupyter), "labextension", "list"], capture_output=True, text=True, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)
    assert "jupyterlab-myst" in text and "@jupyter-widgets/jupyterlab-manager" in text
    assert "not compatible" not in text, text
    flagged = [ln.strip() for ln in text.splitlines()
               if " enabled " in ln and not ln.rstrip().split(" (")[0].endswith("OK")]
    assert not flagged, flagged
