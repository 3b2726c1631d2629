#!/usr/bin/env python3
"""The monitor on whole sessions written by reviewers who saw neither its rules nor the corpora.

Why: the corpora under ``../shared/corpus`` are in-sample (the monitor was built looking at them), and the held-back
sets are the project reviewers' to measure. These sets were written for issue 24 by engineers given only the turn
format (``Turn``'s fields, Claude Code's and Codex's tool names, "Codex sends no exit code"): spirals labelled with
the turn where a careful watcher would be sure (``onset``) and the last turn where stopping still helps (``end``),
beside healthy sessions that look alike. A spiral is caught when the first firing falls from two turns before its
onset to its end; an earlier firing is counted apart ("early") and is no catch; any firing in a healthy session is a
false alarm. Codex sessions replay without exit codes, as Codex's hooks send calls; Cline, Cursor and Aider sessions
(written as their exports keep them) without the agent's words, as no hook of theirs sends them.

Which sets were held out when first measured (figures in ``references/spiral.md``, "Measured"): C, E, F and G;
A, B and D shaped rules after their first measure, and E after it was measured, F for one change. H, I, J and
K (written for issue 24's next round, Gemini CLI's tool names added to the format) were measured untouched on the
code they were written beside (H, the last, after every change of that round); all four shaped rules after. From now
on every set is in-sample for whoever changes the monitor looking at this output. L and M were written last and
measured after every change of that round, before any of their sessions was looked at. N, O, P and Q (issue 24's
next round, Cline's, Cursor's and Aider's export forms added to the format) were measured untouched on the code at
the round's start; N shaped rules first, then O and P were measured again on the changed code before they were
looked at, then Q. S was written last and measured at the round's start and end, never looked at in that round;
the next round looked at it. T, U and V (that next round: a person-heavy set, Codex's shell edits and operations,
long sessions in the export forms) were measured untouched at the round's start and again before each was looked at;
W (a developer's own long Claude Code sessions) and Y (front-end work a person watches) were written during that
round and measured on its start's code and before they were read (W after every change of the round). Z and AA
were written during the next round and measured on its start's code and on the code of the moment they arrived, before
they were read; then Z-01 and Z-05 shaped rules (a test runner's count line, a loop's exit code, "Unable to ...").
AB, AC and AD (the round after: a person judging what the agent cannot see; web and backend work, the agent mostly
alone; long messy sessions), AE (healthy sessions that look stuck) and AF (an hour with a person present) were
measured on the round's start code and on the code of the moment each arrived, before it was read; then each shaped
rules (AF one: its false alarm). AH (a developer's own tooling, a terse person) and AI (work whose outcome the person
sees on their side, several languages) were written during the round after and measured on its start's code and on the
code of the moment each arrived, before it was read; then AH shaped rules (AI had no miss). AJ (healthy work a terse,
impatient person watches) was written after AH's changes and measured before it was read; then it shaped rules, as
did AG (Codex and Claude Code off the web, mostly the agent's own retries), measured on arrival after AJ's changes.
AM (infrastructure and builds, the agent mostly alone) and AN (long product work, the spiral subtle) were written in
the round after and measured on its start's code and on arrival (AN after AM's changes), before they were read; then
each shaped rules.
AO (a person trying the work on their side) and AP (Python and data work) arrived after that round's last change and
were measured on its start's code and its end's, before they were read; the round after read them first: AP-06 (a
status echoed before the log is shown, reruns cut off by ``timeout``) shaped rules. AQ (networking and auth), AR
(refactors whose error counts move) and AS (databases, concurrency, performance) were written in that round and
measured on its start's code and on arrival, before they were read; then each shaped rules. AT (pair work, the
person trying each change) arrived after that round's second change and was measured on its start's code and on
arrival, before it was read; then AT-05 shaped a rule (the nth time in Russian). AU (cloud CLIs) and AV (healthy
sessions that look stuck) arrived after that round's last change and were measured on its start's and end's code
before they were read; then AV-06 (a ``git bisect`` whose benchmark prints other numbers after each step, a false
alarm) shaped a rule. In the round after, AS-05 (a query plan timed again after each index, its numbers only
jittering) shaped a signal (``no_effect``), measured first as a statistic over every corpus and set; AY (a person in the
loop in Hebrew, Thai, Ukrainian, Persian, Malay, Romanian and Hungarian) was written in that round and measured on
its start's code and on arrival, before it was read; then it shaped the rows of those languages. AW (systems
programming) arrived after and was measured on the round's start code and on arrival: nothing to change (every
spiral caught, no false alarm). AX (machine learning and data work) and AZ (dependencies and CI pipelines) arrived
next and were measured on the round's start code and on arrival, before they were read: the new signal caught none
of AX's metrics that do not move (their numbers are exact, not jittering), the person's words did once read (counting
the runs, "again 0.7131.", "doesn't even wiggle"); AZ-11 (CI failing in another job each time, a false alarm) shaped
how a failed CI run is named. BD (a person trying product work, half in eight languages already read) arrived next
and was measured on the round's start code and on arrival: 6 of 8 caught (1 early, 1 missed) both times, several
late; then it shaped how those languages are read (a word alone, "nada.", "おなじ。", "一样。"; a state that remains,
被ったまま, 还在; "did you even test it?"; the attempts counted, "tercer intento", "terceira vez", "3回目。"). BA
(OpenCode sessions), BC (performance work), BE (long Codex sessions) and BF (long Gemini CLI sessions) arrived
last and were measured on the round's start code and on arrival: 8 of 9, 3 of 8, 5 of 8 (1 early, 1 late) and 7 of
8 (1 early), no false alarm, the same both times; then BA-09 (the same files read again with rebuilds between) and
BC (a report printed after each change by commands chained or flagged otherwise, or after a restart's lines; the
person's "still ~850", "none of this is moving it") shaped rules. In the round after, BG, BH, BI, BJ, BK and BL (docs
and sites, mobile and desktop apps, the tests themselves, a person in seven more languages, Claude Code's background
shells, git and review) were measured on the round's start code and on arrival, before they were read: 7, 7, 7, 5 (1
late), 4 and 5 of 8 caught, no false alarm, the same both times; then BJ shaped the rows of its languages, BK how a
background job's start, reads and stop are read, BL what a run says failed where no exit code comes (a last sentence
that says so, the GitHub CLI's own heads, a CI run's failed job row), BI a flaky test's count (a new low only is
progress), BG-09 a tally whose marks separate its items, BH-14 "please don't do that again" and "Error launching",
and BC-02 (a benchmark that passes) a rule of ``no_effect``. BM, BN, BO and BP (a person who is no developer; Claude
Code's background jobs as 2.1 runs them, with its task notices; data engineering; security fixes) were written later in
that round and measured on its start code and on arrival, before they were read: 8 (1 false alarm), 5, 6 (1 late) and 5
(1 false alarm) of 8 on arrival, 8, 4, 6 and 5 on the start code; then BN shaped how a background job's output is read
(its exit code, its envelope; each job its own step), BP a failure under a shared header and a build tool's queries, BO
dbt's ``[RUN]`` under ``timeout``, and BM-11's false alarm "5th says 41k now" (a date, not a fifth attempt). In the
round after, BQ, BR, BS, BT, BU and BV (embedded and IoT, apps on LLM APIs, Windows and WSL, games and graphics, build
systems, a person in six more languages) were written blind at its start and BW, BX, BY, BZ, CA and CB (web backends,
front-end tests, Kubernetes at night, long subtle sessions, scientific computing, a person in seven more languages)
half-way through; each was measured on the round's start code and on arrival, before it was read: 33 and 32 of 48
caught on the start code (1 false alarm and 2), 33 and 34 on arrival; then their misses and false alarms shaped rules
(a background check stopped while it hung; Codex's patches undone; a package missing again; the person's word in
thirteen more languages; wrappers of CMake and vitest; a rehearsal breaks no ban), and 75 of 96 are caught, none
falsely. CC, CD, CE and CF (Go and Rust services; a person on their phone; CI pipelines; bots and integrations, 6
spirals and 6 healthy each) were written after those changes and measured on arrival, before they were read: 12 of
24 caught (6 early, 1 late), no false alarm in 24, the same on the round's start code; then CE-03 shaped how ``gh pr
checks`` at a terminal is read (its summary line, its rows). In the round after, CG, CH, CI and CJ (a developer's
own dashboards; finding things; deploys through pipelines; mobile apps) were written blind at its start and measured
on arrival, before they were read: 18 of 32 caught (6 early), no false alarm in 32; CK and CL (operations on servers;
a person pasting what they see) half-way through, measured on its start code and on arrival: 11 of 16 (4 early), 1
false alarm in 16, the same both times. Then CH shaped rules (a name guessed is one error; GNU tools' quoted paths;
the person's words after a paste; "are you even in my repo??"), as did CJ-05 (French), CI-15, CK-02 and CL-15's
false alarm (a sequence described counts no attempts). CM, CN and CO (internal tools a non-developer colleague tries;
machine learning; long unattended migrations) were written after those changes and measured on arrival, before they
were read: 15 of 24 caught (2 early), 1 false alarm in 24, the same on the round's start code; then CM shaped the
Portuguese and Polish rows (8 of 8 since), CO-14's false alarm a reading (a count heading its message, ``uniq
-c``'s, is no failing count) and CO-09 another (turbo's ``Failed:    @nw/ui#build`` is no cause). In the round after,
CP, CQ, CR and CS (Codex on Rust and Go; front ends in Spanish and Italian; infrastructure as code; databases in the
export forms) were written blind at its start, CT, CU, CV and CW (desktop apps; Codex with a person on Python; a small
server; firmware and games) half-way, CX, CY, CZ and DA (sites of people who are no developers; Codex on TypeScript
monorepos; long jobs watched; services that crash) after its first changes and DB, DC, DD and DE (a Python backend
with a developer in the loop; Codex on systems tools; cloud pipelines; mobile apps in German and Spanish) after its
second; each was measured on the round's start code and on arrival, before it was read: 72 and 78 of 128 caught
(24 early each) with 9 and 10 false alarms in 128; after the round's changes 86 (25 early), 2. They shaped: a failure
that moved on is no repeat (CR-06, CR-10, DB-02, DB-08, DB-10), looks after long waits (CV-05, DD-13), a failed job
and its resubmission (CZ-11, DD-08), ``sed -i`` flip-flops (CP-06), Go's, turbo's and pnpm's failure lines (CY-02,
CY-07), the person's praise and thanks (CS-13, CX-13), and rows of the person's words (CQ-08, CU-15). DF, DG, DH and DI
(Rails, Laravel and Phoenix with a person in French or Japanese; Codex with a person on analytics; research computing;
authentication and networking) were written after the round's last changes and measured on arrival, before they were
read: 15 of 32 caught (11 early) with 2 false alarms in 32, 15 (11 early) with 1 on the round's start code; then
DH-12 (a wait sent to the background is no look) and DF-14 (今度は marks a new failure) shaped readings. In the round
after, twelve sets were written blind in three waves (DJ to DM at its start, DN to DQ and DR to DU after its first
and second commits) and measured on arrival, before they were read: 76 of 96 caught (13 early) with 4 false alarms in
96, the same on the round's start code; after the round's changes 80 (13 early), none. They shaped: another command
passing says nothing of a failing check (CC-01, DM-02), a runner's tally is no cause (DK-09, BW-04), the person's
"still" in Italian, Spanish and Portuguese (DL-03, DL-13), a failure marked as new ("diff error now", "ahora sale":
DN-13, DQ-16), errors coming back while failures fall are no cycle (DO-10), a ``sed -i`` alone flips a file (DO-06),
and looks while the person asks whether it is stuck (DP-15). DV, DW, DX and DY (a person pasting logs in Russian,
Polish, Turkish; OpenCode; a person's limits and refusals; restart and hang loops), written after the round's last
rule changes and measured on arrival: 28 of 32 caught (7 early, 1 late) with 3 false alarms in 32, the same on the
round's start code; then DW-10's (a dev server under ``timeout`` dying of a new cause each time) shaped a rule, and
DV-14's ("still panics" over a new panic each time) and DX-13's (the person's reasons for two different refusals)
are left. In the round after, twelve sets were written blind in three waves (DZ to EC at its start, ED to EG and EH
to EK after) and measured on arrival on the code of that moment and on the round's start code, before they were read:
65 of 96 caught (11 early, 1 late) with 7 false alarms in 96, the same on the round's start code. They shaped: a
random request id is no part of an error (DZ-08), a person's word that names no error is no failure for the next run
to differ from (DZ-08), a report not said to be a repeat is about the agent's newest failure ("nope now this": EB-11),
"again" said of a symptom, a why that complains, "whats going on" (EB-02, EG-01, DN-05), "youve opened X 5 times"
(EB-04), Polish and Hebrew rows (EC-01, EC-09), "no, not pypi" and a bare "no" after other words (EF-16), "whatever
works" (EG-06), a registry's denial wrapped by each client (EG-06), a rehearsal (``--dry-run``) as a step of its own
(EG-01), ``ERROR:`` under a tool's hint (EI-08), a query's empty answer (EK-06), "X works now but Y" (EJ-14),
axe's count of violated rules (EC-06) and "down to 3.1%" (EK-09). After the round's changes the twelve: 73 caught
(11 early, 1 late) with 2 false alarms. EL, EM, EN and EO (a person in German, Italian, Portuguese or Dutch; build
and test failures in ten languages; servers and jobs restarted and watched; looking for things), written after the
round's last rule changes and measured on arrival: 19 of 32 caught (8 early, 2 late) with no false alarm in 32, the
same on the round's start code; then EM-03 (Node's uncaught error), EO-08 (Aider's ``/add``) and EO-05 ("X works so
it's there") shaped readings: 20 (9 early, 1 late), none. In the round after, EP to EV (editor and shell set-ups;
Codex on web apps with a person; Claude Code's busy tooling; tuning a person judges; SaaS apps where the words and the
failure part ways; Codex restarting long-lived processes; Gemini CLI and OpenCode hangs) were written blind in two
waves and measured on arrival: 39 of 55 caught (9 early) with 10 false alarms in 57, the same on the round's start
code. They shaped: "(2nd time, first run worked)" names a run (EP-14), a failure the person says is new ("different
thing in the network tab now", "it goes to stripe now, then ...") is never the one reported before (EQ-09, EQ-11),
Portuguese "continuam", pip's ``Successfully installed`` before a restart is the agent's attempt (EU-13), "the same
problem, just looks different each time" and "couldn't load" (ET-04). After: 41 caught (9 early) with 7 false
alarms, all ET's (its healthy sessions hear "still broken" of a new failure twice, which the agent's runs show only
after the report). EW to EZ (data a person checks by its numbers; infrastructure with long waits; phones, in
Japanese, Korean, Chinese, Vietnamese or Thai; hard healthy look-alikes), written blind in a second wave after the
round's first two commits and measured on arrival: 13 of 29 caught (2 early) with 1 false alarm in 35, the same on
the round's start code. They shaped: a status question followed by why it is asked ("any update? ..., need this
before the demo") and "how long does this usually take??" ask nothing new (EX-05), a program's options before its step
(``kubectl --context x -n y rollout``) are no step, a wait that gives up by its own limit (``kubectl wait``) hung
(EX-09), "tried incognito, same" (ET-05), and the Chinese, Japanese, Vietnamese and Thai rows ("还是旧的", "まだ送信
される", "vẫn trắng", "ล้นอีกแล้ว": EY). After: 17 caught (5 early), the same false alarm; EX's other misses (a
challenge or a rollout that stays pending through restarts and longer waits) are left. FA to FD (a person steering
design closely; hobbyists' servers and bots; looking things up; Codex on infrastructure with waits), written blind
in a third wave after the round's third commit and measured on arrival: 15 of 29 caught (1 early, 2 late) with no
false alarm in 35, where the round's start code caught 13 (FD-13 and FD-15 came from the readings EX had shaped);
then "partner team is asking for the hostname, eta?" (a status question asked last, after why) asks nothing new
(FD-09, not caught for it: what stays pending through a restart and an edit is left, with FC's lookups of an option the
installed version lacks); and a bisect's checkout between two runs ends an error cycle as an edit does (EZ-03's false
alarm). FE to FH (Gemini CLI and OpenCode on web and backend work; Codex editing through the shell; operations in
Claude Code and Cline; data science and numerics with a person writing in Spanish, German, Korean, Russian, French or
Indonesian), written blind in the next round's first wave and measured on arrival: 26 of 32 caught (2 early, 1 late)
with 2 false alarms in 32, the same on that round's start code. They shaped: "ok list shows. but the times r wrong"
grants the fix and reports something new (FE-09), a build's error lines fewer than every run of it since it last
passed are progress though its last error stays (FF-09: GCC 14's errors fixed a few at a time), and the person's word
("pero marzo SIGUE siendo el doble", "gleiche kurve.", "ändern gar nix", the Russian row: FH-01, FH-04, FH-07). After:
29 caught (2 early) with none. FI to FL (Claude Code's background jobs with a person writing in Japanese, Chinese or
Portuguese; front-end work in Aider's and Cursor's exports; OpenCode and Codex on Go, Rust and the JVM; mobile and
desktop apps), written blind in that round's second wave after its first two commits and measured on arrival: 18 of 32
caught (7 early, 1 late) with no false alarm. They shaped: a background check read once showing where an earlier run
of it hung, then stopped, hangs there too (FI-09: a build blocked on a lock, killed and restarted); a stop's notice is
no log of the job's; a short question how it stands in the person's language ("まだ？", "好了吗", "terminou?", "ist es
fertig?") asks nothing new; Japanese, Chinese and Portuguese reports ("同じテストのまま", "何回やるの", "一直都是", "é
o mesmo diff"). After: 21 (7 early, 2 late). And from the earlier sets: "still 500" with another exception pasted each
time, naming none of the last one's words, is the failure changing, not the same one again (DV-14).
A background job whose command ends in a pipe (``docker build . 2>&1 | tail -45``) is judged by what it printed, not
by its pipe's 0 (FI-13). FM to FP (Codex on web backends with CI and a person writing Spanish, Italian or Polish;
Cline's export on Python packaging and data pipelines; tool-heavy Claude Code with MCP tools and subagents; hard
healthy look-alikes), written blind in that round's third wave after its third commit and measured on arrival: 23 of
28 caught (1 early) with 1 false alarm in 36 (FM-13: "ancora rosso" twice while the agent's runs show the failure
moving, as in ET); nothing shaped by them. FQ to FT (test and lint loops in Aider and Claude Code; a person
code-switching or swearing; dependency and version trouble; long unattended sessions with a subtle spiral late),
written blind in a next round's first wave and measured on arrival: 28 of 32 fired (5 early) with 2 false alarms in
32, the same on that round's start code. FT-12 shaped a reading: cargo's and rustc's ``due to 17 previous errors`` is
a failing count, so clippy's lints fixed a file at a time are progress (1 false alarm after: FR-16's "ok login can
already but still cannot book", each "still" about a later step). FU to FW (dashboards checked by screenshots and a
word; sessions resumed after a compaction; the harness's own tool errors), the second wave: 19 of 24 fired (6 early)
with 1 false alarm in 24. FW shaped: an MCP tool is one step whatever it is given, its one-word arguments masked in
its error (FW-06: a pull request refused for each branch tried); a deny rule OpenCode quotes bans its command, and
``bash -c 'git push ...'`` breaks it (FW-04). After: 21 (6 early) with 1. FX to GA (Cline's export on web and mobile
apps; Gemini CLI on data and ML with a person in German, French or Italian; Claude Code heavy with TodoWrite and
subagents; Cursor's export), the third wave: 31 of 32 fired (5 early, 1 late) with 3 false alarms in 32, the same on
that round's start code. They shaped: going in circles asked ("are you going in circles? thats the 4th check run",
while the errors fall) is the person's doubt, one report (GA-06, and DD-14 of the earlier sets); the same said hedged
("18,263. barely moved", "pretty much the same", "no real change": FY-05); jest's failing test is known by the
assertion that failed under its title (FZ-11: one test failing at a later assertion after each fix). After: 31 (5
early) with 1 (FZ-14: a failure shown to be there before the work, run on the stashed tree).
GB to GE (long Gemini CLI sessions with a person; production incidents with an on-call engineer; hard healthy
look-alikes in the export forms; infrastructure as code with a person writing Dutch, Swedish, Polish, Czech, Turkish,
Indonesian or Vietnamese), the fourth wave: 24 of 28 fired (9 early) with 2 false alarms in 36, the same on that
round's start code. They shaped: "still" said of a measure the attempts moved by a sixth or more ("p99 dropped to
1.1s. still way off", then "p99 now 420ms. still higher than normal": GC-10, GD-10) says how it stands now, not that
nothing changed; and Czech as it is spoken ("pořád:" or "pořád." said first, "furt to samý", "stejná chyba": GE-11).
After: 25 (10 early) with none. GF to GI (external services with limits and outages; long Cline sessions with a
person writing Chinese, Japanese or Korean; specifications and data files checked by validators; reading and
searching without acting), the fifth wave: 21 of 32 fired with no false alarm in 32, the same on that round's start
code. GF-04 shaped a reading: a failure of the same specific class as the last one (a timeout after a timeout, in
other words: Docker's ``TLS handshake timeout``, Go's ``i/o timeout``) has not moved on. After: 22. GI's eight
spirals (the same files read again at other offsets, searches reworded, subagents asked the same question, for many
turns with nothing edited or run) are all missed: exact re-reads are caught (``rereads``), these are not.

    python bench/written_sessions.py              # every set, a line each, then the total
    python bench/written_sessions.py --set G -v   # one set, with each session's first firing
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from strict_loop.model.turns import Turn  # noqa: E402
from strict_loop.monitor.ladder import replay  # noqa: E402

SETS = {
    "A": "a person in the loop (the same problem again after claimed fixes, bans; new symptoms, design rounds)",
    "B": "the agent alone (the same failure through edits by any means, varied commands, restarts, noise)",
    "C": "long productive sessions of 60 to 87 turns, four with a spiral in them",
    "D": "a person in the loop and the agent alone, with Italian and Dutch",
    "E": "a person in the loop and the agent alone, with Polish and Swedish",
    "F": "a person in the loop and the agent alone, with Turkish and Korean",
    "G": "a person in the loop and the agent alone, with Hindi in Latin script and Vietnamese",
    "H": "Gemini CLI and Codex sessions with a person in the loop (reports in Indonesian, Czech, Greek; bans; undoing)",
    "I": "Codex sessions, mostly the agent alone (restarts, hangs, dependency loops, varied commands)",
    "J": "long Claude Code sessions, 14 to 50 turns, the spiral after a productive stretch",
    "K": "the hard cases in all three harnesses: spirals that look busy, healthy sessions that look stuck",
    "L": "everyday web, backend, data and infra work in all three harnesses, a person in the loop or not",
    "M": "the agent alone: mobile, data pipelines, ML training, monorepos, infra as code, embedded builds",
    "N": "Cline and Cursor with a person steering (feedback inside results, edits an export lost, restarts, polls)",
    "O": "Aider and Codex with a person (pasted tracebacks, failed SEARCH blocks, bans, restarts, hangs)",
    "P": "long Claude Code and Gemini CLI sessions, the spiral after a productive stretch, a person present",
    "Q": "3 AM work in all six harnesses: auth, migrations, CI, native libraries, OOM, formatters, a wrong value",
    "S": "operations, the agent alone: restarts, crash loops, terraform, CI reruns, redeploys, hangs, reconnects",
    "T": "a person in the loop in Claude Code, Gemini CLI and Codex: the same bug again after each claimed fix",
    "U": "Codex (and Gemini CLI) operations: shell edits, varied commands, restarts, hangs, crash loops polled",
    "V": "long sessions in Claude Code and the export forms, a stuck stretch amid useful work (guards, bad folders)",
    "W": "a developer's own long Claude Code sessions in a big repository, the person terse, many kinds of tools",
    "Y": "front-end work a person watches in the browser, in Cursor, Cline, Gemini CLI and Codex, several languages",
    "Z": "less common toolchains (Elixir, Swift, Haskell, Laravel, .NET, Terraform, Ansible, Helm), mostly alone",
    "AA": "a person in the loop in Claude Code, Gemini CLI, Codex and Cline, a third of them in other languages",
    "AB": "a person judging what the agent cannot see (front-end, bots, exports) in Codex, Claude Code, Gemini CLI",
    "AC": "web and backend work, mostly the agent alone, in Cline, Claude Code and Gemini CLI",
    "AD": "long messy sessions (50 to 64 turns), a subtle stuck stretch amid useful work, Claude Code, Codex, Gemini",
    "AE": "healthy sessions that look stuck (TDD, bisect, sweeps, polls, restarts after real changes), few spirals",
    "AF": "an hour with a person present in Codex, Claude Code and Gemini CLI, spiral kinds evenly mixed",
    "AG": "Codex and Claude Code off the web: data scripts, CLIs, migrations, services, third-party APIs, a person by",
    "AH": "a developer's own tooling (dev servers on fixed ports, MCP servers, dashboards), Claude Code and Gemini CLI",
    "AI": "games, devices, papers, sheets and sites in Gemini CLI, Claude Code and Codex, some in other languages",
    "AJ": 'healthy work a terse, impatient person watches ("nope", "??", "still X" of new things), few spirals',
    "AM": "infrastructure and builds, the agent mostly alone (rollouts, CI reruns, hangs, varied flags), 3 harnesses",
    "AN": "long product work with a person by, the spiral subtle after a productive stretch; hard healthy look-alikes",
    "AO": "a person trying the work on their side (apps, extensions, bots, emails), in Japanese, Portuguese, French",
    "AP": "Python and data work (lock files, notebooks, training under timeouts, packaging, type checks), 3 harnesses",
    "AQ": "networking, auth and TLS plumbing (CAs, OAuth loops, CORS, proxies, SSH, WireGuard) in four harnesses",
    "AR": "long refactors and upgrades whose error counts move (tsc, mypy, eslint, React, Django, Spring, Angular)",
    "AS": "databases, concurrency and performance (flaky tests, pools, lag, slow queries, leaks, benchmarks)",
    "AT": "pair work where the person tries each change and reports back, a third in French, Russian, Chinese, Korean",
    "AU": "cloud and platform CLIs (aws, gcloud, az, terraform, pulumi, wrangler, vercel): permissions, quotas, waits",
    "AV": "mostly healthy sessions that look stuck (TDD, bisect, sweeps, greps verifying a removal), few spirals",
    "AW": "systems programming, mostly the agent alone (Rust, C and C++, Go, Zig: linkers, sanitizers, cgo, bisects)",
    "AX": "machine learning and data work (training, sweeps, OOM, NaN, dbt, Spark, notebooks), a person checking in",
    "AY": "a person in the loop in Hebrew, Thai, Ukrainian, Persian, Malay, Romanian, Hungarian, in four harnesses",
    "AZ": "package managers, dependency resolution and CI pipelines (resolvers, lockfiles, reruns, pre-commit, images)",
    "BA": "OpenCode sessions (its tool names and output forms), everyday work, half with a person (English, es, de)",
    "BC": "performance work, mostly the agent alone: latency, query plans, benchmarks, memory, bundle size, startup",
    "BD": "a person trying product work on their side, half in es, pt, fr, de, it, ja, ko, zh, half in terse English",
    "BE": "long Codex sessions (25 to 40 turns) on people's own projects, the person checking each result",
    "BF": "long Gemini CLI sessions (25 to 36 turns), personal projects, a person checking each result, es, de, fr",
    "BG": "documentation and site work (Hugo, Jekyll, Docusaurus, MkDocs, Sphinx, LaTeX, link checkers), 2 harnesses",
    "BH": "mobile and desktop apps (Xcode, Gradle, Flutter, React Native, Electron, Tauri), a person on their device",
    "BI": "the tests themselves (flaky, snapshot, end-to-end, coverage, mutation, CI-only), Claude Code, Codex, Cline",
    "BJ": "a person in the loop in Arabic, Hindi, Bengali, Swahili, Tagalog, Russian and Latin-American Spanish",
    "BK": "Claude Code's background shells and rarer tools (BashOutput, KillShell, WebFetch, Task, MCP browser tools)",
    "BL": "git and code review (rebases, bisects, hooks, signing, submodules, LFS, protected branches), 3 harnesses",
    "BM": "a person who is no developer (a designer, a PM, a scientist, a student, a shop owner) in four harnesses",
    "BN": "long Claude Code sessions running servers, builds and suites in the background (task output read, notices)",
    "BO": "data engineering (SQL, dbt, Airflow, Dagster, Spark, pandas, polars, exports), mostly the agent alone",
    "BP": "security and maintenance fixes (audits, CVE upgrades, secrets, CSP, CORS, TLS, SAST), a maintainer by",
    "BQ": "embedded and IoT (Arduino, PlatformIO, ESP-IDF, Zephyr, OpenOCD, MQTT), a person with the board on the desk",
    "BR": "apps on LLM APIs (429s, streaming, tool schemas, vector stores, evals, local models), a person in de and pt",
    "BS": "Windows and WSL (PowerShell errors, CRLF, long paths, MSVC and vcpkg, locked files, Docker Desktop)",
    "BT": "games and graphics (Godot, Unity, Bevy, three.js, shaders), a person play-testing, some in es and ko",
    "BU": "build systems and monorepos (Bazel, Nx, Turborepo, pnpm, CMake, Meson, Nix, Gradle, sbt, Make)",
    "BV": "a person in zh, ja, de, pt-BR, fr, tr on product work (the same problem again, bans, new requests)",
    "BW": "web backends (Rails, Laravel, Phoenix, Django: workers, mailers, N+1, dependency trouble), a person by",
    "BX": "front-end work checked by end-to-end and visual tests, mostly in Cline's export and Codex",
    "BY": "Kubernetes and GitOps at night (Helm, Argo CD, Flux, cert-manager, PVCs, OOMKilled), an SRE checking in",
    "BZ": "long sessions of 28 to 40 turns on a developer's own projects, the stuck stretch subtle, a terse person",
    "CA": "scientific computing (numerics to a tolerance, f2py, MPI, Slurm jobs polled, conda, R, Julia, notebooks)",
    "CB": "a person in vi, id, pl, nl, it, ko, es-ES on everyday app work (still, again, how many times; requests)",
    "CC": "Go and Rust services (gRPC, sqlx and sqlc, the race detector, cross-compiling, containers), mostly alone",
    "CD": "a person trying each change on their phone, terse non-native English (PWAs, push, iOS Safari, payments)",
    "CE": "CI pipelines (GitHub Actions, GitLab CI, Jenkins, CircleCI: reruns, forks, self-hosted runners, matrices)",
    "CF": "bots and integrations (Slack, Discord, Telegram, webhooks, Sheets OAuth, Lambda), a person checking, es, de",
    "CG": "a developer's own dashboards and dev servers checked in the browser, answers of a word or a screenshot",
    "CH": "finding things in monorepos and machines (the wrong folder, ~ quoted, a lost variable, ignored files)",
    "CI": "deploys through pipelines with long waits (Actions, GitLab, CDK stacks, Terraform, Vercel, Fly.io)",
    "CJ": "mobile apps (Expo, Flutter, Xcode, Gradle, pods, deep links), a person testing on a phone, fr, pt, ja",
    "CK": "operations on servers (logs, systemd, nginx, cron, certificates, disks, containers, namespaces)",
    "CL": "a person pasting what they see, their words after it, in fr, es, de, it or terse English; backends",
    "CM": "internal tools a non-developer colleague tries (ops, finance, support), in nl, pl or pt, screenshots",
    "CN": "machine learning and data work, the agent mostly alone (training, evals, OOM, notebooks, configs)",
    "CO": "long unattended migrations and refactors (upgrades, strict mode, ports, ORM switches), edits by any means",
    "CP": "Codex on Rust and Go backends, mostly alone (the borrow checker, flaky tests, a port held, version pins)",
    "CQ": "front ends a person checks in the browser, in es or it (Gemini CLI: CSS, Vite, SvelteKit, React)",
    "CR": "infrastructure as code (Terraform, Helm, Ansible, Actions watched), Claude Code and OpenCode",
    "CS": "databases and data pipelines in Cline and Cursor exports (migrations, ORMs, dbt, Airflow, pandas)",
    "CT": "desktop apps a person runs (Electron, Tauri, Qt, a menu-bar app), in de or nl; signing and packaging",
    "CU": "Codex with a person on Python (training scripts, FastAPI, click, uv and poetry), tracebacks pasted",
    "CV": "a small server Gemini CLI runs mostly alone (systemd, nginx, cron, certbot, ufw, backups, DNS)",
    "CW": "firmware and games tested on hardware or by playing (PlatformIO, ESP-IDF, Godot, Bevy, Unity), Aider",
    "CX": "small sites of people who are no developers (Apps Script, Shopify, WordPress, Netlify), in es or pt",
    "CY": "Codex alone on TypeScript monorepos (pnpm, turbo, tsc, jest and vitest, Next), edits by shell commands",
    "CZ": "long jobs watched (training, loads, backfills, builds, queues, DNS): waits that move and waits that do not",
    "DA": "services that crash (Compose, Kubernetes, systemd, supervisord, Lambda), their logs read, four harnesses",
    "DB": "a Python web backend with a developer in the loop ('still 500', 'same thing', tracebacks pasted)",
    "DC": "Codex on command-line tools in Rust, Go, C and Zig (cross builds, linking, packaging), edits by shell",
    "DD": "cloud pipelines (Dataflow, Vertex AI, SageMaker, Glue, Step Functions, EMR): submitted, watched, rerun",
    "DE": "mobile apps a person tests on a phone (Expo, Flutter, Gradle, CocoaPods), in de or es; OpenCode and Cline",
    "DF": "Rails, Laravel and Phoenix apps with a person in the loop writing in French or Japanese (Claude Code)",
    "DG": "Codex with a person on analytics and SQL (dbt, BigQuery, Snowflake, pandas, dashboards), some in pt",
    "DH": "research computing (Slurm jobs, MPI and CUDA builds, conda, Snakemake, Nextflow), Gemini CLI and Claude",
    "DI": "authentication and networking with a person trying each step (OAuth, cookies, CORS, TLS, proxies, SSH)",
    "DJ": "web scraping and browser automation (Playwright, Selenium, Scrapy, 403s, pagination), Claude Code and Codex",
    "DK": "smart contracts and web3 tooling (Hardhat, Foundry, Anchor, RPC limits, nonces), Gemini CLI and OpenCode",
    "DL": "media and documents a person opens (ffmpeg, ImageMagick, whisper, PDFs), in pt, it or zh; 3 harnesses",
    "DM": "Java and .NET backends (Spring Boot, Maven, Hibernate, EF Core, Kafka), Cursor, Cline and Claude Code",
    "DN": "everyday app work in the Aider, Cursor and Cline exports, a person steering, some in French or Korean",
    "DO": "Codex on people's own projects (bots, extensions, a blog, a home lab), CI watched, edits by shell",
    "DP": "a developer's own tooling in long Claude Code sessions (subagents, MCP tools, background shells)",
    "DQ": "Gemini CLI on personal projects (Home Assistant, a Pi, a bot), a person in es, pt, de or en trying each",
    "DR": "front ends a person looks at in the browser (Next.js, Vue, Svelte, Tailwind), Claude Code, Cursor, es, ja",
    "DS": "backend APIs in Cline's export (Express, Nest, FastAPI, Django REST, Go), feedback in completion results",
    "DT": "Codex on data analysis (pandas, polars, notebooks, DuckDB), a person checking numbers and charts, de, pt",
    "DU": "Gemini CLI headless runs (upgrades, lint and type fixes, migrations in Python, TypeScript, Go, Java)",
    "DV": "a person pasting logs and traces with a few words in ru, pl, tr or terse English, Claude Code and Codex",
    "DW": "OpenCode sessions on web apps, infrastructure scripts and CLIs, mostly the agent alone",
    "DX": "a person setting limits and refusing calls ('no new deps', 'never force push'), three harnesses",
    "DY": "restart and hang loops (ports held, 409s, '0 peers', compose cycles, hanging tests), five harnesses",
    "DZ": "payments and shops (Stripe webhooks, checkout, tax rounding, Shopify sync), a person testing, fr, nl",
    "EA": "language tooling, the agent alone (tree-sitter, LSP servers, Babel and SWC plugins, LLVM passes, a VM)",
    "EB": "developers' own repositories in long Claude Code sessions, a terse person; some in Cursor's, Cline's form",
    "EC": "accessibility, i18n and email (screen readers, RTL, plurals, Outlook), a person in ar, he, pl or ja",
    "ED": "self-hosting at home (Nextcloud, Jellyfin, Pi-hole, Traefik, restic), a hobbyist in de, es or English",
    "EE": "charts, notebooks and dashboards a person judges by eye (matplotlib, plotly, D3, Grafana), es, it",
    "EF": "the person's word in English in its subtle forms (sarcasm, one word, rhetorical questions, 'but')",
    "EG": "publishing and releases, mostly alone (npm, PyPI, cargo, GHCR, notarization, Homebrew taps)",
    "EH": "a person refusing calls and setting rules ('don't touch X', 'no new deps'), some in fr or es",
    "EI": "database migrations and ORMs, mostly alone (Prisma, Alembic, Flyway, Liquibase, Django, sqlx)",
    "EJ": "long Gemini CLI and OpenCode sessions on people's own products, the spiral after a productive stretch",
    "EK": "observability and incidents (alerts, Loki and Elasticsearch queries, Sentry, collectors), an SRE by",
    "EL": "a person in de, it, pt or nl trying product work themselves (a booking site, a plugin, a theme, a tool)",
    "EM": "build and test failures in ten languages, the agent alone (Codex without exit codes, and Claude Code)",
    "EN": "servers, containers and jobs started, restarted and watched (background shells, compose, pods, cron)",
    "EO": "looking for things (the wrong folder, a moved file, a copy never loaded, another shell's variable)",
    "EP": "editor, shell and terminal set-ups a person tries (Neovim, tmux, zsh, VS Code, dotfiles), English or es",
    "EQ": "long Codex sessions on web apps, the person trying each claimed fix in their browser and reporting back",
    "ER": "Claude Code's busy tooling (TodoWrite, Task, background shells, WebSearch, MCP tools) on own repositories",
    "ES": "tuning a person judges round by round (copy, spacing, timing, levels, ranking, a prompt), en, it, pt",
    "ET": "SaaS web apps with a person: the same failure behind new words, or 'still broken' of a new one each time",
    "EU": "Codex alone restarting long-lived processes (uvicorn, celery, nodemon, compose, Kafka, websockets)",
    "EV": "Gemini CLI and OpenCode on everyday work: hangs, timeouts, searches in the wrong place; es, de, fr",
    "EW": "data work a person checks by its numbers (SQL, pandas, polars, dbt, an ETL job), Codex, Claude, Gemini",
    "EX": "infrastructure with long waits (terraform, rollouts, jobs, DNS and certificates, restores), a person by",
    "EY": "front ends a person tries on a phone, writing in Japanese, Korean, Chinese, Vietnamese or Thai",
    "EZ": "hard healthy look-alikes in all harnesses (TDD, falling counts, bisects, flaky rates, benchmarks)",
    "FA": "a person steering design closely ('no, not like that', 'closer', 'go back to the first'), mostly healthy",
    "FB": "hobbyists' servers and bots (Minecraft, Discord, Home Assistant, a Pi), non-native English, pt-BR, es",
    "FC": "looking things up (docs fetched, node_modules grepped, --help, an option the installed version lacks)",
    "FD": "Codex alone on infrastructure with waits (terraform, kubectl, cloud CLIs, registries, DNS, queues)",
    "FE": "Gemini CLI and OpenCode on web and backend work: a person's reports, builds, dev servers, hangs",
    "FF": "Codex editing through the shell (sed -i, heredocs, git checkout --) on Python, TypeScript and C/C++",
    "FG": "operations in Claude Code and Cline (compose, systemd, nginx, Kubernetes, Terraform, bots, queues)",
    "FH": "data science, ML and numerics in Claude Code, Cursor and Aider, a person writing es, de, ko, ru, fr, id",
    "FI": "Claude Code's background jobs, CI watched and backfills polled, a person writing ja, zh or pt",
    "FJ": "front-end work in Aider's and Cursor's exports, the person's words about what the browser shows",
    "FK": "OpenCode and Codex on Go, Rust and the JVM: dependency conflicts, scaffolds listed, generators, hangs",
    "FL": "mobile and desktop apps in Gemini CLI and Claude Code (Expo, Flutter, Xcode, Android, Electron)",
    "FM": "Codex on web backends whose CI runs on GitHub Actions, a person writing es, it or pl",
    "FN": "Cline's export on Python packaging and data pipelines (poetry, uv, conda, Airflow, dbt, notebooks)",
    "FO": "tool-heavy Claude Code: MCP tools (SQL, a browser, GitHub, files), subagents, docs fetched and searched",
    "FP": "hard healthy look-alikes in all harnesses, 4 subtle spirals among 12 healthy sessions",
    "FQ": "test and lint loops in Aider and Claude Code (/test, /lint, failed SEARCH blocks), a person in en or de",
    "FR": "a person code-switching or swearing (Hinglish, Spanglish, Taglish, Singlish, Franglais, ALL CAPS)",
    "FS": "dependency and version trouble, mostly alone (pip, uv, poetry, npm, cargo, Maven, NuGet, Go, images)",
    "FT": "long unattended Claude Code and OpenCode sessions, a subtle spiral after a productive stretch",
    "FU": "a developer's dashboards checked by screenshots and a word or two ('nope', 'same', 'still 0')",
    "FV": "sessions resumed after a compaction or a handoff, in Claude Code, Codex and Gemini CLI",
    "FW": "the harness's own tool errors (edits not matching, files not read, denials, timeouts, MCP errors)",
    "FX": "Cline's export on web and mobile apps, the person answering each completion, a third in es or pt",
    "FY": "Gemini CLI on data and ML scripts, a person checking numbers and charts in de, fr, it or English",
    "FZ": "Claude Code heavy with TodoWrite and subagents on refactors, mostly alone after the request",
    "GA": "Cursor's export on everyday app work: the person's words and the terminal's output are what shows",
    "GB": "long Gemini CLI sessions on a person's own repositories, the person trying each change, terse English",
    "GC": "production incidents with an on-call engineer pasting numbers and logs, in Codex and Claude Code",
    "GD": "hard healthy look-alikes in the export forms, 4 subtle spirals among 12 healthy sessions",
    "GE": "OpenCode and Codex on infrastructure as code, a person writing nl, sv, pl, cs, tr, id or vi",
    "GF": "external services with limits and outages (429s, quotas, 503s, TLS timeouts, DNS), mostly alone",
    "GG": "long Cline export sessions on full-stack work, a person writing zh, ja or ko",
    "GH": "specifications and data files checked by validators (spectral, kubeconform, actionlint, buf, squawk)",
    "GI": "reading and searching without acting (re-reads, reworded searches, subagents asked again)",
}
EARLY = 2
"""How many turns before the reviewer's onset a first firing still counts as caught."""


def sessions(name: str) -> list[dict]:
    with gzip.open(ROOT / "bench" / "written" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


HOOKLESS = ("cline", "cursor", "aider")
"""Harnesses whose sessions come from their exports: no hook sends the agent's words or an exit code."""
HARNESSES = ("claude", "codex", "gemini", "opencode", *HOOKLESS)
"""The forms a written session takes: its harness's tool names and outputs (Codex sends no exit code; OpenCode's plugin
sends the shell's exit code and the agent's words, as Claude Code's and Gemini CLI's hooks do)."""


def outcome(session: dict) -> tuple[str, int | None]:
    """``caught``, ``early``, ``late`` (after the last turn where stopping still helps), ``missed``, ``quiet`` or
    ``false alarm``, and the first firing."""
    turns = session["turns"]
    if session["harness"] == "codex":
        turns = [{k: v for k, v in t.items() if k not in ("exit_code", "error")} for t in turns]
    elif session["harness"] in HOOKLESS:  # the export's error flag stays, as the corpora keep it
        turns = [{k: v for k, v in t.items() if k not in ("exit_code", "thought")} for t in turns]
    fired = replay([Turn.model_validate(t) for t in turns])[0].fired_at
    if session["expect"] == "quiet":
        return ("quiet" if fired is None else "false alarm"), fired
    if fired is None:
        return "missed", None
    if session.get("end") is not None and fired > session["end"]:
        return "late", fired
    return ("early" if fired < session["onset"] - EARLY else "caught"), fired


_COLUMNS = ("spirals", "caught", "early", "late", "healthy", "false alarm")
"""What the table counts, per set and in all."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", choices=sorted(SETS), help="only these sets")
    parser.add_argument("-v", "--verbose", action="store_true", help="each session's first firing")
    args = parser.parse_args()
    total = dict.fromkeys(_COLUMNS, 0)
    print(f"{'set':4} {'spirals':>8} {'caught':>7} {'early':>6} {'late':>5} {'healthy':>8} {'false alarms':>13}  what")
    for name in args.set or sorted(SETS):
        counts = dict.fromkeys(_COLUMNS, 0)
        for session in sessions(name):
            kind, fired = outcome(session)
            counts["spirals" if session["expect"] == "fire" else "healthy"] += 1
            counts[kind] = counts.get(kind, 0) + 1
            if args.verbose:
                where = f"onset={session['onset']!s:4} fired={fired!s:4}"
                print(f"  {session['name']:48} {session['harness']:6} {where} {kind}")
        for key in total:
            total[key] += counts.get(key, 0)
        print(
            f"{name:4} {counts['spirals']:8} {counts['caught']:7} {counts['early']:6} {counts['late']:5} "
            f"{counts['healthy']:8} {counts['false alarm']:13}  {SETS[name]}"
        )
    recall = total["caught"] / total["spirals"] if total["spirals"] else float("nan")
    rate = total["false alarm"] / total["healthy"] if total["healthy"] else float("nan")
    print(
        f"all: recall {recall:.2f} ({total['early']} more fired early, {total['late']} late), false alarms {rate:.3f}"
    )


if __name__ == "__main__":
    main()
