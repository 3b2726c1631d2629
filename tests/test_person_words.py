"""The person's word as people write it after a claimed fix: terse ("still white", "same. blank."), counting ("third
time"), rebuking ("I said no new dependencies"), naming a place not to edit. Each report has a counterpart that must
stay a request, a question or a remark. Written from a review of whole sessions (a person in the loop, claimed fixes
between their messages) by an engineer who had not seen the rules."""

from __future__ import annotations

import pytest
from spiral_claims import check_claims, play, window_of

from strict_loop.monitor import person
from strict_loop.monitor.person import FORCE_FLAGS, forbidden

REPORTS = [
    "you already read that file. what are you looking for?",  # a look taken again: a complaint, not a question
    "gleich. M\u00c3\u00bcller, Schr\u00c3\u00b6der, alles kaputt",  # de: same. all broken
    "nope. exakt das gleiche im excel",  # de: exactly the same in excel
    "h\u00f6rst du mir zu? der DOWNLOAD BUTTON im admin. nicht das cron script",  # de: are you listening?
    "are you even listening? the button in admin, not the cron script",
    "still a string",  # the whole message a state that stayed
    "still an empty array",
    "nope. new terminal, jot --version -> 0.3.1",  # a "nope" said as a sentence of its own, then what they see
    "sitll borken",  # typed in a hurry
    "same eror agian after your fix",
    "20 min on this, same 3 errors every single time. compare where the files are written",  # a count in between
    "WHAT did I say. stop trying to delete the invoices.",
    "NO. flush wipes everything. I literally just said keep my data",
    "CARA. de novo na migration.",  # pt: again, first
    "eu falei pra N\u00c3O mexer na migration!!",  # pt: I said not to
    "ya te dije que no toques el archivo",  # es
    "still failing?",  # a report said as a question, after a claimed fix
    # the news first: "still" or "same" opening a clause, whatever the words for the problem
    "still white",
    "still redirects to /login after I sign in",
    "rebuilt the image, still 3 replicas crashlooping",
    "deployed at noon. still double-charging on the second click",
    "Still logs me out after 5 minutes.",
    "hmm still prints the old version number",
    "same. blank.",
    "same 502 from the gateway, nothing changed",
    "exactly the same. cleared the cache too",
    "it's still the old favicon",
    # the agent did it again, the old problem is back
    "you just did it again, the migration file is edited",
    "you reverted my change again!",
    "and the original 'Unclosed client session' is back",
    "back to the original crash",
    "receipt email not sent again.",
    "is not working still. same blank pdf",
    "the plan output is byte-for-byte the same",
    "the page looks exactly the same",
    # said not to, and done anyway
    "I literally said no new dependencies. remove it",
    "I said DO NOT run the e2e suite, it hits staging",
    "that is a skip. literally what I said not to do",
    "I've told you twice.",
    "I told you that folder is generated",
    # other languages
    "immer noch leer nach dem Neustart",
    "Nein. Wieder derselbe Export.",
    "otra vez lo mismo, probé en dos navegadores",
    "encore la même page blanche",
    "de novo o mesmo erro no login",
    "Ancora vuoto il grafico dopo il deploy",
    "niente da fare, sempre lo stesso errore",
    "Nog steeds een lege pagina na het herladen",
    "Nee. Weer dezelfde fout bij het opslaan",
    # a past deed of the agent's done again, or "again" said first
    "You force pushed AGAIN. the history is gone",
    "you bumped the version again without asking",
    "Again?! that is a new dependency",
    "AGAIN. the applied migration is edited",
    "I've said it twice now: leave the lockfile alone",
    "Yep: the login page again.",
    "16:30 again.",
    "Still. The. Same. Page.",
    "checked on staging, the invoice still says 0 EUR",
    "Fortfarande samma fel efter omstarten",
    "Nadal nie dzia\u0142a po wdro\u017ceniu",
    # more languages: Czech, Greek, Indonesian, Turkish, Vietnamese, Korean, Arabic, Hindi in Latin script
    "Po\u0159\u00e1d stejn\u00e9. Pos\u00edl\u00e1m screenshot.",
    "\u0391\u03ba\u03cc\u03bc\u03b1 \u03c4\u03bf \u03af\u03b4\u03b9\u03bf:",
    "masih sama aja, tombolnya nggak jalan",
    "h\u00e2l\u00e2 ayn\u0131 hata",
    "v\u1eabn l\u1ed7i",
    "\uc5ec\uc804\ud788 \uc548 \ub3fc\uc694",
    "\u0646\u0641\u0633 \u0627\u0644\u062e\u0637\u0623",
    "abhi bhi same error aa raha hai",
    # Japanese and Hindi in Latin script, as people write them after a fix: "rebuilt it but it's the same", "the 500
    # did not change", "still the same error", "didn't work", "still 401"
    "docker compose up --build \u3057\u76f4\u3057\u307e\u3057\u305f\u304c\u540c\u3058\u3067\u3059\u3002",
    "panic \u306f\u306a\u304f\u306a\u308a\u307e\u3057\u305f\u304c\u3001500 \u306f\u5909\u308f\u3089\u306a\u3044"
    "\u3067\u3059\u3002",
    "\u307e\u3060\u540c\u3058\u30a8\u30e9\u30fc\u3067\u3059\u3002",
    "\u3055\u3063\u304d\u3068\u5168\u304f\u540c\u3058\u3067\u3059\u3002",
    "nahi hua. maine network tab dekha",
    "abhi bhi 401 aa raha hai bhai",
    "kuch fark nahi pada",
    "to samo",
    "you said 'fixed' but the modal still opens and closes instantly",
    "Hmm, I restarted everything and the websocket still disconnects after exactly 60s",
    "hmm. refresh -> blank page. like before.",
    "the dropdown is still behind the header. z-index didn't do anything",
    "lol no. the CSV export still has the dates off by one day",
    "segfault is gone, wait no, it's back. same backtrace:",
    "Your fix changed the error message but not the problem",
    "Tu as dit que c'\u00e9tait corrig\u00e9 mais la page est toujours blanche",
    "Thanks for the change, but I'm afraid it didn't fix anything, the CSV export still drops the last row.",
    "I restarted the server like you said and it's still timing out after 30s. Nothing's different.",
    "you said you fixed it but `npm run build` fails exactly like before:",
    "nope \U0001f643",
    "Nada, sigue dando 500 al hacer login. Revisa los logs esta vez.",
    "\u0432\u0441\u0451 \u0435\u0449\u0451 \u043f\u0430\u0434\u0430\u0435\u0442 \u0441 "
    "\u0442\u043e\u0439 \u0436\u0435 \u043e\u0448\u0438\u0431\u043a\u043e\u0439",
    # seeing again what they saw, said politely inside a longer message
    "Thanks! Hmm, I'm afraid I'm seeing the same thing as before, it flips back to light after a refresh.",
    "the button remembers now but the page is white. That's kind of what it did last time too, just with the label",
    "hmm, I'd love to say it works but it's the same white page on refresh for me, only the toggle remembers",
]
CIRCLING = [
    "hello?? youve opened cartSlice like 5 times. whats the actual problem",  # "youve" read as meant
    "dude. Vec. clone. please. stop fighting the borrow checker",
    "we've been here before, that's the webhook file again. think about the ORDER things happen in",
    "thats 3 times the exact same thing, i don't think it's flaky after all",
    "THIRD time. the e2e suite IS playwright.",
    "are you kidding me. third time.",
    "that's papering over it again, fourth time. fix the cause",
    "this is the 3rd fix that changed nothing",
    "4 tries. look at what goes into the bundle",
    "we're ping-ponging between two warnings",
    "you keep bouncing between the two errors",
    "you reintroduced the same bug from this morning",
    "es la cuarta vez que me dices que est\u00e1 listo",
    "das ist jetzt der dritte Versuch",
    "third force push. stop.",
    "Fourth package in a row.",
    "you did it a third time, with sed now",
    "\u00e8 la terza volta che mi dici che funziona",
    "dit is nu de derde keer",
    "we draaien in rondjes",
    "I really appreciate the effort! Unfortunately I think we're back where we started? Refresh shows the light page.",
    "it's been 14 for a while now, the errors just move around",
    "this is whack-a-mole",
    "You've now switched between these two approaches three times. Stop.",
    "we've been through this already. you suggested downgrading react twice now",
    "this is the 4th time you've 'fixed' this the same way",
    "d\u00e9j\u00e0 vu. you literally proposed this an hour ago and it didn't work then either",
    "for the nth time, the config lives in ~/.config/app/settings.yaml, not in the repo",
    "stop repeating yourself. you already told me to clear the cache, I did, three times",
    "back to square one. this is the exact code you wrote 20 minutes ago",
    "I've told you twice already that we can't use lodash in this project",
    "T\u00f3\u010d\u00edme se v kruhu.",
    "kita muter-muter terus",
    "\u043c\u044b \u0445\u043e\u0434\u0438\u043c \u043f\u043e \u043a\u0440\u0443\u0433\u0443",
    "STOP running the whole suite. that's 3 times, 20 minutes of my laptop gone. ONLY tests/api/test_invoices.py",
    "still flashes. that's 5 times now",
    "ok stop. that's three times now you've tried to wipe that table in different ways. why",
    "tamb\u00e9m n\u00e3o quero migration nova. estamos andando em c\u00edrculos.",  # pt
    "\u3053\u308c\u3067\uff14\u56de\u76ee\u3067\u3059\u3002\u3050\u308b\u3050\u308b\u56de\u3063\u3066"
    "\u307e\u305b\u3093\u304b\uff1f",  # ja: the 4th time now; going round and round?
    "\u3053\u308c\u3067\u4e09\u56de\u76ee",  # ja: this makes three
    "\u8fd9\u662f\u7b2c\u4e09\u6b21\u4e86\uff0c\u8fd8\u662f\u767d\u5c4f",  # zh: the third time, still blank
    "\uc774\ubc88\uc774 \ub124 \ubc88\uc9f8\uc608\uc694",  # ko: this is the fourth time
    "hum circle me ghoom rahe hai yaar. maine teen baar bola client/src/api.js",  # hi: going in circles, said 3 times
    "hello?? you've been reading the same 3 files for like 10 minutes. what is the actual problem",
    "you keep running the same test and expecting something else",
    "ARE YOU KIDDING ME. that's the second force push. maria's push got rejected",
    "Schon wieder?!?! Dreimal jetzt. migrate:reset droppt die DB!",  # de: again?! three times now
    "ich hab dir das schon dreimal gesagt",  # de: I've told you three times already
    "d\u00e9j\u00e0 trois fois que je te le dis, le token expire",  # fr: three times already I tell you
    "ya van tres veces que falla igual",  # es: three times now it fails the same
    "j\u00e1 s\u00e3o tr\u00eas vezes, olha o log",  # pt: that's three times already
]
NOT_REPORTS = [
    "still need tests for the importer though",
    "still works on my ipad too, nice",
    "still a bit too light, go darker",
    "Still, I'd like the header darker",
    "still looks good on mobile",
    "we still have to document the CSV format",
    "still waiting on CI, will tell you",
    "It's still a draft, don't merge it",
    "same for the footer please",
    "same as the header but smaller",
    "same goes for the admin page",
    "you can run it again now",
    "you should try it again with the flag",
    "third time's the charm, try once more",
    "the third time it runs, it crashes",
    "after 3 attempts, the account should be locked",
    "second: the footer links are wrong",
    "it fails every third reload",
    "I said earlier the config is in settings.py, use that",
    "make sure the output stays the same",
    "the public API is the same, only internals changed. go on",
    "nope, not that file, the other one",
    "ich m\u00f6chte immer noch die alte Farbe",
    "encore une chose : ajoute un bouton",
    "Second step done.",
    "Second, add the tests.",
    "Again, please run the migration with the new flag",
    "you fixed it again, thanks!",
    "you can run it again now",
    "ancora una cosa: aggiungi i test",
    "weergave van de lijst aanpassen",
    "Nice to see it green again!",
    "thanks again!",
    "Sorry again.",
    "Let's try that again.",
    "the API still returns JSON, good",
    "use the same colors as before for the header",
    "keep the same layout as before please",
    "is it the same error as before?",
    "Now add the same page as before but for admins",
    "move the errors around into one file please",
    "masih perlu tombol simpan di halaman profil",  # Indonesian: still needs a save button (a request)
    "Tetap tambahkan tes ya",
    "ancora una cosa: il footer",
    "show the errors around line 40",
    "you can run it 3 times to check flakiness",
    "you should call it twice",
    "Still on the auth stuff: add a refresh token endpoint next",
    "translate the error messages into German, same keys",
    "not the same error anymore, now it's a timeout instead of the 401",
    "the server is back up, thanks",
    "better. still slow-ish though, before the redesign it was ~300ms",  # the attempt helped: what is left is news
    "closer, but the header still overlaps on mobile",
    "much better than before, still a bit of lag on scroll",
    "still pending?",  # asks how a job stands: nothing was seen
    "that's 3 times faster than before, nice",
    "Stil und Farben wie im Header bitte",  # German: style, not a slip of "still"
    "de novo, por favor, com o m\u00f3dulo de pagamentos",  # pt: again please, for the payments module (a request)
    # ja: do the footer the same way; the colour is the header's; keep the layout as it is; the 4th retry worked
    "\u30d5\u30c3\u30bf\u30fc\u3082\u540c\u3058\u3088\u3046\u306b\u3057\u3066\u304f\u3060\u3055\u3044",
    "\u8272\u306f\u30d8\u30c3\u30c0\u30fc\u3068\u540c\u3058\u3067\u3059\u3002",
    "\u30ec\u30a4\u30a2\u30a6\u30c8\u306f\u5909\u308f\u3089\u306a\u3044\u3088\u3046\u306b\u3057\u3066",
    "4\u56de\u76ee\u306e\u30ea\u30c8\u30e9\u30a4\u3067\u6210\u529f\u3057\u307e\u3057\u305f",
    "abhi bhi ek button chahiye profile page pe",  # hi: still need a button on the profile page (a request)
    "you've been using the same font as the header, good",
    "this is the second migration in this PR, fine",
    "\U0001f44d still missing tests for the parser edge cases though. quoted UAs with spaces",  # work not done yet
    "still one thing, CI runs go vet and it's red",  # one more request
    "Bitte f\u00fchre die Tests dreimal hintereinander aus",  # de: run the tests three times in a row (a request)
    "lance-le trois fois maintenant pour voir si c'est stable",  # fr: run it three times now to see (a request)
    "mach das zweimal, einmal mit Cache und einmal ohne",  # de: do it twice, with and without the cache
    "still a good idea to cache it though",
    "it is still a draft, leave the intro alone",
    "no. use the v2 endpoint",  # corrects the plan
    "das gleiche f\u00fcr die Tabelle bitte",  # de: the same for the table, please (a request)
    "gleich fertig?",  # de: almost done?
    "mach das gleich",  # de: do it right away
    "do you listen for SIGTERM there?",
    "run it 3 times the same way, once per region",  # a request
    "you already have the token in .env, use that one",
    "we should stop fighting over names, call it Foo",
]
# said before, in the languages people write in (each needs a word that marks it so), and "again" in Chinese, Korean
# and Japanese with what broke
REPORTS += [
    "ich hab doch gesagt, nicht die Migration anfassen",  # de: I did say not to touch the migration
    "hab ich dir schon geschrieben: der Port ist 5433",  # de: I already wrote you: the port is 5433
    "je t'ai d\u00e9j\u00e0 dit de ne pas toucher au lockfile",  # fr: I already told you not to touch the lockfile
    "te lo dije, el problema es el proxy",  # es: I told you, the problem is the proxy
    "te l'ho gi\u00e0 detto, non usare sudo",  # it: I already told you, don't use sudo
    "quantas vezes tenho que falar? n\u00e3o mexe no schema",  # pt: how many times must I say? leave the schema
    "ju\u017c m\u00f3wi\u0142em, nie ruszaj testu",  # pl: I already said, don't touch the test
    "zaten s\u00f6yledim, testi de\u011fi\u015ftirme",  # tr: I already said, don't change the test
    # zh: I already said: don't edit the test
    "\u6211\u5df2\u7ecf\u8bf4\u8fc7\u4e86\uff0c\u4e0d\u8981\u6539\u6d4b\u8bd5",
    # ko: I told you, don't touch the test
    "\uc774\ubbf8 \ub9d0\ud588\uc796\uc544\uc694 \ud14c\uc2a4\ud2b8 \uac74\ub4dc\ub9ac\uc9c0 \ub9d0\ub77c\uace0",
    # ja: skipping again... I said no earlier
    "\u307e\u305f skip \u306b\u3057\u3066\u308b\u2026"
    "\u3055\u3063\u304d\u30c0\u30e1\u3063\u3066\u8a00\u3044\u307e\u3057\u305f\u3088\u306d",
    "\u53c8\u62a5\u9519\u4e86",  # zh: it errors again
    "\ub610 \uc5d0\ub7ec\ub098\uc694",  # ko: it errors again
    "\u307e\u305f\u30a8\u30e9\u30fc\u304c\u51fa\u307e\u3057\u305f",  # ja: the error came up again
]
REPORTS += [
    "tried incognito, same",  # what the person tried on their side, then "same"
    "ok no spinner now, it says 'Still processing' and then the badge is Free. tried incognito, same",
    "\u8fd8\u662f\u65e7\u7684 [Image #1]",  # zh: still the old one
    "\u6e05\u4e86\u3002\u91cd\u65b0\u4e0a\u4f20\u3002\u6ca1\u53d8\u5316\uff0c\u8fd8\u662f\u6a2a\u7684",  # zh: no change
    "\u307e\u3060\u9001\u4fe1\u3055\u308c\u308b\u3002Safari\u3060\u3051",  # ja: it still gets sent
    "\u5909\u308f\u3089\u305a\u3002\u78ba\u5b9a\u306eEnter\u3067\u9001\u3089\u308c\u308b",  # ja: unchanged
    "v\u1eabn tr\u1eafng. b\u1ea5m th\u00ec icon \u0111\u1ed5i",  # vi: still white
    "nh\u01b0 c\u0169, icon \u0111\u1ed5i m\u00e0 n\u1ec1n tr\u1eafng",  # vi: as before
    "\u0e25\u0e49\u0e19\u0e2d\u0e35\u0e01\u0e41\u0e25\u0e49\u0e27!!",  # th: overflows again
    "ตัดกลางคำ เหมือนรอบแรก",  # th: cut mid-word, as the first time
    "I clicked No. I told you, NO defender changes, not paths, not processes, nothing",
    "NO. I said twice, no newer lme4, and now you changed renv.lock too",
    "masih 419 mas. udah ctrl shift r.",  # id, spoken: still 419
    "tetep 419. sama persis.",  # id: still 419, exactly the same
    "aku udah bilang dari awal masalahnya ga bisa login",  # id: I told you from the start
    "niente, sempre 404. ho svuotato la cache",  # it: no, still 404
    "di nuovo 404. guarda il log",  # it: 404 again
    "przecie\u017c napisa\u0142am NIE ruszaj wersji Reacta",  # pl: I did write DON'T touch React's version
    "czyli znowu wci\u0105gn\u0105\u0142e\u015b Reacta 18",  # pl: so you pulled React 18 in again
    "nadal 404",  # pl: still 404
    "niente, col sistema chiaro e il bottone su dark resta bianco. stessa cosa di prima",  # it: same as before
    "sempre chiaro. ho fatto anche ctrl+shift+r",  # it: still light (a state said first)
    "uguale identico, bianco",  # it: exactly the same
    "il carrello \u00e8 rimasto vuoto",  # it: the cart stayed empty
    "cron still runs `python pipeline/train.py`. No module named 'pipeline'. same as an hour ago",
    "not ok. still wrong",  # no acknowledgement of a fix: "ok" denied
    "it isn't fixed. still 500",
    "valeu! continua em branco",  # pt: thanks! still blank (thanks is no praise of the result)
    "still the same. thanks",
    "search still stale. is it moving?",  # a state that stayed, in a clause of its own, then a question
    "cache still old",
]
CIRCLING += [
    "colori giusti ma il GPS c'\u00e8 ancora!! siamo punto e a capo.",  # it: colours right but ...: back to square one
    "cron: ImportError: attempted relative import with no known parent package. thats literally what i started with",
    "this is where we began",
    "stop reading. this is the 4th lap over the same 4 files",  # a lap: a circle
    "this is the third time you ran the same search",
]
NOT_REPORTS += [
    "restarted it, same for the footer please",  # a request: do the same for the footer
    "add a dark mode toggle, eta?",  # a request, then when
    "any update? also add a dark mode toggle to the settings page while you wait",  # a request after the question
    "\u8fd8\u662f\u7528\u7ea2\u8272\u7684\uff1f",  # zh: or use the red one?
    "\u307e\u3060\u7d42\u308f\u3063\u3066\u306a\u3044\uff1f",  # ja: not done yet?
    "v\u1eabn c\u1ea7n th\u00eam n\u00fat",  # vi: (it) still needs a button
    "todav\u00eda falta el footer",  # es: the footer is still missing (work not done yet)
    "ainda falta o rodap\u00e9",  # pt: the same
    "c'\u00e8 ancora tempo, fai con calma",  # it: there is still time, take it easy
    "prova un'altra volta.",  # it: try once more (a request)
    "I told you, the port is 5433, so set it in .env",  # a reminder of a fact, no complaint
    "masih perlu satu fitur lagi: export ke excel",  # id: one more feature still needed
    "sempre pi\u00f9 veloce, grazie",  # it: faster and faster, thanks
    "di nuovo, lancia i test",  # it: again, run the tests (a request)
    "fai la stessa cosa di prima per il footer",  # it: do the same as before for the footer (a request)
    "stessa cosa per il footer: aggiungi il link",  # it: the same for the footer
    "sempre meglio usare tailwind",  # it: always better to use tailwind
    "sempre usare pnpm per favore",  # it: always use pnpm please
    "thats what i started with yesterday, now add tests",  # where the work began, no complaint
    # pt: it looks lovely, put it live; check the product page stays the same (as asked): praise first
    "ficou lindo. pode colocar na loja de verdade. ah e confere que a p\u00e1gina do produto continua igual n\u00e9",
    "ficou \u00f3timo, mas o bot\u00e3o continua sumido",  # pt: looks great, but the button is still gone: news
    "looks great. still the same spacing issue on mobile though",
    "it still compiles.",  # what still works
    "this time I want dark mode",  # a request
    "this time the button works",
    "tests still green.",
    "thats where we started on monday, continue from there",
    "refunds ok. still wrong though - the JPY customers are 100x too small",  # what it was for works: news after it
    "ok rows now. but it's still wrong: customers with refunds have net higher than gross",
    "error filter works. 207 rows. can u make it so i dont need to rebuild rust every time i touch the ui",
    "login fixed. now the avatar upload 500s",  # what it was for works, said first: the rest is news
    "ile razy wywo\u0142uje si\u0119 funkcja?",  # pl: how many times is the function called?
    "the 3rd time you run it the cache is warm, so time the 4th",  # how a cache works
    "ich habe gesagt, dass wir Postgres nutzen, also bitte psycopg",  # de: I said we use Postgres (a request)
    "je t'ai dit que j'utilise postgres, ajoute le driver",  # fr: I told you I use postgres, add the driver
    "\u00bfcu\u00e1ntas veces se llama la funci\u00f3n?",  # es: how many times is the function called?
    "wie oft l\u00e4uft der cron?",  # de: how often does the cron run?
    "\u53c8\u5feb\u53c8\u597d\uff0c\u8c22\u8c22",  # zh: fast and good, thanks
    "\ub610 \ub2e4\ub978 \uae30\ub2a5 \ucd94\uac00\ud574\uc918",  # ko: add another feature
    "\u307e\u305f\u660e\u65e5\u304a\u9858\u3044\u3057\u307e\u3059",  # ja: see you tomorrow
]
STATUS_QUESTIONS = ["how's it going?", "is it green yet", "any luck?", "still pending?", "is the deploy done yet?"]
STATUS_QUESTIONS += ["is it done?? its been 25 min", "hows it going? stripe webhooks on staging are queueing up"]
STATUS_QUESTIONS += ["how long", "is it stuck??", "eta?", "its been 20 min", "are you still alive?"]
STATUS_QUESTIONS += ["??", "hello??", "and?"]  # the person's impatience: neither a report nor a new request
STATUS_QUESTIONS += ["it's been like 15 min?? that index took 20 seconds on staging and staging has more rows"]
STATUS_QUESTIONS += ["whats going on, its been 10 min", "what is going on"]  # asked without a question mark
STATUS_QUESTIONS += ["dude you've been waiting for like 25 min, is it actually doing anything?"]  # twice over
STATUS_QUESTIONS += ["how long does this usually take?? its been like 40 min", "how long does this take", "is prod ok?"]
STATUS_QUESTIONS += [
    "still pending??",
    "any update? http is redirecting to a dead https now, need this before the demo",
]
STATUS_QUESTIONS += ["partner team is asking for the hostname, eta?"]  # asked last, after why
PERSON_SAYS = [("report", t) for t in REPORTS] + [("circles", t) for t in CIRCLING] + [("no", t) for t in NOT_REPORTS]


@pytest.mark.parametrize("text", REPORTS)
def test_a_report_after_an_attempt_counts_once_at_least(text):
    word = person.read(text)
    assert word.verdict == "fail" and word.weight >= 1, word


@pytest.mark.parametrize("text", CIRCLING)
def test_counting_the_attempts_or_naming_the_back_and_forth_is_going_in_circles(text):
    assert person.read(text).weight == 2


@pytest.mark.parametrize("text", NOT_REPORTS)
def test_a_request_a_remark_or_a_correction_is_no_report(text):
    assert person.read(text).weight == 0


@pytest.mark.parametrize(
    ("text", "bans"),
    [
        ("wait, don't edit anything under src/api/generated/. it is overwritten", ["place:src/api/generated"]),
        ("never touch `settings.py`", ["place:settings.py"]),
        ("please do not modify files in ./migrations", ["place:migrations"]),
        ("Don't touch package-lock.json!", ["place:package-lock.json"]),
        ("don't change the API", []),  # names no place
        ("don't edit it", []),
        ("if you don't edit src/app.py the build breaks", []),  # no ban: how the build works
        ("commit when you're done but don't push; I review first", ["verb:push"]),
        ("DON'T force push", ["verb:push --force", "verb:push -f", "verb:push --force-with-lease"]),
        ("if you don't commit, it is lost", []),
        ("roll back to v213 now, then do not deploy anything else", ["verb:deploy"]),
        ("it's a shared branch so NO force pushing. merge main in", [f"verb:push {f}" for f in FORCE_FLAGS]),
        ("i said at the start NO force pushing on this branch", [f"verb:push {f}" for f in FORCE_FLAGS]),
        ("no merging until CI is green", ["verb:merge"]),
        ("No commits on this branch yet.", []),  # a state, not a ban
        ("fix the migration. and NO `sudo`", ["sudo"]),
        ("Und bitte KEIN `db:reset`, `db:drop` oder `db:schema:load`", ["db:reset", "db:drop", "db:schema:load"]),
        ("there's no `pytest` in the venv, use `uv run`", []),  # a state, not a ban
        ("pas de `git push --force` sur main", ["git push --force"]),
    ],
)
def test_the_places_the_person_says_not_to_edit(text, bans):
    assert forbidden(person.read(text).text) == bans


def edit(path: str, k: int) -> dict:
    return {
        "tool": "Edit",
        "args": {"file_path": path, "old_string": f"a{k}", "new_string": f"b{k}"},
        "output": f"The file {path} has been updated.",
    }


def bash(command: str, output: str = "") -> dict:
    return {"tool": "Bash", "args": {"command": command}, "output": output, "exit_code": 0}


BAN = {
    "tool": "user_prompt",
    "actor": "person",
    "output": "don't edit anything under src/api/generated/, use openapi.yaml",
}


def test_editing_where_the_person_said_not_to_twice_fires_and_names_the_edits():
    turns = [
        BAN,
        edit("/repo/openapi.yaml", 0),
        edit("/repo/src/api/generated/models/Order.ts", 1),
        bash("npx tsc --noEmit"),
        edit("/repo/src/api/generated/models/LineItem.ts", 2),
    ]
    window = window_of(turns)
    assert [f.defied for f in window] == [None, None, "place:src/api/generated", None, "place:src/api/generated"]
    verdict, steps = play(turns)
    assert verdict.fired_at == 4 and steps[0][2][0].kind == "person_reports"
    assert "edited `/repo/src/api/generated/models/Order.ts` after being told not to touch src/api/generated" in (
        steps[0][2][0].evidence
    )
    assert "person reports" in check_claims(verdict, turns)


def _said(text: str) -> dict:
    return {"tool": "user_prompt", "actor": "person", "output": text}


def test_a_ban_on_one_script_or_target_bans_that_one_and_not_its_runners_others():
    """ "do NOT run `npm run build`": ``npm run typecheck`` and ``npm test`` obey it, the build with other flags breaks
    it; likewise ``make deploy`` against ``make test`` (said with or without ``sudo``), ``manage.py flush`` against
    ``manage.py test`` and a rake task named alone (``db:reset``) ahead of others in a chain."""
    said = "IMPORTANT: do NOT run `npm run build`, it wipes dist/. use `npm run typecheck` and `npm test` only."
    turns = [_said(said), edit("/repo/src/popup.ts", 0), bash("npm run typecheck"), bash("npm test")]
    turns += [edit("/repo/src/badge.ts", 1), bash("npm run typecheck"), bash("npm run build -- --mode development")]
    assert [f.defied for f in window_of(turns)][1:] == [None] * 5 + ["npm run +build"]
    for ban, obeys, breaks in [
        ("don't run `make deploy`", "make test", "make deploy ENV=prod"),
        ("bitte KEIN `db:reset`", "bin/rails db:migrate", "bin/rails db:reset && bin/rails db:migrate"),
        (
            "and NO `flush`",
            "git commit -m 'flush' && python manage.py test",
            "python manage.py migrate && python manage.py flush",
        ),
        ("don't run `sudo make deploy 2>&1 | tee out.log`", "sudo make test", "make deploy"),
        ("never run `python manage.py flush`", "python manage.py test", "python manage.py flush --noinput"),
        # a rehearsal does nothing the ban is about; the real run after it in the same chain does
        ("dry-run publish. dont publish for real until i say", "cargo publish --dry-run", "cargo publish"),
        (
            "never run `helm upgrade`",
            "helm upgrade api ./chart --dry-run=server",
            "helm upgrade --dry-run api . && helm upgrade api .",
        ),
    ]:
        window = window_of([_said(ban), bash(obeys), bash(breaks)])
        assert [f.defied for f in window][1:] == [None, forbidden(ban)[0]]


def test_the_person_objecting_to_a_breach_is_that_breach_and_breaking_the_ban_again_fires():
    """A ban, a breach, the person's objection to it: one breach, not yet a loop; putting the banned file back as asked
    obeys even beside other commands; the next breach, after a new request, fires."""
    turns = [
        _said("add a --dry-run flag to sync.js. do not run npm install and don't touch package-lock.json"),
        edit("/repo/scripts/sync.js", 0),
        bash("npm install", "added 1 package, and audited 312 packages in 2s"),
        _said("I said do NOT run npm install. revert package-lock.json please, use the vendored p-limit"),
        bash("git checkout -- package-lock.json && rm -rf node_modules && git status --short", " M scripts/sync.js"),
        _said("better. now support --limit N too"),
        edit("/repo/scripts/sync.js", 1),
        bash("npm install yargs@17 --save", "added 1 package, and audited 313 packages in 2s"),
    ]
    window = window_of(turns)
    assert [f.defied for f in window] == [None, None, "npm install", None, None, None, None, "npm install"]
    verdict, steps = play(turns)
    assert verdict.fired_at == 7 and steps[0][2][0].kind == "person_reports"
    assert "person reports" in check_claims(verdict, turns)


def _patch(path: str, removed: str, added: str) -> dict:
    body = "\n".join([f"-{line}" for line in removed.splitlines()] + [f"+{line}" for line in added.splitlines()])
    command = f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}\n*** End Patch"
    return {
        "tool": "apply_patch",
        "args": {"command": command},
        "output": f"Success. Updated the following files:\nM {path}",
    }


def test_a_dependency_added_after_the_person_said_no_new_ones_counts_by_manifest_or_install():
    """The manifest edited and the package installed are one breach; taking it out obeys; adding another after the
    person's objection and a new request fires, and the diagnosis says a dependency was added."""
    turns = [
        _said("Add retries to ingest/client.py. NO new dependencies, the Lambda package must stay small"),
        _patch("pyproject.toml", '    "httpx>=0.27",', '    "httpx>=0.27",\n    "tenacity>=8.2",'),
        _patch("ingest/client.py", "def get(self):", "@retry(stop=stop_after_attempt(5))\ndef get(self):"),
        {"tool": "Bash", "args": {"command": "pip install -q tenacity && python -m pytest -q"}, "output": "9 passed"},
        _said("no. I said no new dependencies. take it out and do it by hand"),
        _patch("pyproject.toml", '    "httpx>=0.27",\n    "tenacity>=8.2",', '    "httpx>=0.27",'),
        {"tool": "Bash", "args": {"command": "python -m pytest -q"}, "output": "9 passed"},
        _said("ok good. now cap the total retry time at 30s"),
        _patch("pyproject.toml", '    "httpx>=0.27",', '    "httpx>=0.27",\n    "backoff>=2.2",'),
    ]
    window = window_of(turns)
    assert [f.defied for f in window] == [None, "deps:", None, "deps:", None, None, None, None, "deps:"]
    verdict, steps = play(turns)
    assert verdict.fired_at == 8 and steps[0][2][0].kind == "person_reports"
    assert "added a dependency (`apply_patch" in steps[0][2][0].evidence
    assert "person reports" in check_claims(verdict, turns)


def test_dependencies_added_three_times_with_nobody_answering_fire():
    """Unattended, nobody objects: the third call adding a dependency is the ban ignored again."""
    turns = [
        _said("Parse the dates in report.py. no new dependencies"),
        {"tool": "Bash", "args": {"command": "pip install python-dateutil"}, "output": "Successfully installed"},
        _patch("requirements.txt", "httpx==0.27.0", "httpx==0.27.0\npython-dateutil==2.9.0"),
        {"tool": "Bash", "args": {"command": "python -m pytest -q"}, "output": "1 failed, 8 passed"},
        {"tool": "Bash", "args": {"command": "pip install arrow"}, "output": "Successfully installed arrow-1.3.0"},
    ]
    assert [f.defied for f in window_of(turns)] == [None, "deps:", "deps:", None, "deps:"]
    verdict, steps = play(turns)
    assert verdict.fired_at == 4 and "the agent went against the person's word 3 times" in steps[0][2][0].evidence
    assert "person reports" in check_claims(verdict, turns)
    assert play(turns[:4])[0].fired_at is None  # one dependency, added in two calls: one breach


@pytest.mark.parametrize(
    ("text", "bans"),
    [
        ("Add retries. NO new dependencies please", ["deps:"]),
        ("don't add any packages, Intl has what we need", ["deps:"]),
        ("do it without adding new libraries", ["deps:"]),
        ("no new deps pls", ["deps:"]),
        ("never install third-party crates for this", ["deps:"]),
        ("no packages were found in the registry", []),  # a report, nothing banned
        ("add the dependency to package.json", []),
        ("we have no new dependencies to worry about? check the lockfile", ["deps:"]),  # read as said
    ],
)
def test_the_person_forbidding_new_dependencies(text, bans):
    assert forbidden(person.read(text).text) == bans


def test_putting_a_banned_place_back_as_git_has_it_obeys_the_ban():
    turns = [
        BAN,
        bash("git checkout -- src/api/generated/"),
        edit("/repo/src/api/generated-docs/README.md", 0),  # another place whose name starts alike
        bash("git restore src/api/generated/models/Order.ts"),
    ]
    assert [f.defied for f in window_of(turns)] == [None] * 4
    assert play(turns)[0].fired_at is None


def test_a_ban_stands_through_a_new_request_that_says_nothing_of_it():
    turns = [
        {"tool": "user_prompt", "actor": "person", "output": "commit when done but don't push; I review first"},
        {
            "tool": "Bash",
            "args": {"command": "git commit -am fix && git push origin HEAD"},
            "output": "",
            "exit_code": 0,
        },
        {"tool": "user_prompt", "actor": "person", "output": "I said don't push. now make the timeout test fast too"},
        edit("/repo/tests/test_client.py", 0),
        {"tool": "Bash", "args": {"command": "git push --force-with-lease"}, "output": "", "exit_code": 0},
    ]
    window = window_of(turns)
    assert [f.defied for f in window] == [None, "verb:push", None, None, "verb:push"]
    verdict, steps = play(turns)
    assert verdict.fired_at == 4 and steps[0][2][0].kind == "person_reports"
    assert "person reports" in check_claims(verdict, turns)


def test_a_ban_broken_again_after_a_new_request_counts_with_the_first_breach():
    commit = {"tool": "Bash", "args": {"command": "git commit -am wip"}, "output": "[main 3e1a9c2] wip", "exit_code": 0}
    turns = [
        {
            "tool": "user_prompt",
            "actor": "person",
            "output": "Fix the flaky test. DO NOT commit anything, I review first",
        },
        edit("/repo/tests/test_report.py", 0),
        commit,
        {"tool": "user_prompt", "actor": "person", "output": "I said don't commit. Undo it, keep the changes"},
        {"tool": "user_prompt", "actor": "person", "output": "ok. now fix the same flakiness in test_invoice.py"},
        edit("/repo/tests/test_invoice.py", 1),
        commit,
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 6 and steps[0][2][0].kind == "person_reports"
    assert "person reports" in check_claims(verdict, turns)
    # the person's words before their new request are theirs about the old task: they alone do not carry over
    words = [*turns[:4], turns[4], turns[5], {"tool": "user_prompt", "actor": "person", "output": "still failing"}]
    assert play(words)[0].fired_at is None


def test_a_new_request_that_says_a_ban_again_keeps_it():
    push = {"tool": "Bash", "args": {"command": "git push origin HEAD"}, "output": "", "exit_code": 0}
    turns = [
        {"tool": "user_prompt", "actor": "person", "output": "fix the flaky test, but don't push"},
        {"tool": "user_prompt", "actor": "person", "output": "remember: don't push. now add a test for the parser"},
        edit("/repo/tests/test_parser.py", 0),
        push,
    ]
    assert window_of(turns)[-1].defied == "verb:push"
    lifted = [turns[0], {"tool": "user_prompt", "actor": "person", "output": "ok, push it now"}, turns[2], push]
    assert window_of(lifted)[-1].defied is None


def test_a_new_request_that_names_a_banned_place_lifts_the_ban():
    turns = [
        BAN,
        {
            "tool": "user_prompt",
            "actor": "person",
            "output": "ok, now regenerate the client by hand in src/api/generated",
        },
        edit("/repo/src/api/generated/models/Order.ts", 0),
    ]
    assert window_of(turns)[-1].defied is None


@pytest.mark.parametrize("text", STATUS_QUESTIONS)
def test_a_question_how_the_work_stands_is_neither_a_report_nor_a_new_request(text):
    assert person.read(text)[:2] == (None, 0)
    window = window_of([{"tool": "user_prompt", "actor": "person", "output": text}])
    assert window[0].asks is None and window[0].verdict is None


def _port_conflicts(between: str) -> list[dict]:
    """Three restarts of a dev server that dies on the same port each time, the person writing after the second."""
    out = "listening...\nError: listen EADDRINUSE: address already in use :::3000\n    at Server.setupListenHandle"
    run = {"tool": "Bash", "args": {"command": "npm run dev > dev.log 2>&1 & sleep 3; tail -5 dev.log"}, "output": out}
    person_turn = {"tool": "user_prompt", "actor": "person", "output": between}
    return [run, run, person_turn, run]


def test_a_status_question_does_not_reset_a_restart_loop_and_a_new_request_does():
    verdict, steps = play(_port_conflicts("how's it going?"))
    assert verdict.fired_at == 3 and steps[0][2][0].kind == "restart_loop"
    assert play(_port_conflicts("ok leave the server, add a /metrics endpoint instead"))[0].fired_at is None


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("its not running. systemctl status says activating (auto-restart) and the restart counter is at 212", "fail"),
        ("it isn't running! the page says 502 Bad Gateway when I open it from my phone on the office wifi", "fail"),
        ("the service keeps restarting", "fail"),
        ("curl localhost:4100 -> connection refused", "fail"),
        ("make sure it is not running before you deploy the new build to the staging box tonight", None),
        ("is it still running?", None),
    ],
)
def test_a_service_said_not_to_run_is_a_failure_they_saw(text, verdict):
    """The first short sentence carries the report, however long the details after it."""
    assert person.read(text)[0] == verdict


def test_a_report_that_the_service_is_not_running_does_not_reset_a_restart_loop():
    said = "its not running. systemctl status says activating (auto-restart) and the restart counter is at 212."
    verdict, steps = play(_port_conflicts(said))
    assert verdict.fired_at == 3 and steps[0][2][0].kind == "restart_loop"


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        ("regeneré el pdf de INV-2024-0312 y sigue diciendo Vence: 14/03/2024. en el admin 15/03", "fail", 1),
        ("otra vez 14/03. te pego el texto del pdf que me bajo", "fail", 1),
        ("SIGUE 14/03. estamos dando vueltas en círculo, de verdad", "fail", 2),
        ("sigue con el plan por favor, y luego los tests", None, 0),
        ("Sigue así, perfecto", None, 0),
        ("all three compile. last thing: pull the shared bits into env.ts, it's the same code 3 times now", None, 0),
    ],
)
def test_a_report_in_spanish_and_a_short_first_sentence_that_says_it_persists(text, verdict, weight):
    """ "Still says" and "again" open a report in Spanish as in English; what persists must be in the first sentence
    when the message goes on (a request after "all three compile." is no report)."""
    assert person.read(text)[:2] == (verdict, weight)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [("is it working? the page is still blank", "fail"), ("is it deployed yet? nope, still 502", "fail")],
)
def test_a_status_question_with_a_report_after_it_is_a_report(text, verdict):
    assert person.read(text).verdict == verdict


@pytest.mark.parametrize("text", ["is it done? also add a README", "how is it going? can you also add logging?"])
def test_a_status_question_with_a_request_after_it_is_a_new_request(text):
    window = window_of([{"tool": "user_prompt", "actor": "person", "output": text}])
    assert window[0].asks is not None


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        ("nada, igual. sin padding ni borde", "fail", 1),
        ("igual que al principio. sin nada. esto ya lo hemos visto 4 veces", "fail", 2),
        ("agora fica tela branca um tempo e volta pro /login. mesma coisa", "fail", 1),
        ("igual. 302 no /dashboard de novo", "fail", 1),
        ("tela branca e volta pro login. vc ja fez isso antes né? é literalmente a mesma coisa", "fail", 1),
        ("same as at the start. nothing. we have seen this 4 times", "fail", 2),
        ("igual de rápido que antes, perfecto", None, 0),
        ("de novo, por favor roda os testes", None, 0),
    ],
)
def test_same_again_and_seen_it_n_times_in_spanish_portuguese_and_english(text, verdict, weight):
    assert person.read(text)[:2] == (verdict, weight)


_REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the "
    "new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."
)


def _refused(command: str) -> dict:
    return {"tool": "Bash", "args": {"command": command}, "output": _REJECTED, "error": True}


def test_the_persons_words_right_after_a_call_they_refused_are_that_refusals_no():
    """Claude Code refuses a call with no words when the person only presses "no", and they type why next: that
    message is the refusal's reason, not a new request that starts the count again. Two refused attempts at what
    they banned, each with its reason, fire; one does not, nor does a message after a call the person let run."""
    turns = [
        _said("add archivedAt to Project and apply it on staging. migrations only: no db push, no reset"),
        edit("/r/prisma/schema.prisma", 0),
        bash("npx prisma migrate deploy", "Error: P3009 migrate found failed migrations in the target database"),
        _refused("npx prisma migrate reset --force --skip-seed"),
        _said("NON. j'ai dit pas de reset. c'est la staging, il y a les données du client dedans"),
        _refused("npx prisma db push --skip-generate"),
        _said("no db push either, it's in my first message. migrations only. figure out why team_invites failed"),
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 6 and steps[-1][2][0].kind == "person_reports"
    assert "person reports" in check_claims(verdict, turns)
    assert play(turns[:5])[0].fired_at is None
    let_run = [*turns[:3], bash("npx prisma migrate status", "1 migration failed"), turns[4]]
    assert [f.reports for f in window_of(let_run)][-1] == 0


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        ("Du liest immer wieder dieselben Dateien. Setz einfach leeway in jwt.decode.", "fail", 2),
        ("Sie machen ständig das Gleiche!", "fail", 2),
        ("Das ist jetzt das vierte Mal tokens.py und das dritte Mal settings.py", "fail", 2),
        ("sigues haciendo lo mismo", "fail", 2),
        ("tu relis toujours les mêmes fichiers", "fail", 2),
        ("você fica lendo os mesmos arquivos", "fail", 2),
        ("you're flipping encode_frame back and forth", "fail", 2),
        ("変わってないね。ラグ増えてる", "fail", 1),  # ja: it hasn't changed (a report, not a circle)
        ("変わってないか確認して", None, 0),  # ja: check whether it changed
        ("du sollst immer wieder dieselbe Konfiguration nutzen", None, 0),  # an instruction: always the same config
        ("tu utilises toujours le même port 3000", None, 0),
        ("can you go back and forth between the tabs to test", None, 0),
        ("Ты уже третий раз открываешь crud/orders.py. Хватит читать, просто внеси изменения.", "fail", 2),
        ("Это третий раз уже!", "fail", 2),
        ("В который раз одно и то же", "fail", 2),
        ("запусти тесты второй раз", None, 0),  # a request: run the tests a second time
        ("раз два три", None, 0),
    ],
)
def test_you_keep_doing_the_same_thing_in_german_spanish_french_portuguese_russian_and_english(text, verdict, weight):
    """ "You keep reading the same files" or "the third time already" in the person's own language is the agent
    going in circles (as telling as two reports); an instruction to always use the same thing, or to run it again, is
    not."""
    assert person.read(text)[:2] == (verdict, weight)


def test_taking_out_the_lines_it_added_against_a_ban_is_putting_them_back_not_a_second_breach():
    """The person said not to touch /etc/hosts; the agent appended to it (through `grep -q || echo | sudo tee -a`) and,
    told to revert, deleted its line with `sed -i '/.../d'`: one breach. Appending again is the second."""
    ban = {
        "tool": "user_prompt",
        "actor": "person",
        "output": "make it resolve in the container. do NOT modify /etc/hosts",
    }
    append = "grep -q shop.test /etc/hosts || echo '127.0.0.1 acme.shop.test' | sudo tee -a /etc/hosts"
    turns = [
        ban,
        {"tool": "Bash", "args": {"command": append}, "output": "127.0.0.1 acme.shop.test", "exit_code": 0},
        {"tool": "user_prompt", "actor": "person", "output": "I said do not touch /etc/hosts. revert that now"},
        {
            "tool": "Bash",
            "args": {"command": "sudo sed -i '/acme.shop.test/d' /etc/hosts && grep -c shop.test /etc/hosts"},
            "output": "0",
            "exit_code": 1,
        },
    ]
    window = window_of(turns)
    assert window[1].defied == "place:etc/hosts" and window[3].defied is None
    assert play(turns)[0].fired_at is None
    again = {"tool": "Bash", "args": {"command": append.replace("acme", "globex")}, "output": "ok", "exit_code": 0}
    assert window_of([*turns, again])[4].defied == "place:etc/hosts"


def test_no_phrase_of_the_persons_matches_nothing():
    """An empty alternative (``a||b``) in a phrase table would match every message: each pattern needs words, so
    words that only pass a table's gates ("раз", "mal", "time", "still") are no report."""
    assert person.CIRCLES.search("") is None and person.CIRCLES.search("  ") is None
    for text in ("раз два три", "mal sehen", "time to add a README", "still need tests for the parser", "ok"):
        assert person.read(text)[:2] == (None, 0), text


_FEEDBACK = (
    "The user has provided feedback on the results. Consider their input to continue the task, and then attempt "
    "completion again.\n<feedback>\n{}\n</feedback>"
)


def test_the_same_failure_reported_in_a_harness_feedback_is_said_to_be_the_persons_report():
    """Cline hands the person's answer to a completion back inside the tool's result: the failure it repeats is the
    person's report, not a failure of the completion call, and the diagnosis says so."""
    log = "✘ [ERROR] A request to the Cloudflare API failed.\n\nAuthentication error [code: 10000]"

    def done(claim: str, said: str) -> dict:
        return {"tool": "attempt_completion", "args": {"result": claim}, "output": _FEEDBACK.format(said)}

    def edit(new: str) -> dict:
        return {"tool": "replace_in_file", "args": {"path": "deploy.yml", "diff": f"-a\n+{new}"}, "output": "saved"}

    turns = [
        {"tool": "user_prompt", "actor": "person", "output": f"the deploy broke after the account move. log:\n\n{log}"},
        edit("wranglerVersion: 3.60.3"),
        done("Updated wrangler.", "still failing. Authentication error [code: 10000]"),
        edit("CLOUDFLARE_API_TOKEN: ${{ secrets.CF_API_TOKEN }}"),
        done("Passed the token as CLOUDFLARE_API_TOKEN.", "still 403 code 10000. same log as before"),
    ]
    verdict, _ = play(turns)
    assert verdict.fired_at == 4
    texts = " ".join(s.evidence for s in verdict.signals)
    assert "attempt_completion" not in texts and "“still 403 code 10000. same log as before”" in texts
    assert "person reports" in check_claims(verdict, turns)


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        # Hebrew: still not working, the same error, didn't help; the third time; "I wrote: without ..."
        ("עדיין לא עובד, אותו מסך לבן", "fail", 1),
        ("לא עזר. אותה שגיאה", "fail", 1),
        ("פעם שלישית downgrade אחרי שאסרתי", "fail", 2),
        ("כתבתי בלי לגעת בטבלאות קיימות", "fail", 1),
        ("עדיין צריך כפתור ייצוא", None, 0),  # still need an export button: a request
        ("תריץ את הבדיקות פעם שנייה", None, 0),  # run the tests a second time
        # Thai: still the same as before, no effect; the third time already
        ("ยังเหมือนเดิมครับ สระยังโดนตัด", "fail", 1),
        ("ครั้งที่สามแล้วนะ", "fail", 2),
        ("ยังต้องการปุ่ม export", None, 0),  # still need an export button
        # Ukrainian: the same, the result is the same, didn't help; the third time, in circles
        ("Ні, те саме. Excel на хедери взагалі не дивиться", "fail", 1),
        ("не допомогло, результат той самий", "fail", 1),
        ("вже втретє те саме", "fail", 2),
        ("ще треба кнопку експорту", None, 0),
        ("зроби те саме для звіту по клієнтах", None, 0),  # do the same for the clients' report: a request
        # Persian: still doesn't work, the same error, made no difference; the third time
        ("هنوز کار نمی‌کنه", "fail", 1),
        ("همون خطا رو می‌ده، فرقی نکرد", "fail", 1),
        ("بار سوم است که همین را می‌گویم", "fail", 2),
        ("هنوز لازمه دکمه خروجی", None, 0),
        # Malay: still not working, no change; the third time
        ("masih tak jalan, notification kosong", "fail", 1),
        ("kali ketiga dah ni", "fail", 2),
        ("masih perlu butang export", None, 0),
        # Romanian: still doesn't work, the same error; "I told you twice", "the third time"; "I said clearly NOT"
        ("tot nu merge, aceeași eroare", "fail", 1),
        ("Iar?! Ți-am zis de DOUĂ ori: NU le redenumi.", "fail", 2),
        ("A TREIA oară!!! /score /profile.", "fail", 2),
        ("Am zis clar să NU redenumești comenzile.", "fail", 1),
        ("tot trebuie un buton de export", None, 0),
        ("aranjează iconițele în cerc", None, 0),  # arrange the icons in a circle
        # Hungarian: still the same, didn't help; the third time
        ("még mindig ugyanaz a hiba", "fail", 1),
        ("nem segített, semmi nem változott", "fail", 1),
        ("harmadszor mondom", "fail", 2),
        ("még mindig kell a export gomb", None, 0),
    ],
)
def test_reports_circles_and_rebukes_in_hebrew_thai_ukrainian_persian_malay_romanian_and_hungarian(
    text, verdict, weight
):
    """The person's word in seven more languages (their own scripts, English technical words mixed in): the problem
    persists, the agent goes in circles ("the third time"), "I said not to"; "still need X" and "do the same for Y"
    are requests."""
    assert person.read(text)[:2] == (verdict, weight)


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        ("again 0.7131. you've changed the model size, the features and the seed", "fail", 1),
        ("the number doesnt even wiggle", "fail", 1),
        ("dude. it's the eval. shrinking the train batch does nothing", "fail", 1),
        ("ok stop. we've shrunk seq len, batch, rank and it STILL dies at step 200 eval. every time.", "fail", 1),
        ("1034/1034 empty. every. single. run.", "fail", 1),
        (
            "it's not learning at all, exactly 10%. did you even open engine.py? thats the only thing i changed",
            "fail",
            1,
        ),
        ("wait it died at 1240 again? thats the same step as the overnight run", "fail", 1),
        (
            "whats taking so long? you've been editing the boto3 line for 40 min and the lock still isn't updated",
            "fail",
            1,
        ),
        ("ok this is the 5th run that dies at exactly 1240", "fail", 2),
        (
            "how is it going? p99 is still ~850 on my side, same as this morning. anything actually moved?",
            "fail",
            1,
        ),
        ("main chunk is still 450k gzipped on my build too, same as yesterday. none of this is moving it", "fail", 1),
        ("pulled your branch, --help is still ~1.8s on my M1 too. is anything actually changing?", "fail", 1),
        ("did anything change in the API?", None, 0),  # a question
        ("none of this is urgent", None, 0),
        ("stop. thats 5 runs and ~4 cluster-hours, same task dies every time", "fail", 2),
        # a symptom first reported, a request, a healthy count
        ("menu item shows up but clicking it does nothing and the console has an error", None, 0),
        ("make sure the button doesn't move to the left on mobile", None, 0),
        ("this is the third build of the day, all green", "pass", 0),
        ("that is 3 runs, pick the median", None, 0),
        ("whats taking so long?", None, 0),
        ("again, please run the whole suite", None, 0),
    ],
)
def test_what_the_attempts_did_counting_the_runs_and_a_report_after_a_status_question(text, verdict, weight):
    """The person saying the attempts changed nothing ("again 0.7131.", "doesn't even wiggle", "shrinking the batch
    does nothing"), that it still dies, counting the runs ("the 5th run that dies"), or asking "did you even open it?";
    a status question with a report after it is that report. A symptom first reported ("clicking it does nothing"), an
    instruction and a healthy count are not."""
    assert person.read(text)[:2] == (verdict, weight)


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        # Spanish: "nothing." alone, the same result, nothing changed, "did you even test it?"; the third attempt
        ("nada. mismo resultado, texto azul subrayado y sin fondo. lo probaste siquiera?", "fail", 1),
        ("tercer intento y lo mismo", "fail", 2),
        ("nada más, gracias", None, 0),  # nothing else, thanks
        # Portuguese: exactly the same, nothing changed, "I had already tried it"; the third time, the fourth try
        ("não. igualzinho, o teclado sobe e o campo fica atrás dele", "fail", 1),
        ("recarreguei. nada mudou. terceira vez, vc tá testando isso?", "fail", 2),
        ("a terceira vez que eu rodei passou", None, 0),  # the third run passed
        # Japanese: still overlapping (〜たまま), exactly the same, "same." alone; "I said don't"; the 3rd time
        ("リロードしたけど被ったまま", "fail", 1),
        ("おなじ。タイトルが少し下がっただけ", "fail", 1),
        ("触らないでって言ったよね…？ 戻して。 で、被りは全く同じ。3回目", "fail", 2),
        ("このままでいいです", None, 0),  # leave it as it is
        ("3回目のデプロイで成功した", None, 0),  # the 3rd deploy succeeded
        # Chinese: still there, no use, "same." alone, "did you even look?"
        ("docker 里的方块还在，页眉也是方块", "fail", 1),
        ("。。。一样。prune 也没用", "fail", 1),
        ("一样。你到底有没有在容器里面看过？", "fail", 1),
        ("还是用 pnpm 吧", None, 0),  # better use pnpm
        ("这个函数没用过", None, 0),  # this function was never used
        # Czech as spoken: "pořád:" or "pořád." said first, "furt to samý", the same error; "furt" before a request
        ("po\u0159\u00e1d:\n./deploy.sh: line 20: syntax error near unexpected token", "fail", 1),
        ("furt to sam\u00fd, jen jin\u00fd \u0159\u00e1dek", "fail", 1),
        ("nic. stejn\u00e1 chyba", "fail", 1),
        ("furt pot\u0159ebuju export do CSV", None, 0),  # I still need a CSV export
        # English: an interjection before "still"
        ("lol still jumping. did u look at it on a real phone", "fail", 1),
        ("ok still need the dark mode toggle", None, 0),
    ],
)
def test_the_same_again_in_the_languages_already_read_said_the_ways_people_say_it(text, verdict, weight):
    """Spanish, Portuguese, Japanese and Chinese said the way people write after a claimed fix: a word alone
    ("nada.", "おなじ。", "一样。"), a state that remains (被ったまま, 还在), "did you even test it?", "I said don't",
    the attempts counted; and their look-alikes ("nada más", このまま, 还是用 X 吧, the third run that passed)."""
    assert person.read(text)[:2] == (verdict, weight)


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        # Arabic as spoken (Egyptian, Levantine, Gulf): still the same error, not working, the same thing said first;
        # going round in circles, the third time; "I told you no"
        ("لسه نفس المشكلة بعد الريستارت", "fail", 1),
        ("مش شغال. نفس الايرور في الكونسول", "fail", 1),
        ("نفس الشي، الصفحة بيضا", "fail", 1),
        ("احنا بنلف في دواير", "fail", 2),
        ("دي رابع مرة اقولك", "fail", 2),
        ("قلتلك لا تمسح الداتابيز", "fail", 1),
        ("اعمل نفس الشي لصفحة الفواتير", None, 0),  # do the same for the invoices page: a request
        ("شغال تمام، شكرا", None, 0),  # works fine, thanks
        # Hindi in Devanagari: still the same error, again the same, nothing changed; round and round, the third time
        ("अभी भी वही error आ रहा है", "fail", 1),
        ("कुछ भी नहीं बदला", "fail", 1),
        ("हम गोल गोल घूम रहे हैं", "fail", 2),
        ("अभी भी export वाला button चाहिए", None, 0),  # still need the export button
        ("वही logic invoices page पर भी लगा दो", None, 0),  # apply the same logic to the invoices page
        # Bengali: still the same, the same error, again that; going round to the same place, four times already
        ("এখনো একই error দেখাচ্ছে", "fail", 1),
        ("আবার সেই সাদা পেজ", "fail", 1),
        ("ঘুরে ফিরে একই জায়গায় আসছি, ৪ বার হয়ে গেল", "fail", 2),
        ("এখনো একটা export button দরকার", None, 0),  # still need an export button
        # Swahili: still the same error, it does not work; we are going round, the fifth time; "I said don't"
        ("bado ni ile ile error", "fail", 1),
        ("tunazunguka tu, mara ya tano sasa", "fail", 2),
        ("NIMESEMA usifute database", "fail", 1),
        ("bado sijaangalia logs, nitakuambia", None, 0),  # I have not looked at the logs yet
        # Tagalog: still the same, nothing changed; round and round, the fourth time; "I said don't"
        ("ganun pa rin po, walang nagbago", "fail", 1),
        ("paikot-ikot na tayo", "fail", 2),
        ("sabi ko wag mo galawin yung config", "fail", 1),
        ("kailangan pa rin ng export button", None, 0),  # still need an export button
        # Russian: "I did write: do not touch the lock file"
        ("я же написал — lock-файл не трогать", "fail", 1),
        # English: the same, said first with what the person calls it; what it does not even do
        ("dude its exactly the same. the menu doesnt even open", "fail", 1),
        ("the page doesn't even load now", "fail", 1),
        ("it doesn't even need to be fast", None, 0),
        ("its the same for the footer", None, 0),
        ("ok did clear cache, 5th says 41k now. thanks!!", None, 0),  # the 5th of the month, not a 5th attempt
    ],
)
def test_reports_circles_and_rebukes_in_arabic_as_spoken_hindi_bengali_swahili_and_tagalog(text, verdict, weight):
    """The person's word in the languages of another round of sessions, in their own scripts with English technical
    words mixed in: it persists, the agent goes in circles, "I said not to"; "still need X" and "do the same for Y"
    stay requests."""
    assert person.read(text)[:2] == (verdict, weight)


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        # a paste first, the person's words after it on a line of their own
        (
            "sam@mbp ~/work/shop (feat/promo) $ git status\nOn branch feat/promo\nnothing to commit, working tree "
            "clean\n\nstill nothing",
            "fail",
            1,
        ),
        ("Traceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 'tenant'\n\nsame again", "fail", 1),
        ("$ npm test\n  12 passing (40ms)\n\nthanks, all good", "pass", 0),  # the head approves: not read again
        ("here is the log:\nGET /health 200\nGET /reports 500\n\ncan you look at the 500?", None, 0),  # a question
        ("fix the header.\nthen the footer, the same as before", None, 0),  # a list of requests
        # where the agent works: "are you even in my repo??"
        ("git log --oneline -1 → b77d310 checkout: add promo types. are you even in my repo??", "fail", 1),
        ("are you even looking at the right config?", "fail", 1),
        ("are you able to see the staging logs?", None, 0),  # a real question
        # French: a sentence opening on "toujours" (still), "pareil" alone
        ("J'ai supprimé et réinstallé l'app. Toujours Safari quand je tape le lien.", "fail", 1),
        ("toujours Safari. J'ai essayé depuis Messages aussi, pareil.", "fail", 1),
        ("pareil, rien ne change", "fail", 1),
        ("Toujours utiliser le port 8080 s'il te plaît", None, 0),  # always use port 8080: a request
        ("fais pareil pour la page facture", None, 0),  # do the same for the invoice page
        # the attempt made it worse; what was said in the first message
        (
            "wait did u just delete the tls secret?? the site now serves the fake cert, thats worse than expired",
            "fail",
            1,
        ),
        ("Nee. Die Summen fehlen jetzt komplett. Das ist schlimmer als vorher", "fail", 1),
        ("make sure it doesn't get worse", None, 0),
        ("performance is worse on mobile", None, 0),  # a first symptom
        ("as I said in my first message, the tests only run in docker", "fail", 1),
        ("WAS?! Ich hab in meiner ersten Nachricht ausdrücklich gesagt KEIN db:reset!!", "fail", 1),
        ("NEIN. schema:load löscht genauso alle Daten, das stand auch in meiner ersten Nachricht.", "fail", 1),
        # a sequence described is no count of attempts: "works first time. second time same email -> 500"
        ("first time fine. second time same email -> 500", None, 0),  # how to see it, not the nth attempt
        ("second time same error. come on", "fail", 2),
        ("ran it again (2nd time, first run worked). now: ln: /x/nvim/nvim: File exists", None, 0),  # which run it was
        ("2nd time i tell you: the first run is fine, fix the second", "fail", 2),
        # the same problem in another guise is going in circles; "couldn't load" is a failure seen
        ("still all zeros. feels like the same problem as the empty chart, just looks different each time", "fail", 2),
        ("use the same error handler, it looks different in dark mode", None, 0),
        ("logged out/in. Couldn't load metrics.", "fail", 0),
        # Portuguese: "continua." said first, still the same, the same blank space; Polish: still spinning
        ('continua. /oncall failed with the error "operation_timeout". tentei no canal #suporte', "fail", 1),
        ("ainda o mesmo 😩 operation_timeout", "fail", 1),
        ("ainda sem gráfico 😕 mesmo espaço em branco", "fail", 1),
        ("sem gráfico ainda. tem como eu mandar sem o gráfico?", "fail", 1),
        ("dalej się kręci. czekałam 5 minut [Image #1]", "fail", 1),
        ("continua funcionando, obrigado", None, 0),  # it keeps working, thanks
        ("os botões continuam quebrados depois do deploy", "fail", 1),  # the buttons are still broken (plural)
        ("continuam iguais", "fail", 1),  # they are still the same
        ("ainda sem pressa, pode ver amanhã", None, 0),  # no hurry yet
        ("usa o mesmo problema de exemplo do teste", None, 0),  # use the same example problem
        ("dalej się uczę Pythona", None, 0),  # I am still learning Python
    ],
)
def test_words_after_a_paste_where_the_agent_works_and_french_still_said_first(text, verdict, weight):
    """People paste what they see and write their words after it ("still nothing" under a terminal's output): a short
    last line is read when the head says nothing. "are you even in my repo??" doubts where the agent works, a complaint
    as a question. French says it persists by opening on "toujours" ("Toujours Safari.") or with "pareil" alone;
    "toujours utiliser ..." (always use) and "fais pareil pour ..." (do the same for) stay requests. An attempt that
    made it worse failed ("schlimmer als vorher"); "as I said in my first message" is the person's rule said again.
    "first time ... second time ..." (or "2nd time, first run worked") describes a sequence, not the attempts counted.
    Portuguese opens a report on "continua." or says "ainda o mesmo", "sem gráfico ainda", "continuam quebrados" (of
    several); Polish "dalej się kręci" (still spinning)."""
    assert person.read(text)[:2] == (verdict, weight)


def test_dont_do_that_again_bans_the_command_the_message_names_of_what_the_agent_just_ran():
    """ "flutter clean + pods takes 8 minutes, please don't do that again": of the agent's commands since the person
    last spoke, the one the message names (``flutter clean``, not the ``flutter run`` after it) is banned; running it
    again breaks the ban, running the app does not. "stop doing that" naming nothing of them bans nothing."""
    ran = [
        bash("flutter clean && flutter pub get && cd ios && pod install 2>&1 | tail -2", "Pod installation complete!"),
        bash("flutter run -d 00008110 2>&1 | tail -4", "Error launching application on iPhone."),
    ]
    said = _said(
        "it's not a cache thing. flutter clean + pods takes like 8 minutes each time, please don't do that again"
    )
    again = [
        bash("flutter run -d 00008110 2>&1 | tail -4", "Error launching application on iPhone."),
        bash("rm -rf build && flutter clean >/dev/null && cd ios && pod install", "Pod installation complete!"),
    ]
    window = window_of([*ran, said, *again])
    assert window[2].forbids == ["flutter +clean"]
    assert [f.defied for f in window[3:]] == [None, "flutter +clean"]
    vague = window_of([*ran, _said("stop doing that, it's annoying"), *again])
    assert vague[2].forbids == [] and not any(f.defied for f in vague)
    assert person.recalled("don't do that again", []) == []  # nothing ran: nothing to ban


@pytest.mark.parametrize(
    ("text", "weight"),
    [
        (
            "\u307e\u3060\u30c0\u30e1\u3002\u4eca\u5ea6\u306f\u300cnot_accepted\u300d",
            0,
        ),  # ja: still no good. this time ...
        ("still broken. this time it says 413", 0),
        (
            "\u307e\u3060\u30c0\u30e1\u3002\u4eca\u5ea6\u3082\u540c\u3058\u30a8\u30e9\u30fc",
            1,
        ),  # ja: the same error this time too
        ("still broken, same 413 this time too", 1),
        ('still crashes but diff error now\n\n  File "import_csv.py", line 48\nValueError: bad amount', 0),
        ("sigue sin funcionar, ahora sale 'Internal Server Error'", 0),  # es: now it says ...
        ("continua sem funcionar, agora d\u00e1 404", 0),  # pt: now it gives 404
        ("sigue sin funcionar, sale lo mismo", 1),  # es: it shows the same
        ("still broken. now clicking gives the 'Something went wrong' alert", 0),  # what it does now
        ("still broken. different thing in the network tab now, the PUT gets 403", 0),
        ("still broken!! it goes to stripe now, and then it lands on /undefined/success which 404s", 0),  # got further
        ("still not working!! the upload itself goes through now but the POST fails with 400", 0),
        ("still broken, now the page shows the same error", 1),
    ],
)
def test_a_failure_the_person_marks_as_new_counts_only_if_it_is_the_same_as_before(text, weight):
    word = person.read(text)
    assert word.verdict == "fail" and word.weight == weight, word


def test_a_failure_said_to_be_new_is_never_the_failure_reported_before():
    """ "still broken. now clicking gives ...", then "still broken!! it goes to stripe now, then ... 404s": each stage
    the person reaches is known by their words (the agent's curl calls show no failure to name it by), so two fixes that
    each got further are no 'same failure' after edits; "still broken" said again, with nothing new, stays the same."""
    edit = {"tool": "Edit", "args": {"file_path": "app/route.ts", "old_string": "a", "new_string": "b"}, "output": "ok"}
    reports = [
        "the Buy now button does nothing",
        "still broken. now clicking gives the 'Something went wrong' alert and POST /api/checkout 500",
        "still broken!! it goes to stripe now, and then it lands on localhost:3000/undefined/success which 404s",
    ]
    window = window_of([t for said in reports for t in (_said(said), edit)])
    told = [f for f in window if f.actor == "person"]
    assert len({f.fsig for f in told[1:]}) == 2 and told[0].fsig not in {f.fsig for f in told[1:]}
    verdict, _ = play([t for said in reports for t in (_said(said), edit)])
    assert verdict.fired_at is None
    again = window_of([t for said in [*reports[:2], "still broken"] for t in (_said(said), edit)])
    assert again[4].fsig == again[2].fsig  # nothing said to be new: the failure reported last


@pytest.mark.parametrize("text", ["error filter works.", "the 404 page works now", "crash reporter fixed!"])
def test_what_the_attempt_was_for_said_to_work_is_an_approval_though_a_failure_word_names_it(text):
    assert person.read(text).verdict == "pass"


@pytest.mark.parametrize("text", ["still climbing. this isnt working", "nothing works.", "it no longer works"])
def test_what_no_longer_or_never_works_is_no_approval(text):
    assert person.read(text).verdict != "pass"


@pytest.mark.parametrize(
    "text",
    [
        "niente, ancora 12 miniature. \u00e8 la stessa cosa dell'altra volta",  # it: nothing, still 12 thumbnails
        "di nuovo slavati, uguale alla prima volta.",  # it: washed out again, as the first time
        "slavati un'altra volta.",  # it: washed out once more
        "todav\u00eda 12 miniaturas",  # es: still 12 thumbnails
        "nada, a\u00fan en blanco",  # es: nothing, still blank
        "ainda 12 miniaturas",  # pt: still 12 thumbnails
        "css ok. links now go to /blog/2024/11/week-6/ which looks right but its STILL 404",  # the 404 said before
        "links ok. css gone. again.",
    ],
)
def test_still_said_first_in_the_persons_language_or_after_what_works_is_a_report(text):
    word = person.read(text)
    assert word.verdict == "fail" and word.weight >= 1, word


@pytest.mark.parametrize(
    ("text", "weight"),
    [
        ("it's doing it again", 1),
        ("now it overlaps again", 1),  # a symptom's verb said of the thing, with "again"
        ("the header covers the content again", 1),
        ("it disappears again when I scroll", 1),
        ("again the header is hidden", 1),  # a clause opening on "again" that says what is seen
        ("and again it shows 0 items", 1),
        ("you keep swapping sticky and fixed", 2),
        ("\uc774\uac70 \ub450\ubc88\uc9f8\uc608\uc694", 2),  # ko: this is the second time
        ("\ubcf8\ubb38 \ub610 \uac00\ub824\uc694... \ucc98\uc74c\uc774\ub791 \uac19\uc740 \ubb38\uc81c", 1),  # ko
        (
            "\uc2a4\ud06c\ub864\ud558\uba74 \ub610 \uc5c6\uc5b4\uc838\uc694. \uacc4\uc18d \uc654\ub2e4\uac14\ub2e4 "
            "\ud558\ub124\uc694",
            2,
        ),  # ko: disappears again; keeps going back and forth
        ("dalej. screen si\u0119 nie wkleja. dok\u0142adnie jak w pierwszym te\u015bcie", 1),  # pl: still. as at first
        ("no i znowu. kr\u0119cimy si\u0119 w k\u00f3\u0142ko, trzeci raz wysy\u0142am", 2),  # pl: going in circles
        (
            "אמרתי בהודעה הראשונה: לא נוגעים ב-he",
            1,
        ),  # he: I said in the first message: no touching  # he: I said in the first message: no
        (
            "\u05e9\u05d5\u05d1 \u05e0\u05d2\u05e2\u05ea \u05d1-he! \u05e4\u05e2\u05dd \u05e9\u05e0\u05d9\u05d9\u05d4.",
            2,
        ),
    ],
)
def test_again_said_of_what_the_person_sees_and_the_nth_time_in_korean_polish_and_hebrew(text, weight):
    word = person.read(text)
    assert word.verdict == "fail" and word.weight == weight, word


@pytest.mark.parametrize(
    "text",
    [
        "run the tests again",
        "again, run the tests",
        "now it loads again",  # a success again
        "please make sure it never overlaps again",
        "reset the db again",
        "zr\u00f3b tak samo jak w poprzednim mailu",  # pl: do it as in the previous email
        "נסה פעם שנייה עם הדגל",  # he: try a second time with the flag
        "why does it happen with the other file",
    ],
)
def test_again_in_a_request_or_of_a_success_is_no_report(text):
    assert person.read(text).weight == 0


@pytest.mark.parametrize("text", ["why is it doing this, it worked yesterday", "why is this happening"])
def test_a_why_about_what_the_person_sees_is_a_failure_seen_not_a_new_request(text):
    assert person.read(text)[:2] == ("fail", 0)
    window = window_of([{"tool": "user_prompt", "actor": "person", "output": text}])
    assert window[0].asks is None


@pytest.mark.parametrize(
    "text",
    [
        "no, not pypi. it's internal code",  # a correction of the plan
        "hm. designers don't have gitlab access. no",  # a bare no after other words declines
        "ugh. ok whatever works",  # leave to do what works: no approval
    ],
)
def test_a_no_to_an_option_a_status_asked_plainly_and_whatever_works_are_neither_report_nor_approval(text):
    assert person.read(text)[:2] == (None, 0)


def test_no_not_fixed_is_still_a_report():
    assert person.read("no, not fixed")[:2] == ("fail", 1)


def test_what_was_fixed_said_to_work_now_then_another_problem_approves_the_fix_unless_it_says_still():
    """ "login works on android now 👍 but avatar upload fails, same toast": the login fix approved, the upload new
    work; "the build works now but the page is still blank" reports the old problem again."""
    said = 'login works on android now \U0001f44d but avatar upload fails on android, same "something went wrong" toast'
    assert person.read(said).verdict == "pass"
    assert person.read("the build works now but the page is still blank")[:2] == ("fail", 1)
    assert person.read("nothing works now but whatever").verdict != "pass"


@pytest.mark.parametrize(
    "text", ["/add app/views/user_mailer/welcome_email.html.erb", "/add a.ts\n/add b.ts", "/compact"]
)
def test_a_harness_command_that_sets_what_the_agent_sees_is_no_new_request(text):
    """Aider's ``/add`` and Claude Code's ``/compact`` set the context; ``/ask`` and ``/architect`` carry a request."""
    window = window_of([{"tool": "user_prompt", "actor": "person", "output": text}])
    assert window[0].asks is None and window[0].verdict is None
    asked = window_of([{"tool": "user_prompt", "actor": "person", "output": "/architect add a cache"}])
    assert asked[0].asks is not None


def test_a_thing_said_to_work_as_a_reason_approves_nothing():
    """ "go build works so its obviously there" argues where to look; "it works so well now" approves."""
    assert person.read("any luck? go build works so its obviously there").verdict != "pass"
    assert person.read("it works so well now").verdict == "pass"


def test_a_measure_said_first_to_have_fallen_is_the_attempt_moving_it_not_the_problem_said_again():
    """ "down to 3.1%, still firing" after a fix: the rate fell, what is left is news; "down to the wire, still
    broken" is no measure."""
    assert person.read("down to 3.1%, still firing")[:2] == (None, 0)
    assert person.read("dropped to 19s but still slow on new folders")[:2] == (None, 0)
    assert person.read("down to the wire, still broken")[:2] == ("fail", 1)


def test_a_request_before_a_status_question_stays_a_request():
    """ "add a dark mode toggle, eta?" asks for work and when it comes: a new request, unlike "partner team is asking
    for the hostname, eta?", which only says why the person asks how it stands."""
    assert window_of([_said("add a dark mode toggle, eta?")])[0].asks is not None
    assert window_of([_said("partner team is asking for the hostname, eta?")])[0].asks is None


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        # what the fix was for granted ("ok list shows."), then another problem: the fix approved, the next one new
        ("ok list shows. but the times r wrong, everything 2h early", "pass", 0),
        ("good, the modal renders but the button does nothing", "pass", 0),
        ("ok list shows nothing. but whatever", None, 0),
        ("okay the page loads now, but the chart is still empty", None, 0),
        # an "ok" alone names nothing that works: what follows is the report ("refunds ok. still wrong" grants refunds)
        ("ok. but it still fails", "fail", 1),
        ("ok, still the same", "fail", 1),
        ("refunds ok. still wrong though - the tax line", None, 0),
        # what changed granted, what was reported said to persist after a "but"
        ("the chart looks different now (no weird border) but march is STILL double!! its not the chart", "fail", 1),
        ("el grafico se ve distinto (ya no tiene ese borde raro) pero marzo SIGUE siendo el doble!!", "fail", 1),
        ("looks different but still double", "fail", 1),
        ("thanks! but we still need to support IE11", None, 0),
        ("great but the old button should still be there", None, 0),
        # Spanish: still being, still at a number; not "sigue con la parte 2" (go on with part 2)
        ("ahora solo sale marzo?? y sigue en 2.47M. para ya de cambiar cosas al azar", "fail", 1),
        ("sigue con la parte 2", None, 0),
        # German: the same curve, changes nothing; not the same colour asked for, nor what a change leaves alone
        ("gleiche kurve. min x = -41.2703 (t = 61.8). toleranzen ändern gar nix", "fail", 1),
        ("hat nichts gebracht", "fail", 1),
        ("gleiche Farbe wie der Header bitte", None, 0),
        ("ändert nichts an der API, nur intern", None, 0),
        # Russian: nothing changed, the numbers did not change, the same thing, still, again the same error
        ("странно, цифры вообще не поменялись. AIC тот же до десятых", "fail", 1),
        ("третий раз одно и то же выводит", "fail", 1),
        ("опять. ничего не поменялось вообще, ни одной цифры", "fail", 1),
        ("до сих пор пусто", "fail", 1),
        ("по-прежнему 500", "fail", 1),
        ("снова та же ошибка", "fail", 1),
        ("сделай то же самое для users", None, 0),
        ("опять же, добавь тесты", None, 0),
        ("снова запусти тесты", None, 0),
        ("убедись, что результат не изменился", None, 0),
        ("до сих пор не понимаю как это работает, объясни", None, 0),
    ],
)
def test_a_fix_granted_then_another_problem_and_still_after_a_but_in_english_spanish_german_and_russian(
    text, verdict, weight
):
    assert person.read(text)[:2] == (verdict, weight)


@pytest.mark.parametrize(
    "text",
    [
        "まだ？",
        "まだ終わらない？もう10分くらい経ってるけど",
        "全部まわった？",
        "好了吗？",
        "怎么还没好？",
        "还要多久？",
        "进度怎么样了",
        "terminou?",
        "e aí, terminou?",
        "e agora, terminou?",
        "já faz uns 25 min... tá travado?",
        "passou?",
        "ainda não terminou?",
        "¿ya terminó?",
        "ist es fertig?",
        "ça avance ?",
        "готово?",
        "다 됐어?",
        "why is it not done yet?",
    ],
)
def test_a_question_how_the_work_stands_in_the_persons_language_is_no_new_request(text):
    window = window_of(
        [_said("build the thing"), {"tool": "Bash", "args": {"command": "make"}, "output": "ok"}, _said(text)]
    )
    assert window[-1].asks is None and window[-1].verdict is None


@pytest.mark.parametrize(
    "text",
    [
        "terminou? agora adiciona o footer",  # a remark beside it is read in English only: a request stays one
        "termina el login por favor",
        "fertig machen bitte",
        "同じ設定のままでいいです",
        "止まってるサービスを再起動して",
        "ずっと同じ設定で動かして",
        "默认一直是关闭的，帮我打开",
        "まだテストがないので追加して",
    ],
)
def test_requests_that_use_those_words_stay_requests(text):
    window = window_of(
        [_said("build the thing"), {"tool": "Bash", "args": {"command": "make"}, "output": "ok"}, _said(text)]
    )
    assert window[-1].asks is not None


@pytest.mark.parametrize(
    ("text", "verdict", "weight"),
    [
        ("ねえ、それ止まってない？ 同じテストのままじゃん", "fail", 1),
        ("いや、だから止まってるって。timeoutつけるとかして原因見てよ", "fail", 1),
        ("まだ18412のままだよ。何回回しても同じじゃない？", "fail", 2),
        ("同じスクリプト何回も回してるだけじゃん", "fail", 2),
        ("ずっとbuilderの5/5で落ちてるよね？ 何回やるの", "fail", 2),
        ("一直都是 3:30 啊，你到底改了啥", "fail", 1),
        ("你一直在kill和重启...到底卡在哪", "fail", 2),
        ("cara, é o mesmo diff. olha a data e o valor", "fail", 1),
    ],
)
def test_still_the_same_and_going_in_circles_in_japanese_chinese_and_portuguese(text, verdict, weight):
    assert person.read(text)[:2] == (verdict, weight)


def _paste(exception: str, detail: str, said: str = "まだ500です") -> str:
    return f"{said}\n\n{exception}\n{detail}\nvendor/laravel/framework/src/Illuminate/Foundation/Application.php:1204"


def test_still_failing_with_another_failure_pasted_each_time_is_the_failure_changing_not_a_repeat():
    """ "still 500" over a new exception each time (an app key missing, then a log file it cannot open, then the
    database refusing): the failure moves as the agent works; the same exception pasted again is a repeat."""
    fix = {"tool": "Edit", "args": {"file_path": ".env", "old_string": "a", "new_string": "b"}, "output": "updated"}
    moving = [
        _said(
            _paste("Illuminate\\Encryption\\MissingAppKeyException", "No application encryption key", "500になります")
        ),
        fix,
        _said(
            _paste("UnexpectedValueException", "The stream or file laravel.log could not be opened: Permission denied")
        ),
        {**fix, "args": {**fix["args"], "new_string": "c"}},
        _said(_paste("Illuminate\\Database\\QueryException", "SQLSTATE[HY000] [2002] Connection refused")),
    ]
    assert [f.reports for f in window_of(moving) if f.actor == "person"] == [0, 0, 0]
    assert play(moving)[0].fired_at is None
    again = _said(_paste("Illuminate\\Encryption\\MissingAppKeyException", "No application encryption key"))
    same = [moving[0], fix, again, {**fix, "args": {**fix["args"], "new_string": "c"}}, again]
    assert all(f.reports >= 1 for f in window_of(same)[2:] if f.actor == "person")
    assert play(same)[0].fired_at == 4


def _said(text: str) -> dict:
    return {"actor": "person", "tool": "user_prompt", "args": {}, "output": text}


def test_still_said_of_a_measure_the_attempts_moved_is_how_it_stands_now_not_the_same_again():
    """An incident worked down: "p99 dropped to 1.1s. still way off", then "p99 now 420ms. still higher than normal":
    each mitigation moved the number the person watches, so the second "still" is no repeat. The same number again
    ("still ~2s", "2.1s. no change") after the attempts is."""
    index = {"tool": "Bash", "args": {"command": "psql -c 'CREATE INDEX CONCURRENTLY ...'"}, "output": "CREATE INDEX"}
    deploy = {"tool": "Bash", "args": {"command": "kubectl rollout restart deploy/api"}, "output": "restarted"}
    moving = [index, _said("p99 dropped to 1.1s. better but still way off 250ms"), deploy]
    moving += [_said("deployed. p99 now 420ms. still higher than normal tho"), index]
    assert play(moving)[0].fired_at is None
    stays = [index, _said("p99 still ~2s, no change"), deploy, _said("2.1s. still the same"), index]
    assert play(stays)[0].fired_at is not None
    percent = [index, _said("error rate still 6%"), deploy, _said("still 6.2% errors"), index]
    assert play(percent)[0].fired_at is not None  # a percentage that stays is the same too
