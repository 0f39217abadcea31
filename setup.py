"""The wheel's one build step beyond pyproject.toml: the requirement IDs the project's tests
cite are written beside the catalog (spec/catalog/test-citations.json), so that `mqconform spec
stats` and `spec show` of an installed mqconform count the same citations as in the checkout,
although tests/ is not installed."""

import importlib.util
import json
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if not (HERE / "tests").is_dir():
            raise SystemExit("build: tests/ is missing (the wheel records the requirement IDs "
                             "the tests cite); build from a checkout or a complete sdist")
        loader = importlib.util.spec_from_file_location("_mqconform_trace", HERE / "spec/trace.py")
        trace = importlib.util.module_from_spec(loader)
        sys.modules[loader.name] = trace  # dataclasses look their module up there
        loader.loader.exec_module(trace)
        out = Path(self.build_lib) / "mqconform" / "spec" / "catalog" / trace.SNAPSHOT
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(trace.snapshot(HERE), indent=0, sort_keys=True) + "\n",
                       encoding="utf-8")


setup(cmdclass={"build_py": BuildPy})
