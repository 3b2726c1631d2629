"""The shipped JSON Schemas are exactly what the models generate."""

from __future__ import annotations

import json

from conftest import run_cli

from strict_loop.cli import schemas
from strict_loop.cli.schemas import DOCUMENTS


def test_shipped_schema_files_equal_generated():
    generated = schemas.generate()
    shipped = {p.name for p in schemas.SCHEMA_DIR.glob("*.schema.json")}
    assert shipped == set(generated) == {f"{name}.schema.json" for name in DOCUMENTS}
    for name, schema in generated.items():
        assert (schemas.SCHEMA_DIR / name).read_text(encoding="utf-8") == schemas.render(schema), f"{name} is stale"


def test_schemas_check_command_detects_drift(tmp_path):
    assert run_cli("schemas", "--check", cwd=tmp_path, check=False).returncode == 0
    run_cli("schemas", "--write", str(tmp_path), cwd=tmp_path)
    doc = json.loads((tmp_path / "state.schema.json").read_text())
    doc["properties"]["status"]["enum"].append("sleeping")
    (tmp_path / "state.schema.json").write_text(json.dumps(doc))
    proc = run_cli("schemas", "--check", str(tmp_path), cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "state.schema.json differs from the models" in proc.stderr


def test_schemas_check_says_what_it_found(tmp_path):
    """Issue 19, item 19: --check was silent on success and said 'differs' for a missing file."""
    from conftest import run_cli

    ok = run_cli("schemas", "--check", cwd=tmp_path)
    assert ok.returncode == 0 and "match the models" in ok.stdout
    empty = run_cli("schemas", "--check", str(tmp_path), cwd=tmp_path, check=False)
    assert empty.returncode == 1 and "is missing" in empty.stderr and "differs" not in empty.stderr
