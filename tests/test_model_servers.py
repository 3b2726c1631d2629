"""The scripted model servers the harness tests drive the real binaries with, spoken to over real HTTP."""

from __future__ import annotations

import json
import socket
import time
import urllib.request

import harness_rig
import pytest
from model_servers import SIDE_TEXT, AnthropicModel, ChatModel, Final, Hang, ResponsesModel, Shell, strings

TOOLS = [{"name": "shell"}]


def post(url: str, body: dict) -> tuple[str, bytes]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers["Content-Type"], resp.read()


def sse_data(raw: bytes) -> list:
    return [
        json.loads(line[6:])
        for line in raw.decode().splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def test_anthropic_side_calls_take_no_step_and_a_used_up_script_repeats_its_final_text():
    with AnthropicModel([Shell("false"), Final("all done")]) as model:
        side = json.loads(post(f"{model.url}/v1/messages", {"messages": []})[1])
        first = sse_data(post(f"{model.url}/v1/messages", {"tools": TOOLS, "stream": True, "messages": []})[1])
        second = sse_data(post(f"{model.url}/v1/messages", {"tools": TOOLS, "stream": True, "messages": ["r1"]})[1])
        again = sse_data(post(f"{model.url}/v1/messages", {"tools": TOOLS, "stream": True, "messages": ["r2"]})[1])
    assert side["content"] == [{"type": "text", "text": SIDE_TEXT}]
    assert (
        first[1]["content_block"]["name"] == "Bash"
        and json.loads(first[2]["delta"]["partial_json"])["command"] == "false"
    )
    assert first[4]["delta"]["stop_reason"] == "tool_use" and second[4]["delta"]["stop_reason"] == "end_turn"
    assert second[2]["delta"]["text"] == again[2]["delta"]["text"] == "all done"
    assert model.steps_used == 2 and [b["messages"] for b in model.model_requests] == [[], ["r1"], ["r2"]]
    assert len(model.requests) == 4


def test_responses_stream_a_function_call_then_a_message():
    with ResponsesModel([Shell("ls"), Final("ok")]) as model:
        call = sse_data(post(f"{model.url}/v1/responses", {"tools": TOOLS, "stream": True})[1])
        text = sse_data(post(f"{model.url}/v1/responses", {"tools": TOOLS, "stream": True})[1])
    item = call[2]["item"]
    assert [e["type"] for e in call] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    assert (
        item["type"] == "function_call"
        and item["name"] == "exec_command"
        and json.loads(item["arguments"]) == {"cmd": "ls"}
    )
    assert text[2]["item"]["content"][0]["text"] == "ok"


@pytest.mark.parametrize("stream", [True, False])
def test_chat_completions_answer_tool_calls_and_the_model_probes(stream):
    with ChatModel([Shell("echo hi"), Final("bye")]) as model:
        with urllib.request.urlopen(f"{model.url}/v1/models", timeout=10) as resp:
            listed = json.loads(resp.read())
        ctype, raw = post(f"{model.url}/v1/chat/completions", {"tools": TOOLS, "stream": stream})
    if stream:
        assert ctype == "text/event-stream" and raw.endswith(b"data: [DONE]\n\n")
        message, finish = sse_data(raw)[0]["choices"][0]["delta"], sse_data(raw)[-1]["choices"][0]["finish_reason"]
    else:
        choice = json.loads(raw)["choices"][0]
        message, finish = choice["message"], choice["finish_reason"]
    assert listed["data"][0]["id"] == "mock-model" and finish == "tool_calls"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"command": "echo hi"}


def test_strings_finds_text_at_any_depth():
    assert list(strings({"a": [{"b": "x"}, 1, "y"], "c": None})) == ["x", "y"]


def test_a_missing_harness_skips_with_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(harness_rig.BINARIES, "codex", tmp_path / "absent" / "codex")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(
        pytest.skip.Exception, match=r"codex is not installed: run `python3 tests/harnesses/install.py`"
    ):
        harness_rig.require_binary("codex")


def test_settle_returns_once_a_request_its_ended_client_left_held_has_taken_its_step():
    """A harness ended while the model holds its request (a Hang step) still moves the script on when the hold ends:
    ``settle`` waits for that, so a test that compares ``steps_used`` before and after another run sees only that
    run's steps (tests/test_supervisor_e2e.py, the spiral test)."""
    with AnthropicModel([Hang(0.3), Final("too late"), Final("next run")]) as model:
        body = json.dumps({"tools": TOOLS, "messages": []}).encode()
        with socket.create_connection(("127.0.0.1", int(model.url.rsplit(":", 1)[1]))) as client:
            client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            deadline = time.monotonic() + 5
            while not model.model_requests and time.monotonic() < deadline:
                time.sleep(0.01)
        held = model.steps_used  # the client is gone; its request is still held
        model.settle()
        assert (held, model.steps_used) == (1, 2)
