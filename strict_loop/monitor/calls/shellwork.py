"""What a call changes: the files a shell command writes and the processes it restarts, what a replacing edit (of any
tool) removes and adds, and whether a call adds a dependency (a package installed by name, a manifest entry).

Why: agents edit through the shell as often as through file tools (Codex has no other way: ``sed -i``, a heredoc,
``python -c`` writing a file, ``apply_patch``, ``git checkout -- file``), and they restart servers, bots and
containers to see whether a change took. A detector that sees only file tools calls varied edits "the identical
action" and misses a kill-and-restart loop. Pure text; the command is read only within ``MAX_COMMAND`` characters.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Optional

MAX_COMMAND = 4000
"""Characters of a command read for its effects (a heredoc's body past this is content, not a command)."""

_SEGMENT = re.compile(r"&&|\|\||;|\n|(?<![>&|])\|(?!\|)")
_SED_INPLACE = re.compile(
    r"^\s*(?:sudo\s+)?(?:xargs\s+(?:-\S+\s+)*)?(?:g?sed|perl)\s+(?:(?:-e\s+\S+|-[A-Za-z]+)\s+)*(?:-[A-Za-z]*i|--in-place)"
)
_REDIRECT = re.compile(r"(?<![\d&<>])>{1,2}\s*(?!&)(['\"]?)([^\s;&|'\"<>]+)\1")
_WRITER_HEAD = re.compile(r"^\s*(?:cat|echo|printf|envsubst)\b")
_TEE = re.compile(r"^\s*(?:sudo\s+)?tee\s+(?:-a\s+)?([^\s;&|]+)")
_GIT_RESTORE = re.compile(
    r"^\s*git\s+(?:checkout\s+(?:\S+\s+)?--\s+|restore\s+(?:--\S+\s+)*|apply\b|stash\s+(?:pop|apply)\b|"
    r"reset\s+--hard\b|revert\b|cherry-pick\b)(.*)"
)
_PATCH = re.compile(r"^\s*(?:patch\s+-p\d|apply_patch\b)|\*\*\* Begin Patch")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (\S+)", re.M)
_SCRIPT_WRITE = re.compile(
    r"^\s*(?:python3?|node|ruby|perl)\b.*(?:open\([^)]{0,200}['\"][wa]\+?['\"]|write_text\(|writeFileSync\(|"
    r"(?<!stdout)(?<!stderr)\.write\()",
    re.S,
)
_MOVE = re.compile(r"^\s*(?:cp|mv|install)\s+(?:-\S+\s+)*\S+\s+(\S+)\s*$")
_NOT_A_FILE = re.compile(r"^(?:/dev/|/proc/|&)")

GLOBAL_FLAGS = r"(?:-{1,2}[\w-]+(?:=\S+|\s+(?!-)\S+)?\s+)*"
"""Flags a program takes before its subcommand (``kubectl -n staging rollout restart``, ``helm -n x upgrade``)."""
RESTART = re.compile(
    r"^\s*(?:sudo\s+)?(?:timeout\s+\S+\s+)?(?:xargs\s+(?:-\S+\s+)*)?(?:\w+=\S*\s+)*"
    r"(?:(?:python3?(?:\s+-m)?|uv\s+run|poetry\s+run|pipenv\s+run|bundle\s+exec|bash|sh|zsh)\s+)?"
    r"(?:kill(?:all)?(?![\w.-])(?!\s+-0\b)|pkill\b|fuser\s+-k|"
    r"lsof\b.*\bkill\b|systemctl\s+(?:re)?start|service\s+\S+\s+(?:re)?start|"
    r"supervisorctl\s+(?:re)?start|pm2\s+(?:re)?start|pm2\s+reload|docker(?:-compose|\s+compose)?\s+(?:restart|up|"
    rf"start|rm\s+-f|kill)|podman\s+(?:restart|start)|kubectl\s+{GLOBAL_FLAGS}(?:rollout\s+(?:restart|undo)|delete\s+pods?|"
    rf"scale)|helm\s+{GLOBAL_FLAGS}(?:upgrade|install)|(?:fly|flyctl)\s+deploy|vercel\s+(?:deploy|--prod)|"
    r"netlify\s+deploy|gh\s+(?:run\s+rerun|workflow\s+run)|glab\s+ci\s+(?:retry|run)|"
    r"(?:sam|serverless|sls|cdk)\s+deploy|terraform\s+apply|gcloud\s+(?:[\w-]+\s+){1,3}deploy\b|"
    r"heroku\s+(?:restart|ps:restart)|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?(?:start|dev|serve)\b|nohup\b|uvicorn\b|"
    r"gunicorn\b|flask\s+run|rails\s+s(?:erver)?\b|\S*manage\.py\s+runserver|brew\s+services\s+(?:re)?start|"
    r"php\s+artisan\s+serve|\S*(?:mvnw?|gradlew?)\s+(?:\S+\s+)*(?:spring-boot:run|bootRun)\b|"
    r"\S*(?<![\w-])(?:re)?start[\w-]*\.sh\b|wg-quick\s+up|ifup\b|(?:nmcli\s+(?:c|con|connection)|tailscale)\s+up\b|"
    # a job submitted to run elsewhere (a batch, training or data job): `aws batch submit-job`, `sbatch`,
    # `gcloud ai custom-jobs create`, `databricks jobs run-now`, `aws glue start-job-run`
    r"sbatch\b|(?:aws|gcloud|az|databricks|dbx|oci)\s+(?:[\w-]+\s+){1,3}(?:submit(?:-job)?|run-now|start-job-run|"
    r"add-steps|create-training-job|create-job|start-(?:pipeline-)?execution)\b|"
    r"gcloud\s+(?:[\w-]+\s+){0,2}(?:custom-)?jobs\s+(?:create|submit|run)\b)"
)
"""A command that stops, starts or redeploys a long-running thing (a server, a bot, a container, a stack, a tunnel),
runs a CI pipeline again (``gh run rerun``) or submits a job to run elsewhere: what comes back after it is the
outcome."""
_BACKGROUND = re.compile(r"(?<![&>])&\s*$")


def segments(command: str) -> list[str]:
    """The simple commands of a command line (``cd x && sed -i ... f; pytest``: three), split outside quotes only."""
    text = command[:MAX_COMMAND]
    if "'" not in text and '"' not in text:
        return [s for s in _SEGMENT.split(text) if s.strip()]
    parts, start, quote = [], 0, ""
    for k, ch in enumerate(text):  # quotes hide separators: `sed 's|a|b|' f` is one command
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "|;&\n" and not (ch == "&" and text[k - 1 : k] in (">",) or text[k + 1 : k + 2] == ">"):
            lone = ch == "&" and "&" not in (text[k - 1 : k], text[k + 1 : k + 2])  # `cmd &`: it stays with cmd
            parts.append(text[start : k + 1] if lone else text[start:k])
            start = k + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip() and p.strip() not in ("&", "|")]


_SEQUENCE = re.compile(r"&&|\|\||;|\n")


def piped(command: str) -> bool:
    """Whether a command's exit code is its last pipe's (no pipefail), not the output's program's; a loop's, its
    body's."""
    if "|" not in command or "pipefail" in command:
        return False
    pipeline = [part.strip() for part in last_pipeline(command)]
    if pipeline == ["done"]:
        pipeline = last_pipeline(command[: command.rfind("done")].rstrip().rstrip(";"))
    return len(pipeline) > 1


def filtered(command: str) -> bool:
    """Whether a command pipes what it printed into one that keeps some of its lines (``grep``, ``head``, ``wc``), not
    its end (``tail`` keeps the end, where a verdict is)."""
    return "|" in command and any(_FILTER.match(part) for part in last_pipeline(command)[1:])


_FILTER = re.compile(r"\s*(?:e?grep|rg|head|cut|awk|sed\s+-n|wc|sort|uniq)\b")
_ERROR_GREP = re.compile(
    r"\s*(?:e?grep|rg)\s+(?:-[EiP]{1,3}\s+)*(?:['\"][^'\"]{0,200}?\berror|(?!-)[^\s'\"]{0,100}?\berror)", re.I
)
"""A ``grep`` that keeps every line naming an error (``grep -E 'error:|warning:'``): not ``-v``, ``-c``, nor a path."""


def whole_errors(command: str) -> bool:
    """Whether a check's error lines reach the call all of them: no filter after it, or only a ``grep`` for errors
    (``make -k 2>&1 | grep -E 'error:'``); ``| head``, ``| tail -5`` or ``| grep src/api`` keep some of them."""
    parts = last_pipeline(command)[1:] if "|" in command else []
    kept = [p for p in parts if not re.match(r"\s*(?:sort|uniq)\b", p)]  # every line still there, in another order
    return not any((_FILTER.match(p) or p.lstrip().startswith("tail")) and not _ERROR_GREP.match(p) for p in kept)


def last_pipeline(command: str) -> list[str]:
    """The commands of a command line's last pipeline (``cd x && make 2>&1 | tail -5``: ``make 2>&1`` and ``tail -5``),
    whose first command printed what the call shows: a ``tail`` piped into shows its own run's output, not a file."""
    text = command[:MAX_COMMAND]
    cuts = [m.end() for m in _SEQUENCE.finditer(_unquoted(text))]
    return segments(text[cuts[-1] :] if cuts else text)


def _unquoted(part: str) -> str:
    """``part`` with its quoted spans blanked: a ``>`` inside quotes is text, not a redirection."""
    return re.sub(r"'[^']*'|\"[^\"]*\"", lambda m: " " * len(m.group(0)), part)


def writes(command: str) -> list[str]:
    """The files a shell command writes (at most 20), or [] when it writes none that can be told."""
    return list(_written(command[:MAX_COMMAND]))


@lru_cache(maxsize=32)
def _written(text: str) -> tuple[str, ...]:
    """``writes`` of one command, kept for the few commands last read: a turn asks for it from several places (its
    kind, its paths, its effects; the task monitor for the file states), each as cheap as the first."""
    found: list[str] = []
    if _PATCH.search(text):
        found += _PATCH_FILE.findall(text) or ["(patch)"]
    heredoc = "<<" in text
    if heredoc and _SCRIPT_WRITE.match(text):
        found.append("(script)")
    parts = segments(text.split("\n", 1)[0] if heredoc else text)  # a heredoc's command is its first line
    for part in parts:  # the heredoc feeds the command that opens it, not `git checkout -- f` before it
        found += _segment_writes(part, heredoc and "<<" in part)
    tee = _TEE.match(parts[-1]) if len(parts) > 1 and _WRITER_HEAD.match(parts[-2]) else None
    if tee:  # `echo x | tee file` writes the file (after `grep -q x f ||` too); `pytest | tee log` keeps its output
        found.append(tee.group(1))
    return tuple(dict.fromkeys(p for p in found if p and not _NOT_A_FILE.match(p)))[:20]


def _segment_writes(part: str, heredoc: bool) -> list[str]:
    """The files one simple command writes."""
    if _SED_INPLACE.match(part):
        if part.lstrip().startswith(("xargs", "sudo xargs")):
            return ["(xargs)"]  # the files come on standard input
        words = part.split()
        return [w.strip("'\"") for w in words[-1:] if not w.startswith("-")]
    restore = _GIT_RESTORE.match(part)
    if restore:  # `git apply <<'EOF'` too: the patch comes in the heredoc
        named = [] if re.match(r"\s*git\s+apply\b", part) else restore.group(1).split()[:20]
        return named or ["(git)"]  # `git apply fix.patch` writes what the patch names, not fix.patch
    if _WRITER_HEAD.match(part) or heredoc:
        return [m.group(2) for m in _REDIRECT.finditer(_unquoted(part))]
    if _SCRIPT_WRITE.match(part):
        return ["(script)"]
    moved = _MOVE.match(part)
    return [moved.group(1)] if moved else []


def checks_out(command: str) -> bool:
    """Whether a command checks out another revision (a ``git bisect`` step, ``git switch``, ``git checkout <ref>``):
    what runs after it runs other code, so the same command's outcome then is no repeat."""
    return any(_CHECKOUT.match(part) for part in segments(command[:MAX_COMMAND]))


_CHECKOUT = re.compile(
    r"^\s*git\s+(?:bisect\s+(?:start|good|bad|skip|new|old|next)\b|switch\s|"
    r"checkout\s+(?!-- )(?:-q\s+)?[\w./~^@-]+\s*$)"
)
_PUT_BACK = re.compile(r"^\s*git\s+(?:checkout\s+(?:HEAD\s+)?--\s|restore\s|reset\s+--hard\b)")


def put_back(command: str) -> Optional[list[str]]:
    """The files a command puts back as git has them (``git checkout -- f``, ``git restore f``: undoing an edit, which
    obeys a "don't touch f" rather than defying it); ``[]`` for all of them (``git reset --hard``); None when it puts
    back none."""
    named: list[str] = []
    for part in segments(command[:MAX_COMMAND]):
        if _PUT_BACK.match(part):
            words = [w for w in part.split()[2:] if not w.startswith("-") and w != "HEAD"]
            if not words:
                return []
            named += words
    return named or None


def deletes_lines(command: str) -> bool:
    """Whether the command's edits only delete lines (``sed -i '/acme.shop.test/d' /etc/hosts``): taking out what was
    added, as the person who said not to touch the file asks."""
    edits = [part for part in segments(command[:MAX_COMMAND]) if _SED_IN_PLACE.match(part)]
    return bool(edits) and all(_SED_DELETE.search(part) for part in edits)


def substitutions(command: str) -> list[tuple[str, str, str]]:
    """(file, removed text, added text) of each ``sed -i 's/old/new/' file`` in a command line (at most 8), where the
    edit is a substitution of one file: flipping it back later (``s/new/old/``) undoes it, as an editor's swapped pair
    does."""
    found = []
    for part in segments(command[:MAX_COMMAND]):
        m = _SED_SUBSTITUTE.match(part) if _SED_IN_PLACE.match(part) else None
        if m is not None and m.group(3) != m.group(4):
            found.append((m.group(5), m.group(3), m.group(4)))
    return found[:8]


_SED_IN_PLACE = re.compile(r"^\s*(?:sudo\s+)?sed\s+(?:-\S+\s+)*-i")
_SED_SUBSTITUTE = re.compile(
    r"^\s*(?:sudo\s+)?sed\s+(?:-[A-Za-z]*i\S*\s+(?:''\s+)?|-[Ere]\s+)+(['\"])(?:\d+(?:,\d+)?)?s([/|#,])"
    r"((?:\\.|(?!\2)[^\\\n]){0,500})\2((?:\\.|(?!\2)[^\\\n]){0,500})\2[gIp\d]*\1\s+([^\s;&|]+)\s*$"
)
"""One substitution, quoted, and the one file it edits (``sed -i.bak -E 's|a|b|g' src/x.go``): its sides bounded."""
_SED_DELETE = re.compile(r"""\s(?:-e\s+)?(['"])(?:\\?/[^'"\n]*/|\d+(?:,\d+)?|\$)d\1\s""")


def restarts(command: str) -> bool:
    """Whether a command stops, starts or redeploys a long-running thing, or starts one in the background."""
    text = command[:MAX_COMMAND]
    parts = [part.strip().lstrip("(").rstrip(")") for part in segments(text)]  # `(npm run dev > log 2>&1 &)`
    return any(RESTART.match(part) or _BACKGROUND.search(part) for part in parts) or _down_then_up(parts)


def _down_then_up(parts: list[str]) -> bool:
    """Whether a chain takes a thing down and brings it up again with one program (``make down && make up``,
    ``./stack.sh stop; ./stack.sh start``, ``wg-quick down wg0 && wg-quick up wg0``): a restart by any name."""
    downs: set[str] = set()
    for part in parts:
        words = part.split()[:2]
        if len(words) == 2 and words[1] in ("down", "stop"):
            downs.add(words[0])
        elif len(words) == 2 and words[1] in ("up", "start", "restart") and words[0] in downs:
            return True
    return False


def edit_pair(args: dict[str, Any]) -> Optional[tuple[str, str]]:
    """(removed text, added text) of a replacing edit, whitespace-normalised, when the arguments say it: old/new
    strings, a SEARCH/REPLACE block, or a diff's -/+ lines. A later pair that swaps them undoes the edit."""
    sides = edit_sides(args)
    return (" ".join(sides[0].split()), " ".join(sides[1].split())) if sides else None


def edit_sides(args: dict[str, Any]) -> Optional[tuple[str, str]]:
    """(removed text, added text) of a replacing edit as written, lines kept."""
    for old_key, new_key in (("old_str", "new_str"), ("old_string", "new_string"), ("oldString", "newString")):
        if isinstance(args.get(old_key), str) and isinstance(args.get(new_key), str):
            return args[old_key], args[new_key]
    for key in ("diff", "content", "patch", "command"):
        text = args.get(key)
        if not isinstance(text, str) or (key == "command" and "*** Begin Patch" not in text[:MAX_COMMAND]):
            continue  # a command is a patch only as Codex's apply_patch sends one
        block = _replace_block(text)
        if block:
            return block
        if key == "content":
            continue  # a whole file's text: its '-' lines are a list, not a diff
        minus = [ln[1:] for ln in text.splitlines() if ln.startswith("-") and not ln.startswith("---")]
        plus = [ln[1:] for ln in text.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        if minus or plus:
            return "\n".join(minus), "\n".join(plus)
    return None


def _replace_block(text: str) -> Optional[tuple[str, str]]:
    """The two sides of the first ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` block: what the lazy regex
    ``SEARCH\\n(.*?)\\n=======\\n(.*?)\\n>>>>>>> REPLACE`` (re.S) finds, by ``str.find`` (the regex retried every later
    separator from every head when no block closed: cubic time on 15 kB of heads and separators)."""
    head = text.find("<<<<<<< SEARCH\n")
    sep = text.find("\n=======\n", head + 15) if head >= 0 else -1
    end = text.find("\n>>>>>>> REPLACE", sep + 9) if sep >= 0 else -1
    return (text[head + 15 : sep], text[sep + 9 : end]) if end >= 0 else None


_INSTALL = re.compile(
    r"^\s*(?:sudo\s+)?(?:(?:python3?\s+-m\s+)?pip3?\s+install|uv\s+(?:add|pip\s+install)|poetry\s+add|pipenv\s+install|"
    r"conda\s+install|mamba\s+install|npm\s+(?:install|i|add)|yarn\s+add|pnpm\s+(?:add|install|i)|bun\s+(?:add|install|i)|"
    r"cargo\s+add|go\s+get|gem\s+install|bundle\s+add|composer\s+require|dotnet\s+add\s+(?:\S+\s+)?package|"
    r"deno\s+add)\s+(?P<rest>.*)"
)
_FILE_FLAGS = frozenset(("-r", "--requirement", "-e", "--editable", "-c", "--constraint", "--prefix", "--target"))
_NOT_ADDED = frozenset((".", "./", "pip", "setuptools", "wheel"))  # the project itself, the installer's own tools


def adds_package(command: str) -> bool:
    """Whether a command installs a package by name (``pip install tenacity``, ``npm i -D zod``, ``cargo add
    serde``), not what a project already lists (``npm install``, ``pip install -r requirements.txt``, ``pip install -e
    .``)."""
    for part in segments(command[:MAX_COMMAND]):
        m = _INSTALL.match(part)
        if m is None:
            continue
        words = m.group("rest").split()
        for k, word in enumerate(words):
            if word.startswith("-") or (k and words[k - 1] in _FILE_FLAGS) or word in _NOT_ADDED:
                continue
            if not word.startswith((">", "2>", "&", "|")):
                return True
    return False


MANIFESTS = re.compile(
    r"(?:^|/)(?:package\.json|pyproject\.toml|requirements[\w.-]*\.(?:txt|in)|Pipfile|setup\.(?:py|cfg)|"
    r"environment\.ya?ml|Cargo\.toml|go\.mod|Gemfile|composer\.json|build\.gradle(?:\.kts)?|pom\.xml|\w+\.csproj|"
    r"deno\.jsonc?|mix\.exs|pubspec\.yaml|Package\.swift)$"
)
"""The files where a project lists what it depends on."""
_ENTRY = re.compile(
    r"\"(@?[\w][\w./@-]*)\"\s*:\s*\"(?:[\^~<>=*]|\d|latest|workspace:|npm:)|"  # package.json, composer.json
    r"(?:^|[\"'\s])([A-Za-z][\w.-]*)(?:\[[\w,.-]*\])?\s*(?:[<>=!~]=|[<>]|@\s*[\w^~])|"  # PEP 508, requirements
    r"^\s*([\w-]+)\s*=\s*(?:\"[\^~<>=*]?\d|\{)|"  # Cargo.toml, Poetry
    r"^\s*(?:require\s+)?([\w-]+(?:\.[\w-]+)+/[\w./-]+)\s+v\d|"  # go.mod
    r"^\s*gem\s+['\"]([\w-]+)|(?:implementation|api|compile|testImplementation)\s*\(?\s*['\"]([\w.-]+:[\w.-]+)|"
    r"<artifactId>([\w.-]+)</artifactId>|\{:(\w+),\s*[\"~]",
    re.M,
)
"""A dependency's entry in a manifest, by its name: ``"zod": "^3.22"``, ``"tenacity>=8.2"``, ``serde = "1"``,
``golang.org/x/sync v0.7.0``, ``gem 'rack'``, ``implementation("io.ktor:ktor-client")``, ``<artifactId>``."""


def adds_dependency(paths: list[str], removed: str, added: str) -> bool:
    """Whether an edit of a manifest adds an entry that its removed text did not have (taking one out, or changing a
    version, adds none)."""
    if not any(MANIFESTS.search(p) for p in paths):
        return False
    return bool(_entries(added) - _entries(removed))


def _entries(text: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in _ENTRY.finditer(text[:MAX_COMMAND])}
