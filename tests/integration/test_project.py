"""The project's test command: the README's, CI's, and pytest's settings agree."""

import configparser
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _pytest_command(text):
    (command,) = re.findall(r"python -m pytest -q [^\n&|]*", text)
    return command.strip()


def test_ci_runs_the_readme_test_command():
    readme = _pytest_command((ROOT / "README.rst").read_text())
    ci = _pytest_command((ROOT / ".ci" / "run").read_text())
    assert readme == ci == "python -m pytest -q -n logical --dist worksteal tests cplxmodule"


def test_docstring_examples_run_with_the_tests():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    pytest_section = config["tool:pytest"]
    assert "--doctest-modules" in pytest_section["addopts"].split()
    assert pytest_section["testpaths"].split() == ["tests", "cplxmodule"]


def test_markers_are_registered_and_the_readme_skips_the_slow_ones():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    pytest_section = config["tool:pytest"]
    assert "--strict-markers" in pytest_section["addopts"].split()
    registered = {line.split(":")[0] for line in pytest_section["markers"].strip().splitlines()}
    assert {"slow", "distributed", "onnx", "inductor"} <= registered
    assert 'python -m pytest -m "not slow"' in (ROOT / "README.rst").read_text()
