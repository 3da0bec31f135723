"""examples/make_examples.py and examples/check_class.py, loaded once for the example tests, and a
class written into a temporary folder."""

import importlib.util
import sys
import tempfile
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


maker = load("make_examples")
checker = load("check_class")


def written(kind: str) -> tuple[tempfile.TemporaryDirectory, Path, dict]:
    scratch = tempfile.TemporaryDirectory()
    out = Path(scratch.name) / kind
    expected = maker.write_class(kind, out)
    return scratch, out, expected
