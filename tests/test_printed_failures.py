"""Whether a command failed, read from what it printed when no exit code comes (Codex's hooks send none): a failure
in each toolchain's own words, and a passing run of each, its warnings and notices included, read as passed."""

from __future__ import annotations

import pytest
from spiral_claims import play, window_of

from strict_loop.model.turns import Turn
from strict_loop.monitor import outcomes, printed

FAILING = {
    # prisma's schema engine: its error, then a span trace of indented frames (`   0: module::fn`, `at path:line`)
    "npx prisma migrate dev --name add_archived_at": (
        'Datasource "db": PostgreSQL database "kite_dev", schema "public" at "localhost:5432"\n\nError: P3006\n\n'
        "Migration `20240109143201_init` failed to apply cleanly to the shadow database. \nError:\n"
        'db error: ERROR: type "citext" does not exist\n'
        "   0: sql_schema_connector::validate_migrations\n           with namespaces=None\n"
        "             at schema-engine/connectors/sql-schema-connector/src/lib.rs:325\n"
        "   1: schema_core::state::DevDiagnostic\n             at schema-engine/core/src/state.rs:276"
    ),
    # alembic's CommandError and ninja's failed step: a last line that says FAILED, where no exit code comes
    "alembic -c ./alembic.ini upgrade head": (
        "INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
        "ERROR [alembic.util.messaging] Can't locate revision identified by 'c41f9e2a7d10'\n"
        "  FAILED: Can't locate revision identified by 'c41f9e2a7d10'"
    ),
    "ninja -C build": "[3/10] Building CXX object src/a.o\nFAILED: src/a.o\n/usr/bin/c++ -c ../src/a.cc -o src/a.o",
    "set -o pipefail; xcodebuild test -scheme Shop -destination 'id=3B7A1C52' 2>&1 | tail -n 9": (  # its banner last
        "Test session results, code coverage, and logs:\n"
        "\t/Users/dana/Library/Developer/Xcode/DerivedData/Shop-gqbvxkzjhwlr/Logs/Test/Test-Shop.xcresult\n\n"
        "Testing failed:\n\tShopUITests-Runner (48290) encountered an error (The test runner failed to initialize for "
        "UI testing. (Underlying Error: Timed out while enabling automation mode.))\n\n** TEST FAILED **\n"
    ),
    "xcodebuild -scheme Shop -configuration Release archive | tail -3": (
        "The following build commands failed:\n\tCompileSwift normal arm64 (in target 'Shop' from project 'Shop')\n"
        "(1 failure)\n** ARCHIVE FAILED **"
    ),
    "dotnet ef migrations add AddDueDate --project Billing.Infrastructure": (  # its last line: what it could not do
        "Build started...\nBuild succeeded.\nAn error occurred while accessing the Microsoft.Extensions.Hosting "
        "services. Continuing without the application service provider. Error: Value cannot be null. (Parameter "
        "'connectionString')\nUnable to create an object of type 'BillingDbContext'. For the different patterns "
        "supported at design time, see https://go.microsoft.com/fwlink/?linkid=851728"
    ),
    "sbt -batch update": (  # Scala's build tool: its error level on every line of the failure, its summary last
        "[info] Updating ledger_3\n[info] Resolved ledger_3 dependencies\n"
        "[error] stack trace is suppressed; run last update for the full output\n"
        "[error] (update) sbt.librarymanagement.ResolveException: Error downloading org.acme:conf-generic_3:0.17.6\n"
        "[error]   not found: https://repo1.maven.org/maven2/org/acme/conf-generic_3/0.17.6/conf-generic_3-0.17.6.pom\n"
        "[error] Total time: 4 s, completed Jun 14, 2024, 9:41:22 AM"
    ),
    "cd worker && OPENSSL_DIR=/usr cargo build --release 2>&1 | tail -6": (  # a build script's panic, the end cut off
        "  --- stderr\n"
        "  thread 'main' panicked at /root/.cargo/registry/src/openssl-sys-0.9.102/build/main.rs:195:9:\n"
        "  OpenSSL include directory does not exist: /usr/include/openssl\n\n"
        "warning: build failed, waiting for other jobs to finish..."
    ),
    "cmake --build build -j8 2>&1 | tail -6": (
        "[ 92%] Linking CXX executable ring_buffer_test\n"
        "/usr/bin/ld: ring_buffer_test.cpp:(.text+0x1a4f): undefined reference to `dsp::RingBuffer<float>::resize'\n"
        "collect2: error: ld returned 1 exit status\n"
        "gmake[2]: *** [tests/CMakeFiles/ring_buffer_test.dir/build.make:98: tests/ring_buffer_test] Error 1\n"
        "gmake[1]: *** [CMakeFiles/Makefile2:1123: tests/CMakeFiles/ring_buffer_test.dir/all] Error 2\n"
        "gmake: *** [Makefile:146: all] Error 2"
    ),
    "ninja -C out": (
        "[3/5] Linking CXX executable app\n"
        "FAILED: app\n"
        ": && /usr/bin/c++ main.o -o app && :\n"
        "ld.lld: error: undefined symbol: net::Client::connect()\n"
        "clang++: error: linker command failed with exit code 1 (use -v to see invocation)\n"
        "ninja: build stopped: subcommand failed."
    ),
    "npx next build": (
        "   ▲ Next.js 14.1.0\n"
        "   - Environments: .env.local\n"
        "\n"
        "   Creating an optimized production build ...\n"
        " ✓ Compiled successfully\n"
        "   Linting and checking validity of types  ..Failed to compile.\n"
        "\n"
        "./app/dashboard/page.tsx:12:7\n"
        "Type error: Type 'string | undefined' is not assignable to type 'string'.\n"
        "  Type 'undefined' is not assignable to type 'string'.\n"
        "\n"
        "  10 | export default async function Dashboard() {\n"
        "  11 |   const session = await getSession();\n"
        "> 12 |   const userId: string = session?.user.id;\n"
        "     |       ^\n"
        "  13 |   const stats = await getStats(userId);\n"
        "  14 |   return <Stats data={stats} />;\n"
        "  15 | }\n"
    ),
    "bin/rails db:migrate 2>&1 | tail -6": (  # PostgreSQL's DETAIL after its ERROR, Rake's trailer after both
        "bin/rails aborted!\n"
        "StandardError: An error has occurred, all later migrations canceled: (StandardError)\n\n"
        'PG::UniqueViolation: ERROR:  could not create unique index "index_users_on_lower_email"\n'
        "DETAIL:  Key (lower(email::text))=(m.okafor@example.com) is duplicated.\n"
        "Tasks: TOP => db:migrate\n"
        "(See full trace by running task with --trace)"
    ),
    "psql -c 'ALTER TABLE orders ADD CONSTRAINT orders_ref_fk FOREIGN KEY (ref) REFERENCES refs(id)'": (
        'ERROR:  insert or update on table "orders" violates foreign key constraint "orders_ref_fk"\n'
        'DETAIL:  Key (ref)=(42) is not present in table "refs".'
    ),
    "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release": (
        "-- The C compiler identification is GNU 12.2.0\n"
        "-- The CXX compiler identification is GNU 12.2.0\n"
        "-- Detecting C compiler ABI info\n"
        "-- Detecting C compiler ABI info - done\n"
        "-- Check for working C compiler: /usr/bin/cc - skipped\n"
        "-- Detecting CXX compiler ABI info\n"
        "-- Detecting CXX compiler ABI info - done\n"
        "-- Check for working CXX compiler: /usr/bin/c++ - skipped\n"
        "CMake Error at CMakeLists.txt:14 (find_package):\n"
        '  By not providing "Findfmt.cmake" in CMAKE_MODULE_PATH this project has\n'
        '  asked CMake to find a package configuration file provided by "fmt", but\n'
        "  CMake did not find one.\n"
        "\n"
        '  Could not find a package configuration file provided by "fmt" with any of\n'
        "  the following names:\n"
        "\n"
        "    fmtConfig.cmake\n"
        "    fmt-config.cmake\n"
        "\n"
        '  Add the installation prefix of "fmt" to CMAKE_PREFIX_PATH or set "fmt_DIR"\n'
        '  to a directory containing one of the above files.  If "fmt" provides a\n'
        "  separate development package or SDK, be sure it has been installed.\n"
        "\n"
        "\n"
        "-- Configuring incomplete, errors occurred!\n"
    ),
    "kotlinc src/Main.kt -include-runtime -d app.jar": (
        "src/Main.kt:5:13: error: unresolved reference: printn\n"
        '    val s = printn("hello")\n'
        "            ^\n"
        "src/Main.kt:9:5: error: type mismatch: inferred type is String but Int was expected\n"
        '    "42"\n'
        "    ^\n"
    ),
    "npx eslint . --max-warnings 0": (
        "\n"
        "/home/dev/web/src/errors/reportError.ts\n"
        "  14:3  warning  Unexpected console statement  no-console\n"
        "\n"
        "/home/dev/web/src/hooks/useFetch.ts\n"
        "  22:6  warning  React Hook useEffect has a missing dependency: 'onError'. Either inc"
        "lude it or remove the dependency array  react-hooks/exhaustive-deps\n"
        "\n"
        "✖ 2 problems (0 errors, 2 warnings)\n"
        "\n"
        "ESLint found too many warnings (maximum: 0).\n"
    ),
    "pre-commit run --all-files": (
        "trim trailing whitespace.................................................Passed\n"
        "fix end of files.........................................................Passed\n"
        "check yaml...............................................................Passed\n"
        "check for added large files..............................................Passed\n"
        "ruff.....................................................................Failed\n"
        "- hook id: ruff\n"
        "- exit code: 1\n"
        "\n"
        "src/app/errors.py:7:1: F401 [*] `typing.Optional` imported but unused\n"
        "Found 1 error.\n"
        "[*] 1 fixable with the `--fix` option.\n"
        "\n"
        "black....................................................................Passed\n"
    ),
    "composer require laravel/framework:^12.0": (
        "./composer.json has been updated\n"
        "Running composer update laravel/framework\n"
        "Loading composer repositories with package information\n"
        "Updating dependencies\n"
        "Your requirements could not be resolved to an installable set of packages.\n"
        "\n"
        "  Problem 1\n"
        "    - Root composer.json requires laravel/framework ^12.0, found laravel/framework[v1"
        "0.0.0, ..., v10.48.2, v11.0.0, ..., v11.x-dev] but it does not match the constraint.\n"
        "\n"
        "\n"
        "Installation failed, reverting ./composer.json and ./composer.lock to their original "
        "content.\n"
    ),
    "ansible-playbook -i inventory/prod site.yml": (
        "\n"
        "PLAY [webservers] **************************************************************\n"
        "\n"
        "TASK [Gathering Facts] *********************************************************\n"
        "ok: [web1]\n"
        "ok: [web2]\n"
        "\n"
        "TASK [nginx : install nginx] ***************************************************\n"
        'fatal: [web1]: FAILED! => {"changed": false, "failures": ["No package ngnix available'
        '."], "msg": "Failed to install some of the specified packages", "rc": 1, "results": []}\n'
        "ok: [web2]\n"
        "\n"
        "TASK [nginx : template config] *************************************************\n"
        "changed: [web2]\n"
        "\n"
        "PLAY RECAP *********************************************************************\n"
        "web1                       : ok=1    changed=0    unreachable=0    failed=1    skippe"
        "d=0    rescued=0    ignored=0   \n"
        "web2                       : ok=3    changed=1    unreachable=0    failed=0    skippe"
        "d=0    rescued=0    ignored=0   \n"
        "\n"
    ),
    "git rebase origin/main": (
        "Auto-merging src/app/retry.py\n"
        "CONFLICT (content): Merge conflict in src/app/retry.py\n"
        "error: could not apply 9c8d7e6... Fix retry logic on failed requests\n"
        "hint: Resolve all conflicts manually, mark them as resolved with\n"
        'hint: "git add/rm <conflicting_files>", then run "git rebase --continue".\n'
        'hint: You can instead skip this commit: run "git rebase --skip".\n'
        'hint: To abort and get back to the state before "git rebase", run "git rebase --abort".\n'
        "Could not apply 9c8d7e6... Fix retry logic on failed requests\n"
    ),
    "git commit -am 'fix failing test'": (
        "On branch fix/error-handling\n"
        "Your branch is up to date with 'origin/fix/error-handling'.\n"
        "\n"
        "nothing to commit, working tree clean\n"
    ),
    "node index.js": (
        "node:events:497\n"
        "      throw er; // Unhandled 'error' event\n"
        "      ^\n"
        "\n"
        "Error: listen EADDRINUSE: address already in use :::3000\n"
        "    at Server.setupListenHandle [as _listen2] (node:net:1872:16)\n"
        "    at listenInCluster (node:net:1920:12)\n"
        "    at Server.listen (node:net:2008:7)\n"
        "    at Function.listen (/home/dev/api/node_modules/express/lib/application.js:635:24)\n"
        "    at Object.<anonymous> (/home/dev/api/server.js:41:5)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1376:14)\n"
        "Emitted 'error' event on Server instance at:\n"
        "    at emitErrorNT (node:net:1899:8)\n"
        "    at process.processTicksAndRejections (node:internal/process/task_queues:82:21) {\n"
        "  code: 'EADDRINUSE',\n"
        "  errno: -98,\n"
        "  syscall: 'listen',\n"
        "  address: '::',\n"
        "  port: 3000\n"
        "}\n"
        "\n"
        "Node.js v20.11.0\n"
    ),
    "bin/rails server": (
        "=> Booting Puma\n"
        "=> Rails 7.1.3 application starting in development \n"
        "=> Run `bin/rails server --help` for more startup options\n"
        "Exiting\n"
        "/home/dev/.gem/ruby/3.2.0/gems/puma-6.4.2/lib/puma/binder.rb:334:in `initialize': Add"
        'ress already in use - bind(2) for "127.0.0.1" port 3000 (Errno::EADDRINUSE)\n'
        "\tfrom /home/dev/.gem/ruby/3.2.0/gems/puma-6.4.2/lib/puma/binder.rb:334:in `new'\n"
        "\tfrom /home/dev/.gem/ruby/3.2.0/gems/puma-6.4.2/lib/puma/binder.rb:334:in `add_tcp_li"
        "stener'\n"
        "\tfrom /home/dev/.gem/ruby/3.2.0/gems/puma-6.4.2/lib/puma/binder.rb:234:in `block in parse'\n"
    ),
    "./mvnw spring-boot:run": (
        "  .   ____          _            __ _ _\n"
        " /\\\\ / ___'_ __ _ _(_)_ __  __ _ \\ \\ \\ \\\n"
        "( ( )\\___ | '_ | '_| | '_ \\/ _` | \\ \\ \\ \\\n"
        " \\\\/  ___)| |_)| | | | | || (_| |  ) ) ) )\n"
        "  '  |____| .__|_| |_|_| |_\\__, | / / / /\n"
        " =========|_|==============|___/=/_/_/_/\n"
        " :: Spring Boot ::                (v3.2.2)\n"
        "\n"
        "2024-03-12T11:15:02.114Z  INFO 48213 --- [           main] com.acme.DemoApplication  "
        "               : Starting DemoApplication using Java 17.0.9 with PID 48213\n"
        "2024-03-12T11:15:03.701Z  INFO 48213 --- [           main] o.s.b.w.embedded.tomcat.To"
        "mcatWebServer  : Tomcat initialized with port 8080 (http)\n"
        "2024-03-12T11:15:04.388Z  WARN 48213 --- [           main] ConfigServletWebServerAppl"
        "icationContext : Exception encountered during context initialization - cancelling ref"
        "resh attempt: org.springframework.context.ApplicationContextException: Failed to star"
        "t bean 'webServerStartStop'\n"
        "2024-03-12T11:15:04.412Z ERROR 48213 --- [           main] o.s.b.d.LoggingFailureAnal"
        "ysisReporter   : \n"
        "\n"
        "***************************\n"
        "APPLICATION FAILED TO START\n"
        "***************************\n"
        "\n"
        "Description:\n"
        "\n"
        "Web server failed to start. Port 8080 was already in use.\n"
        "\n"
        "Action:\n"
        "\n"
        "Identify and stop the process that's listening on port 8080 or configure this applica"
        "tion to listen on another port.\n"
        "\n"
        "[INFO] ------------------------------------------------------------------------\n"
        "[INFO] BUILD FAILURE\n"
        "[INFO] ------------------------------------------------------------------------\n"
    ),
    "python scripts/backfill.py --since 2024-02-01": (
        "2024-03-12 11:25:01,102 INFO  backfill: starting, 20871 records to process\n"
        "2024-03-12 11:25:40,331 ERROR backfill: record 88121: KeyError 'customer_id'\n"
        "2024-03-12 11:25:40,333 ERROR backfill: record 88154: KeyError 'customer_id'\n"
        "2024-03-12 11:26:55,016 INFO  backfill: done. processed=20854 skipped=0 failed=17\n"
        "2024-03-12 11:26:55,017 ERROR backfill: 17 records failed; see backfill-errors.csv. E"
        "xiting with status 1\n"
    ),
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
    "xcodebuild test -scheme Shop -destination 'platform=iOS Simulator,name=iPhone 15' | tail -4": (
        "Test Suite 'All tests' passed at 2024-03-12 03:41:05.590.\n"
        "\t Executed 14 tests, with 0 failures (0 unexpected) in 21.402 (21.417) seconds\n\n** TEST SUCCEEDED **"
    ),
    "cmake --build build -j8": (
        "[ 50%] Building CXX object src/CMakeFiles/dsp.dir/ring_buffer.cpp.o\n"
        "[ 75%] Linking CXX static library libdsp.a\n[100%] Built target dsp"
    ),
    "make -j4": "make: Nothing to be done for 'all'.",
    "node scripts/check-env.js": "No error: every variable is set",
    "make clean all": (
        "rm -f build/*.o build/tool\n"
        "rm: cannot remove 'build/*.o': No such file or directory\n"
        "make: [Makefile:31: clean] Error 1 (ignored)\n"
        "mkdir -p build\n"
        "cc -Wall -O2 -Iinclude -c src/main.c -o build/main.o\n"
        "cc -Wall -O2 -Iinclude -c src/buffer.c -o build/buffer.o\n"
        "cc -o build/tool build/main.o build/buffer.o -lm\n"
    ),
    "bundle exec rubocop -a": (
        "Inspecting 42 files\n"
        ".......C....C......C......................\n"
        "\n"
        "Offenses:\n"
        "\n"
        "app/models/user.rb:12:5: C: [Corrected] Style/StringLiterals: Prefer single-quoted st"
        "rings when you don't need string interpolation or special symbols.\n"
        '    "admin"\n'
        "    ^^^^^^^\n"
        "app/models/order.rb:7:1: C: [Corrected] Layout/EmptyLines: Extra blank line detected.\n"
        "app/services/error_notifier.rb:3:1: C: [Corrected] Style/FrozenStringLiteralComment: "
        "Missing frozen string literal comment.\n"
        "\n"
        "42 files inspected, 3 offenses detected, 3 offenses corrected\n"
    ),
    "pre-commit run --all-files": (
        "trim trailing whitespace.................................................Passed\n"
        "fix end of files.........................................................Passed\n"
        "check yaml...............................................................Passed\n"
        "check json...........................................(no files to check)Skipped\n"
        "check for merge conflicts................................................Passed\n"
        "ruff.....................................................................Passed\n"
        "black....................................................................Passed\n"
        "mypy.....................................................................Passed\n"
    ),
    "ansible-playbook -i inventory/staging deploy.yml": (
        "\n"
        "PLAY [app] *********************************************************************\n"
        "\n"
        "TASK [Gathering Facts] *********************************************************\n"
        "ok: [app1]\n"
        "\n"
        "TASK [stop old service] ********************************************************\n"
        'fatal: [app1]: FAILED! => {"changed": false, "msg": "Could not find the requested ser'
        'vice legacy-worker: host"}\n'
        "...ignoring\n"
        "\n"
        "TASK [deploy release] **********************************************************\n"
        "changed: [app1]\n"
        "\n"
        "TASK [restart api] *************************************************************\n"
        "changed: [app1]\n"
        "\n"
        "PLAY RECAP *********************************************************************\n"
        "app1                       : ok=4    changed=2    unreachable=0    failed=0    skippe"
        "d=0    rescued=0    ignored=1   \n"
        "\n"
    ),
    "uvicorn app.main:app --host 0.0.0.0 --port 8000": (
        "INFO:     Started server process [4821]\n"
        "INFO:     Waiting for application startup.\n"
        "INFO:     Application startup complete.\n"
        "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)\n"
        'INFO:     127.0.0.1:51234 - "GET /health HTTP/1.1" 200 OK\n'
        "ERROR:app.routes.items:item 99 lookup failed: not found\n"
        'INFO:     127.0.0.1:51236 - "GET /items/99 HTTP/1.1" 404 Not Found\n'
    ),
    "python scripts/backfill.py --since 2024-03-01": (
        "2024-03-12 11:20:01,102 INFO  backfill: starting, 10432 records to process\n"
        "2024-03-12 11:20:09,877 ERROR backfill: upstream timeout for batch 17 (attempt 1/3), "
        "retrying in 2s\n"
        "2024-03-12 11:20:12,004 INFO  backfill: batch 17 ok after retry\n"
        "2024-03-12 11:20:44,519 WARNING backfill: 3 records skipped (already migrated)\n"
        "2024-03-12 11:21:02,330 INFO  backfill: done. processed=10429 skipped=3 failed=0 errors=0\n"
    ),
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
    "sbt test": (
        "[warn] one deprecation (since 2.13.0); re-run with -deprecation for details\n"
        "[info] Tests: succeeded 42, failed 0, canceled 0, ignored 0, pending 0\n[info] All tests passed.\n"
        "[success] Total time: 9 s, completed Jun 14, 2024, 10:02:11 AM"
    ),
}


@pytest.mark.parametrize("command", sorted(FAILING))
def test_a_failing_run_is_read_as_failed_from_what_it_printed(command):
    assert printed.reads_failed(command, FAILING[command])


@pytest.mark.parametrize("command", sorted(PASSING))
def test_a_passing_run_is_read_as_passed_whatever_it_warned(command):
    assert not printed.reads_failed(command, PASSING[command])


def test_edits_and_builds_chained_in_one_command_each_failing_the_same_way_are_a_same_failure():
    """Codex edits and builds in one command (``sed -i ... && cmake --build``), with no exit code: each turn is the
    build's failure with an edit before it, and three with the same undefined reference fire."""
    from spiral_claims import check_claims, play

    link = FAILING["cmake --build build -j8 2>&1 | tail -6"]
    edits = [
        "sed -i 's/ring_buffer.cpp$/ring_buffer.cpp resize.cpp/' src/CMakeLists.txt",
        "perl -pi -e 's/PRIVATE gtest/PRIVATE dsp gtest/' tests/CMakeLists.txt",
        "sed -i 's/add_library(dsp STATIC/add_library(dsp SHARED/' src/CMakeLists.txt",
    ]
    build = " && cmake --build build -j8 2>&1 | tail -6"
    turns = [{"tool": "Bash", "args": {"command": edit + build}, "output": link} for edit in edits]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "same_failure"
    assert "2 edit(s)" in verdict.diagnosis and "same failure" in check_claims(verdict, turns)


@pytest.mark.parametrize(
    ("output", "count"),
    [
        ("Failed!  - Failed:     4, Passed:    30, Skipped:     0, Total:    34, Duration: 2 s", 4),
        ("Passed!  - Failed:     0, Passed:    34, Skipped:     0, Total:    34", 0),
        ("Tests run: 34, Failures: 2, Errors: 0, Skipped: 0", 2),
        ("Tests: 34, Assertions: 80, Failures: 3.", 3),
        # a retry's denominator and a log time's milliseconds before its level count nothing
        ("WARNING digest: amqp connect attempt 4/10 failed: ConnectionRefusedError(111, 'Connection refused')", None),
        ("digest-1  | 2024-04-09 08:52:03,118 ERROR pika.adapters.blocking_connection: Connection failed", None),
        ("=== 3 failed, 12 passed in 2.41s ===", 3),
        # dart and flutter test: the passed and failed counts on the last line
        ("00:06 +42 -3: /app/test/cart_test.dart: total [E]\n  Test failed.\n\n00:07 +42 -3: Some tests failed.", 3),
        ("00:07 +45 ~2 -1: Some tests failed.", 1),
        ("00:07 +45: All tests passed!", 0),
        # CTest's summary, Zephyr ztest's tally (under twister's count of failed configurations, 1 each time)
        ("64% tests passed, 4 tests failed out of 11\n\nTotal Test time (real) =   0.31 sec", 4),
        (
            "SUITE FAIL -  63.64% [frame_parser]: pass = 7, fail = 4, skip = 0, total = 11\nINFO - Total complete: "
            "1/ 1  100%  built (not run): 0, filtered: 0, failed: 1, error: 0\nINFO - 0 of 1 executed test "
            "configurations passed (0.00%), 1 failed, 0 errored",
            4,
        ),
        # `uniq -c` heading each grouped error with how many lines said it: no failing count
        (
            "     24 TypeError: Cannot read properties of undefined\n     11 Error: [vue-test-utils]: propsData",
            None,
        ),
        ("Found 3 errors in 2 files (checked 40 source files)", 3),
        # cargo's and rustc's own count, under whatever a filter kept of the errors above it
        ('error: could not compile `logslice` (bin "logslice") due to 17 previous errors', 17),
        ("error: aborting due to 1 previous error", 1),
    ],
)
def test_a_failing_count_said_after_its_word_is_read(output, count):
    """dotnet test's, surefire's and PHPUnit's summaries put the count after the word: a falling count is progress."""
    from strict_loop.monitor import outcomes

    assert outcomes.failing_count(output) == count


def _dotnet_paste(failing: list[str], note: str) -> str:
    """What a person pastes from ``dotnet test``: each failing test, then the summary with its count."""
    tests = "".join(
        f"  Failed Rota.Tests.SwapRequestTests.{name} [12 ms]\n  Error Message:\n   Assert.Equal() Failure: Values "
        "differ\nExpected: 422\nActual:   BadRequest\n"
        for name in failing
    )
    summary = (
        f"Failed!  - Failed: {len(failing):5}, Passed: {34 - len(failing):5}, Skipped: 0, Total: 34, Duration: 2 s"
    )
    return f"Starting test execution, please wait...\n{tests}\n{summary}\n\n{note}"


def test_the_person_pasting_a_failing_count_that_falls_is_progress_not_a_repeat():
    from spiral_claims import play

    names = ["Create_Self_Returns422", "Create_Role_Returns422", "Create_Past_Returns422", "Create_Twice_Returns409"]
    turns = []
    for k, failing in enumerate((names, names[:2], names[:1])):
        patch = f"src/Api.cs\n<<<<<<< SEARCH\na{k}\n=======\nb{k}\n>>>>>>> REPLACE"
        turns.append({"tool": "edit", "args": {"content": patch}, "output": "Applied edit to src/Api.cs"})
        turns.append(
            {"tool": "user_prompt", "actor": "person", "output": _dotnet_paste(failing, "the tests are right")}
        )
    assert play(turns)[0].fired_at is None


def _pre_commit(stash: str) -> str:
    """A commit pre-commit refuses: it stashes what is not staged (a new patch file each time), and rubocop fails."""
    return (
        f"[WARNING] Unstaged files detected.\n[INFO] Stashing unstaged files to /home/o/.cache/pre-commit/{stash}.\n"
        "trim trailing whitespace.................................................Passed\n"
        "rubocop..................................................................Failed\n- hook id: rubocop\n"
        "- exit code: 1\n\napp/services/export.rb:27:121: C: Layout/LineLength: Line is too long. [134/120]\n\n"
        f"1 file inspected, 1 offense detected\n[INFO] Restored changes from /home/o/.cache/pre-commit/{stash}."
    )


def test_commits_a_pre_commit_hook_refuses_the_same_way_while_its_check_passes_alone_fire():
    """The agent fixes the working copy (never staged) and runs rubocop on it, which passes, then commits again: the
    hook checks the stashed, staged version and refuses the same way each time. Cline sends no exit code."""
    from spiral_claims import play

    commit = {"tool": "execute_command", "args": {"command": 'git commit -m "Add CSV export"'}}
    lint = {"tool": "execute_command", "args": {"command": "bundle exec rubocop app/services/export.rb"}}
    lint["output"] = "Command executed.\nOutput:\nInspecting 1 file\n.\n\n1 file inspected, no offenses detected"
    turns = []
    for k in range(4):
        edit = {"tool": "replace_in_file", "args": {"path": "app/services/export.rb", "diff": f"-a{k}\n+b{k}"}}
        turns += [
            edit,
            lint,
            {**commit, "output": "Command executed.\nOutput:\n" + _pre_commit(f"patch17290014{k}2-6{k}733")},
        ]
    verdict, steps = play(turns)
    assert verdict.fired_at is not None and steps[0][2][0].kind in ("repeated_error", "same_failure")


@pytest.mark.parametrize(
    ("command", "cause"),
    [
        ("cmake --build build -j8 2>&1 | tail -6", "undefined reference to `dsp::RingBuffer<float>::resize'"),
        ("ninja -C out", "ld.lld: error: undefined symbol: net::Client::connect()"),
    ],
)
def test_a_link_failure_is_known_by_its_undefined_symbol_not_by_the_lines_wrapping_it(command, cause):
    """``collect2: ... ld returned 1 exit status``, ``gmake: *** ... Error 2``, ninja's ``FAILED:`` and stop line
    only say a step failed: the undefined symbol is what tells one link failure from the next."""
    from strict_loop.monitor import fingerprint as fp

    assert (fp.error_line(FAILING[command]) or "").endswith(cause)


def test_the_same_error_with_other_numbers_is_said_as_such_and_quoted_as_last_seen():
    """`go test` cut off by its own timeout, rerun with longer ones: the same error whose numbers moved is named with
    its last wording and "with other details", never as if each run had said those very words."""
    from spiral_claims import check_claims, play

    turns = []
    for k, limit in enumerate(("1m", "5m", "10m", "30m")):
        out = f"panic: test timed out after {limit}0s\nrunning tests:\n\tTestDrain ({limit}0s)\nFAIL\tqueue\t{k}.1s"
        run = {"tool": "Bash", "args": {"command": f"go test ./queue -run TestDrain -timeout {limit}"}}
        turns.append({**run, "output": out, "exit_code": 1})
    verdict, _ = play(turns)
    said = [s.evidence for s in verdict.signals if s.kind == "repeated_error"]
    quoted = "the same error with other details (panic: test timed out after 30m0s)"
    assert said == [f"{quoted} 4 times through 4 different action(s)"]
    assert "same error" in check_claims(verdict, turns)


def _dbt(lines: list[str], tally: str) -> str:
    """A ``dbt run``/``dbt build`` log: each numbered node's line, then its closing tally, every line under a clock."""
    body = [f"14:02:17  {line}" for line in ["Running with dbt=1.8.2", "Concurrency: 4 threads (target='dev')", *lines]]
    return "\n".join([*body, f"14:02:18  {tally}"])


_DBT_ERROR = _dbt(
    [
        "1 of 1 START sql table model dev.fct_daily ........ [RUN]",
        "1 of 1 ERROR creating sql table model dev.fct_daily ........ [ERROR in 0.19s]",
        "Completed with 1 error and 0 warnings:",
        "  Database Error in model fct_daily (models/marts/fct_daily.sql)",
        "  column c.region_code does not exist",
        "  LINE 17:     c.region_code,",
    ],
    "Done. PASS=0 WARN=0 ERROR=1 SKIP=0 TOTAL=1",
)


@pytest.mark.parametrize(
    ("command", "output", "fails"),
    [
        ("cd analytics && dbt run --select fct_daily", _DBT_ERROR, True),
        ("python pipelines/load_orders.py", "loaded 3000 rows\nskipped 12 rows (no customer)\n3 failed, 2985 ok", True),
        ("cd analytics && dbt run --select fct_daily", _dbt(["Completed successfully"], "Done. PASS=1 TOTAL=1"), False),
        ("python sync.py", "attempt 1 failed: retrying in 2s\nattempt 2 succeeded\nsynced 40 accounts", False),
        # a tally whose items its marks separate (lychee's), errors counted or none
        (
            "lychee 'docs/**/*.md'",
            "[TIMEOUT] https://dl.acm.org/doi/10.1145/35 | Timeout\n\n"
            "\U0001f50d 1231 Total (in 2m 16s) \u2705 1224 OK \U0001f6ab 4 Errors \U0001f47b 3 Excluded",
            True,
        ),
        (
            "lychee 'docs/**/*.md'",
            "\U0001f50d 64 Total (in 5s) \u2705 64 OK \U0001f6ab 0 Errors \U0001f47b 0 Excluded",
            False,
        ),
    ],
    ids=["dbt-error", "pipeline-tally", "dbt-passed", "retried", "marked-tally", "marked-tally-none"],
)
def test_a_run_that_tallies_its_failures_at_its_end_is_read_by_that_tally(command, output, fails):
    """No list of checks names every runner (``dbt run``, a pipeline's own script): a closing tally that counts
    failures says the run failed, where no exit code comes; a failure a run logged and got past does not."""
    assert printed.reads_failed(command, output) is fails


_EXUNIT = (
    "  1) test dashboard renders totals (TallyWeb.DashboardControllerTest)\n"
    "     test/tally_web/controllers/dashboard_controller_test.exs:12\n"
    "     ** (exit) exited in: GenServer.call(Tally.StatsCache, :totals, 5000)\n"
    "         ** (EXIT) an exception was raised:\n"
    "             ** (DBConnection.OwnershipError) cannot find ownership process for #PID<0.418.0>.\n"
    '     code: conn = get(conn, ~p"/dashboard")\n\n'
    "Finished in 2.9 seconds (1.4s async, 1.5s sync)\n63 tests, 1 failure\n\nRandomized with seed 481023"
)


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        (_DBT_ERROR, "column c.region_code does not exist"),
        (  # kotlinc's "e:" lines under Gradle's wrapping, its advice and its tally
            "> Task :notifier:compileKotlin FAILED\n"
            "e: file:///src/RunbookLinker.kt:3:25 Unresolved reference: kb\n"
            "e: file:///src/RunbookLinker.kt:8:32 Unresolved reference: NotesApi\n\n"
            "FAILURE: Build failed with an exception.\n\n* What went wrong:\n"
            "Execution failed for task ':notifier:compileKotlin'.\n"
            "> A failure occurred while executing org.jetbrains.kotlin.compilerRunner.GradleCompilerRunnerWithWorkers\n"
            "   > Compilation error. See log for more details\n\n* Try:\n"
            "> Run with --stacktrace option to get the stack trace.\n\nBUILD FAILED in 9s",
            "e: file:///src/RunbookLinker.kt:8:32 Unresolved reference: NotesApi",
        ),
        (  # the only lines with error words are Gradle's advice and summary: the failing task names it
            "> Task :app:checkDebugDuplicateClasses FAILED\n\nFAILURE: Build failed with an exception.\n\n"
            "> A failure occurred while executing com.android.build.gradle.internal.tasks.CheckDuplicatesRunnable\n"
            "   > Duplicate class kotlin.io.path.ExperimentalPathApi found in modules kotlin-stdlib-1.9.22\n\n"
            "     Go to the documentation to learn how to Fix dependency resolution errors.\n\nBUILD FAILED in 1m 12s",
            "> Task :app:checkDebugDuplicateClasses FAILED",
        ),
        (
            FAILING["cd worker && OPENSSL_DIR=/usr cargo build --release 2>&1 | tail -6"],
            "OpenSSL include directory does not exist: /usr/include/openssl",
        ),
        (FAILING["sbt -batch update"], "conf-generic_3-0.17.6.pom"),
        (_EXUNIT, "cannot find ownership process for #PID<0.418.0>."),  # its `63 tests, 1 failure` only counts
    ],
    ids=["dbt", "kotlinc", "gradle-advice", "cargo-panic", "sbt", "exunit"],
)
def test_a_failure_is_known_by_its_cause_not_by_a_tally_advice_or_the_build_wrapping_it(output, cause):
    from strict_loop.monitor import fingerprint as fp

    assert (fp.error_line(output) or "").endswith(cause)


def _xcode(derived: str) -> str:
    """What a person pastes from Xcode: the script's missing node under a DerivedData folder new with each build."""
    script = f"/Users/t/Library/Developer/Xcode/DerivedData/Kasa-{derived}/Build/Script-46EB2E.sh"
    return (
        f"same:\n\nShowing Recent Messages\nPhaseScriptExecution [CP-User] {script}\n\n"
        f"{script}: line 9: /Users/t/.nvm/versions/node/v18.17.0/bin/node: No such file or directory\n"
        "Command PhaseScriptExecution failed with a nonzero exit code\n\n"
        "Build failed    21/05/2024, 10:19    3.9 seconds"
    )


def test_a_pasted_build_failure_is_the_same_whatever_folder_name_the_build_generated():
    from strict_loop.monitor import fingerprint as fp

    first, second = (fp.error_line(_xcode(d)) for d in ("fwhmkdnqzpelrmcgbxuyiwtgvhao", "ajtkzvqwemcprhdgllsbxunoyf"))
    assert first and first.endswith("bin/node: No such file or directory")
    assert fp.error_fingerprint(first) == fp.error_fingerprint(second)


def _dbt_test(node: str, rows: int) -> dict:
    out = _dbt([f"2 of 7 FAIL {rows} {node} ........ [FAIL {rows} in 0.38s]"], "Done. PASS=4 ERROR=0 FAIL=1 TOTAL=7")
    command = "dbt build --select int_subs+ 2>&1 | grep -E 'FAIL|Done'"
    return {"tool": "Bash", "args": {"command": command}, "output": out}


def _edit(k: int) -> dict:
    args = {"file_path": "models/int_subs.sql", "old_string": f"a{k}", "new_string": f"b{k}"}
    return {"tool": "Edit", "args": args, "output": "The file models/int_subs.sql has been updated."}


def test_dbt_tests_failing_are_the_same_failure_only_while_the_same_test_fails():
    """dbt's ``2 of 7 FAIL 412 unique_x`` names the failing test (the count is of rows): one test failing after
    each of three edits fires, while a test fixed and another failing after it is progress."""
    from spiral_claims import check_claims, play

    same = [t for k in range(3) for t in (_edit(k), _dbt_test("unique_int_subs_id", 412 - k))]
    verdict, _ = play(same)
    assert verdict.fired_at == 5 and "same failure" in check_claims(verdict, same)
    moved = [_edit(0), _dbt_test("unique_int_subs_id", 412), _edit(1), _dbt_test("unique_int_subs_id", 12)]
    moved += [_edit(2), _dbt_test("relationships_fct_mrr_id", 3)]
    assert play(moved)[0].fired_at is None


def _timed_out(limit: int, framed: bool) -> str:
    total = f"1 failed, 13 deselected in {limit}.62s ({limit // 60}:{limit % 60:02d}:00)"
    return (
        "+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++\n"
        '  File "tests/integration/conftest.py", line 76, in consume_n\n    msg = consumer.poll(1.0)\n'
        f"E   Failed: Timeout >{limit}.0s\n"
        "=========================== short test summary info ===========================\n"
        f"FAILED tests/integration/test_ingest.py::test_roundtrip - Failed: Timeout >{limit}.0s\n"
        + (f"================= {total} =================" if framed else total)
    )


def test_a_test_cut_off_by_its_own_timeout_under_other_limits_is_one_failure_not_its_tally():
    """pytest-timeout failing the same test at 90, 300, 240 and 600 seconds (Codex: no exit code): the failing test is
    the error each time, never the closing tally; a run under ``timeout`` that stops on a started test hung."""
    from spiral_claims import play, window_of

    from strict_loop.monitor import fingerprint as fp
    from strict_loop.monitor import outcomes

    turns = [
        {"tool": "Bash", "args": {"command": f"pytest tests/integration -x -k roundtrip --timeout={n}"}, "output": o}
        for n, o in ((90, _timed_out(90, True)), (300, _timed_out(300, True)), (240, _timed_out(240, False)))
    ]
    turns.append(
        {"tool": "Bash", "args": {"command": "pytest -q -k roundtrip --timeout=600"}, "output": _timed_out(600, False)}
    )
    window = window_of(turns)
    assert len({f.err for f in window}) == 1 and "test_roundtrip" in (window[-1].etext or "")
    assert play(turns)[0].fired_at == 3
    assert fp.summary("1 failed, 13 deselected in 600.71s (0:10:00)") and fp.summary("=== 3 passed in 0.4s ===")
    started = "collected 14 items / 13 deselected / 1 selected\n\ntests/integration/test_ingest.py::test_roundtrip "
    assert outcomes.hung(started, "timeout 300 pytest -v -k roundtrip") and not outcomes.hung(started, "pytest -v")
    killed = "tests/integration/test_ingest.py::test_roundtrip make: *** [Makefile:31: itest] Terminated"
    assert outcomes.hung(f"collected 14 items\n\n{killed}".replace(" make:", "\nmake:"), "make itest")


_GO_UNDEFINED = (
    "# github.com/acme/shop/services/orders/server\n"
    "services/orders/server/list.go:14:61: undefined: ordersv1.ListOrdersRequest\n"
    "services/orders/server/list.go:35:10: undefined: ordersv1.ListOrdersResponse"
)


def test_a_go_compile_error_names_the_failure_whatever_ran_before_it_in_the_chain():
    """Go's compiler says ``file:line:col: undefined: x`` with no error word: the last such line is the failure, so the
    build after ``make proto``, after ``go clean -cache`` or alone fails the same way (Codex: no exit code), and
    go vet's ``vet: file:line:col:`` fails it too."""
    from spiral_claims import window_of

    runs = ["go build ./...", "make proto && go build ./...", "go clean -cache && go build ./services/orders/..."]
    shown = ["", "buf generate\n", ""]
    turns = [
        {"tool": "Bash", "args": {"command": c}, "output": f"{s}{_GO_UNDEFINED}"}
        for c, s in zip(runs, shown, strict=True)
    ]
    window = window_of(turns)
    assert all(f.failed for f in window) and len({f.fsig for f in window}) == 1
    assert window[0].ftext == "services/orders/server/list.go:35:10: undefined: ordersv1.ListOrdersResponse"
    vet = "# github.com/acme/shop/services/orders/server\nvet: services/orders/server/list.go:14:61: undefined: pb.Req"
    assert printed.reads_failed("go vet ./services/orders/...", vet)
    assert not printed.reads_failed("rg -n --column ListOrders", "services/orders/server/list.go:14:61: ListOrders")


def _kept(command: str, output: str) -> dict:
    return {"tool": "Bash", "args": {"command": command}, "output": output}  # Codex: no exit code


def test_the_lines_a_filter_kept_from_a_check_with_no_exit_code_are_no_pass():
    """Codex sends no exit code: a build piped into ``grep`` or ``head`` shows the lines the filter kept, which may
    leave out the one that says it failed, so it passed only where a final summary says so; ``tail`` keeps the end,
    where the verdict is. A build failing the same way, read through filters between edits, is one failure."""
    dup = "   > Duplicate class kotlin.collections.jdk8.CollectionsJDK8Kt found in modules kotlin-stdlib-1.9.24"
    failed = f"> Task :app:checkDebugDuplicateClasses FAILED\n{dup}\n\nBUILD FAILED in 12s"
    kept = [
        _kept("./gradlew --stop && ./gradlew :app:assembleDebug 2>&1 | grep -E 'Duplicate class' | head -2", dup),
        _kept("./gradlew :app:assembleDebug --no-build-cache 2>&1 | grep -cE 'Duplicate class'", "4"),
        _kept("./gradlew :app:assembleDebug 2>&1 | tail -3", "\nBUILD SUCCESSFUL in 47s\n37 actionable tasks"),
        _kept("./gradlew :app:assembleDebug 2>&1 | grep -E 'BUILD'", "BUILD SUCCESSFUL in 41s"),
    ]
    assert [f.verdict for f in window_of(kept)] == [None, None, "pass", "pass"]
    patch = "*** Begin Patch\n*** Update File: app/build.gradle.kts\n@@\n-a{k}\n+b{k}\n*** End Patch"
    turns = [_kept("./gradlew :app:assembleDebug 2>&1 | tail -30", failed)]
    for k in range(3):
        turns += [{"tool": "apply_patch", "args": {"command": patch.format(k=k)}, "output": "Success."}, kept[0]]
        turns += [_kept("./gradlew :app:assembleDebug 2>&1 | tail -30", failed)]
    assert play(turns)[0].fired_at is not None


def test_a_ping_that_got_nothing_back_failed_and_its_summary_is_its_error():
    """Codex sends no exit code: ping's ``100% packet loss`` says it failed, and that line (its counts and time
    folded) is its error, the same after each restart of the tunnel (``wg-quick down && wg-quick up``: a restart)."""
    ping = (
        "PING 10.44.0.1 (10.44.0.1) 56(84) bytes of data.\nping: sendmsg: Required key not available\n\n"
        "--- 10.44.0.1 ping statistics ---\n4 packets transmitted, 0 received, 100% packet loss, time {}ms"
    )
    up = "[#] ip link add wg0 type wireguard\n[#] ip -4 address add 10.44.0.2/24 dev wg0\n"
    restart = "wg-quick down wg0 && wg-quick up wg0 && sleep 5 && ping -c 4 -W 2 10.44.0.1"
    turns = [
        {"tool": "Bash", "args": {"command": "ping -c 4 -W 2 10.44.0.1"}, "output": ping.format(3062)},
        {"tool": "Bash", "args": {"command": restart}, "output": up + ping.format(3071)},
        {"tool": "Bash", "args": {"command": "MTU=1380 " + restart}, "output": up + ping.format(3058)},
        {"tool": "Bash", "args": {"command": restart.replace("sleep 5", "sleep 10")}, "output": up + ping.format(3049)},
    ]
    window = window_of(turns)
    assert all(f.failed for f in window) and len({f.err for f in window}) == 1
    assert "100% packet loss" in (window[0].etext or "")
    assert [f.restart for f in window] == [False, True, True, True]
    assert (
        printed.reads_failed("ping -c 2 h", "2 packets transmitted, 2 received, 0% packet loss, time 1001ms") is False
    )
    verdict, _ = play(turns)
    assert verdict.fired_at == 3


@pytest.mark.parametrize(
    ("command", "output", "failed"),
    [
        ("npx ng update @angular/core@16", "npm ERR! code ERESOLVE\n✖ Packages installation failed, see above.", True),
        ("npx ng build", "✔ Browser application bundle generation complete.", False),
        ("npx listr-run", "× Task failed", True),
    ],
)
def test_a_verdict_after_a_failure_mark_is_read_past_the_mark(command, output, failed):
    assert printed.reads_failed(command, output) is failed


def test_a_check_that_passed_once_and_failed_the_same_way_after_with_nothing_edited_is_flaky_not_fixed():
    """A concurrency test fails, passes once under other flags, then fails the same way with no edit between: the
    pass was luck, so the edits before and after it are attempts at one failure. A pass with an edit after it ends
    the count (the failure after the edit may be the edit's)."""
    test = "python -m pytest tests/test_transfers.py::test_concurrent_transfers -x -q"
    fail = "F\nFAILED tests/test_transfers.py::test_concurrent_transfers - assert {} == 10000\n1 failed in 0.9s"

    def run(extra: str, balance: int) -> dict:
        return {"tool": "Bash", "args": {"command": test + extra}, "output": fail.format(balance), "exit_code": 1}

    def edit(new: str) -> dict:
        args = {"file_path": "ledger/transfers.py", "old_string": "x", "new_string": new}
        return {"tool": "Edit", "args": args, "output": "The file ledger/transfers.py has been updated."}

    passed = {
        "tool": "Bash",
        "args": {"command": test + " -p no:randomly"},
        "output": ".\n1 passed in 0.86s",
        "exit_code": 0,
    }
    turns = [run("", 9990), edit("with_for_update()"), run("", 9980), passed, run(" -p no:randomly", 9990)]
    turns += [edit("await asyncio.sleep(0.01)"), run("", 9960)]
    verdict, steps = play(turns)
    assert verdict.fired_at == 6 and steps[0][2][0].kind == "same_failure"
    assert "failed the same way 4 times" in verdict.diagnosis
    fixed = [*turns[:3], edit("FOR UPDATE on postgres"), passed, edit("y"), run("", 9990), edit("z"), run("", 9970)]
    kinds = {signal.kind for _, _, signals in play(fixed)[1] for signal in signals}
    assert "same_failure" not in kinds  # an edit came after the pass: the failures after it start anew


def _forge(*results: str) -> str:
    """forge test's output: each test's result line, then its two tallies (the suite's and the run's)."""
    passed, failed = sum(r.startswith("[PASS]") for r in results), sum(r.startswith("[FAIL") for r in results)
    return (
        "Ran 4 tests for test/fork/ZapFork.t.sol:ZapForkTest\n" + "\n".join(results) + "\n"
        f"Suite result: FAILED. {passed} passed; {failed} failed; 0 skipped; finished in 6.84s (9.12s CPU time)\n\n"
        f"Ran 1 test suite in 6.93s (6.84s CPU time): {passed} tests passed, {failed} failed, 0 skipped (4 total tests)"
    )


def test_a_tally_of_any_runner_names_no_cause_and_tallies_failing_otherwise_differ():
    """A line with two counts of a runner's tally ("2 tests passed, 1 failed", "0 passed; 1 failed") only counts,
    whichever runner printed it: the failure is read from the test's own line (forge's ``[FAIL: reason] test()``).
    Where only tallies show (a ``tail -4``), two of them are the same failure only while they count the same."""
    from strict_loop.monitor import fingerprint as fp

    balance = _forge(
        "[PASS] testPreview() (gas: 412088)", "[FAIL: revert: transfer amount exceeds balance] testZapIn()"
    )
    slippage = _forge("[PASS] testPreview() (gas: 412088)", "[FAIL: Zap: slippage] testZapOut() (gas: 512877)")
    assert fp.error_line(balance) == "[FAIL: revert: transfer amount exceeds balance] testZapIn()"
    assert fp.error_fingerprint(balance) != fp.error_fingerprint(slippage)
    for tally in ("Ran 1 test suite in 4.20s: 3 tests passed, 1 failed, 0 skipped", "2 passing (3ms); 1 failing"):
        assert fp.summary(tally), tally
    assert not fp.summary("AssertionError: expected 2 but got 1") and not fp.summary("3 failing")
    nine, three = ("240 runs, 460 assertions, 9 failures, 0 errors, 0 skips", "240 runs, 466 assertions, 3 failures")
    assert fp.error_fingerprint(nine) != fp.error_fingerprint(three)
    assert fp.error_fingerprint(three) == fp.error_fingerprint("240 runs, 470 assertions, 3 failures")


def test_another_command_passing_between_failures_of_a_check_ends_no_count_but_its_own_pass_does():
    """A local ``cargo build`` passing between ``docker build`` runs that fail the same way says nothing of the image's
    build: the edits between are attempts at one failure. The check's own pass ends its count; the person's "it
    works" does too."""
    image = "#14 39.552 error: set `DATABASE_URL` to use query macros online, or run `cargo sqlx prepare`"
    docker = {"tool": "Bash", "args": {"command": "docker build -t svc ."}, "output": image, "exit_code": 1}
    local = {"tool": "Bash", "args": {"command": "cargo build"}, "output": "Finished `dev` profile", "exit_code": 0}

    def edit(k: int) -> dict:
        args = {"file_path": "Dockerfile", "old_string": f"a{k}", "new_string": f"b{k}"}
        return {"tool": "Edit", "args": args, "output": "The file Dockerfile has been updated."}

    turns = [docker, edit(1), local, docker, edit(2), local, docker]
    verdict, _ = play(turns)
    assert verdict.fired_at == 6 and "failed the same way 3 times" in verdict.diagnosis
    built = {**docker, "output": "#14 DONE 41.2s\nnaming to docker.io/library/svc done", "exit_code": 0}
    after = play([docker, edit(1), docker, built, edit(2), docker, edit(3), docker])[1]
    assert all(len(signal.turns) < 3 for _, _, signals in after for signal in signals if signal.kind == "same_failure")


_FLYWAY = (
    "Flyway Community Edition 10.8.1 by Redgate\n\nDatabase: jdbc:postgresql://localhost:5432/inventory (PostgreSQL "
    "15.5)\nERROR: Validate failed: Migrations have failed validation\nDetected failed migration to version 7.3.\n"
    "Please remove any half-completed changes then run repair to fix the schema history.\n"
    "Need more flexibility with validation rules? Learn more: https://rd.gt/3AbJUZE"
)


def test_a_tools_own_error_in_capitals_under_its_hint_is_a_failure_where_no_exit_code_comes():
    """Codex sends no exit code: Flyway's ``ERROR: Validate failed`` followed by its hint and a docs link failed; the
    same words in a log read back (``docker logs``) are no failure of the reading command."""
    assert printed.failed(
        Turn(tool="Bash", args={"command": "flyway migrate"}, output=_FLYWAY), "run", "flyway migrate"
    )
    logs = "docker logs flyway-job --tail 20"
    assert not printed.failed(Turn(tool="Bash", args={"command": logs}, output=_FLYWAY), "run", logs)
    runs = [{"tool": "Bash", "args": {"command": f"flyway {flag} migrate"}, "output": _FLYWAY} for flag in _FLAGS]
    verdict, _ = play(runs)
    assert verdict.fired_at is not None and verdict.signals[0].kind in ("repeated_error", "error_cycle"), verdict


_FLAGS = ["-outOfOrder=true", "-validateOnMigrate=false", "-X", "-target=7.2", "-cleanDisabled=true"]


def _count(query: str, count: int) -> dict:
    """An Elasticsearch count by curl: its whole answer one line of JSON."""
    command = f"curl -s 'https://es.internal:9200/logs-*/_count' -d '{query}'"
    return {"tool": "Bash", "args": {"command": command}, "output": f'{{"count":{count},"_shards":{{"total":24}}}}'}


def test_a_query_that_keeps_answering_nothing_is_looking_in_the_wrong_place_and_an_answer_ends_it():
    """``{"count":0}`` five times through varied queries is a lookup that keeps finding nothing (a term query on an
    analysed field); a query that answers ends the count."""
    queries = ['{"term":{"level":"ERROR"}}', '{"term":{"level":"error"}}', '{"match":{"level":"ERROR"}}']
    queries += ['{"term":{"level.keyword":"ERR"}}', '{"term":{"lvl":"ERROR"}}']
    verdict, _ = play([_count(q, 0) for q in queries])
    assert verdict.fired_at == 4 and verdict.signals[0].kind == "nothing_found", verdict
    turns = [_count(q, 0) for q in queries[:3]] + [_count(queries[3], 412)] + [_count(q, 0) for q in queries[:2]]
    assert play(turns)[0].fired_at is None
    assert not outcomes.found_nothing("0", "run") and outcomes.found_nothing("0", "search")  # `echo $?` says 0


def _axe(rules: str, count: int) -> dict:
    """A Playwright accessibility test whose one failing test prints axe's violated rules above the same assertion."""
    output = (
        f"[chromium] > tests/a11y/axe.spec.ts:6:3 > /products has no detectable a11y violations\naxe: {count} rule(s) "
        f"violated: {rules}\n  1) /products\n    Error: expect(received).toEqual(expected) // deep equality\n\n"
        "    Expected: []\n    Received: [{...}]\n\n  1 failed\n  2 passed (5.1s)"
    )
    return {"tool": "Bash", "args": {"command": "npm run test:a11y"}, "output": output, "exit_code": 1}


def test_rules_violated_falling_under_one_failing_assertion_is_progress_not_the_same_failure():
    """axe's ``3 rule(s) violated`` then 2 then 1 under the same ``toEqual`` assertion: the count of what is wrong
    fell each time, so the edits between are fixes that work, not attempts that change nothing."""
    edit = {"tool": "Edit", "args": {"file_path": "src/Card.tsx", "old_string": "a", "new_string": "b"}}
    turns = [_axe("button-name (5 nodes), label (3 nodes), image-alt (1 node)", 3), edit]
    turns += [
        _axe("button-name (2 nodes), image-alt (1 node)", 2),
        {**edit, "args": {**edit["args"], "new_string": "c"}},
    ]
    turns += [_axe("aria-prohibited-attr (1 node)", 1)]
    assert [outcomes.failing_count(t["output"]) for t in turns[::2]] == [3, 2, 1]
    assert play(turns)[0].fired_at is None


def _clippy(count: int) -> dict:
    """``cargo clippy`` filtered to one file's lints, then its last line: cargo's count of every error it found."""
    output = (
        "error: this expression creates a reference which is immediately dereferenced by the compiler\n"
        "  --> src/filter.rs:87:27\n"
        f'error: could not compile `logslice` (bin "logslice") due to {count} previous errors'
    )
    command = "cargo clippy --all-targets -- -D warnings 2>&1 | grep -A8 'src/filter.rs' ; cargo clippy 2>&1 | tail -1"
    return {"tool": "Bash", "args": {"command": command}, "output": output, "exit_code": 0}


def test_cargos_count_of_previous_errors_falling_is_progress_and_held_is_the_same_failure():
    """Lints fixed a file at a time: the same first error line each run, cargo's ``due to N previous errors`` falling
    23, 17, 11, 6 is work that moves; the count held through the same edits is the same failure again."""
    edits = [
        {"tool": "Edit", "args": {"file_path": f"src/{name}.rs", "old_string": "a", "new_string": "b"}}
        for name in ("parse", "filter", "output", "main")
    ]
    falling = [turn for n, edit in zip((23, 17, 11, 6), edits, strict=True) for turn in (_clippy(n), edit)]
    assert play(falling)[0].fired_at is None
    held = [turn for edit in edits for turn in (_clippy(17), edit)]
    assert play(held + [_clippy(17)])[0].fired_at is not None


def _jest(matcher: str, expected: str, received: str, line: int) -> dict:
    """jest's report of one failing test: its title, then the assertion that failed and where."""
    output = (
        " FAIL  test/import/csv.test.ts\n  parseBankCsv\n    \u2715 parses the sample bank export (5 ms)\n\n"
        f"  \u25cf parseBankCsv \u203a parses the sample bank export\n\n    expect(received).{matcher}(expected)\n\n"
        f"    Expected: {expected}\n    Received: {received}\n\n      at Object.<anonymous> (test/import/csv.test.ts:"
        f"{line}:18)\n\nTest Suites: 1 failed, 1 total\nTests:       1 failed, 1 passed, 2 total"
    )
    return {"tool": "Bash", "args": {"command": "npx jest test/import/csv"}, "output": output, "exit_code": 1}


def test_jests_failing_test_is_known_by_the_assertion_that_failed_not_by_its_title_alone():
    """One test failing at a later assertion after each fix (its length, then an amount, then a date) is work that
    moves; the same assertion failing with another received value each time is the same failure."""
    edit = {"tool": "Edit", "args": {"file_path": "src/import/csv.ts", "old_string": "a", "new_string": "b"}}
    later = [("toHaveLength", "3", "4", 22), ("toBe", "-1234.56", "-1.23456", 25), ("toBe", '"2025-03-01"', '"x"', 26)]
    moving = [turn for a in later for turn in (_jest(*a), {**edit, "args": {**edit["args"], "new_string": a[1]}})]
    assert len({f.err for f in window_of(moving) if f.failed}) == 3
    assert play(moving + [_jest("toBe", "true", "false", 31)])[0].fired_at is None
    same = [turn for n in (4, 5, 6, 7) for turn in (_jest("toBe", "3", str(n), 22), {**edit, "args": {**edit["args"]}})]
    assert play(same)[0].fired_at is not None


_TIMEOUTS = [
    '#2 ERROR: failed to do request: Head "https://registry-1.docker.io/v2/library/python/manifests/3.12-slim": '
    "net/http: TLS handshake timeout",
    'Error response from daemon: Get "https://registry-1.docker.io/v2/": net/http: request canceled while waiting for '
    "connection (Client.Timeout exceeded while awaiting headers)",
    "ERROR: failed to solve: python:3.12-slim: failed to resolve source metadata: dial tcp 44.205.64.79:443: "
    "i/o timeout",
    '#2 ERROR: failed to do request: Head "https://public.ecr.aws/v2/docker/library/python/manifests/3.12-slim": '
    "net/http: TLS handshake timeout",
]


def test_a_timeout_after_a_timeout_in_other_words_has_not_moved_on():
    """Docker's pulls timing out behind a network that drops every TLS handshake, worded anew by each tool and mirror
    tried: one wall, not failures that change (Go's ``i/o timeout``, ``handshake timeout``, ``Timeout exceeded`` are
    timeouts). A timeout, then another failure, then a timeout is work that moved."""
    build = {"tool": "Bash", "args": {"command": "docker build -t api ."}, "exit_code": 1}

    def edit(k: int) -> dict:
        return {"tool": "Edit", "args": {"file_path": "Dockerfile", "old_string": "FROM", "new_string": f"FROM {k}"}}

    walls = [turn for k, text in enumerate(_TIMEOUTS) for turn in ({**build, "output": text}, edit(k))]
    assert all(f.fclass == "timeout" for f in window_of(walls) if f.failed)
    assert play(walls)[0].fired_at is not None
    other = 'ERROR: failed to solve: process "/bin/sh -c pip install -r requirements.txt" did not complete: exit code 1'
    mixed = [{**build, "output": _TIMEOUTS[0]}, edit(0), {**build, "output": other}, edit(1)]
    assert play([*mixed, {**build, "output": _TIMEOUTS[3]}])[0].fired_at is None


_NODE_CRASH = (
    "\n> relnotes@2.3.0 build\n> tsc -p tsconfig.json\n\n/home/dev/relnotes/dist/cli.js:7\nconst chalk_1 = "
    '__importDefault(require("chalk"));\n                                ^\n\nError [ERR_REQUIRE_ESM]: require() of ES '
    "Module /home/dev/relnotes/node_modules/chalk/source/index.js not supported.\n    at Object.<anonymous> "
    "(/home/dev/relnotes/dist/cli.js:7:33) {\n  code: 'ERR_REQUIRE_ESM'\n}\n\nNode.js v18.19.0"
)


def test_nodes_uncaught_error_then_its_version_line_is_a_failure_where_no_exit_code_comes():
    """A build that passed, then ``node dist/cli.js`` dying on ``Error [ERR_REQUIRE_ESM]`` with Node's closing
    ``Node.js v18.19.0``: the run failed, though Codex sends no exit code; a version printed alone is no failure."""
    command = "npm run build && node dist/cli.js --help"
    assert printed.failed(Turn(tool="Bash", args={"command": command}, output=_NODE_CRASH), "run", command)
    assert not printed.failed(
        Turn(tool="Bash", args={"command": "node -v"}, output="Node.js v18.19.0"), "run", "node -v"
    )


@pytest.mark.parametrize(
    ("output", "count"),
    [
        # gcc, clang, mypy; tsc's and MSBuild's form; a line said twice (make -j) counts once, a note or a warning not
        # at all, an error line quoted inside another line not
        (
            "src/net.c:88:9: error: implicit declaration of function 'close'\nsrc/net.c: In function 'dial':\n"
            "src/net.c:121:33: note: expected 'int'\nsrc/util.c:19:8: error: return type defaults to 'int'\n"
            "src/util.c:19:8: error: return type defaults to 'int'\nsrc/a.c:3:1: warning: unused",
            2,
        ),
        ("src/app.ts(7,3): error TS2307: Cannot find module './x'", 1),
        ("make: *** [Makefile:12: build] Error 2\nlog: see src/a.c:3:1: error: x", None),
        ("3 failed, 12 passed", None),
    ],
)
def test_a_build_that_prints_no_count_is_counted_by_its_error_lines(output, count):
    from strict_loop.monitor import printed

    assert printed.error_lines(output) == count


@pytest.mark.parametrize(
    ("command", "whole"),
    [
        ("make -k 2>&1 | grep -E 'error:'", True),
        ("cargo build 2>&1 | grep -i Error | sort | uniq", True),
        ("make", True),
        ("npx tsc --noEmit 2>&1 | grep 'src/api/client.ts' | head -9", False),
        ("npx tsc --noEmit --pretty 2>&1 | tail -16", False),
        ("make 2>&1 | grep -v error", False),
        ("make 2>&1 | grep -c error", False),
    ],
)
def test_error_lines_are_counted_only_where_no_filter_kept_some_of_them(command, whole):
    from strict_loop.monitor.calls import shellwork

    assert shellwork.whole_errors(command) is whole


def _make_k(errors: list[str]) -> dict:
    """``make -k`` filtered to its error lines, as a Codex session runs it (no exit code)."""
    return {"tool": "Bash", "args": {"command": "make -k 2>&1 | grep -E 'error:'"}, "output": "\n".join(errors)}


def test_a_build_whose_error_lines_fall_after_each_edit_is_progress_though_its_last_error_stays():
    """GCC 14's new errors fixed a few at a time: the last line (the one not reached yet) is in every run, but each run
    shows fewer errors, which is the work moving, not the same failure after edits."""
    from spiral_claims import play

    last = "src/main.c:77:24: error: passing argument 2 of 'signal' from incompatible pointer type"
    others = [f"src/net.c:{10 * k}:9: error: implicit declaration of function 'f{k}'" for k in range(1, 9)]
    turns = []
    for shown in (8, 5, 4, 2, 1):
        turns.append(_make_k([*others[:shown], last]))
        turns.append({"tool": "Bash", "args": {"command": f"sed -i '{shown}d' src/net.c"}, "output": ""})
    assert play(turns)[0].fired_at is None
    stuck = []
    for k in range(4):  # the same error after each edit: the same failure
        stuck.append(_make_k([last]))
        stuck.append({"tool": "Bash", "args": {"command": f"sed -i 's/a{k}/b{k}/' src/main.c"}, "output": ""})
    verdict, steps = play(stuck)
    assert steps and steps[0][2][0].kind == "same_failure"
