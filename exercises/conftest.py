"""Exercises that check themselves: ``pytest exercises`` grades the student's functions (the stubs in this
folder, which raise ``NotImplementedError`` until written); ``pytest exercises --solutions`` runs the same tests
on the reference solutions in ``solutions/`` (what ``make test`` does, so that every test is known to pass on a
right answer)."""
import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_addoption(parser):
    parser.addoption("--solutions", action="store_true", help="test the reference solutions instead of the stubs")


def _load(path):
    spec = importlib.util.spec_from_file_location(f"_exercise_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def answer(request):
    """The module under test: ``exN_name.py`` next to the test, or its reference solution with --solutions."""
    name = Path(request.node.fspath).stem.removeprefix("test_")
    folder = HERE / "solutions" if request.config.getoption("--solutions") else HERE
    return _load(folder / f"{name}.py")
