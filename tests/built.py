"""Build artefacts the tests read (the PDF, the student edition): rebuilt with their make target when missing or
older than any of the sources they are made from."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ensure_built(artefact: Path, target: str, sources: list[str]) -> Path:
    """``artefact``, after ``make target`` if it is missing or older than any file matching ``sources``."""
    newest = max(p.stat().st_mtime for pattern in sources for p in ROOT.glob(pattern))
    if not artefact.exists() or artefact.stat().st_mtime < newest:
        log = ROOT / "_build" / f"{target}.log"
        log.parent.mkdir(exist_ok=True)
        with open(log, "w") as out:
            r = subprocess.run(["make", target], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, timeout=3600)
        assert r.returncode == 0, f"make {target} failed:\n" + "".join(log.read_text().splitlines(True)[-40:])
    return artefact
