"""Whether a command failed, read from what it printed when no exit code comes (Codex's hooks send none): a failure
in each toolchain's own words, and a passing run of each, its warnings and notices included, read as passed."""

from __future__ import annotations

import pytest

from strict_loop.monitor import printed

FAILING = {
    "cargo build": (
        "   Compiling cal v0.1.0 (/home/u/cal)\n"
        "error[E0308]: mismatched types\n"
        " --> src/main.rs:3:18\n"
        "  |\n"
        '3 |     let x: u32 = "a";\n'
        "  |            ---   ^^^ expected `u32`, found `&str`\n"
        "\n"
        "For more information about this error, try `rustc --explain E0308`.\n"
        'error: could not compile `cal` (bin "cal") due to 1 previous error'
    ),
    "go build ./...": ("# example.com/cal/parse\nparse/parse.go:22:9: undefined: time.ParseInLocatio"),
    "swift build": (
        "Building for debugging...\n"
        "/src/Cal/main.swift:3:5: error: cannot find 'foo' in scope\n"
        "    foo()\n"
        "    ^~~\n"
        "error: fatalError"
    ),
    "npm run build": (
        "> web@1.0.0 build\n"
        "> next build\n"
        "\n"
        "   ▲ Next.js 14.2.3\n"
        "\n"
        "Failed to compile.\n"
        "\n"
        "./src/app/page.tsx:12:7\n"
        "Type error: Property 'title' does not exist on type 'Props'.\n"
        "\n"
        "  10 | export default function Page({ post }: Props) {\n"
        "> 12 |   post.title\n"
        "     |       ^\n"
        "\n"
        "npm error Lifecycle script `build` failed with error:\n"
        "npm error code 1\n"
        "npm error path /app\n"
        "npm error command failed\n"
        "npm error command sh -c next build"
    ),
    "pip install -r requirements.txt": (
        "ERROR: Could not find a version that satisfies the requirement torch==2.9.9 (from ver"
        "sions: 2.2.0, 2.2.1)\n"
        "ERROR: No matching distribution found for torch==2.9.9"
    ),
    "docker build -t app .": (
        "#7 [3/5] RUN npm ci\n"
        "#7 1.234 npm error code EUSAGE\n"
        "#7 1.240 npm error `npm ci` can only install packages when your package.json and pack"
        "age-lock.json are in sync.\n"
        '#7 ERROR: process "/bin/sh -c npm ci" did not complete successfully: exit code: 1\n'
        "------\n"
        " > [3/5] RUN npm ci:\n"
        "------\n"
        "Dockerfile:5\n"
        "--------------------\n"
        "   5 | >>> RUN npm ci\n"
        "--------------------\n"
        'ERROR: failed to solve: process "/bin/sh -c npm ci" did not complete successfully: ex'
        "it code: 1"
    ),
    "terraform apply -auto-approve": (
        "aws_s3_bucket.logs: Creating...\n"
        "╷\n"
        "│ Error: creating S3 Bucket (acme-logs): BucketAlreadyExists\n"
        "│ \n"
        "│   with aws_s3_bucket.logs,\n"
        '│   on main.tf line 12, in resource "aws_s3_bucket" "logs":\n'
        '│   12: resource "aws_s3_bucket" "logs" {\n'
        "│ \n"
        "╵"
    ),
    "kubectl apply -f k8s/": (
        "deployment.apps/api configured\n"
        'The Service "api" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided por'
        "t is not in the valid range. The range of valid ports is 30000-32767"
    ),
    "git push": (
        "To github.com:acme/app.git\n"
        " ! [rejected]        main -> main (fetch first)\n"
        "error: failed to push some refs to 'github.com:acme/app.git'\n"
        "hint: Updates were rejected because the remote contains work that you do\n"
        "hint: not have locally."
    ),
    "python manage.py migrate": (
        "Operations to perform:\n"
        "  Apply all migrations: admin, auth, shop\n"
        "Running migrations:\n"
        "  Applying shop.0007_order_archived_at...Traceback (most recent call last):\n"
        '  File "/app/manage.py", line 22, in <module>\n'
        "    main()\n"
        'django.db.utils.ProgrammingError: column "archived_at" of relation "shop_order" alrea'
        "dy exists"
    ),
    "make": (
        "gcc -O2 -Wall -c src/main.c -o build/main.o\n"
        "src/main.c:12:9: error: 'x' undeclared (first use in this function)\n"
        "   12 |     return x;\n"
        "      |            ^\n"
        "make: *** [Makefile:8: build/main.o] Error 1"
    ),
    "node server.js": (
        "node:internal/modules/cjs/loader:1148\n"
        "  throw err;\n"
        "  ^\n"
        "\n"
        "Error: Cannot find module 'express'\n"
        "Require stack:\n"
        "- /app/server.js\n"
        "    at Module._resolveFilename (node:internal/modules/cjs/loader:1145:15) {\n"
        "  code: 'MODULE_NOT_FOUND',\n"
        "  requireStack: [ '/app/server.js' ]\n"
        "}\n"
        "\n"
        "Node.js v20.12.2"
    ),
    "python app.py": (
        "Traceback (most recent call last):\n"
        '  File "/app/app.py", line 3, in <module>\n'
        "    import flask\n"
        "ModuleNotFoundError: No module named 'flask'"
    ),
    "curl -sf localhost:8000/health": (
        "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Couldn't connect to server"
    ),
    "psql $DATABASE_URL -c 'select 1'": (
        'psql: error: connection to server at "localhost" (127.0.0.1), port 5432 failed: FATAL'
        ':  password authentication failed for user "app"'
    ),
    "npx tsc --noEmit": ("src/api.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'."),
    "ruff check .": (
        "src/app.py:3:8: F401 [*] `os` imported but unused\nFound 1 error.\n[*] 1 fixable with the `--fix` option."
    ),
    "npx eslint src": (
        "/app/src/api.ts\n"
        "  14:7  error  'x' is assigned a value but never used  no-unused-vars\n"
        "\n"
        "✖ 1 problem (1 error, 0 warnings)"
    ),
    "mvn -q compile": (
        "[ERROR] COMPILATION ERROR : \n"
        "[ERROR] /app/src/main/java/com/acme/App.java:[12,9] cannot find symbol\n"
        "  symbol:   variable foo\n"
        "  location: class com.acme.App\n"
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:"
        "compile (default-compile) on project app: Compilation failure"
    ),
    "dotnet build": (
        "/src/App/Program.cs(12,9): error CS0103: The name 'foo' does not exist in the current"
        " context [/src/App/App.csproj]\n"
        "\n"
        "Build FAILED.\n"
        "\n"
        "/src/App/Program.cs(12,9): error CS0103: The name 'foo' does not exist in the current"
        " context [/src/App/App.csproj]\n"
        "    0 Warning(s)\n"
        "    1 Error(s)\n"
        "\n"
        "Time Elapsed 00:00:01.23"
    ),
    "composer install": (
        "Your requirements could not be resolved to an installable set of packages.\n"
        "\n"
        "  Problem 1\n"
        "    - Root composer.json requires laravel/framework ^11.0 -> satisfiable by laravel/f"
        "ramework[v11.0.0].\n"
        "    - laravel/framework v11.0.0 requires php ^8.2 -> your php version (8.1.2) does no"
        "t satisfy that requirement."
    ),
    "mix test": (
        "Compiling 1 file (.ex)\n"
        "\n"
        "  1) test rounds half up (InvoiceTest)\n"
        "     test/invoice_test.exs:5\n"
        "     Assertion with == failed\n"
        "     code:  assert Invoice.total([1.005]) == 1.01\n"
        "     left:  1.0\n"
        "     right: 1.01\n"
        "     stacktrace:\n"
        "       test/invoice_test.exs:6: (test)\n"
        "\n"
        "\n"
        "Finished in 0.02 seconds (0.00s async, 0.02s sync)\n"
        "3 tests, 1 failure"
    ),
    "flutter test": "00:02 +2 -1: Some tests failed.",
    "uv sync": (
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because torch==2.9.9 was not found in the package registry and your project dep"
        "ends on torch==2.9.9, we can conclude that your project's requirements are unsatisfiable."
    ),
    "yarn install": (
        'error An unexpected error occurred: "https://registry.yarnpkg.com/left-padd: Not found".\n'
        'info If you think this is a bug, please open an issue with the stack trace at "/app/y'
        'arn-error.log".\n'
        "info Visit https://yarnpkg.com/en/docs/cli/install for documentation about this command."
    ),
    "bundle exec rails db:migrate": (
        "== 20240501100000 AddArchivedAtToOrders: migrating ============================\n"
        "-- add_column(:orders, :archived_at, :datetime)\n"
        "bin/rails aborted!\n"
        "StandardError: An error has occurred, this and all later migrations canceled: (Standa"
        "rdError)\n"
        "\n"
        'PG::DuplicateColumn: ERROR:  column "archived_at" of relation "orders" already exists\n'
        "\n"
        "Tasks: TOP => db:migrate\n"
        "(See full trace by running task with --trace)"
    ),
}
PASSING = {
    "pytest -q": (
        "....\n"
        "=============================== warnings summary ===============================\n"
        "tests/test_a.py::test_x\n"
        "  /usr/lib/python3/site-packages/dateutil/tz/tz.py:37: DeprecationWarning: datetime.d"
        "atetime.utcfromtimestamp() is deprecated\n"
        "\n"
        "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html\n"
        "4 passed, 1 warning in 1.21s"
    ),
    "go test ./...": (
        "ok  \texample.com/cal/parse\t0.012s\n"
        "ok  \texample.com/cal/store\t(cached)\n"
        "?   \texample.com/cal/cmd\t[no test files]"
    ),
    "cargo test": (
        "running 3 tests\n"
        "test tests::a ... ok\n"
        "test tests::b ... ok\n"
        "test tests::c ... ok\n"
        "\n"
        "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished "
        "in 0.00s\n"
        "\n"
        "   Doc-tests cal\n"
        "\n"
        "running 0 tests\n"
        "\n"
        "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"
    ),
    "bundle exec rspec": (
        "...\n\nFinished in 0.01234 seconds (files took 0.2 seconds to load)\n3 examples, 0 failures"
    ),
    "npx mocha": ("  parser\n    ✔ parses ints\n    ✔ parses dates\n\n\n  2 passing (9ms)"),
    "npx vitest run": (
        " ✓ src/parser.test.ts (2 tests) 5ms\n"
        "\n"
        " Test Files  1 passed (1)\n"
        "      Tests  2 passed (2)\n"
        "   Start at  09:12:22\n"
        "   Duration  312ms"
    ),
    "npx jest": (
        " PASS  src/api.test.ts\n"
        "  api\n"
        "    ✓ returns 404 for unknown ids (12 ms)\n"
        "\n"
        "Test Suites: 1 passed, 1 total\n"
        "Tests:       4 passed, 4 total\n"
        "Snapshots:   0 total\n"
        "Time:        1.2 s\n"
        "Ran all test suites."
    ),
    "vendor/bin/phpunit": (
        "PHPUnit 10.5.9 by Sebastian Bergmann and contributors.\n"
        "\n"
        "...                                                                 3 / 3 (100%)\n"
        "\n"
        "Time: 00:00.112, Memory: 8.00 MB\n"
        "\n"
        "OK (3 tests, 3 assertions)"
    ),
    "dotnet test": (
        "Passed!  - Failed:     0, Passed:     3, Skipped:     0, Total:     3, Duration: 31 m"
        "s - Billing.Tests.dll (net8.0)"
    ),
    "./gradlew test": ("> Task :test\n\nBUILD SUCCESSFUL in 4s\n4 actionable tasks: 2 executed, 2 up-to-date"),
    "mvn -q test": (
        "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 s -- in c"
        "om.acme.InvoiceTest\n"
        "[INFO] \n"
        "[INFO] Results:\n"
        "[INFO] \n"
        "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0\n"
        "[INFO] \n"
        "[INFO] BUILD SUCCESS"
    ),
    "npx tsc --noEmit": "",
    "mypy src": "Success: no issues found in 12 source files",
    "npx eslint src": "",
    "ruff check .": "All checks passed!",
    "npm run build": (
        "> web@1.0.0 build\n"
        "> next build\n"
        "\n"
        "   ▲ Next.js 14.2.3\n"
        "\n"
        "   Creating an optimized production build ...\n"
        " ✓ Compiled successfully\n"
        "   Linting and checking validity of types ...\n"
        " ✓ Generating static pages (8/8)\n"
        "\n"
        "Route (app)                              Size     First Load JS\n"
        "┌ ○ /                                    5.2 kB         92.1 kB\n"
        "└ ○ /_not-found                          871 B          87.8 kB\n"
        "+ First Load JS shared by all            86.9 kB\n"
        "\n"
        "○  (Static)  prerendered as static content"
    ),
    "pip install -r requirements.txt": (
        "Requirement already satisfied: httpx==0.27.0 in ./.venv/lib/python3.11/site-packages "
        "(from -r requirements.txt (line 1))\n"
        "WARNING: You are using pip version 23.2.1; however, version 24.0 is available.\n"
        "You should consider upgrading via the '/app/.venv/bin/python -m pip install --upgrade"
        " pip' command."
    ),
    "npm install": (
        "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.\n"
        "npm WARN deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported\n"
        "\n"
        "added 312 packages, and audited 313 packages in 9s\n"
        "\n"
        "52 packages are looking for funding\n"
        "  run `npm fund` for details\n"
        "\n"
        "3 moderate severity vulnerabilities\n"
        "\n"
        "To address all issues, run:\n"
        "  npm audit fix\n"
        "\n"
        "Run `npm audit` for details."
    ),
    "docker compose up -d": (
        "[+] Running 3/3\n"
        " ✔ Network app_default  Created  0.1s\n"
        " ✔ Container app-db-1   Started  0.4s\n"
        " ✔ Container app-api-1  Started  0.6s"
    ),
    "make": (
        "gcc -O2 -Wall -c src/main.c -o build/main.o\n"
        "src/main.c: In function 'main':\n"
        "src/main.c:12:9: warning: unused variable 'x' [-Wunused-variable]\n"
        "   12 |     int x;\n"
        "      |         ^\n"
        "gcc -o build/app build/main.o"
    ),
    "python manage.py migrate": (
        "Operations to perform:\n"
        "  Apply all migrations: admin, auth, shop\n"
        "Running migrations:\n"
        "  Applying shop.0007_order_archived_at... OK"
    ),
    "terraform plan": "No changes. Your infrastructure matches the configuration.",
    "kubectl apply -f k8s/": ("deployment.apps/api configured\nservice/api unchanged"),
    "git push": ("To github.com:acme/app.git\n   3e1a9c2..7f0b1d4  main -> main"),
    "cargo build": (
        "   Compiling cal v0.1.0 (/home/u/cal)\n"
        "warning: unused variable: `x`\n"
        " --> src/main.rs:3:9\n"
        "  |\n"
        "3 |     let x = 1;\n"
        "  |         ^ help: if this is intentional, prefix it with an underscore: `_x`\n"
        "  |\n"
        "  = note: `#[warn(unused_variables)]` on by default\n"
        "\n"
        'warning: `cal` (bin "cal") generated 1 warning\n'
        "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.52s"
    ),
    "go build ./...": "",
    "swift build": ("Building for debugging...\n[3/3] Compiling Cal main.swift\nBuild complete! (1.24s)"),
    "npx prisma migrate deploy": (
        "Prisma schema loaded from prisma/schema.prisma\n"
        'Datasource "db": PostgreSQL database "app", schema "public" at "localhost:5432"\n'
        "\n"
        "3 migrations found in prisma/migrations\n"
        "\n"
        "No pending migrations to apply."
    ),
    "curl -s localhost:8000/health": '{"status":"ok","errors":0,"db":"up"}',
    "pytest -q tests/test_errors.py": ("..........\n10 passed in 0.31s"),
}


@pytest.mark.parametrize("command", sorted(FAILING))
def test_a_failing_run_is_read_as_failed_from_what_it_printed(command):
    assert printed.reads_failed(command, FAILING[command])


@pytest.mark.parametrize("command", sorted(PASSING))
def test_a_passing_run_is_read_as_passed_whatever_it_warned(command):
    assert not printed.reads_failed(command, PASSING[command])
