"""The real Claude Code, Codex and Hermes binaries, run headless against a scripted model on loopback.

The smoke test per harness needs no product code (the scripted model makes the harness run a
command, and its file appears): when it fails, the rig or the harness changed, not the loop.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_rig import Harness, require_binary
from model_servers import AnthropicModel, ChatModel, Final, ResponsesModel, Shell, strings

pytestmark = pytest.mark.slow
HARNESS_NAMES = ["claude", "codex", "hermes"]
MODELS = {"claude": AnthropicModel, "codex": ResponsesModel, "hermes": ChatModel}


@pytest.fixture(params=HARNESS_NAMES)
def harness(request, tmp_path: Path) -> Harness:
    binary = require_binary(request.param)
    home = tmp_path / "home"
    home.mkdir()
    return Harness(request.param, binary, home)


def test_smoke_scripted_model_drives_the_harness_shell(harness: Harness, tmp_path: Path):
    work = tmp_path / "w"
    work.mkdir()
    steps = [Shell("touch smoke-marker"), Final("Created the marker.")]
    with MODELS[harness.name](steps) as model:
        proc = harness.run("Create the smoke marker file.", work, model.url)
    detail = f"rc={proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}\nrequests: {[r['path'] for r in model.requests]}"
    assert (work / "smoke-marker").is_file(), detail
    assert model.steps_used == 2, detail
    assert any("smoke-marker" in text for text in strings(model.model_requests[1])), "the second request carries the tool call"
