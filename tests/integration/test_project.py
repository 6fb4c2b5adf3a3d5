"""The project's test command: the README's, CI's, and pytest's settings agree."""

import ast
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


def test_three_class_creation_hooks():
    # the kinds and families are tables read by functions: the hooks are the
    # family declaration, the channel-step declaration and the forward check
    hooks = sorted(
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in (ROOT / "cplxmodule").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name == "__init_subclass__"
    )
    assert len(hooks) <= 3, hooks
    assert not [path for path in (ROOT / "cplxmodule").rglob("*.py")
                if "metaclass=" in path.read_text()]
