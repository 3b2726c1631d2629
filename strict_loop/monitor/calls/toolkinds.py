"""What kind of step a turn is: the tool and shell-command tables, and the parsing of a command into its step.

Why apart from ``novelty``: these tables are the detector's vocabulary (which tools write, read or search, which
commands take a subcommand) and grow with every harness and tool seen; ``novelty`` decides what a turn's facts
are and whether it made progress.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Optional

from strict_loop.model.monitoring import Kind
from strict_loop.model.turns import Turn
from strict_loop.monitor.calls import jobs, shellwork
from strict_loop.monitor.outcomes import is_verifier

WRITE_TOOLS = {
    "edit",
    "create",
    "write",
    "write_file",
    "apply_patch",
    "multiedit",
    "replace",
    "insert",
    "patch",
    "notebookedit",
    "write_to_file",
    "replace_in_file",
    "edit_file",
    "search_replace",
    "apply_diff",
    "insert_content",
    "create_file",
}
READ_TOOLS = {
    "open",
    "goto",
    "scroll_down",
    "scroll_up",
    "read",
    "view",
    "read_file",
    "cat",
    "view_file",
    "read_many_files",
}
SEARCH_TOOLS = {
    "find_file",
    "search_dir",
    "search_file",
    "grep",
    "glob",
    "find",
    "ls",
    "search",
    "list_files",
    "search_files",
    "list_dir",
    "codebase_search",
    "grep_search",
    "file_search",
    "list_code_definition_names",
    "list_directory",  # Gemini CLI's ls; search_file_content was its grep before grep_search
    "search_file_content",
    "list",  # OpenCode's ls
}
PERSON_TOOLS = {"user_prompt"}
EDITOR_WRITE_COMMANDS = {"create", "str_replace", "insert", "undo_edit", "write"}
READ_COMMANDS = {
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "nl",
    "wc",
    "sed",
    "awk",
    "git",
    "diff",
    "stat",
    "file",
    "echo",
    "pwd",
    "type",
}
_GIT_ACTS = re.compile(
    r"(?:^|[;&|(]\s*)git\s+(?:-C\s+\S+\s+|-c\s+\S+\s+|--[\w-]+(?:=\S+)?\s+)*(?:commit|push|pull|merge|rebase|"
    r"cherry-pick|revert|am|fetch|clone|tag\s+-|bisect|submodule\s+update)\b"
)
"""A git command that acts (a commit a hook may refuse, a push the remote may reject, a merge that may conflict): a
run, whose failure is an outcome, unlike looking at the repository (``git status``, ``git log``, ``git diff``)."""
SEARCH_COMMANDS = {"grep", "rg", "find", "ls", "tree", "locate", "which", "ag", "fd", "dir", "findstr", "where"}
PATH_KEYS = (
    "path",
    "file_path",
    "filename",
    "file",
    "target_file",
    "notebook_path",
    "absolutePath",
    "absolute_path",
    "filePath",  # OpenCode's read, write and edit
    "dir_path",
)
_CHAIN = re.compile(r"&&|\|\||;")
MAX_WORDS_TEXT = 2000
"""Characters of a command's first line read for its words (callers use the first three): ``shlex`` takes about a
microsecond a character, and an agent's one-line command can be 15,000 characters."""


_SUBSTITUTION = re.compile(r"\$\([^()]*\)")
"""A command substitution (``TOKEN=$(grep ^T= .env | cut -d= -f2) python x.py``): one word, whatever it runs."""


def _words(command: str) -> list[str]:
    try:
        words = shlex.split(_SUBSTITUTION.sub("_", command.strip().splitlines()[0][:MAX_WORDS_TEXT]))
    except (ValueError, IndexError):
        words = command.split()
    return [w for w in words if not ("=" in w and not w.startswith("-"))] if words else []  # VAR=value prefixes out


WRAPPERS = {
    "sudo": "ugCDhpRrT",
    "timeout": "sk",
    "gtimeout": "sk",
    "nohup": "",
    "nice": "n",
    "ionice": "cn",
    "env": "uSC",
}
WRAPPERS |= {"time": "fo", "stdbuf": "ioe", "exec": "a", "command": "", "caffeinate": "tw", "unbuffer": ""}
"""Programs that run the next word as the command (``timeout 300 alembic upgrade``: the step is ``alembic upgrade``),
each with its options that take a value; ``timeout``'s duration is its first argument."""
_SHELL_SCRIPT = re.compile(r"\s*(?:\S*/)?(?:ba|z|da|k)?sh\s+-[a-z]*c[a-z]*\s+(?P<q>['\"])(?P<script>.+)(?P=q)\s*")
"""A shell run on a script given whole (``bash -c 'git push -u origin main'``): the step is the script's."""


def _unwrapped(words: list[str]) -> list[str]:
    """``words`` from the command a wrapper (``WRAPPERS``) runs, however many are nested (``sudo timeout 60 make``); a
    wrapper with no command after it (``sudo``, as a person names it) is its own step."""
    whole = words
    for _ in range(4):
        head = words[0].rsplit("/", 1)[-1] if words else ""
        takes, k = WRAPPERS.get(head), 1
        if takes is None:
            break
        while k < len(words) and words[k].startswith("-") and words[k] != "--":
            k += 1 + (len(words[k]) == 2 and words[k][1] in takes)  # `-u root`, `-s KILL`: its value too
        k += k < len(words) and words[k] == "--"
        words = words[k + (head.endswith("timeout") and k < len(words)) :]  # timeout's duration
    return words or whole


SETUP_WORDS = frozenset({"cd", "pushd", "export", "source", ".", "set", "setlocal", "chcp", "nvm", "conda"})
"""What a command chain starts with to set up where and how the next command runs: the command is the next one."""


def command_word(command: str) -> str:
    """The program a command runs: after any ``cd dir &&`` or ``export X=1;`` that only sets up where it runs."""
    first = command.strip().splitlines()[0] if command.strip() else ""
    word = ""
    for part in _CHAIN.split(first)[:4]:
        words = _words(part)
        word = words[0].rsplit("/", 1)[-1] if words else ""
        if word not in SETUP_WORDS:
            return word
    return word


SUBCOMMANDS = frozenset(
    ("docker", "podman", "git", "npm", "yarn", "pnpm", "cargo", "go", "kubectl", "pip", "pip3", "uv", "poetry", "conda")
    + ("apt", "apt-get", "brew", "helm", "terraform", "gh", "dotnet", "bazel", "nix", "aws", "gcloud", "az")
)
"""Programs whose first word after them is the step (``git log``, ``kubectl rollout``, ``aws elbv2``)."""
_GLOBAL_VALUED = frozenset(("-C", "-c", "-n", "--namespace", "--context", "--kube-context", "--kubeconfig", "-H"))
_GLOBAL_VALUED |= frozenset(("--host", "--config", "--region", "--profile", "--project", "--account", "--prefix", "-w"))
_GLOBAL_VALUED |= frozenset(("--workspace", "--filter", "-F", "--log-level", "--subscription", "--resource-group"))
"""Their options given before the step that take a value (``kubectl --context prod -n shop rollout status``): the
value is no step."""
INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "ruby", "perl", "deno", "bun"})


_SAYS_ONLY = frozenset({"echo", "printf", "true", ":"})
"""Programs that end a chain to say how it went (``; echo "exit=$?"``), not to take a step of their own."""


def _shows_log(words: list[str], before: str) -> bool:
    """Whether a chain's step prints a log a step before it wrote (``train.py > run.log 2>&1; tail -5 run.log``): it
    says how that step went."""
    wrote = before.replace(" ", "")
    return words[0] in ("tail", "head", "cat") and any(f">{w}" in wrote for w in words[1:] if "." in w)


_REHEARSALS = frozenset(("--dry-run", "--dryrun", "--noop", "--simulate", "--what-if", "-WhatIf", "--check"))


def step_words(command: str) -> str:
    """The step a command takes, without the arguments an agent varies: `docker build`, `python build.py`,
    `python -m pytest`, `make` (targets are arguments), `./build.sh`; `npm publish --dry-run` is another."""
    step, rest = step_parts(command)
    return " ".join([step, *sorted(_REHEARSALS.intersection(rest))])


def step_parts(command: str) -> tuple[str, list[str]]:
    """The step a command takes (``step_words``) and the words it is given after it, from the command a wrapper runs
    (``sudo make deploy``: ``make`` and ``deploy``), in the last of a chain (``cd dir && make x``: ``make``)."""
    line = command.strip().splitlines()[0] if command.strip() else ""
    if shell := _SHELL_SCRIPT.fullmatch(line[:MAX_WORDS_TEXT]):
        return step_parts(shell.group("script"))
    chain = _CHAIN.split(line)
    words = _unwrapped(_words(chain[-1]))
    for k in range(len(chain) - 2, -1, -1):  # `pytest -x | tail -4; echo "exit=$?"`: the step is pytest's
        if not words or not (words[0] in _SAYS_ONLY or _shows_log(words, "".join(chain[: k + 1]))):
            break
        words = _unwrapped(_words(chain[k]))
    if not words:
        return "", []
    head = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if head in SUBCOMMANDS and (at := _step_at(rest)) is not None:
        return f"{head} {rest[at]}", rest[at + 1 :]
    if head in INTERPRETERS or head.startswith("python"):
        if len(rest) >= 2 and rest[0] == "-m":
            return f"{head} -m {rest[1]}", rest[2:]
        if rest and not rest[0].startswith("-"):
            return f"{head} {rest[0]}", rest[1:]
    return head, rest


def _step_at(rest: list[str]) -> Optional[int]:
    """Where a program's step is among the words after it: past its options (and the values of those that take one)."""
    k = 0
    while k < len(rest) and rest[k].startswith("-") and rest[k] != "--":
        k += 1 + (rest[k] in _GLOBAL_VALUED)
    return k if k < len(rest) and not rest[k].startswith("-") else None


def given_words(command: str, args: Optional[dict[str, Any]] = None) -> list[str]:
    """What a command was given after its step, up to a pipe, flags and numbers left out (at most 12 words, each at
    most 200 characters): what an agent varies when it guesses (``docker logs api``, then ``docker logs web-1``); an
    MCP tool's, its arguments' one-word values (``head: fix/retry``, then ``base: develop``)."""
    if command or args is None:
        rest = step_parts(command)[1]
    else:  # an MCP tool's arguments, read only for one (a command's are its words)
        rest = [v for v in args.values() if isinstance(v, str) and len(v.split()) == 1]
    rest = rest[: rest.index("|")] if "|" in rest else rest
    return [w[:200] for w in rest if len(w) >= 3 and not w.startswith("-") and not w.isdigit()][:12]


def mcp_tool(tool: str) -> bool:
    """Whether a tool is an MCP server's as Claude Code and Codex name them (``mcp__github__create_pull_request``): one
    step, as a program is, whatever it is given."""
    return tool.startswith("mcp__")


def classify_tool(tool: str, args: dict[str, Any]) -> Kind:
    name = tool.lower()
    command = args.get("command") if isinstance(args.get("command"), str) else ""
    if name in PERSON_TOOLS:
        return "person"
    if name == "message":
        return "message"
    if name in ("invalid_format", "format_error"):
        return "invalid"
    if jobs.job_act(tool, args) in ("read", "stop"):  # a background job's status read or stop: a run of it
        return "run"
    if name in ("str_replace_editor", "str_replace_based_edit_tool", "text_editor"):
        return "write" if command in EDITOR_WRITE_COMMANDS else "read"
    if name in WRITE_TOOLS:
        return "write"
    if name in READ_TOOLS:
        return "read"
    if name in SEARCH_TOOLS:
        return "search"
    if command:
        if shellwork.writes(command):  # `sed -i`, a heredoc, `git checkout -- f`: an edit through the shell; with a
            return "run" if is_verifier(command) or _runs_last(command) else "write"  # check or script after it, a run
        if _runs_last(command):
            return "run"
        word = command_word(command)
        if word in SEARCH_COMMANDS:
            return "search"
        if word in READ_COMMANDS and (word != "git" or not _GIT_ACTS.search(command[:MAX_WORDS_TEXT])):
            return "read"
        return "run"
    return "other"


def _runs_last(command: str) -> bool:
    """Whether a chain ends by running a program on a file after what it looked at or wrote first (``grep -c X .env;
    python export.py``, ``sed -i ... && node build.js``): the chain is that run."""
    first = command.strip().splitlines()[0] if command.strip() else ""
    chain = [part for part in _CHAIN.split(first) if part.strip()]
    if len(chain) < 2:
        return False
    head, _, script = step_words(command).partition(" ")  # `python -` and `python -c` name no script: no space
    return bool(script) and (head in INTERPRETERS or head.startswith("python"))


def turn_paths(turn: Turn) -> list[str]:
    if turn.paths is not None:
        return [p for p in turn.paths if isinstance(p, str)][:20]
    out = [turn.args[k] for k in PATH_KEYS if isinstance(turn.args.get(k), str)]
    command = turn.args.get("command")
    if not out and isinstance(command, str):
        out = [p for p in shellwork.writes(command) if not p.startswith("(")]
    if not out and isinstance(command, str) and turn.tool.lower() in ("open", "create"):
        parts = command.split()
        if len(parts) >= 2:
            out.append(parts[1].strip("\"'"))
    return out[:20]
