"""The shipped JSON Schemas are exactly what the models generate."""

from __future__ import annotations

import json
import subprocess
import sys

from strict_loop import schemas
from strict_loop.schemas import DOCUMENTS


def test_shipped_schema_files_equal_generated():
    generated = schemas.generate()
    shipped = {p.name for p in schemas.SCHEMA_DIR.glob("*.schema.json")}
    assert shipped == set(generated) == {f"{name}.schema.json" for name in DOCUMENTS}
    for name, schema in generated.items():
        assert (schemas.SCHEMA_DIR / name).read_text(encoding="utf-8") == schemas.render(schema), f"{name} is stale"


def test_schemas_check_command_detects_drift(tmp_path):
    cmd = [sys.executable, "-m", "strict_loop", "schemas"]
    assert subprocess.run([*cmd, "--check"], capture_output=True).returncode == 0
    subprocess.run([*cmd, "--write", str(tmp_path)], check=True, capture_output=True)
    doc = json.loads((tmp_path / "state.schema.json").read_text())
    doc["properties"]["status"]["enum"].append("sleeping")
    (tmp_path / "state.schema.json").write_text(json.dumps(doc))
    proc = subprocess.run([*cmd, "--check", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 1 and "state.schema.json differs from the models" in proc.stderr
