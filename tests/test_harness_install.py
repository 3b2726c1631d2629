"""tests/harnesses/install.py: which Node it trusts, and that a failed step stops it with a clear message."""

from __future__ import annotations

import sys

import pytest
from harnesses import install


@pytest.mark.parametrize(
    ("node", "engines", "ok"),
    [
        ("v20.20.2", ">=22.0.0", False),
        ("v22.0.0", ">=22.0.0", True),
        ("v22.23.3", ">=22", True),
        ("v20.20.2", ">=16", True),
        ("v20.20.2", "", True),
        ("v24.1.0", "^22 || ^24", False),
        ("v18.0.0", ">= 18.0", True),
    ],
)
def test_node_meets_only_ranges_it_understands(node, engines, ok):
    assert install.node_satisfies(node, engines) is ok


def test_missing_npm_fails_loudly_and_names_the_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert install.main(["--root", str(tmp_path / "harnesses")]) == 1
    err = capsys.readouterr().err
    assert "needs node and npm on PATH" in err and "apt-get install nodejs npm" in err
    assert not (tmp_path / "harnesses" / "hermes-venv").exists()  # it stopped at the failed step


def test_a_failed_command_reports_its_step_and_output(tmp_path):
    with pytest.raises(install.InstallError) as exc:
        install._run([sys.executable, "-c", "import sys; print('boom detail'); sys.exit(3)"], "installing the widget")
    assert "installing the widget failed (exit 3)" in str(exc.value) and "boom detail" in str(exc.value)
