"""How the monitor reads one turn's words, commands and outputs: the person's message, what a shell command writes
or restarts, whether a command with no exit code failed or hung, a CI run read back. Each case is one a review of
monitor v4 found read wrongly, or its counterpart that must stay read as it is."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spiral_claims import check_claims, play, window_of

from strict_loop.model.turns import Turn
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor import outcomes, person, printed, readback
from strict_loop.monitor.calls import shellwork, toolkinds, wrappings


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        ("Do the same thing for the users table", None, 0),
        ("Make sure everything still works as expected", None, 0),
        ("Is it still failing?", None, 0),
        ("Can you check if it still fails?", None, 0),
        ("Use the same approach as before", None, 0),
        ("The old endpoint should still be supported", None, 0),
        ("I still need the export button", None, 0),
        ("Please also handle the case where the list is still empty", None, 0),
        ("why does the build fail?", None, 0),
        ("make sure there are no build errors", None, 0),
        ("works now, thanks", "pass", 0),
        ("Error persists. It says: Two different types with this name exist", "fail", 1),
        ("the issue remains", "fail", 1),
        ("it keeps failing on the login page", "fail", 1),
        ("make sure the setting persists across restarts", None, 0),
        ("that remains to be seen", None, 0),
        ("it's still doing it", "fail", 1),
        ("the button still does nothing", "fail", 1),
        ("same thing happens", "fail", 1),
        ("you broke it again", "fail", 1),
        ("the bug is back", "fail", 1),
        ("now it's failing again with the same message", "fail", 1),
        ("we are back to square one", "fail", 2),
        ("this is the third time I tell you", "fail", 2),
        ("Do the same thing for the users table", None, 0),
        ("now add a --json flag", None, 0),
        ("the server is back up", None, 0),
        ("make the sidebar reappear after login", None, 0),
        ("the old endpoint still exists and should stay", None, 0),
        ("problem still exists", "fail", 1),
        ("I told you to never use the code tool to make changes - why do you keep ignoring this?", "fail", 1),
        ("you keep ignoring my instructions", "fail", 1),
        # requests, questions and statements that name a failure or use the words of one (a review found them read as
        # reports)
        ("How many times should we retry before giving up? Pick something sensible.", None, 0),
        ("Let's go back to square one on the naming, pick better names for these variables", None, 0),
        ("If the error persists after 3 retries, fall back to the cache", None, 0),
        ("When an error occurs, show a toast", None, 0),
        ("The issue remains open on GitHub, please reference it in the commit message", None, 0),
        ("I told you the API key is in .env, use that", None, 0),
        ("Users keep ignoring the banner - make it more prominent", None, 0),
        ("The bug is back in the backlog as JIRA-123, let's pick it up next sprint", None, 0),
        ("I still want the old endpoint to work for backwards compatibility", None, 0),
        ("It's still a draft, don't merge it", None, 0),
        ("Nothing changed in the API, so the client code is fine", None, 0),
        ("Still, I'd prefer if you used async here.", None, 0),
        ("Is the problem still there after your last change? If you haven't checked, run the app.", None, 0),
        ("The worker is still doing the backfill, leave it running", None, 0),
        ("make it so the tooltip reappears on hover", None, 0),
        # and reports said as questions, or after a request word
        ("Still doesn't work, can you check the logs?", "fail", 1),
        ("still broken?", "fail", 1),
        ("Keep getting the same error", "fail", 1),
        ("Now the page is blank again", "fail", 1),
        ("How many times do I have to tell you, the header is still wrong", "fail", 2),
        ("The issue still occurs on mobile", "fail", 1),
        ("the radio selector works but the cards should sit side by side", None, 0),
        ("it doesn't work", "fail", 0),
        ("perfect, now the page is blank though", "fail", 0),
        ("why is it still empty?", "fail", 1),
        ("still the same... debug and trace this properly, use the logs to understand the code first", "fail", 1),
        ("nope, still broken", "fail", 1),
        ("the old badge is still shown on the status line", "fail", 1),
        ("we're going in circles", "fail", 2),
        # going in circles asked is the person's doubt, one report ("thats the 4th check run" while errors fall)
        ("are you going in circles? thats the 4th check run", "fail", 1),
        ("third failure. are we going in circles?", "fail", 1),
        ("you are going in circles. are you even reading the error?", "fail", 2),
        # the same, hedged: a number that barely moved is a report; "pretty much the same as the figma" approves
        ("18,263. barely moved. expected ~12.9k", "fail", 1),
        ("hardly any difference", "fail", 1),
        ("pretty much the same", "fail", 1),
        ("no real change on mobile", "fail", 1),
        ("its pretty much the same as the figma now, great", None, 0),
        ("barely moved to the left, move it more", None, 0),
        (
            "proceed to implement the plan - also, I still see the old badge on the status line (did you remove it?)",
            "fail",
            1,
        ),
        (
            "go ahead with the database migration we discussed - also, make sure the old page still shows the banner",
            None,
            0,
        ),
        ("Add the export button. Then check whether the list is still empty?", None, 0),
        # a verdict on the attempt said first and alone; a status code or a "can't" that stays; a step word as subject
        ("didn't work", "fail", 1),
        ("nope, that didn't help at all", "fail", 1),
        ("your fix didn't change anything.", "fail", 1),
        ("nothing happened", "fail", 1),
        ("same", "fail", 1),
        ("no luck, same error", "fail", 1),
        ("here we go again!", "fail", 1),
        ("still 404", "fail", 1),
        ("same 500 when I submit", "fail", 1),
        ("I still can't log in", "fail", 1),
        ("build still failing", "fail", 1),
        ("no improvement", "fail", 1),
        ("nothing happens when I click Save", None, 0),
        ("That didn't fix the login but the signup works now", "fail", 0),
        ("no luck finding the docs, can you search for them?", None, 0),
        ("It didn't work in Safari before either, now add the login form", "fail", 0),
        ("we still have 200 rows to import", None, 0),
        ("Try again, I was not on the VPN", None, 0),
        ("Keep failing tests out of the release branch", None, 0),
        ("same here, the plan looks good", "pass", 0),
        ("still erroring", "fail", 1),
        # an independent review's messages: circles in other words, questions led by a filler, first reports by
        # status code or a verb that failed, requests led by a verb that is also a noun, modal and negated words
        ("Back to square one.", "fail", 2),
        ("this is the 4th time I'm telling you the port is 8080", "fail", 2),
        ("we've done this like 5 times already", "fail", 2),
        ("you're just going back and forth between the same two fixes", "fail", 2),
        ("the carousel should slide back and forth between the two images", None, 0),
        ("I've done this 3 times manually, please automate it", None, 0),
        ("Did you even run it? It's STILL throwing the same error!!", "fail", 1),
        ("Still. Not. Working.", "fail", 1),
        ("the warning keeps showing up", "fail", 1),
        ("make sure the banner keeps showing up", None, 0),
        ("Users keep coming back to the pricing page, add a discount popup", None, 0),
        ("ok, is it still failing?", None, 0),
        ("Quick q: is the error still there?", None, 0),
        ("getting a 500 when I submit the form", "fail", 0),
        ("the list has 500 items, paginate it", None, 0),
        ("this broke the mobile layout", "fail", 0),
        ("build shows 3 errors", "fail", 0),
        ("fix the failing test in test_auth.py", None, 0),
        ("return value is still wrong", "fail", 1),
        ("the tests must not be broken by this change", None, 0),
        ("The old API still works for v1 clients, so don't remove it", None, 0),
        ("ok that did the trick", "pass", 0),
        ("confirmed, no more errors", "pass", 0),
        ("no more errors but the page is blank", "fail", 0),
        ("fix didn't work", "fail", 1),
        ("proceed with the plan - also, I still see the old badge (did you remove it?). thanks", "fail", 1),
        ("didn't worked", "fail", 1),
        # typographic apostrophes, as a phone or a Mac types them
        ("the fix didn\u2019t work", "fail", 1),
        ("I still can\u2019t log in", "fail", 1),
        ("it doesn\u2019t work", "fail", 0),
        ("don\u2019t touch the tests, make sure they pass", None, 0),
        # in the other languages people write to an agent in
        ("sigue sin funcionar", "fail", 1),
        ("ainda n\u00e3o funciona", "fail", 1),
        ("\u00e7a ne marche toujours pas", "fail", 1),
        ("funktioniert immer noch nicht", "fail", 1),
        ("\u0442\u0430 \u0436\u0435 \u043e\u0448\u0438\u0431\u043a\u0430", "fail", 1),  # та же ошибка
        ("\u8fd8\u662f\u4e0d\u884c", "fail", 1),  # 还是不行
        ("\u307e\u3060\u52d5\u304b\u306a\u3044", "fail", 1),  # まだ動かない
        ("estamos dando vueltas en c\u00edrculos", "fail", 2),
        ("ich m\u00f6chte immer noch die alte Farbe", None, 0),
        ("mismo estilo que antes, por favor", None, 0),
        ("toujours utiliser pnpm", None, 0),
        # an approval that names the failure gone, though a failure word is in it; other languages'
        ("ok it's not broken anymore, nice", "pass", 0),
        ("great, it doesn't crash anymore", "pass", 0),
        ("LGTM, the error is gone", "pass", 0),
        ("Finally! The same test that was failing all morning passes now.", "pass", 0),
        ("yep that did it", "pass", 0),
        ("\u00a1Funciona! Gracias", "pass", 0),
        ("Agora sim, funcionou perfeitamente", "pass", 0),
        ("udah jalan sekarang, makasih ya", "pass", 0),
        ("todav\u00eda no funciona", "fail", 1),
        ("n\u00e3o funcionou de novo", "fail", 1),
        ("the unit test passes now but the e2e still fails", "fail", 1),
        # a question first, a version's dot in it
        ("is this still broken upstream or did they fix it in 2.3?", None, 0),
        # a request that names a bug it shares, a "still" that wants something
        ("Apply the same fix to `src/legacy/parser.js`, it has the same bug.", None, 0),
        ("still want the same formatting on the export, just add a column for region", None, 0),
        ("Nothing changed in the API, so the client code is fine", None, 0),
    ],
)
def test_the_persons_message_is_read_as_a_request_a_report_or_an_approval(text, verdict, weight):
    word = person.read(text)
    assert (word.verdict, word.weight) == (verdict, weight)


def test_the_same_words_of_complaint_again_count_and_two_different_symptoms_do_not():
    edit = {"tool": "Edit", "args": {"file_path": "a.py", "old_string": "x", "new_string": "y"}, "output": "ok"}
    said = {"tool": "user_prompt", "actor": "person", "output": "it doesn't work"}
    again = [said, edit, said, dict(edit, args={**edit["args"], "new_string": "z"}), said]
    assert play(again)[0].signals[0].kind == "person_reports"
    other = [
        {"tool": "user_prompt", "actor": "person", "output": "the app is not loading"},
        edit,
        {"tool": "user_prompt", "actor": "person", "output": "tons of errors, it crashes"},
    ]
    assert play(other)[0].fired_at is None


def test_still_getting_an_error_nothing_showed_before_is_a_new_symptom_and_counts_once_it_comes_back():
    """ "still getting <paste>" after a report of something else: a failure that has changed is not the same one
    reported again; the same paste again after another attempt is, and so is "still does not work" said of what was
    reported, whatever new error comes with it."""
    edit = {"tool": "Edit", "args": {"file_path": "a.py", "old_string": "x", "new_string": "y"}, "output": "ok"}
    redit = dict(edit, args={**edit["args"], "new_string": "z"})
    pasted = "im still getting\nTraceback (most recent call last):\nKeyError: 'user_id'\n  in handler.py line 4"
    turns = [
        dict(edit, args={**edit["args"], "new_string": "w"}),  # the attempt the first report is about
        {"tool": "user_prompt", "actor": "person", "output": "nope, the links are still broken"},
        edit,
        {"tool": "user_prompt", "actor": "person", "output": pasted},
        redit,
    ]
    assert play(turns)[0].fired_at is None
    assert play([*turns, {"tool": "user_prompt", "actor": "person", "output": pasted}])[0].signals[0].kind == (
        "person_reports"
    )
    shown = {
        "tool": "Bash",
        "args": {"command": "python3 handler.py"},
        "output": pasted.split("\n", 1)[1],
        "error": True,
    }
    assert play([*turns[:2], shown, *turns[2:]])[0].signals[0].kind == "person_reports"  # the agent saw it before
    verdict = "the links still do not work. Now the page fails too:" + pasted.split("\n", 1)[1]
    said = [*turns[:3], {"tool": "user_prompt", "actor": "person", "output": verdict}, redit]
    assert play(said)[0].signals[0].kind == "person_reports"  # a verdict on what was reported, a paste beside it


@pytest.mark.parametrize(
    ("command", "output", "failed"),
    [
        ("cat build.log", "line\nerror: 0", False),
        ("python stats.py", "done\nerror: 0", False),
        ("cat notes.md", "notes\nOSError: bad", False),  # a file shown, not a command failing
        ("cat nope.txt", "cat: nope.txt: No such file or directory", True),
        ("ls x.png", "ls: x.png: No such file or directory", True),
        ("npx jest", "✓ reports 2 errors for bad input (1 ms)\nTests: 2 passed, 2 total", False),
        ("npx jest", "✕ adds\nTests: 1 failed, 1 passed, 2 total", True),
        ("python3 -m pytest -q", "F.\n1 failed, 1 passed in 0.01s", True),
        ("python3 server.py", "Traceback (most recent call last):\nOSError: [Errno 98] Address already in use", True),
        # zsh (macOS's shell) puts what went wrong before the path; mv's and Windows' words; bun's count line
        ("cd docs/puml && ls *.png", "(eval):cd:1: no such file or directory: docs/puml", True),
        ("ls docs/*.png", "zsh:1: no matches found: docs/*.png", True),
        ("mv a.png b.png docs/images/", "mv: docs/images/ is not a directory", True),
        ("type settings.tfvars", "The system cannot find the file specified.", True),
        (
            "terraform plan | head -50",
            "'head' is not recognized as an internal or external command,\noperable program or batch file.",
            True,
        ),
        ("cat notes.md | head", "command not found is what the docs say", False),
        ("bun test", "src/a.test.ts:\n(fail) adds\n\n 0 pass\n 1 fail\nRan 1 tests across 1 files. [12ms]", True),
        ("bun test", "src/a.test.ts:\n(pass) adds\n\n 1 pass\n 0 fail\nRan 1 tests across 1 files. [12ms]", False),
        # a diagnostic box that ends the output says what it is (terraform's, OpenTofu's)
        (
            "terraform plan",
            "Planning...\n\u2577\n\u2502 Error: No value for required variable\n\u2502 \n"
            "\u2502   on variables.tf line 12:\n\u2502 Use a -var or -var-file argument.\n\u2575",
            True,
        ),
        (
            "terraform plan",
            "Plan: 1 to add.\n\u2577\n\u2502 Warning: Deprecated attribute\n\u2502 \n\u2502 use name instead\n\u2575",
            False,
        ),
        # a passing run whose lines name failures: a test named for them, a log line, a runner's own pass mark
        ("pytest -v", "tests/test_auth.py::test_lockout[3 failed attempts] PASSED    [100%]\n1 passed in 0.02s", False),
        ("npx mocha", "  Lockout\n    \u2714 locks the account after 3 failed attempts\n\n  1 passing (9ms)", False),
        (
            "go test -v ./store",
            "=== RUN   TestRetry\nattempt 1 failed: connection reset, retrying\n--- PASS: TestRetry"
            "\nPASS\nok  \texample.com/store\t0.01s",
            False,
        ),
        (
            "python -m unittest",
            "ERROR:client.http:request failed: [Errno 111] Connection refused; retrying\n...\n"
            "----------------------------------------------------------------------\nRan 3 tests in 0.015s\n\nOK",
            False,
        ),
        (
            "kubectl logs deploy/api --tail=2",
            "level=error msg=timeout\nError: connect ECONNREFUSED 10.0.0.7:5432",
            False,
        ),
        ("ruff check --fix .", "Found 3 errors (3 fixed, 0 remaining).", False),
        # a failing check in its own toolchain's words
        ("npx tsc --noEmit", "src/api.ts(42,7): error TS2322: Type 'string' is not assignable to type 'number'.", True),
        (
            "npx eslint src",
            "/app/src/a.js\n  12:7  error  'x' is assigned a value but never used\n\n"
            "\u2716 1 problem (1 error, 0 warnings)",
            True,
        ),
        ("ruff check .", "app/errors.py:1:8: F401 `os` imported but unused\nFound 1 error.", True),
        ("go build ./...", "# example.com/app/api\napi/handler.go:22:9: undefined: renderError", True),
        ("bundle exec rspec", "..F.\n\nFinished in 0.02 seconds\n4 examples, 1 failure", True),
        ("mvn test", "[INFO] Tests run: 3, Failures: 1, Errors: 0\n[INFO] BUILD FAILURE", True),
        ("ruff format --check .", "Would reformat: app/main.py\n1 file would be reformatted", True),
        # any other command's last words, read past what trails them
        (
            "node seed.js",
            "Error: missing DATABASE_URL\n    at Object.<anonymous> (/app/seed.js:12:11)\n\nNode.js v20.11.0",
            True,
        ),
        ("git push origin main", "error: failed to push some refs to 'origin'\nhint: Updates were rejected", True),
        ("curl -sS http://localhost:8080/health", "curl: (7) Failed to connect to localhost port 8080", True),
        ("kubectl get pod api", 'Error from server (NotFound): pods "api" not found', True),
        ("echo done", "Nothing failed.", False),
        # a tail piped into shows its own run's output (the run's words are read); a log read is still a log
        (
            "terraform apply -auto-approve 2>&1 | tail -15",
            "\u2577\n\u2502 Error: creating S3 Bucket\n\u2502\n\u2575",
            True,
        ),
        ("cat /tmp/app.log | tail -5", "OSError: [Errno 98] Address already in use", False),
        ("tail -5 /tmp/app.log", "OSError: [Errno 98] Address already in use", False),
        # a label that heads indented detail trails the error (Bundler's), and "cannot continue" says it failed
        (
            "bundle install",
            "An error occurred while installing pg (1.5.6), and Bundler cannot continue.\n\nIn Gemfile:\n  pg",
            True,
        ),
        (
            "bundle install",
            "Bundle complete! 12 Gemfile dependencies, 61 gems now installed.\nIn Gemfile:\n  pg",
            False,
        ),
        # a test its runner marks FAILED at its line's end, its stack frames after it (Gradle, pytest -v)
        (
            "./gradlew test 2>&1 | grep -A3 FAILED",
            "ReportTest > exportReturnsCsv() FAILED\n    java.lang.AssertionError: expected:<200> but was:<401>\n"
            "        at com.acme.ReportTest.exportReturnsCsv(ReportTest.java:38)",
            True,
        ),
        ("pytest -v", "tests/test_a.py::test_x FAILED    [ 50%]\ntests/test_a.py::test_y PASSED    [100%]", True),
        ("mvn -q test", "Tests: 12 PASSED, 0 FAILED", False),
        # a resolver that found no versions that fit says so last, indented (Bundler, Poetry, pub)
        (
            "bundle install",
            "Could not find compatible versions\n\nBecause paper_trail >= 12.3.0 depends on activerecord < 7.1\n"
            "  and rails >= 7.1.3 depends on activerecord = 7.1.3,\nSo, because Gemfile depends on rails = 7.1.3\n"
            "  version solving has failed.",
            True,
        ),
        ("poetry lock", "Resolving dependencies... (1.2s)\n\nWriting lock file", False),
        # a line in parentheses trails the error (SQLAlchemy's pointer to its docs)
        (
            "alembic upgrade head",
            'sqlalchemy.exc.ProgrammingError: (psycopg2.errors.DuplicateColumn) column "archived_at" already exists\n'
            "[SQL: ALTER TABLE tickets ADD COLUMN archived_at TIMESTAMP]\n"
            "(Background on this error at: https://sqlalche.me/e/20/f405)",
            True,
        ),
        ("alembic upgrade head", "INFO  [alembic.runtime.migration] Running upgrade a1 -> b2 (add index)", False),
        # a last sentence saying something failed (git's submodule fetch), not a tally of none
        (
            "git submodule update --init vendor/hal",
            "error: Server does not allow request for unadvertised object 7c41e9b2\nFetched in submodule path "
            "'vendor/hal', but it did not contain 7c41e9b2. Direct fetching of that commit failed.",
            True,
        ),
        ("python sync.py", "synced 40 rows\nNone failed.", False),
        # a few words, "failed:" and why (the AWS CLI's waiters and s3 commands), not a count of none
        (
            "aws cloudformation delete-stack --stack-name x && aws cloudformation wait stack-delete-complete "
            "--stack-name x",
            "\nWaiter StackDeleteComplete failed: Waiter encountered a terminal failure state: For expression "
            '"Stacks[].StackStatus" we matched expected path: "DELETE_FAILED" at least once',
            True,
        ),
        (
            "aws s3 rb s3://bucket --force",
            "remove_bucket failed: s3://bucket An error occurred (BucketNotEmpty) when calling the DeleteBucket "
            "operation: The bucket you tried to delete is not empty.",
            True,
        ),
        ("make check", "lint ok\nnothing failed: all 12 checks green", False),
        ("make report", "Tests: 4 passed, 0 failed.", False),
        # the GitHub CLI heads what it refused: its mark, the API's error; a pull request's own text is not it
        (
            "gh pr merge 2211 --squash",
            "X Pull request acme/api#2211 is not mergeable: the base branch policy "
            "prohibits the merge.\nTo use administrator privileges, add the `--admin` flag.",
            True,
        ),
        (
            "gh pr merge 2211 --admin",
            'GraphQL: Repository rule violations found\n\nRequired status check "build" is '
            "expected.\n (mergePullRequest)",
            True,
        ),
        ("gh pr view 2211", "X marks the spot: fix the export\nopen • acme wants to merge 1 commit", False),
        ("gh pr merge 2211 --auto --squash", "✓ Pull request acme/api#2211 will be automatically merged", False),
        # Go prints a line per package: one FAIL among them fails the run, though another's ok ends the output
        (
            "go test ./... 2>&1 | tail -6",
            "--- FAIL: TestConformance (0.01s)\nFAIL\nFAIL\tgithub.com/t/orders/internal/contract\t0.061s\n"
            "ok  \tgithub.com/t/orders/internal/store\t0.416s\nok  \tgithub.com/t/orders/pkg/client\t0.020s",
            True,
        ),
        (
            "go test ./...",
            "ok  \tgithub.com/t/orders/internal/store\t0.416s\nok  \tgithub.com/t/orders/pkg/client\t0.02s",
            False,
        ),
        # turbo prefixes each task's lines and sums up the task that failed; a run whose tasks all passed says so
        (
            "pnpm turbo run build --filter=web... 2>&1 | tail -n 6",
            "web:build: Failed to compile.\nweb:build: \nweb:build: ./src/components/toolbar.tsx\nweb:build: Module "
            "not found: Package path ./button is not exported from package @kite/ui\n\n"
            " Tasks:    1 successful, 2 total\nFailed:    web#build\n  Time:    19.804s",
            True,
        ),
        (
            "pnpm turbo run build",
            "web:build: \u2713 Compiled successfully\n\n Tasks:    2 successful, 2 total\n"
            "Cached:    1 cached, 2 total\n  Time:    21.1s",
            False,
        ),
        # pnpm's error code heads what it refused, though it ends on its timing
        (
            "pnpm install --force",
            "Scope: all 9 workspace projects\n ERR_PNPM_PEER_DEP_ISSUES  Unmet peer dependencies\n\napps/web\n"
            '\u2514\u2500\u252c react-beautiful-dnd 13.1.1\n  \u2514\u2500\u2500 \u2715 unmet peer react@"^18.0.0": '
            "found 19.1.0\nDone in 21.4s",
            True,
        ),
        ("pnpm install", "Scope: all 9 workspace projects\nProgress: resolved 1203, reused 1203\nDone in 3.1s", False),
        # turbo's task prefix read past: the build says it failed to compile, though no summary came
        (
            "pnpm turbo run build --filter=web 2>&1 | tail -n 3",
            "web:build: Failed to compile.\nweb:build: ./src/components/toolbar.tsx\nweb:build: Module not found: "
            "Package path ./button is not exported\nweb:build: > Build failed because of webpack errors",
            True,
        ),
        ("grep FAIL test.log", "FAIL\tgithub.com/t/orders/pkg/client\t0.019s", False),  # a log searched: no run failing
    ],
)
def test_a_command_with_no_exit_code_failed_only_when_what_it_printed_says_so(command, output, failed):
    assert printed.reads_failed(command, output) is failed


_LOOP = "for i in 1 2 3; do mix test --max-cases 1 2>&1 | grep -E '^[0-9]+ tests'; done"


@pytest.mark.parametrize(
    ("command", "output", "failed"),
    [
        (
            "./gradlew build 2>&1 | tail -40",
            "* What went wrong:\nExecution failed for task ':app:compileKotlin'.\n\nBUILD FAILED in 3s",
            True,
        ),
        ("pytest -q 2>&1 | tail -3", "2 failed, 10 passed in 0.40s", True),
        ("pytest -q 2>&1 | tail -3", "12 passed in 0.40s", False),
        ("set -o pipefail; pytest -q | tail -3", "2 failed, 10 passed in 0.40s", False),  # the 0 is the run's own
        ("pytest -q", "2 failed, 10 passed in 0.40s", False),  # its own 0, whatever it printed
        (_LOOP, "63 tests, 1 failure\n63 tests, 0 failures\n63 tests, 2 failures", True),  # the body's last pipe's 0
        (_LOOP, "63 tests, 0 failures", False),
    ],
)
def test_a_zero_exit_code_of_a_pipe_is_its_last_commands_so_the_run_is_read(command, output, failed):
    turn = Turn(tool="Bash", args={"command": command}, output=output, exit_code=0)
    assert printed.failed(turn, "run", command) is failed


@pytest.mark.parametrize(
    ("tool", "output", "failed"),
    [
        ("mcp__books__get_chapter", "Error executing tool get_chapter: part0016.html not found in TOC.", True),
        ("mcp__books__get_chapter", "MCP error -32602: Invalid arguments", True),
        ("edit", "Error: oldString not found in content", True),
        ("mcp__books__get_chapter", "# Chapter 3\nAn Error: section heading later", False),
        ("read", "Error: this line is the file's first line", False),  # a file's content, shown
    ],
)
def test_a_tool_with_no_error_flag_failed_when_its_result_opens_with_its_error(tool, output, failed):
    facts = window_of([{"tool": tool, "args": {"path": "x"}, "output": output}])[-1]
    assert facts.failed is failed


@pytest.mark.parametrize(
    ("output", "hung"),
    [
        ("Command timed out after 2m 0.0s\n\n> e2e", True),
        ("partial output\n[Request interrupted by user for tool use]", True),
        ("   INFO  Running migrations.\n\n  2024_06_03_add_status_index_to_orders ....................", False),
        ("FAILED test_api.py - TimeoutError: request timed out after 5s", False),
        ("order 3 was cancelled\nbatch done", False),
    ],
)
def test_only_the_harnesss_word_that_it_cut_a_command_off_is_a_hang(output, hung):
    assert outcomes.hung(output) is hung


@pytest.mark.parametrize(
    ("command", "code", "hung"),
    [
        ("set -a && . ./.env && set +a && timeout 300 alembic upgrade head", 124, True),
        ("sudo timeout 60 ./migrate.sh", 124, True),
        ("timeout 300 alembic upgrade head", 1, False),  # it failed by itself, before its time was up
        ("./run.sh --timeout 300", 124, False),  # a program's own exit status, not timeout's
        ("timeout 300 alembic upgrade head", None, False),  # no exit status sent (Codex)
    ],
)
def test_timeouts_own_exit_status_says_it_cut_the_command_off(command, code, hung):
    output = "INFO  [alembic.runtime.migration] Running upgrade 3f2a -> 8b41, add events.tenant_id"
    assert outcomes.hung(output, command, code) is hung


@pytest.mark.parametrize(
    "output",
    [
        "   INFO  Running migrations.\n\n  2024_06_03_120000_add_status_index_to_orders_table ......................",
        "collected 14 items / 13 deselected / 1 selected\n\ntests/integration/test_ingest.py::test_roundtrip ",
        "test_export_rows (tests.test_export.ExportTest) ...",
        "running 1 test\ntest export::tests::json_lines_roundtrip has been running for over 60 seconds",
        "14:02:12  Concurrency: 4 threads (target='prod')\n14:02:12  \n"
        "14:02:13  1 of 1 START sql table model marts.fct_subscriptions ........................... [RUN]",
    ],
)
def test_a_run_under_timeout_that_stops_on_a_step_it_started_hung_where_no_exit_code_comes(output):
    """Codex sends no exit status: ``timeout 600 artisan migrate`` cut off mid-migration prints the migration's name and
    its dot leader with no DONE after it, pytest -v a test id with no verdict, unittest a test and its ``...``."""
    assert outcomes.hung(output, "timeout 600 ./vendor/bin/sail artisan migrate")
    assert not outcomes.hung(output, "./vendor/bin/sail artisan migrate")  # not under timeout: not known to be cut off
    assert not outcomes.hung(output + " DONE", "timeout 600 php artisan migrate")


@pytest.mark.parametrize(
    ("command", "step"),
    [
        ("set -a && . ./.env && set +a && timeout 300 alembic upgrade head", "alembic"),
        ("timeout 180 psql $DATABASE_URL -c 'ALTER TABLE events ADD COLUMN t int'", "psql"),
        ("sudo -u deploy timeout -s KILL 60 npm test", "npm test"),
        ("nohup python app.py > app.log 2>&1", "python app.py"),
        ("env -u DEBUG nice -n 10 cargo build --release", "cargo build"),
        ("time -- pytest -q tests/", "pytest"),
        ("npm publish --dry-run 2>&1 | tail -5", "npm publish --dry-run"),  # a rehearsal is a step of its own
        ("ansible-playbook site.yml --check", "ansible-playbook --check"),
        ("kubectl --context gke_prod -n checkout rollout status deploy/api --timeout=5m", "kubectl rollout"),
        ("kubectl --context gke_prod -n checkout get pods -o wide", "kubectl get"),  # another step, same options
        ("git --no-pager -C /srv/app log -3", "git log"),
        ("aws --region eu-west-1 elbv2 create-listener --protocol HTTPS", "aws elbv2"),
        ("npm --prefix web run build", "npm run"),
        ("docker --version", "docker"),
        # a shell given the script whole runs the script's step, the last of its chain
        ("bash -c 'git push -u origin release/0.14.0'", "git push"),
        ("sh -c \"GIT_SSH_COMMAND='ssh -i ~/.ssh/k' git push -u origin main\"", "git push"),
        ("/bin/bash -lc 'cd app && pytest -q'", "pytest"),
        ("bash scripts/deploy.sh", "bash scripts/deploy.sh"),  # a script file is its own step
    ],
)
def test_the_step_a_command_takes_is_the_one_its_wrappers_run(command, step):
    """``timeout 300 alembic`` and ``timeout 180 psql`` are two steps, not one called ``timeout``; a program's options
    before its step (``kubectl --context prod -n shop``) and their values are no step."""
    assert toolkinds.step_words(command) == step


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("cat <<'EOF' > app.py\nprint(1)\nEOF", ["app.py"]),
        ("cat > app.py <<EOF\nx\nEOF", ["app.py"]),
        ("echo 'a -> b'", []),
        ("python3 -c 'import sys; sys.stdout.write(\"x\")'", []),
        ("git apply fix.patch", ["(git)"]),
        ("sed -e s/a/b/ -i f.py", ["f.py"]),
        ("sed --in-place s/a/b/ g.py", ["g.py"]),
        ("sed -i 's|a|b|g' src/x.tsx", ["src/x.tsx"]),
        ("npm test 2>&1 | tee test.log", []),
        (
            "git checkout -- src/CMakeLists.txt && git apply <<'EOF'\n--- a/src/CMakeLists.txt\n+++ b/x\nEOF",
            ["src/CMakeLists.txt", "(git)"],
        ),
    ],
)
def test_what_a_shell_command_writes(command, written):
    assert shellwork.writes(command) == written


@pytest.mark.parametrize(
    ("command", "restarts"),
    [
        ("docker run --rm img pytest", False),
        ("docker compose run --rm app pytest", False),
        ("kill -0 4242", False),
        ("vercel env ls", False),
        ("gcloud builds list --filter=deploy", False),
        ("gcloud run deploy web", True),
        ("timeout 10 npm run dev", True),
        ('python app.py --name "x" &', True),
        ("pkill -f server.py; python3 server.py", True),
        # a server started through its framework's launcher, a service manager or a start script
        ("python manage.py runserver 0.0.0.0:8000", True),
        ("python -m uvicorn main:app --reload", True),
        ("bundle exec rails server", True),
        ("brew services restart postgresql", True),
        ("php artisan serve", True),
        ("./mvnw -q spring-boot:run", True),
        ("./gradlew bootRun", True),
        ("bash ./scripts/restart-api.sh", True),
        ("./quickstart.sh", False),
        ("python kill_switch.py", False),
        ("./gradlew test", False),
        ("cat start.sh", False),
        # kubectl's and helm's global flags before the verb
        ("kubectl -n staging rollout restart deploy/api", True),
        ("kubectl --context prod -n web delete pod -l app=api", True),
        ("helm -n staging upgrade --install api charts/api -f values.yaml", True),
        ("kubectl -n staging get pods -l app=api", False),
        ("kubectl --context prod -n web logs deploy/api --tail=5", False),
        # a server started in a subshell, and a CI pipeline run again
        ("npx --yes kill-port 3000 && (npm run dev > /tmp/dev.log 2>&1 &) ; sleep 5", True),
        ("(cd api && uvicorn main:app --port 8001 &)", True),
        ("gh run rerun 9123456789 --failed", True),
        ("gh workflow run deploy.yml -f env=staging", True),
        ("glab ci retry 4412", True),
        ("gh run view 9123456789 --log-failed", False),
        ("(cd api && pytest -q)", False),
        # a tunnel or interface brought up, and a thing taken down and up again by one program, whatever its name
        ("wg-quick up wg0", True),
        ("sudo ifup eth0", True),
        ("wg-quick down wg0 && wg-quick up wg0 && sleep 5 && ping -c 4 10.44.0.1", True),
        ("make down && make up", True),
        ("./stack.sh stop; ./stack.sh start", True),
        ("make stop", False),
        ("git stash && git stash pop", False),
        # pods deleted through xargs, and a rollback
        ("kubectl get pods -o name | head -3 | xargs kubectl -n billing delete pod", True),
        ("kubectl -n billing rollout undo deployment/billing-consumer", True),
        ("find . -name '*.pyc' | xargs rm", False),
    ],
)
def test_what_counts_as_a_restart(command, restarts):
    assert shellwork.restarts(command) is restarts


@pytest.mark.parametrize(
    ("command", "adds"),
    [
        ("pip install -q tenacity && python -m pytest", True),
        ("npm i -D zod", True),
        ("cargo add serde --features derive", True),
        ("go get golang.org/x/sync@latest", True),
        ("yarn add react-query", True),
        ("bundle add rack-attack", True),
        ("npm install", False),  # what the project lists already
        ("npm ci", False),
        ("pip install -r requirements.txt", False),
        ("pip install -e .", False),
        ("python -m pip install --upgrade pip", False),  # the installer's own tool
        ("npm install 2>&1 | tail -3", False),
        ("poetry install", False),
        ("brew install jq", False),  # a tool on the machine, no dependency of the project
        ("sudo apt-get install -y libpq-dev", False),
    ],
)
def test_what_installs_a_package_by_name(command, adds):
    assert shellwork.adds_package(command) is adds


@pytest.mark.parametrize(
    ("path", "removed", "added", "adds"),
    [
        ("pyproject.toml", '"httpx>=0.27",', '"httpx>=0.27",\n"tenacity>=8.2",', True),
        ("pyproject.toml", '"httpx>=0.27",\n"tenacity>=8.2",', '"httpx>=0.27",', False),  # taken out
        ("package.json", '"react": "^18.2.0"', '"react": "^18.3.1"', False),  # a version changed
        ("package.json", '"react": "^18.2.0"', '"react": "^18.2.0",\n"zod": "^3.22.4"', True),
        ("Cargo.toml", 'serde = "1"', 'serde = "1"\ntokio = { version = "1", features = ["full"] }', True),
        ("go.mod", "require golang.org/x/sync v0.6.0", "require golang.org/x/sync v0.7.0", False),
        ("Gemfile", "gem 'rails'", "gem 'rails'\ngem 'sidekiq'", True),
        ("src/app.py", "", '"tenacity>=8.2"', False),  # no manifest
    ],
)
def test_what_adds_a_dependency_to_a_manifest(path, removed, added, adds):
    assert shellwork.adds_dependency([path], removed, added) is adds


@pytest.mark.parametrize(
    ("command", "back"),
    [
        ("git checkout -- package-lock.json && rm -rf node_modules", ["package-lock.json"]),
        ("git restore src/a.py src/b.py", ["src/a.py", "src/b.py"]),
        ("git reset --hard", []),  # everything
        ("git checkout main && npm test", None),
    ],
)
def test_what_a_command_puts_back_as_git_has_it(command, back):
    assert shellwork.put_back(command) == back


def test_a_healthy_dev_server_checked_after_each_change_and_restart_is_not_a_restart_loop():
    turns = []
    for k in range(4):
        turns += [
            {"tool": "Edit", "args": {"file_path": "api.ts", "old_string": f"v{k}", "new_string": f"v{k + 1}"}},
            {"tool": "Bash", "args": {"command": "npm run dev > dev.log 2>&1 &"}, "output": "", "exit_code": 0},
            {"tool": "Bash", "args": {"command": "curl -s localhost:3000/health"}, "output": '{"ok":true}'},
        ]
    assert play(turns)[0].fired_at is None


def test_restarts_whose_own_log_tail_shows_the_same_error_each_time_are_a_restart_loop():
    log = '{{"level":50,"hostname":"api-{pod}","msg":"password authentication failed for user \\"orders\\""}}'
    turns = [
        {
            "tool": "Bash",
            "args": {"command": "kubectl rollout restart deploy/api && sleep 30 && kubectl logs deploy/api --tail=1"},
            "output": "deployment.apps/api restarted\n" + log.format(pod=pod),
            "exit_code": 0,
        }
        for pod in ("7f5b9d6c8-s26z2", "59c7d4f8b-dccjk", "6c8d7f9b4-8vt2z")  # a pod's suffix, digits in it or not
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


def _reload_and_probe(printed_lines: list[str]) -> dict:
    return {
        "tool": "Bash",
        "args": {
            "command": "kill -HUP $(cat /tmp/app.pid); sleep 2; curl -s localhost:8000/v2/projects; tail -3 err.log"
        },
        "output": "\n".join(printed_lines),
    }


def test_a_reload_whose_log_tail_shows_the_same_error_and_less_each_time_is_a_restart_loop():
    full = [
        '{"error":"internal","request_id":"req_1e9b44c0f3"}',
        "Traceback (most recent call last):",
        "KeyError: 'tenant_id'",
    ]
    edit = {
        "tool": "apply_patch",
        "args": {"command": "*** Begin Patch\n*** Update File: api.py\n-a\n+b{}\n*** End Patch"},
    }
    turns = []
    for k, shown in enumerate((full, full[1:], full[2:])):  # the agent prints less each time: nothing new
        turns += [{**edit, "args": {"command": edit["args"]["command"].format(k)}}, _reload_and_probe(shown)]
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


def test_a_reload_whose_log_tail_shows_a_new_line_each_time_is_no_restart_loop():
    boot = "ERROR sentry_sdk: could not load optional integration 'celery'"  # harmless, on every boot
    turns = []
    for k, status in enumerate((422, 201, 200)):  # what changed shows in a line of its own
        turns += [
            {"tool": "Edit", "args": {"file_path": "cart.py", "old_string": f"v{k}", "new_string": f"v{k + 1}"}},
            _reload_and_probe([boot, f'"POST /cart HTTP/1.1" {status}']),
        ]
    assert play(turns)[0].fired_at is None


_PG_LOG = (
    "db-1  | 2024-05-21 09:{m}:03.112 UTC [1] LOG:  database system is ready to accept connections\n"
    'db-1  | 2024-05-21 09:{m}:03.702 UTC [{pid}] FATAL:  password authentication failed for user "app"\n'
    'api-1  | error: password authentication failed for user "app"\n'
    "api-1 exited with code 1"
)
_COMPOSE_SAYS = {  # what each way of restarting prints of itself before the log tail
    "docker compose restart": "[+] Restarting 2/2\n \u2714 Container shop-db-1   Started   0.9s\n"
    " \u2714 Container shop-api-1  Started   0.7s",
    "docker compose down && docker compose up -d": " Container shop-api-1  Stopping\n Container shop-api-1  Removed\n"
    " Network shop_default  Removed\n Network shop_default  Creating\n Network shop_default  Created\n"
    " Container shop-db-1  Starting\n Container shop-db-1  Started",
    "docker rm -f shop-api-1 && docker compose up -d": "shop-api-1\n[+] Running 2/2\n"
    " \u2714 Container shop-db-1   Healthy   4.1s\n \u2714 Container shop-api-1  Started   4.3s",
}


def test_restarts_that_each_report_themselves_otherwise_before_the_same_log_tail_are_a_restart_loop():
    """Compose says what it did differently for each way of restarting (Restarting, Removed, Created); the restarted
    thing's own lines after it, the same error with another pid and time, are the outcome compared."""
    turns = [
        {
            "tool": "Bash",
            "args": {"command": f"{how} && sleep 5 && docker compose logs --tail 4"},
            "output": f"{says}\n" + _PG_LOG.format(m=41 + k, pid=68 + k * 3),
        }
        for k, (how, says) in enumerate(_COMPOSE_SAYS.items())
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


def test_kills_and_restarts_whose_server_logs_its_pid_and_dies_on_the_same_port_are_a_restart_loop():
    """Codex sends no exit code; each start logs its own pid (pino's ``INFO (pid):``) before the same EADDRINUSE, and
    the watcher's last words say it failed."""
    boot = (
        "> api@1.0.0 dev\n> tsx watch src/server.ts\n\n[14:2{k}:14] INFO ({pid}): config loaded\n"
        "Error: listen EADDRINUSE: address already in use :::3000\n    at Server.setupListenHandle (node:net:1897:16)\n"
        "Failed running 'src/server.ts'. Waiting for file changes before restarting..."
    )
    kills = ("kill 53193", "kill -9 $(lsof -ti:3000); sleep 2", "pkill -f 'tsx watch'; kill -9 $(lsof -ti:3000)")
    turns = [
        {"tool": "Bash", "args": {"command": f"{how} && timeout 15 npm run dev"}, "output": boot.format(k=k, pid=pid)}
        for k, (how, pid) in enumerate(zip(kills, (44935, 56525, 61207), strict=True))
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


def test_restarts_after_which_curl_shows_the_same_error_status_are_a_restart_loop():
    """``curl -si`` after each restart shows the proxy's same 502 (its Date aside): the restarted thing's outcome,
    though every command succeeded; a status that changes is news."""
    page = "HTTP/1.1 502 Bad Gateway\nServer: nginx/1.25.5\nDate: Wed, 22 May 2024 09:1{k}:07 GMT\n\n<h1>502</h1>"
    restarts = {
        "docker restart shop-api-1": "shop-api-1",
        "docker compose restart proxy": " Container shop-proxy-1  Restarting\n Container shop-proxy-1  Started",
        "docker compose up -d --force-recreate api": " Container shop-api-1  Recreated\n Container shop-api-1  Started",
    }
    turns = [
        {"tool": "Bash", "args": {"command": f"{how} && sleep 4 && curl -si localhost:8080/api/health"}}
        | {"output": f"{said}\n" + page.format(k=k)}
        for k, (how, said) in enumerate(restarts.items())
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)
    moved = [*turns[:2], {**turns[2], "output": turns[2]["output"].replace("502 Bad Gateway", "401 Unauthorized")}]
    assert play(moved)[0].fired_at is None


def _rebuild(tail: str) -> dict:
    build = "[+] Building 14.2s (11/11) FINISHED\n => [api 5/5] RUN npm run build   9.8s\n[+] Running 2/2\n"
    command = "docker compose up -d --build api && sleep 6 && docker compose logs api --tail 4"
    return {"tool": "Bash", "args": {"command": command}, "output": build + tail, "exit_code": 0}


def test_a_rebuild_that_succeeds_and_then_shows_the_same_error_is_no_passed_check():
    """``up --build`` is a build that passed; its log tail says the restarted thing still fails, so nothing it was for
    passed, and retries added in the middle (new lines once) do not hide the same tail coming back."""
    tails = [
        "api-1  | Error: connect ECONNREFUSED 127.0.0.1:5432\napi-1 exited with code 1",
        "api-1  | warn db not ready, retry 9/10\napi-1  | Error: connect ECONNREFUSED 127.0.0.1:5432\n"
        "api-1 exited with code 1",
        "api-1  | Error: connect ECONNREFUSED 127.0.0.1:5432\napi-1 exited with code 1",
    ]
    turns = []
    for k, tail in enumerate(tails):
        turns += [
            {"tool": "Edit", "args": {"file_path": "src/db.ts", "old_string": f"r{k}", "new_string": f"r{k + 1}"}},
            _rebuild(tail),
        ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


def test_a_log_tail_cut_in_its_middle_is_never_the_same_as_another():
    """What a harness cut out of an output is unknown: two tails that show the same ends may differ there (a debug line
    the agent added between restarts)."""
    stop = ("pkill -f server.js", "kill $(cat server.pid)", "fuser -k 3000/tcp", "pkill -f 'node server'")
    turns = []
    for k, how in enumerate(stop):
        turns += [
            {"tool": "Edit", "args": {"file_path": "db.js", "old_string": f"d{k}", "new_string": f"d{k + 1}"}},
            {
                "tool": "Bash",
                "args": {"command": f"{how}; node server.js > out.log 2>&1 & sleep 3; cat out.log"},
                "output": "[server] starting\n...[clipped 2400 characters]...\n"
                'Error: Missing named parameter "minConfidence"\n    at Query.run (db.js:1:1)',
            },
        ]
    assert play(turns)[0].fired_at is None
    shown = [{**t, "output": t.get("output", "").replace("...[clipped 2400 characters]...\n", "")} for t in turns]
    assert play(shown)[0].fired_at is not None  # what the same tails are when nothing was cut


@pytest.mark.parametrize(
    "output",
    [
        "head\n...[clipped 1200 characters]...\ntail",
        "head\n...[clipped]...\ntail",
        "head\n... [truncated] ...\ntail",
        "head\n[... omitted 40 of 200 lines ...]\ntail",
        "head\n\u20261200 tokens truncated\u2026\ntail",
        "<response clipped><NOTE>To save on context only part of this file has been shown to you.</NOTE>",
    ],
)
def test_an_output_that_says_part_of_it_was_cut_is_clipped(output):
    assert outcomes.clipped(output)
    assert not outcomes.clipped("we clipped the hedge... [truncated plan] was fine")  # words, not a marker


def test_another_command_succeeding_between_the_same_failures_is_no_progress():
    eresolve = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"
    fail = {"tool": "Bash", "args": {"command": "npm install"}, "output": eresolve, "exit_code": 1}
    clean = {
        "tool": "Bash",
        "args": {"command": "npm cache clean --force"},
        "output": "npm WARN using --force",
        "exit_code": 0,
    }
    turns = [fail, clean, {**fail, "args": {"command": "rm -rf node_modules && npm install"}}, clean]
    turns += [{**fail, "args": {"command": "npm install --registry=https://registry.npmjs.org/"}}, fail]
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and "repeated_error" in {s.kind for s in steps[0][2]}
    # the failing step itself passing is progress: the count starts again after it
    passing = {**fail, "output": "added 1204 packages in 31s", "exit_code": 0}
    again = [{**fail, "args": {"command": f"npm install --loglevel {level}"}} for level in ("info", "http", "warn")]
    _, steps = play([fail, clean, again[0], passing, again[1], clean, again[2]])
    assert not any(s.kind == "repeated_error" for step in steps for s in step[2])


@pytest.mark.parametrize(
    ("output", "names"),
    [
        ("2 tests failed:\n\u2717 Git > pr: works [66.80ms]\n 75 pass\n 2 fail", ["Git > pr: works"]),
        ("FAILED tests/test_a.py::test_x - AssertionError: boom\n1 failed", ["tests/test_a.py::test_x"]),
        ("--- FAIL: TestFoo (0.00s)\nFAIL\tpkg\t0.01s", ["TestFoo"]),
        ("FAIL: test_bar (pkg.tests.TestX)\nFAILED (failures=1)", ["test_bar (pkg.tests.TestX)"]),
        ("test tests::it_works ... FAILED\ntest result: FAILED", ["tests::it_works"]),
        ("error: cannot find symbol\nBUILD FAILED", []),
        # jest puts each test's time beside its name: the same test whatever it took
        ("  nextStandup\n    \u2715 keeps 09:00 Berlin time (31 ms)\nTests: 1 failed", ["keeps 09:00 Berlin time"]),
        ("    \u2715 renders the badge (1.2 s)", ["renders the badge"]),
        (" \u00d7 src/a.test.ts > parser > handles dates 12ms", ["src/a.test.ts > parser > handles dates"]),  # vitest
    ],
)
def test_the_failing_tests_a_run_names(output, names):
    assert outcomes.failing_tests(output) == names


def edit(k: int) -> dict:
    """The k-th of a run of different edits to one file."""
    return {"tool": "Edit", "args": {"file_path": "git.ts", "old_string": f"a{k}", "new_string": f"a{k + 1}"}}


def test_a_run_failing_more_tests_than_before_has_not_failed_the_same_way():
    """Two failures with the same count line but other failing tests are two failures (a third test broke)."""

    def run(*failing: str) -> dict:
        listed = "\n".join(f"\u2717 Git > {name} [1.2ms]" for name in failing)
        out = f"{len(failing)} tests failed:\n{listed}\n 74 pass\n {len(failing)} fail"
        return {"tool": "Bash", "args": {"command": "bun test"}, "output": out, "exit_code": 1}

    same = [run("branch", "pr"), edit(1), edit(2), run("branch", "pr"), edit(3), edit(4), run("branch", "pr")]
    assert "same_failure" in {s.kind for s in play(same)[0].signals}
    grown = same[:-1] + [run("clone", "branch", "pr")]
    assert "same_failure" not in {s.kind for s in play(grown)[0].signals}


def test_a_check_with_no_error_line_fails_the_same_way_only_when_it_prints_the_same_findings():
    """A linter's findings change from run to run under the same count line (``* staticcheck: 3``): the count is not
    the cause, so each run is another failure; the very same findings three times over edits are the same one."""

    def lint(*files: str) -> dict:
        found = "\n".join(f"pkg/{name}.go:45:2: QF1012: Use fmt.Fprintf(...) (staticcheck)" for name in files)
        out = f"{found}\n{len(files)} issues:\n* staticcheck: {len(files)}"
        return {"tool": "Bash", "args": {"command": "golangci-lint run"}, "output": out, "exit_code": 1}

    moving = [lint("a", "b", "c"), edit(1), lint("d", "e", "f"), edit(2), lint("g", "h", "i"), edit(3)]
    assert play([*moving, lint("j", "k", "l")])[0].fired_at is None
    same = [lint("a", "b", "c"), edit(1), lint("a", "b", "c"), edit(2), lint("a", "b", "c")]
    assert "same_failure" in {s.kind for s in play(same)[0].signals}


def test_an_edit_tool_failing_with_the_same_message_fails_the_same_way_each_time():
    """An edit tool's failure is its own message, never a wrapper around another: four identical failed edits are the
    same error four times (a write's numbered line once passed for a new cause on every second try)."""
    out = (
        "The LLM did not conform to the edit format.\n# 1 SEARCH/REPLACE block failed to match!\n"
        "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in sc/Chain.sol\n"
    )
    edit = {"tool": "edit", "args": {"content": "<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE"}, "output": out}
    window = window_of([{**edit, "error": True}] * 4)
    assert len({f.err for f in window}) == 1 and window[0].err is not None


def test_a_start_whose_program_is_not_found_is_a_repeated_failure_not_a_restart_loop():
    """A start that never started (its program is missing) restarts nothing: the same failing call, made again, is
    named as what it is, on the fourth run, as any identical failing call."""
    fail = {
        "tool": "Bash",
        "args": {"command": "npm run dev"},
        "output": "zsh: command not found: npm",
        "exit_code": 127,
    }
    verdict, steps = play([fail] * 5)
    assert verdict.fired_at == 3
    assert "restart_loop" not in {s.kind for s in verdict.signals}


WATCH_BANNER = "Refreshing run status every 3 seconds. Press Ctrl+C to quit."
CHECKS_TALLY = (
    "0 cancelled, 1 failing, 3 successful, 0 skipped, and 0 pending checks\n\n   NAME  DESCRIPTION  ELAPSED  URL"
)


@pytest.mark.parametrize(
    ("command", "output", "verdict"),
    [
        ("gh run list --limit 2", "completed\tfailure\tfix: x\tDeploy\tmain\nin_progress\t\tfix y\tDeploy", "fail"),
        ("gh run list --limit 2", "in_progress\t\tfix y\tDeploy\nqueued\t\tz", None),
        ("gh run list", "completed\tsuccess\tok\tCI\tmain", "pass"),
        ("gh pr checks 12", "build\tfail\t1m\thttps://ci/1\nlint\tpass\t30s\thttps://ci/2", "fail"),
        ("gh pr checks 12", "build\tpass\t1m\thttps://ci/1\nlint\tpass\t30s\thttps://ci/2", "pass"),
        # at a terminal: its summary line first, then one row per check under a header
        (
            "gh pr checks 882",
            f"Some checks were not successful\n{CHECKS_TALLY}\nX  Preview / deploy  58s  https://ci/1",
            "fail",
        ),
        (
            "gh pr checks 882",
            f"All checks were successful\n{CHECKS_TALLY}\n\u2713  CI / lint  41s  https://ci/2",
            "pass",
        ),
        ("gh pr checks 882", f"Some checks are still pending\n{CHECKS_TALLY}\n*  CI / build  0  https://ci/3", None),
        ("gh run watch 123", "Refreshing run status\nRun CI (123) completed with 'failure'", "fail"),
        ("gh run view 18", "* main Deploy · 18\nTriggered via push\nJOBS\n✓ Tests in 2s\n* Build (ID 5)", None),
        # `gh run watch`'s banner, or a chained rerun's line, comes before the run's title row, which holds its mark
        (
            "gh run watch 92 --exit-status",
            f"{WATCH_BANNER}\n\nX feat/export CI · 92\nJOBS\nX integration in 2m",
            "fail",
        ),
        (
            "gh run rerun 92 --failed && gh run watch 92",
            f"✓ Requested rerun of run 92\n{WATCH_BANNER}\n\nX ci · 92",
            "fail",
        ),
        ("gh run watch 92", f"{WATCH_BANNER}\n\n✓ feat/export CI · 92\nJOBS\n✓ integration in 2m", "pass"),
        # its title row cut off by a `| tail -4`: a job's own mark in the JOBS list says how it went
        (
            "git push -q && gh run watch 93 --exit-status 2>&1 | tail -4",
            "JOBS\n✓ lint in 50s (ID 26257120456)\nX test in 2m57s (ID 26257120611)\n✓ migrations in 1m3s (ID 7)",
            "fail",
        ),
        ("gh run watch 93 | tail -3", "JOBS\n✓ lint in 50s (ID 26257120456)\n* test (ID 26257120611)", None),
    ],
)
def test_a_ci_run_read_back_is_judged_by_its_own_verdict(command, output, verdict):
    assert readback.remote_verdict(command, output)[0] == verdict


def _watched(failing: str) -> str:
    jobs = [
        f"{'X' if job == failing else '✓'} {job} in 1m{k}s (ID 3116345{k})"
        for k, job in enumerate(("ruff", "pytest (3.11)", "docker"))
    ]
    return (
        f"{WATCH_BANNER}\n\nX feat/retries fix · 112\nJOBS\n"
        + "\n".join(jobs)
        + "\n\nX Run CI (112) completed with 'failure'"
    )


def test_a_ci_run_failing_in_another_job_each_time_is_another_failure():
    """``gh run watch`` lists the run's jobs with no step under them: the failed job names the failure, so a run that
    fails in ruff, then in pytest, then in docker failed three ways (real fixes between), not one way three times."""
    failures = [
        readback.remote_verdict("gh run watch 112 --exit-status", _watched(job))
        for job in ("ruff", "pytest (3.11)", "docker")
    ]
    assert failures == [
        ("fail", "CI step 'ruff' failed"),
        ("fail", "CI step 'pytest (3.11)' failed"),
        ("fail", "CI step 'docker' failed"),
    ]
    steps = f"{WATCH_BANNER}\n\nX feat/retries fix · 112\nJOBS\nX test in 2m (ID 1)\n  ✓ Set up job\n  X Run pytest\n"
    assert readback.remote_verdict("gh run view 112", steps) == ("fail", "CI step 'Run pytest' failed")  # a step first


@pytest.mark.parametrize(
    ("command", "judges"),
    [
        ("npm test", True),
        ("python -m pytest -x tests", True),
        ("cd web && timeout 60 npm run test:unit 2>&1 | tail -20", True),
        ("./gradlew build", True),
        ("bash scripts/check.sh", True),
        ("python3 runtests.py queries.tests", True),
        ("golangci-lint run ./...", True),
        ("node --test", True),
        ("docker compose exec web python manage.py test", True),
        # a check's word naming a file, a branch, an artifact or a message is not a check
        ("rm -rf /tmp/build-artifacts && gh run download 18 --name build-artifacts-5f -D /tmp/build-artifacts", False),
        ('git commit -m "fix the build"', False),
        ("sed -i 's/a/b/' tests/test_api.py", False),
        ("bun src/cli.ts session start test-session", False),
        ("tail -5 build.log", False),
        # a build tool asked what it has (its dependency tree, an update of the lock file, a search) judges nothing
        ("cargo tree -i rsa -e normal", False),
        ("cargo update -p rsa", False),
        ("./gradlew dependencies --configuration runtimeClasspath", False),
        ("mvn -q dependency:tree -Dincludes=org.yaml", False),
        ("cargo audit", True),
        ("mvn -q verify", True),
        # a check sent to the background prints its pid, not its verdict; a redirection's & sends nothing away
        ("nohup env RUST_LOG=debug cargo test -p srv --test lease > /tmp/lease.log 2>&1 &\necho $!", False),
        ("(pytest -q tests/e2e > e2e.log 2>&1 &) ; sleep 2", False),
        ("npm run build & npm test", True),
        ("pytest -q &> pytest.log", True),
    ],
)
def test_what_counts_as_running_a_check(command, judges):
    assert outcomes.is_verifier(command) is judges


def test_downloading_a_ci_artifact_between_failing_runs_is_not_a_passing_check():
    """A word like 'build' in an artifact's name made the download a passing check, which hid three CI failures with
    an edit before each (a real session: each cycle was edit, push, wait, read the run, download the artifact)."""
    failed = "X main Deploy · 18\nJOBS\n✓ Build in 2m\nX Deploy infrastructure in 1m\n  X Deploy infrastructure"
    turns = []
    for k in range(3):
        turns += [
            {"tool": "Edit", "args": {"file_path": "deploy.yml", "old_string": f"b{k}", "new_string": f"b{k + 1}"}},
            {"tool": "Bash", "args": {"command": "git commit -am fix && git push"}, "output": "ok", "exit_code": 0},
            {"tool": "Bash", "args": {"command": f"gh run view {18 + k}"}, "output": failed, "exit_code": 0},
            {
                "tool": "Bash",
                "args": {"command": f"gh run download {18 + k} --name build-artifacts -D /tmp/build-artifacts"},
                "output": "CodeUri: s3://bucket-dev/x",
                "exit_code": 0,
            },
        ]
    verdict, _ = play(turns)
    assert verdict.fired_at is not None and "same_failure" in {s.kind for s in verdict.signals}


EXAMPLES = int(os.environ.get("STRICT_LOOP_EXAMPLES", 50))  # raise it for a deeper search, e.g. 3000
SHELLISH = st.text(alphabet=st.sampled_from(list("ab -'\"|&;<>\n$()=*./\\:eolrsitdkx0129")), max_size=120)
WORDS = st.text(max_size=300)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(command=SHELLISH)
def test_any_command_is_read_without_an_error_and_within_bounds(command):
    written = shellwork.writes(command)
    assert isinstance(written, list) and len(written) <= 20 and all(isinstance(p, str) and p for p in written)
    assert isinstance(shellwork.restarts(command), bool)
    assert all(part.strip() for part in shellwork.segments(command))
    assert isinstance(printed.reads_failed(command, command), bool)
    assert readback.remote_verdict("gh run view 1", command)[0] in (None, "pass", "fail")


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(text=WORDS, actor=st.sampled_from(["person", "agent"]))
def test_any_words_are_read_without_an_error_and_a_weight_of_at_most_two(text, actor):
    spoken = wrappings.spoken(actor, text)
    word = person.read(spoken if spoken is not None else text)
    assert word.verdict in (None, "pass", "fail") and 0 <= word.weight <= 2
    assert word.weight == 0 or word.verdict == "fail"


@settings(max_examples=EXAMPLES, deadline=None)
@given(turns=st.lists(st.tuples(st.sampled_from(["Bash", "Edit", "user_prompt"]), SHELLISH, WORDS), max_size=12))
def test_any_run_of_turns_is_evaluated_and_every_sentence_said_is_true(turns):
    made = []
    for tool, command, text in turns:
        if tool == "user_prompt":
            made.append({"tool": tool, "actor": "person", "output": text})
        elif tool == "Edit":
            made.append({"tool": tool, "args": {"file_path": "a.py", "old_string": command, "new_string": text}})
        else:
            made.append({"tool": tool, "args": {"command": command}, "output": text})
    verdict, _ = play(made)
    if verdict.fired_at is not None:
        first, _ = play(made[: verdict.fired_at + 1])
        check_claims(first, made[: verdict.fired_at + 1])


@pytest.mark.parametrize(
    ("output", "failed"),
    [
        ("Exit code: 1\nWall time: 0.1 seconds\nOutput:\nls: x: No such file or directory", True),
        ("Exit code: 0\nWall time: 1.2 seconds\nOutput:\n=== 5 passed, 2 failed earlier ===", False),
        ("Process exited with code 2\nOutput:\nmake: *** [all] Error 2", True),
        ("Chunk ID: 791d2c\nWall time: 0.0000 seconds\nProcess exited with code 2\nOutput:\nno rule", True),
        ("Chunk ID: 9dd5ff\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\nError: none", False),
    ],
)
def test_codexs_own_exit_code_line_settles_whether_a_call_failed(output, failed):
    assert printed.reads_failed("make", output) is failed


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("cd /repo && ls -la src", "search"),
        ("cd src && cat app.py", "read"),
        ("export PATH=$HOME/bin:$PATH; cd app && grep -rn TODO .", "search"),
        ("cd app && npm test", "run"),
        ("cd app && sed -i 's/a/b/' x.py", "write"),
        ("dir c:\\Apps\\infra\\*.tf", "search"),  # Windows' ls, cat and grep
        ("type c:\\Apps\\infra\\variables.tf", "read"),
        ("cd c:\\Apps\\infra && findstr /s image *.tf", "search"),
        ("cd c:\\Apps\\infra && terraform plan", "run"),
        # a chain that looks or edits first and then runs a script is that run
        ("grep -c TOKEN .env; TOKEN=$(grep ^T2= .env | cut -d= -f2) python scripts/export.py | tail -4", "run"),
        ("sed -i 's/retries=5/retries=8/' scripts/export.py && python scripts/export.py --out d.csv", "run"),
        ("ls; cat requirements.txt; python -c 'import requests'", "search"),  # a look at a version
        ("cat > scripts/probe.py <<'EOF'", "write"),
    ],
)
def test_a_command_is_read_by_the_program_it_runs_after_setting_up_where(command, kind):
    """``cd dir && ls`` looks, it runs nothing: a look that succeeds is no sign that a failing command moved on."""
    assert toolkinds.classify_tool("Bash", {"command": command}) == kind


def test_a_long_message_cut_where_it_is_read_is_not_taken_to_end_there():
    """A message is read by its first 300 characters: one cut right after "still" must not say "it still fails"."""
    lead = (
        "we see only the online nodes in batch mode, which looks odd to me. Should this be one view? Are you counting "
        "the project and system nodes too? It does not make much sense to me. Batch nodes are gone from the graph and "
        "the legend shows them anyway, in each of them."
    )
    text = f"{lead} The TestOnlinePattern node is still the only blue one, which is what we wanted"
    assert wrappings.text_of(text)[:300].endswith("node is still")
    assert person.read(text).verdict is None


@pytest.mark.parametrize(
    ("tool", "args", "kind"),
    [
        ("list_directory", {"dir_path": "/repo/src"}, "search"),  # Gemini CLI 0.61
        ("grep_search", {"pattern": "TODO", "dir_path": "/repo"}, "search"),
        ("read_many_files", {"include": ["src/**/*.ts"]}, "read"),
        ("replace", {"file_path": "/repo/a.ts", "old_string": "a", "new_string": "b"}, "write"),
        ("run_shell_command", {"command": "npm test"}, "run"),
        ("list", {"path": "/repo"}, "search"),  # OpenCode
        ("read", {"filePath": "/repo/a.ts"}, "read"),
        ("LS", {"path": "/repo"}, "search"),  # Claude Code
        ("terminal", {"command": "pytest -q"}, "run"),  # Hermes
    ],
)
def test_each_harness_tool_is_read_as_what_it_does(tool, args, kind):
    assert toolkinds.classify_tool(tool, args) == kind


def test_a_gemini_listing_names_the_folder_it_lists():
    turn = Turn.model_validate({"tool": "list_directory", "args": {"dir_path": "/repo/src"}, "output": "a.ts"})
    assert toolkinds.turn_paths(turn) == ["/repo/src"]


OPENCODE_REFUSED = "The user rejected permission to use this specific tool call."


def test_opencodes_refusals_are_the_persons_no_with_their_words():
    """OpenCode 1.x's words for a call the person declined, with and without their feedback, and for a call a rule of
    theirs forbids."""
    assert person.read(OPENCODE_REFUSED) == person.Word("fail", 0, None, "", refused=True)
    said = person.read(f"{OPENCODE_REFUSED[:-1]} with the following feedback: stop, that file is generated")
    assert said.refused and said.text == "stop, that file is generated"
    ruled = "The user has specified a rule which prevents you from using this specific tool call. Here are some rules"
    assert person.read(ruled).refused
    edit = {"tool": "edit", "args": {"filePath": "/r/gen.py", "oldString": "a", "newString": "b"}}
    refused = {**edit, "output": OPENCODE_REFUSED, "error": True}
    make = {"tool": "bash", "args": {"command": "make"}, "output": "ok", "exit_code": 0}
    verdict, _ = play([refused, make, refused, make, refused])  # as Claude Code's refusals count
    assert verdict.fired_at == 4 and verdict.signals[0].kind == "person_reports", verdict.signals


_RULED = (
    "Error: The user has specified a rule which prevents you from using this specific tool call. Here are some of the "
    'relevant rules [{"permission":"bash","pattern":"git push *","action":"deny"},{"permission":"bash","pattern":"git '
    'push","action":"deny"}]'
)


def test_a_deny_rule_opencode_quotes_is_the_persons_ban_and_a_shell_wrapper_breaks_it():
    """OpenCode quotes the person's deny rules in its refusal: ``git push *`` bans ``git push``, so ``bash -c 'git push
    ...'``, which the rule's pattern does not catch, goes against the person's word; a wrapped command the rules do not
    name does not."""
    assert person.read(_RULED).rules == ("git push",)
    assert person.read(_RULED.replace("git push", "*")).rules == ()  # a rule on everything names no command
    push = {"tool": "bash", "args": {"command": "git push -u origin release/0.14.0"}, "output": _RULED, "error": True}
    wrapped = {"tool": "bash", "args": {"command": "bash -c 'git push -u origin release/0.14.0'"}}
    failed = {**wrapped, "output": "fatal: could not read Username for 'https://github.com'", "exit_code": 128}
    facts = window_of([push, failed])
    assert facts[0].forbids == ["git push"] and facts[1].defied == "git push"
    other = {"tool": "bash", "args": {"command": "bash -c 'git status -sb'"}, "output": "## release/0.14.0"}
    assert window_of([push, {**other, "exit_code": 0}])[1].defied is None
    verdict, _ = play([push, failed, {**failed, "args": {"command": "sh -c 'git push origin HEAD'"}}, failed])
    assert verdict.fired_at is not None and verdict.signals[0].kind == "person_reports", verdict.signals
    assert "do not do it another way" in verdict.recommended_action  # no failure to fix: the person decides


def _pull_request(head: str, base: str, message: str) -> dict:
    """The GitHub MCP server's answer to a pull request it cannot open: its message names the branches it was given."""
    args = {"owner": "acme", "repo": "api", "title": "Backoff with jitter for retries", "head": head, "base": base}
    output = f"failed to create pull request: POST https://api.github.com/repos/acme/api/pulls: 422 {message}"
    return {"tool": "mcp__github__create_pull_request", "args": args, "output": output, "error": True}


def test_an_mcp_tool_failing_alike_for_each_value_it_is_given_is_one_step_failing_the_same_way():
    """An MCP tool is one step whatever it is given, as a program is, and the values it was given are masked in its
    error: ``No commits between main and fix/retry``, then ``... develop and fix/retry``, is one failure."""
    tries = [("fix/retry", "main"), ("acme:fix/retry", "main"), ("fix/retry", "develop"), ("retry", "release")]
    turns = [_pull_request(h, b, f"Validation Failed: No commits between {b} and {h}") for h, b in tries]
    facts = window_of(turns)
    assert len({f.step for f in facts}) == 1 and len({f.etpl for f in facts}) == 1
    assert play(turns)[0].fired_at == 3
    causes = ["Validation Failed: head invalid", "Not Found", "Resource not accessible by token", "Bad credentials"]
    assert play([_pull_request("fix/retry", "main", cause) for cause in causes])[0].fired_at is None


def test_opencodes_edits_are_known_by_their_text_and_file():
    """OpenCode names an edit's sides and file in camelCase: an edit is known (not 'unknown content'), its file is
    named, and the edit that swaps the sides back undoes it."""
    there = {"tool": "edit", "args": {"filePath": "/r/a.py", "oldString": "x = 1", "newString": "x = 2"}, "output": ""}
    back = {**there, "args": {"filePath": "/r/a.py", "oldString": "x = 2", "newString": "x = 1"}}
    first, second = window_of([there, back])
    assert not first.unknown and first.paths == ["/r/a.py"] and second.edit == first.undo


@pytest.mark.parametrize(
    "output",
    [
        "npm run dev\nCommand timed out after 2m 0.0s",  # Claude Code
        "command timed out after 10000 milliseconds\nlistening on :3000",  # Codex 0.171
        "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output. "
        "Below is the output before it was cancelled:\nlistening on :3000",  # Gemini CLI 0.61
        "Command was cancelled by user before it could complete. There was no output before it was cancelled.",
        "listening on :3000\n\n<bash_metadata>\nshell tool terminated command after exceeding timeout 120000 ms. If "
        "this command is expected to take longer and is not waiting for interactive input, retry with a larger "
        "timeout value in milliseconds.\n</bash_metadata>",  # OpenCode 1.x
        "listening on :3000\n\n<bash_metadata>\nUser aborted the command\n</bash_metadata>",
    ],
)
def test_each_harness_saying_a_command_was_cut_off_is_a_hang(output):
    assert outcomes.hung(output)
    assert not outcomes.hung("requests.exceptions.ReadTimeout: HTTPSConnectionPool: Read timed out.")


def _cut(command: str, shown: list[str], limit: str) -> dict:
    output = "\n".join(shown + [f"Command timed out after {limit}"])
    return {"tool": "Bash", "args": {"command": command}, "output": output, "exit_code": 124}


def test_a_hang_that_prints_more_than_the_run_before_it_but_no_more_than_an_earlier_one_got_no_further():
    """The whole suite cut off after its first binaries, again with its output lost, then one test binary cut off:
    the third printed more than the second, not more than the first. Getting further than every earlier hang of
    the step ends the loop."""
    suite = [f"test result: ok. {n} passed; 0 failed; finished in 0.0{n}s" for n in range(1, 9)]
    turns = [
        _cut("cargo test --workspace -q", ["running 9 tests", *suite], "2m 0.0s"),
        _cut("cargo test --workspace -q 2>&1 | tail -40", [], "10m 0.0s"),
        _cut("cargo test -p srv --test lease_expiry -- --nocapture", ["running 3 tests", "test a ... ok"], "5m 0.0s"),
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[-1][2][0].kind == "restart_loop"
    assert "hung and was cut off 3 times" in steps[-1][2][0].evidence and "hangs" in check_claims(verdict, turns)
    further = [*suite, "running 20 tests", *(f"test t{n} ... ok" for n in range(6))]
    assert play([*turns[:2], _cut("cargo test --workspace -q", further, "10m 0.0s")])[0].fired_at is None


def test_a_dev_server_cut_off_each_time_after_failing_otherwise_is_no_hang_loop():
    """``timeout 20 npm run dev`` is cut off by design: dying of a busy port, then of a refused database connection,
    then of a missing table, it got past what stopped it each time. The same error three times is a hang loop."""
    dev = "timeout 20 npm run dev"
    port, db, table = (
        "[api] Error: listen EADDRINUSE: address already in use :::3000",
        "[api] Error: connect ECONNREFUSED 127.0.0.1:5432",
        '[api] error: relation "shifts" does not exist',
    )
    moving = [_cut(dev, ["> roster@1.2.0 dev", port], "20s"), _cut(dev, ["> roster@1.2.0 dev", db], "20s")]
    moving.append(_cut(dev, ["> roster@1.2.0 dev", table], "20s"))
    assert "restart_loop" not in {s.kind for _, _, signals in play(moving)[1] for s in signals}
    same = [_cut(dev, ["> roster@1.2.0 dev", port], "20s")] * 3
    assert play(same)[0].fired_at == 2


def test_a_wait_that_gives_up_by_its_own_limit_hung_and_three_of_them_are_a_loop():
    """``kubectl wait --for=condition=complete --timeout=300s`` printing "timed out waiting for the condition" was cut
    off by its own limit, as ``timeout`` cuts a command off: the job recreated and waited on three times, its init
    container stuck each time, is a hang loop. ``kubectl rollout status`` is not read so (its count of replicas moves
    between two timeouts while a rollout goes on), nor is another command that prints those words."""
    gave_up = "error: timed out waiting for the condition on jobs/billing-migrate"
    wait = "kubectl --context staging -n billing wait --for=condition=complete job/billing-migrate --timeout={}s"
    assert outcomes.hung(gave_up, wait.format(300), 1) and outcomes.hung(gave_up, "helm upgrade x ./c --wait", 1)
    assert not outcomes.hung("error: timed out waiting for the condition", "kubectl -n b rollout status deploy/x", 1)
    assert not outcomes.hung(gave_up, "kubectl -n billing get jobs", 1)
    recreate = "kubectl -n billing delete job billing-migrate && kubectl apply -f deploy/jobs/migrate.yaml && "
    turns = [
        {"tool": "Bash", "args": {"command": (recreate if k else "") + wait.format(300 * (k + 1))}, "output": gave_up}
        for k in range(3)
    ]
    for turn in turns:
        turn["exit_code"] = 1
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and "hung and was cut off 3 times" in steps[0][2][0].evidence


def test_what_commands_chained_ahead_of_a_hung_step_print_is_not_the_step_getting_further():
    """The same migration cut off at the same line twice, then once more behind a cache clear that prints lines of its
    own: those come before the step's output and are no progress of it, so the third hang closes the loop; a run cut
    off at a later migration got further."""
    migrating = ["INFO  Running migrations.", "2024_06_03_120000_add_status_index_to_orders_table ......"]
    cleared = ["INFO  Configuration cache cleared successfully.", "INFO  Application cache cleared successfully."]
    clear = "./vendor/bin/sail artisan config:clear && ./vendor/bin/sail artisan cache:clear"
    turns = [
        _cut("timeout 120 ./vendor/bin/sail artisan migrate", migrating, "2m 0.0s"),
        _cut("timeout 600 ./vendor/bin/sail artisan migrate", migrating, "10m 0.0s"),
        _cut(f"{clear} && ./vendor/bin/sail artisan migrate", [*cleared, *migrating], "3m 0.0s"),
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and "hung and was cut off 3 times" in steps[-1][2][0].evidence
    later = [*migrating[:1], "2024_06_03_120000_add_status_index_to_orders_table .... 41s DONE", "2024_06_04 ......"]
    assert play([*turns[:2], _cut("timeout 900 sail artisan migrate", later, "15m 0.0s")])[0].fired_at is None


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("don't run `npm install`, we use pnpm here", ["npm install"]),
        ("never use sudo", ["sudo"]),
        ("please do not use git push --force on main", ["git push --force"]),
        ("don't use sed -i on generated files", ["sed -i"]),
        ("If you don't run npm install first, the build fails", []),  # no ban: how the build works
        ("you never run pytest before committing", []),
        ("stop running the migrations", []),  # names no command
        ("do not run or build anything yet", []),
        ("run npm install first", []),
        ("don\u2019t run `npm install`", ["npm install"]),  # a typographic apostrophe
    ],
)
def test_what_the_person_says_not_to_run_is_read_by_its_step(text, steps):
    assert person.forbidden(person.read(text).text) == steps


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("sed -i 's/STATIC/SHARED/' src/CMakeLists.txt && cmake --build build 2>&1 | tail", "run"),
        ("sed -i 's/STATIC/SHARED/' src/CMakeLists.txt", "write"),
        ("sed -n '1,40p' src/CMakeLists.txt", "read"),
    ],
)
def test_an_edit_and_a_check_in_one_command_is_the_check_run_with_its_edit(command, kind):
    turn = {"tool": "Bash", "args": {"command": command}, "output": ""}
    fact = window_of([turn])[0]
    assert fact.kind == kind and fact.edited is (kind != "read")


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ('git add -A && git commit -m "export"', "run"),
        ("git push origin main", "run"),
        ("git -C repo pull --rebase", "run"),
        ("git status --short", "read"),
        ("git log --oneline | head -5", "read"),
        ("git diff HEAD~1 -- src/", "read"),
    ],
)
def test_a_git_command_that_acts_is_a_run_and_one_that_looks_is_a_read(command, kind):
    """A commit a hook refuses or a push the remote rejects fails as a run does; `git status` only looks."""
    assert toolkinds.classify_tool("Bash", {"command": command}) == kind


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Stashing to ~/.cache/patch1729001412-61733.", "Stashing to ~/.cache/patch1729001471-61902.", True),
        ("wrote run_20240611093000.log", "wrote run_20240611094512.log", True),
        ("exported 1234567 rows", "exported 1234568 rows", False),
        ("listening on :3000", "listening on :3001", False),
    ],
)  # fmt: skip
def test_a_long_number_glued_to_a_name_is_noise_and_one_on_its_own_is_not(a, b, same):
    assert (fp.strict(a) == fp.strict(b)) is same


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("tests/test_store.py::test_upsert_new_listing \nexit=124", 124),
        ("FAILED tests/a.py::t\nEXIT_CODE=1", 1),
        ('12 passed in 0.4s\n"exit code: 0"', 0),
        ("rc=2", 2),
        ("status: 200 OK", None),  # a status line, not an exit status
        ("exit 1 means the lock is held", None),
    ],
)
def test_the_exit_status_a_command_echoes_on_its_last_line_is_read(output, code):
    assert outcomes.echoed_exit(output) == code


def test_a_run_that_echoes_its_own_exit_status_is_judged_by_it_and_its_step_is_not_the_echo():
    """``timeout 120 pytest ... | tail -4; echo "exit=${PIPESTATUS[0]}"``: Codex sends no exit code and the echo's would
    be 0, so the 124 it printed says the run was cut off (a hang of pytest's step, with the bare runs before it), and
    an echoed 1 fails a run whose harness sent 0."""
    header = (
        "platform linux -- Python 3.12.3, pytest-8.2.0\nrootdir: /r\nplugins: asyncio-0.23.6\ncachedir: .pytest_cache\n"
    )
    started = "collecting ... collected 9 items\n\ntests/test_store.py::test_upsert_new_listing "
    echoed = 'timeout 120 pytest tests/test_store.py -x -vv 2>&1 | tail -4; echo "exit=${PIPESTATUS[0]}"'
    turns = [
        {
            "tool": "Bash",
            "args": {"command": "timeout 120 pytest tests/test_store.py -x -vv"},
            "output": header + started,
        },
        {"tool": "Bash", "args": {"command": echoed}, "output": f"{started}\nexit=124"},
        {
            "tool": "Bash",
            "args": {"command": "timeout 90 pytest tests/test_store.py -x -vv"},
            "output": header + started,
        },
    ]
    window = window_of(turns)
    assert [f.hang for f in window] == [True, True, True] and len({f.step for f in window}) == 1
    assert play(turns)[0].fired_at == 2
    ran = {"tool": "Bash", "args": {"command": "make test; echo exit=$?"}, "output": "FAIL x\nexit=1", "exit_code": 0}
    assert window_of([ran])[0].failed


def test_a_status_echoed_before_the_log_is_shown_is_the_runs_and_the_step_is_the_run():
    """``python train.py > run.log 2>&1; echo exit=$?; tail -5 run.log`` (Codex sends no exit code): the status line
    comes first and the log after it; the step is the run the log is of, so three reruns cut off by ``timeout`` with
    other settings and edits chained before them are one step hanging (not three lookups of a log)."""
    log = "INFO loading data/train.parquet\nFitting 5 folds for each of 96 candidates, totalling 480 fits"
    ran = "timeout {} python train.py --config rf.yaml > logs/rf.log 2>&1; echo exit=$?; tail -5 logs/rf.log"
    assert outcomes.echoed_exit(f"exit=124\n{log}", ran.format(900)) == 124
    assert outcomes.echoed_exit(f"exit=124\n{log}") is None  # no command that echoes a status: a line like any other
    assert outcomes.echoed_exit(f"exit=124\n{log}", "cat notes.txt") is None
    assert toolkinds.step_words(ran.format(900)) == "python train.py"
    assert toolkinds.step_words("make build > b.log; cat README.md") == "cat"  # not the log the chain wrote
    turns = [
        {"tool": "Bash", "args": {"command": ran.format(900)}, "output": f"exit=124\n{log}"},
        {"tool": "Bash", "args": {"command": "OMP_NUM_THREADS=1 " + ran.format(1200)}, "output": f"exit=124\n{log}"},
        {
            "tool": "Bash",
            "args": {"command": "sed -i 's/n_jobs: 8/n_jobs: 16/' rf.yaml && " + ran.format(1500)},
            "output": f"exit=124\n{log}",
        },
    ]
    window = window_of(turns)
    assert (
        [f.kind for f in window] == ["run"] * 3 and all(f.hang for f in window) and len({f.step for f in window}) == 1
    )
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "restart_loop"
    assert "hangs" in check_claims(verdict, turns)


def test_the_same_benchmark_after_each_bisect_step_runs_other_code_and_is_no_repeat():
    """``git bisect good`` checks out another revision: the benchmark run after it, whose lines differ only in their
    numbers, runs other code and is no repeat of the one before. The same runs with nothing checked out between are."""
    bench = "p50: {} ms\np95: {} ms\nerrors: 0"

    def run(p50: int, p95: int) -> dict:
        return {
            "tool": "Bash",
            "args": {"command": "./scripts/bench.sh"},
            "output": bench.format(p50, p95),
            "exit_code": 0,
        }

    def step(verdict: str, left: int) -> dict:
        said = f"Bisecting: {left} revisions left to test after this\n[{left:040x}] search: step {left}"
        return {"tool": "Bash", "args": {"command": f"git bisect {verdict}"}, "output": said, "exit_code": 0}

    bisect = [run(41, 80), step("good", 15), run(198, 402), step("bad", 7), run(40, 81), step("good", 3)]
    bisect += [run(43, 79), step("good", 1), run(205, 398)]
    assert all(f.checkout for f in window_of(bisect)[1::2])
    assert play(bisect)[0].fired_at is None
    again = [run(41, 80), run(42, 81), run(40, 79), run(43, 80), run(41, 82)]
    verdict, steps = play(again)
    assert verdict.fired_at is not None and steps[0][2][0].kind in ("equivalent_outcomes", "identical_calls")
    assert shellwork.checks_out("git checkout -q v2.15.2 && ./scripts/bench.sh")
    assert not shellwork.checks_out("git checkout -- src/app.py") and not shellwork.checks_out("git checkout -b feat/x")


def test_failures_that_alternate_across_bisect_steps_are_no_error_cycle():
    """A bisect runs the same test on each revision it checks out: failing, then an import error on a revision that
    cannot run, then failing again is three revisions, no cycle of one attempt's errors. Without the checkouts, the
    same test failing A, B, A under varied arguments is one."""
    test = "python -m pytest tests/test_export.py::test_quoting -q {}"
    failing = "E   AssertionError: assert 'a\\nb' == '\"a\\nb\"'\nFAILED tests/test_export.py::test_quoting"
    broken = "ImportError while loading conftest 'tests/conftest.py'.\nE   ImportError: cannot import name 'read_ipc'"

    def run(flags: str, output: str) -> dict:
        return {"tool": "Bash", "args": {"command": test.format(flags)}, "output": output, "exit_code": 1}

    def step(verdict: str, left: int) -> dict:
        said = f"Bisecting: {left} revisions left to test after this\n[{left:040x}] step {left}"
        return {"tool": "Bash", "args": {"command": f"git bisect {verdict}"}, "output": said, "exit_code": 0}

    bisect = [run("-x", failing), step("bad", 11), run("--tb=line", broken), step("skip", 11), run("--lf", failing)]
    assert play(bisect)[0].fired_at is None
    varied = [run("-x", failing), run("-p no:cacheprovider", broken), run("--tb=short", failing)]
    verdict, steps = play(varied)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "error_cycle"


@pytest.mark.parametrize(
    ("output", "score"),
    [
        ("score: 0.82", 0.82),
        ("Final accuracy: 0.93.", 0.93),
        ("reward: -1.5", -1.5),
        ("accuracy = 93.5 / 100", None),  # a fraction is no score, nor is its numerator's first digits
        ("score: 35/50", None),
        ("score: " + "9" * 400, None),
    ],
)
def test_a_score_is_read_whole(output, score):
    assert outcomes.score(output, failed=False) == score
