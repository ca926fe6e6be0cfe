"""The library's layout holds: private modules stay behind their package, layers call downward only,
modules and functions stay small, and every stable entry point of the design is importable."""
import ast
import importlib
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "dpmia"
PACKAGES = sorted(p.name for p in LIB.iterdir() if p.is_dir() and (p / "__init__.py").exists())

#: the DP-SGD engine's layers, lowest first: a module imports only from modules before it
SGM_LAYERS = ["_setting", "_shuffle", "_rdp", "_tvbounds", "_replace", "_step", "_stepmgf", "_onestep", "_symmetric",
              "_chain", "_readout", "_tiltstep", "_tiltexcess", "_tilt", "_tiltlevels", "_tiltsplit", "_tiltjoin",
              "_removebound", "_fartail", "_splitread", "_bulk", "_accountant", "_epsilon", "_schedules", "_search",
              "_calibrate"]


def _module_name(path):
    rel = path.relative_to(LIB.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(tree, modname, is_pkg):
    """Absolute names of the dpmia modules imported anywhere in ``tree`` (module level or in functions)."""
    base = modname.split(".") if is_pkg else modname.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                target = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                yield target, a.name
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None


def _private_owner(target, name):
    """``pkg`` if ``target`` (or ``target.name``) is a private module of package ``dpmia.pkg``, else None."""
    for full in (target, f"{target}.{name}" if name else target):
        parts = full.split(".")
        if len(parts) >= 3 and parts[0] == "dpmia" and parts[1] in PACKAGES and parts[2].startswith("_"):
            return parts[1]
    return None


def _lib_files():
    return sorted(LIB.rglob("*.py"))


def test_packages_exist():
    assert {"pld", "sgm", "glrt"} <= set(PACKAGES)


@pytest.mark.parametrize("path", _lib_files(), ids=lambda p: str(p.relative_to(LIB)))
def test_private_modules_stay_behind_their_package(path):
    modname = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for target, name in _imports(tree, modname, path.name == "__init__.py"):
        owner = _private_owner(target, name)
        if owner is not None:
            assert modname.startswith(f"dpmia.{owner}"), f"{modname} imports a private module of dpmia.{owner}"


def _code_cells(nb_path):
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def _outside_sources():
    """(label, source, package its tests may look into) of everything outside the library."""
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        yield nb.name, _code_cells(nb), None
    for folder in ("benchmarks", "book", "exercises"):
        for p in sorted((ROOT / folder).rglob("*.py")) if (ROOT / folder).exists() else []:
            if any(part.startswith((".venv", "_build")) for part in p.relative_to(ROOT).parts):
                continue                # a local virtual environment or build output, not the project's code
            yield str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"), None
    for p in sorted((ROOT / "tests").rglob("*.py")):
        # a package's white-box tests (tests/test_<package>*.py) may reach into its private modules
        own = next((k for k in PACKAGES if p.name.startswith(f"test_{k}") or p.name == f"test_{k}.py"), None)
        own = "sgm" if p.name == "test_schedules.py" else own
        yield str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"), own


@pytest.mark.parametrize("label, source, own", list(_outside_sources()), ids=lambda x: x if isinstance(x, str) else "")
def test_nothing_outside_imports_a_private_module(label, source, own):
    tree = ast.parse(source.replace("%matplotlib inline", ""), filename=label)
    for target, name in _imports(tree, "outside", False):
        owner = _private_owner(target, name)
        assert owner is None or owner == own, f"{label} imports a private module of dpmia.{owner}"


def test_sgm_layers_call_downward_only():
    for i, mod in enumerate(SGM_LAYERS):
        tree = ast.parse((LIB / "sgm" / f"{mod}.py").read_text(encoding="utf-8"))
        for target, _name in _imports(tree, f"dpmia.sgm.{mod}", False):
            parts = target.split(".")
            if parts[:2] == ["dpmia", "sgm"] and len(parts) == 3:
                assert parts[2] in SGM_LAYERS[:i], f"sgm.{mod} imports sgm.{parts[2]}, which is not below it"
            assert parts[:2] != ["dpmia", "sgm"] or len(parts) == 3, f"sgm.{mod} imports the sgm facade"
    assert sorted(SGM_LAYERS) == sorted(p.stem for p in (LIB / "sgm").glob("_*.py") if p.stem != "__init__")


@pytest.mark.parametrize("path", _lib_files(), ids=lambda p: str(p.relative_to(LIB)))
def test_modules_and_functions_stay_small(path):
    src = path.read_text(encoding="utf-8")
    assert src.count("\n") <= 500, f"{path.name}: {src.count(chr(10))} lines (split it by concept)"
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            assert n <= 100, f"{path.name}: {node.name} has {n} lines"


#: DESIGN.md's stable entry points that exist in this version
STABLE = ["gaussian.delta", "gaussian.epsilon", "gaussian.calibrate_sigma", "gaussian.tradeoff",
          "bounds.humphries_advantage", "bounds.posterior_upper", "sgm.advantage_bound", "sgm.epsilon",
          "sgm.tpr_at_fpr", "sgm.calibrate_sigma", "glrt.roc", "glrt.delta", "glrt.epsilon", "mip.eta_from_dp",
          "mip.eps_from_eta", "mip.exact_eta_laplace", "pmp.exponential_mechanism", "report.risk_report",
          "report.quick_risk", "cli.main", "pld.PLD", "pld.from_profile", "pld.compose", "pld.regrid"]


@pytest.mark.parametrize("name", STABLE)
def test_stable_entry_points_import(name):
    mod, attr = name.split(".")
    assert callable(getattr(importlib.import_module(f"dpmia.{mod}"), attr))


@pytest.mark.parametrize("pkg", PACKAGES)
def test_facades_export_what_they_list(pkg):
    mod = importlib.import_module(f"dpmia.{pkg}")
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing
    assert all(not n.startswith("_") for n in mod.__all__)
