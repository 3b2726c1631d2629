"""The phrases people use to say the agent goes in circles (``CIRCLES``) and that they said it before
(``TOLD_BEFORE``), in English and the languages people most often write to an agent in. Pure data and patterns,
read by ``_reading``; "still failing" per language is ``_still``'s table.

Why apart from ``_reading``: a phrase heard in a new session changes these tables, not how a message is read.
"""

from __future__ import annotations

import re

from strict_loop.monitor import fingerprint as fp

CLAUSE_START = r"(?:^|(?<=[.!?;,:\n(])|(?<=[.!?;,:(]\s))\W*"
"""Where a clause starts: the message's start, or after a sentence's or a clause's mark."""


CIRCLES = fp.Later(
    r"\b(?:(?:going|go|run(?:ning)?|turning) (?:a)?round in circles|in circles|"
    r"(?<!\bi've )(?<!\bi have )(?<!\bi )(?:doing|done|tried) this "
    r"(?:\d+|two|three|four|several|many) times|you keep (?:on )?(?:doing|trying|making|breaking|suggesting|proposing|"
    r"changing|adding|saying|swapping|switching|flipping|toggling|reverting|undoing|rewriting|reintroducing|removing|"
    r"deleting|moving|restarting|rerunning|editing|looping)\b|stop (?:guessing|speculating|fighting (?:the|with) )|"
    r"same mistake|"
    r"i(?:'ve| have)? (?:already )?told you "
    r"(?:twice|(?:three|four|\d+) times)|(?:we're |we are |i'm |i am |it's |it is |this is |that's )back to square one|"
    r"(?:we'?re|we are|i'?m|i am|it'?s|it is|this is|that'?s) (?:right |just )?back (?:to )?where (?:we|i) "
    r"(?:started|began|were)|(?:that'?s|thats|this is|it'?s|its|that is) (?:literally |exactly |just )?(?:what|where) "
    r"(?:i|we) (?:started|began)(?: with| from)?(?!\s+(?:with|from|on|in|at|yesterday|today|this|last)\b)|"
    r"\b(?:errors?|failures?|bugs?|problems?|issues?) (?:just |only )?(?:move|moves|moving|"
    r"shift|shifts|shifting|jump|jumps|jumping) around\b|\bwhack-?a-?mole\b|"
    r"how many (?:more )?times (?:do|must|should|have|did) (?:i|we) (?:have to )?(?:tell|say|ask|explain|repeat)|"
    r"(?:second|third|fourth|fifth|\d+(?:nd|rd|th)) time (?:i(?:'m| am|'ve| have)? (?:tell|ask|say|said|told|asked|"
    r"explain)\w*|that (?:it|this))|"
    r"(?:you|we)(?:'re| are)? (?:just |keep )?(?:going|flip-?flopping|flipping|switching|swapping|toggling)"
    r"(?: [\w.()-]+){0,3}? back and forth|"
    r"round and round|going nowhere|"
    # the same problem in another guise: "feels like the same problem, just looks different each time"
    r"same (?:problem|issue|bug|error|thing)\b[^.!?\n]{0,40}?\b(?:just |only )?(?:looks|shows up|appears) different|"
    r"(?:you(?:'ve| have)? been|you keep(?: on)?|you(?:'re| are)(?: just| still)?) (?:re-?)?(?:reading|opening|"
    r"grepping|searching|checking|looking at|running|editing|changing|trying|doing|making) (?:the )?same (?:\d+ |two |"
    r"three |few |couple of )?\w+|"
    r"(?:we'?re|we are|you'?re|you are) (?:just |literally )?(?:looping|in a loop|stuck in a loop)|"
    r"(?:we'?ve|we have|you'?ve|you have|you) (?:already )?(?:done|tried) (?:this|that)(?: exact| same)?(?: \w+)? "
    r"(?:(?:like|about|literally|at least) )?(?:twice|(?:\d+|two|three|four|several|many) times))\b|"
    r"^\W*back to square one\b|(?:bouncing|flipping|switching|oscillating|alternating) (?:back and forth )?between\b|"
    r"\bping-?pong\w*|\b(?:re-?introduc|brought back|bring back|bringing back)\w* (?:the )?(?:same|original|old|"
    r"earlier) (?:bug|error|issue|problem|crash)|"
    rf"{CLAUSE_START}(?:(?:this|that|it)(?:'s| is)\s+|thats\s+|now\s+)?(?:the |now the |already the )?(?:second|third|"
    r"fourth|fifth|sixth|seventh|2nd|3rd|[4-9]th|1\d+th)\s+(?:[\w-]+\s+)?['\"\u2018\u201c]?(?:time|try|attempt|fix|"
    r"fixed|round|lap|deploy|change|iteration|push|restart|revert|rollback|rewrite)s?\b(?!'s\b|\s+(?:i'?m|we|you|they|he|she|it|this|when|after|before|"
    r"lucky|charm|around|round)\b)|"
    rf"{CLAUSE_START}(?:second|third|fourth|fifth|sixth|2nd|3rd|[4-9]th)(?:\s+(?!(?:done|complete|completed|finished|"
    r"ok|okay|works|working|passed|passes|ready|started|left|next|up|down|out|please|too|also|is|are|was|and|of|one|"
    r"says|shows|looks|reads|has|had)\b)(?![\w-]*\d)[\w-]+){1,2}(?=\s*(?:in a row|now|today)?\s*(?:[.!]|$))|"
    r"\b(?:you did it|for) (?:a|the) (?:second|third|fourth|fifth|2nd|3rd|[4-9]th) time\b|"
    r"\b(?:third|fourth|fifth|3rd|[4-9]th) time (?:you|we)(?:'ve| have)? (?:\w+ ){1,2}(?:the )?same\b|"
    # counting the runs: "this is the 5th run that dies at 1240", "that's 5 runs", "thats 3 builds"
    r"\b(?:this|that|it)(?:'s| is|s) (?:now |already )?the (?:third|fourth|fifth|sixth|seventh|3rd|[4-9]th|1\dth) "
    r"(?:run|job|build|launch|submission)\b(?![^.!?\n]{0,40}\b(?:green|pass\w*|succeed\w*|works|fine|ok|okay)\b)|"
    rf"{CLAUSE_START}(?:that|this|it)(?:'s| is|s)\s+(?:now\s+|already\s+)?(?:[3-9]|1\d|three|four|five|six|seven|"
    r"eight|nine|ten)\s+(?:runs|jobs|builds|launches|tries|attempts|restarts|deploys)\b(?=\s*(?:now|already|and|of|"
    r"[.!;]|$))|"
    rf"{CLAUSE_START}(?:(?:this|that|it)(?:'s| is)\s+|thats\s+|now\s+|already\s+)?(?:[3-9]|1\d|three|four|five|six|"
    r"seven|several|many) ['\"\u2018\u201c]?(?:tries|attempts|fixes|deploys|rounds|times now|times already|"
    r"times in a row)"
    r"(?=\s*(?:now|already|today)?\s*(?:[.!,;]|$))|"
    rf"{CLAUSE_START}(?:that|this|it)(?:'s| is)\s+(?:(?:now|already)\s+)?(?:[2-9]|two|three|four|five|six|seven)\s+"
    r"times(?=\s*(?:now|already|today|in a row)?\s*(?:[.!,;]|$)|\s+(?:now|already)\b)|"
    rf"{CLAUSE_START}(?:(?:that|this|it)(?:'s| is)\s+|thats\s+|now\s+)?(?:[2-9]|two|three|four|five|six|seven)\s+"
    r"times (?:now |already |in a row )?(?:the )?(?:exact |very )?same\b|"
    r"\b(?:(?:der|das|zum) (?:zweite|dritte|vierte|f\u00fcnfte)n? (?:versuch|mal)|"
    r"(?:es|ya es|por) la (?:segunda|tercera|cuarta|quinta) vez|c'est la (?:deuxi|troisi|quatri|cinqui)\u00e8me fois|"
    r"(?:pela|\u00e9 a) (?:segunda|terceira|quarta|quinta) vez|(?:\u00e8|e') la (?:seconda|terza|quarta|quinta) volta|"
    r"(?:is|dit is) (?:nu )?de (?:tweede|derde|"
    r"vierde|vijfde) keer|girando in (?:tondo|cerchio)|"
    r"(?:siamo )?punto e a capo|siamo (?:di nuovo )?da capo|al punto di partenza|"
    r"draaien (?:echt )?in (?:rondjes|cirkels))\b|"
    # "dreimal jetzt", "schon dreimal", "déjà trois fois", "ya van tres veces", "já são três vezes"
    r"\b(?:(?:zwei|drei|vier|f\u00fcnf|[2-9]) ?mal (?:jetzt|schon)(?=\s*(?:[.!?,;]|$))|"
    r"schon (?:zwei|drei|vier|f\u00fcnf|[2-9]) ?mal|d[\u00e9e]j[\u00e0a] (?:deux|trois|quatre|cinq|[2-9]) fois|"
    r"(?:deux|trois|quatre|cinq|[2-9]) fois "
    r"(?:d[\u00e9e]j[\u00e0a]|maintenant)(?=\s*(?:[.!?,;]|$))|ya (?:van |son )?(?:dos|tres|cuatro|cinco|[2-9]) veces|"
    r"j[a\u00e1] s[a\u00e3]o (?:duas|tr[e\u00ea]s|quatro|cinco|[2-9]) vezes)\b|"
    # "du liest immer wieder dieselben Dateien", "sigues haciendo lo mismo", "tu relis toujours les mêmes fichiers"
    r"\b(?:du|sie)\b(?!\s+(?:sollst|musst|kannst|darfst|solltest|sollen|m\u00fcssen|k\u00f6nnen|bitte)\b)"
    r"[^.!?\n]{0,30}?\b(?:immer wieder|st(?:\u00e4|ae?)ndig|dauernd)\b[^.!?\n]{0,20}?\b(?:dasselbe|"
    r"dieselben?|denselben|das gleiche|die gleichen?|den gleichen)\b|"
    r"\bsigues (?:\w+ )?(?:lo mismo|el mismo|la misma|los mismos|las mismas)\b|"
    r"\btu (?:re)?(?:lis|fais|ouvres|essaies|essayes|tentes|lances|modifies|cherches|tournes) (?:toujours|encore) "
    r"(?:la|le|les) m(?:\u00ea|e)mes?\b|"
    r"\b(?:voc\u00ea|vc) (?:fica|continua) \w+ (?:o mesmo|a mesma|os mesmos|as mesmas)\b|"
    r"\b(?:vueltas en c[i\u00ed]rculos?|(?:dando|damos) vueltas|dando voltas|on tourne en rond|"
    r"(?:drehen uns|dreht sich) im kreis)\b|"
    r"\b(?:andando|rodando|girando|vamos|estamos) (?:em|en) c[i\u00ed]rculos?\b|"
    r"原地打转|兜圈子|又回到原点|何回(?:やる|やって|回して|回す|やっても|回しても)|同じ(?:スクリプト|こと|コマンド)を?何回も|你(?:一直|总是|老是)在?(?:kill|重启|重试|改|试|删|换|猜|回滚)|改来改去|来回(?:改|切换|折腾)|"
    r"\b(?:been through this (?:already|before)|(?:we'?ve|we have|i'?ve|i have) been here before|done this dance|"
    r"d[\u00e9e]j[\u00e0a] vu|groundhog day|"
    r"(?:the )?same loop|repeating yourself|you'?re repeating|for the (?:nth|umpteenth|\w+th) time|"
    r"(?:like )?the (?:\w+th|\d+th) time you|"
    r"you undo what you|not making (?:any )?progress|(?:we'?ve|we have|i'?ve|i have) (?:already )?seen (?:this|it) "
    r"(?:\d+|two|three|four|five|several|many) times|"
    r"ya lo (?:hemos )?visto (?:\d+|dos|tres|cuatro|cinco|varias|muchas) veces|"
    r"j[a\u00e1] vimos isso (?:\d+|duas|tr[e\u00ea]s|quatro|cinco|v[a\u00e1]rias|muitas) vezes)\b|"
    r"\byou(?:'ve| have)? (?:now |already |just )?(?!(?:can|could|should|must|need|needs|may|might|will|would|have|"
    r"got|want)\b)\w+(?: \S+){0,7}? (?:twice|(?:three|four|five|six|\d+|several|many) times)(?: now| already)?\b|"
    r"\bv kruhu\b|\bmuter-muter\b|\bberputar-putar\b|\u043f\u043e \u043a\u0440\u0443\u0433\u0443|"
    # ru: "уже третий раз", "третий раз уже", "в который раз"
    r"\u0443\u0436\u0435 (?:\u0432\u0442\u043e\u0440\u043e\u0439|\u0442\u0440\u0435\u0442\u0438\u0439|"
    r"\u0447\u0435\u0442\u0432[\u0435\u0451]\u0440\u0442\u044b\u0439|\u043f\u044f\u0442\u044b\u0439|"
    r"\d+-?\u0439) \u0440\u0430\u0437|(?:\u0432\u0442\u043e\u0440\u043e\u0439|"
    r"\u0442\u0440\u0435\u0442\u0438\u0439|\u0447\u0435\u0442\u0432[\u0435\u0451]\u0440\u0442\u044b\u0439|"
    r"\u043f\u044f\u0442\u044b\u0439) \u0440\u0430\u0437 \u0443\u0436\u0435|"
    r"\u0432 \u043a\u043e\u0442\u043e\u0440\u044b\u0439 \u0440\u0430\u0437|"
    # ja: ぐるぐる, 堂々巡り, 振り出しに戻る, これで4回目, 4回目です; ko: 이번이 네 번째; zh: 第四次了, 这是第三次
    r"\u3050\u308b\u3050\u308b|\u5802\u3005\u5de1\u308a|\u632f\u308a\u51fa\u3057\u306b\u623b|"
    r"(?:\u3053\u308c\u3067|\u3082\u3046|\u3059\u3067\u306b|\u65e2\u306b)\s*[2-9\uff12-\uff19\u4e8c\u4e09\u56db\u4e94"
    r"\u516d\u4e03\u516b\u4e5d]\s*\u56de\u76ee|[2-9\uff12-\uff19\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\u4e5d]"
    r"\s*\u56de\u76ee(?:\u3067\u3059|\u3060\u3088|\u3067\u3059\u3088)|"
    r"(?:\uc774\ubc88\uc774|\ubc8c\uc368|\uc774\uac8c|이거|이번에)\s*(?:[2-9]|\ub450|\uc138|\ub124|\ub2e4\uc12f)\s*\ubc88\uc9f8|왔다\s?갔다|제자리걸음|"
    r"\u7b2c[\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\u4e5d2-9]\u6b21\u4e86|(?:\u8fd9\u662f|\u5df2\u7ecf\u662f?)"
    r"\u7b2c[\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\u4e5d2-9]\u6b21|"
    # hi (Latin script): circle me ghoom rahe, gol gol ghoom, teen baar bola, kitni baar bolun
    r"\bcircles? (?:me|mein|mai) ghoom|\bgol gol ghoom|\b(?:do|teen|char|chaar|paanch|[2-9]) baar (?:bola|bol chuka|"
    r"kaha|bataya|samjhaya)|\bkitni baar (?:bol|kah|bata|samjha)|"
    # es: tercer intento; pt: terceira vez, quarta tentativa; ja: 3回目。 (the nth time, said at a clause's end)
    r"\b(?:tercer|cuarto|quinto|sexto)\s+intento\b|(?:^|[.!?,;]\s*)(?:(?:j[a\u00e1]\s+[e\u00e9]\s+a|[e\u00e9]\s+a)\s+)?"
    r"(?:terceira|quarta|quinta|sexta)\s+(?:vez|tentativa)\b|\b(?:terceira|quarta|quinta)\s+tentativa\b|"
    r"[2-9\uff12-\uff19\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\u4e5d]\s*\u56de\u76ee(?=\s*(?:[\u3002\uff01!\u3001]|$))|"
    # he: פעם שלישית, זו הפעם הרביעית, כבר שלוש פעמים, במעגלים; th: ครั้งที่สาม, วนไปวนมา, สามรอบแล้ว
    r"(?<!\w)(?:פעם |הפעם ה)(?:שלישית|רביעית|חמישית)(?!\w)|(?<!\w)הפעם השנייה(?!\w)|"
    r"כבר (?:פעמיים|שלוש פעמים|ארבע פעמים)|(?<!\w)במעגלים(?!\w)|"
    r"(?:^|[.!?,]\s*)(?:זו |זאת |זה )?פעם (?:שנייה|שניה)(?=\s*(?:[.!]|$))|"
    r"ครั้งที่\s*(?:สาม|สี่|ห้า|[3-9])|วนไปวนมา|วนอยู่ที่เดิม|(?:สาม|สี่|ห้า|[3-9])\s*(?:ครั้ง|รอบ)แล้ว|"
    # uk: втретє, вже четвертий раз, по колу, в котрий раз; fa: بار سوم, سه بار گفتم, دور خودمون
    r"\b(?:втретє|вчетверте|вп'?яте)\b|\b(?:третій|четвертий|п'?ятий) раз\b|\bпо колу\b|\bв котрий раз\b|"
    r"(?<!\w)بار (?:سوم|چهارم|پنجم)(?!\w)|(?<!\w)(?:دو|سه|چهار) بار (?:گفتم|گفته\u200c?ام)|دور خود(?:مون|مان)|"
    # ms: kali ketiga; ro: a treia oară, ți-am zis de două ori, ne învârtim în cerc; hu: harmadszor, körbe-körbe
    r"\bkali (?:ketiga|keempat|kelima|ke-?[3-9])\b|\bberpusing-pusing\b|"
    # pl: kręcimy się w kółko, trzeci raz, po raz czwarty
    r"\bw k\u00f3\u0142ko\b|\b(?:po raz )?(?:trzeci|czwarty|pi\u0105ty|sz\u00f3sty) raz\b|"
    r"\ba (?:treia|patra|cincea) oar[a\u0103]\b|\b(?:[\u021bt]i-am|v-am) (?:zis|spus) de (?:dou[a\u0103]|trei|patru|"
    r"[2-9]) ori\b|\bne [\u00eei]nv[\u00e2a]rtim [\u00eei]n cerc\b|"
    # ar: بنلف في دواير, حلقة مفرغة, تالت مرة; hi: गोल गोल घूम, तीसरी बार; bn: ঘুরে ফিরে একই, ৪ বার হয়ে গেল; sw:
    # tunazunguka, mara ya tano; tl: paikot-ikot, pang apat na beses
    r"(?<!\w)(?:بنلف|نلف|بندور|ندور|عم نلف|عم ندور) في (?:دواير|دوائر|دايرة|دائرة|حلقة)|حلقة مفرغة|"
    r"(?<!\w)(?:تالت|ثالث|رابع|خامس) مرة|المرة (?:الثالثة|التالتة|الرابعة|الخامسة)|गोल गोल घूम|चक्कर (?:लगा|काट) रहे|"
    r"(?:तीसरी|चौथी|पांचवीं|पाँचवीं) बार|(?:दो|तीन|चार|[2-9]) बार (?:बोला|कहा|बता चुका|बताया)|कितनी बार (?:बोल|कह|बता)|"
    r"ঘুরে ফিরে (?:একই|সেই)|ঘুরপাক খাচ্ছি|(?:তৃতীয়|চতুর্থ|পঞ্চম) বার|(?:[৩-৯3-9]|তিন|চার|পাঁচ) বার হয়ে গেল|"
    r"\btunazunguka\b|\bmara ya (?:tatu|nne|tano|sita|[3-9])\b|\bpaikot[- ]ikot\b|"
    r"\b(?:pang|ika-?)\s?(?:tatlo|apat|lima|anim|[3-9])(?:ng| na) (?:beses|ulit)\b|"
    r"\b(?:harmadszor|negyedszer|[\u00f6o]t[\u00f6o]dsz[\u00f6o]r)\b|\b(?:harmadik|negyedik|[\u00f6o]t[\u00f6o]dik) "
    r"alkalommal\b|\bk[\u00f6o]rbe-?k[\u00f6o]rbe\b|\b(?:k[\u00e9e]tszer|h[\u00e1a]romszor) (?:mondtam|sz[\u00f3o]ltam|"
    r"[\u00edi]rtam)\b",
    re.I,
)
"""The person saying the agent spirals: as telling as two repeats."""
CIRCLES_GATES = (
    (
        "circle",
        "rculo",
        "times",
        "twice",
        "keep",
        "stop",
        "mistake",
        "square one",
        "how many",
        "time",
        "back and forth",
        "round",
    )
    + ("where we", "where i", "around", "mole", "through this", "dance", "vu", "groundhog", "loop", "repeating")
    + ("th time", "undo", "progress", "kruhu", "muter", "putar", "\u043a\u0440\u0443\u0433")
    + ("started", "began")
    + ("nowhere", "loop", "between", "ping", "introduc", "back", "try", "tries", "attempt", "fix", "deploy", "change")
    + ("iteration", "versuch", "mal", "vez", "fois", "vueltas", "tourne", "kreis", "volta", "keer", "tondo", "cerchio")
    + ("a capo", "da capo", "partenza")
    + ("seen", "visto", "vimos", "same", "veces", "here before", "wieder", "ndig", "dauernd", "sigues", "mesm")
    + ("m\u00eame", "meme", "\u0440\u0430\u0437")
    + ("rondjes", "cirkels", "second", "third", "fourth", "fifth", "sixth", "2nd", "3rd", "4th", "5th", "6th", "7th")
    + ("8th", "9th", "\u539f\u5730", "\u515c\u5708", "\u56de\u5230", "一直", "总是", "老是", "改来改去", "来回", "何回")
    + ("\u3050\u308b\u3050\u308b", "\u5802\u3005", "\u632f\u308a\u51fa\u3057", "\u56de\u76ee", "\ubc88\uc9f8")
    + ("왔다", "제자리")
    + ("\u7b2c", "ghoom", "baar")
    + ("run", "job", "build", "launch", "submission", "restarts", "deploys", "intento", "terceira", "quarta", "quinta")
    + ("sexta", "tentativa")
    + ("פעם", "פעמים", "פעמיים", "במעגלים", "ครั้งที่", "วน", "แล้ว", "втретє", "вчетверте", "вп", "раз", "колу")
    + ("بار", "دور خود", "kali ke", "pusing", "oar", " ori", "cerc", "szor", "sz\u00f6r", "alkalommal", "rbe")
    + ("في د", "في ح", "حلقة", "مرة", "गोल", "चक्कर", "बार", "ঘুর", "বার", "tunazunguka", "mara ya", "ikot", "beses")
    + ("ulit", "k\u00f3\u0142ko", "raz")
)
"""Lowercase literals one of which ``CIRCLES`` cannot match without."""


_TOLD_ELSEWHERE = (
    # de: "ich hab doch gesagt", "hab ich dir schon geschrieben", "wie oft soll ich das noch sagen"; nl: "ik heb toch
    # gezegd"
    r"\b(?:ich (?:hab|habe) (?:dir |es |euch |das )?|hab(?:e)? ich (?:dir |es |das )?)(?:doch|schon|bereits|ja) "
    r"(?:\w+ )?(?:gesagt|geschrieben)\b",
    r"\bwie oft (?:soll|muss) ich (?:dir |es |das )*(?:noch )?(?:sagen|schreiben|wiederholen)\b",
    r"\bik heb (?:je |het )?(?:toch|al|net) (?:\w+ )?gezegd\b",
    # fr: "je t'ai déjà dit", "je vous ai dit de ne pas", "combien de fois faut-il le répéter"
    r"\bje (?:te |vous |t'|t\u2019)(?:l'|l\u2019)?(?:ai|avais) (?:d[\u00e9e]j[\u00e0a] )?dit (?:de ne|que non|non)\b",
    r"\bje (?:te |vous |t'|t\u2019)(?:l'|l\u2019)?(?:ai|avais) d[\u00e9e]j[\u00e0a] dit\b",
    r"\bcombien de fois (?:(?:je dois|dois-je|faut-il|il faut) )?(?:te |vous )?(?:le )?"
    r"(?:dire|r[\u00e9e]p[\u00e9e]ter)\b",
    # es: "te lo dije", "ya te he dicho", "cuántas veces tengo que decirlo"; it: "te l'ho già detto"; pt: "quantas vezes
    # tenho que falar"; pl: "już mówiłem"; tr: "zaten söyledim"
    r"\b(?:ya )?te lo (?:dije|he dicho)\b|\bya te he dicho\b",
    r"\bcu[\u00e1a]ntas veces (?:te )?(?:lo )?(?:tengo que|hay que|te he) (?:decir|repetir|dicho)\b",
    r"\bte l['\u2019]ho (?:gi[\u00e0a] )?detto\b|\bti ho gi[\u00e0a] detto\b",
    r"\bquante volte (?:te lo )?(?:devo|ti ho) (?:dire|ripetere|detto)\b",
    r"\bquantas vezes (?:eu )?(?:tenho que|vou ter que|preciso) (?:te )?(?:dizer|falar|repetir)\b",
    r"\bju[\u017cz] (?:ci |wam )?(?:m[\u00f3o]wi[\u0142l](?:em|am)|pisa[\u0142l](?:em|am))\b",
    r"\b(?:zaten|daha [\u00f6o]nce|sana) (?:de )?s[\u00f6o]yledim\b",
    # id: "aku udah bilang dari awal", "udah berapa kali nih"; pl: "przecież napisałam", "ile razy mam powtarzać"
    r"\b(?:udah|sudah|dah) (?:bilang|ngomong|kasih tau|kasih tahu)\b|\b(?:udah|sudah) berapa kali\b",
    r"\bprzecie[\u017cz] (?:ci )?(?:napisa[\u0142l](?:em|am)|m[\u00f3o]wi[\u0142l](?:em|am)|pisa[\u0142l](?:em|am))\b",
    r"\bile razy (?:mam|musz[\u0119e]|trzeba) (?:powtarza[\u0107c]|m[\u00f3o]wi[\u0107c]|pisa[\u0107c])\b",
    # zh: "我已经说过了", "跟你说了多少次", "不是说了别动吗"
    r"\u6211(?:\u5df2\u7ecf|\u65e9\u5c31|\u521a\u624d|\u521a\u521a|\u4e4b\u524d|\u90fd)(?:\u8bf4|\u8aaa)\u8fc7",
    r"(?:\u8bf4|\u8aaa)(?:\u4e86|\u8fc7)?(?:\u591a\u5c11|\u51e0)(?:\u6b21|\u904d)",
    r"\u4e0d\u662f(?:\u8ddf\u4f60)?(?:\u8bf4|\u8aaa)\u4e86|\u6211\u8bf4\u4e86(?:\u4e0d\u8981|\u522b)",
    # ko: "말했잖아요", "하지 말라고 했잖아", "몇 번을 말해요"
    r"\ub9d0\ud588\uc796|\ub9d0\uc500\ub4dc\ub838\uc796|\ub77c\uace0 \ud588\uc796",
    r"\uba87 \ubc88(?:\uc744|\uc774\ub098)? \ub9d0",
    # ja: "さっきダメって言いました", "前にも言ったけど", "何度言えば"
    r"(?:\u3055\u3063\u304d|\u5148\u307b\u3069|\u524d\u306b\u3082|\u4f55\u5ea6\u3082|\u3082\u3046)\S{0,12}?"
    r"(?:\u8a00\u3044\u307e\u3057\u305f|\u8a00\u3063\u305f|\u4f1d\u3048\u307e\u3057\u305f|"
    r"\u304a\u9858\u3044\u3057\u307e\u3057\u305f)",
    r"\u4f55\u5ea6(?:\u3082)?(?:\u8a00\u3048|\u8a00\u308f\u305b)",
)
"""Saying it was said before, in the other languages people most often write to an agent in: each needs a word that
marks it as said before ("doch", "déjà", "已经", "さっき") or a "how many times" with a verb of saying ("cuántas veces
se llama" asks a count)."""

TOLD_BEFORE = (
    r"\bi(?:'ve|\s+(?:already|have|had))?\s+(?:already\s+)?told you (?:already|before|twice|so|not to|to never|"
    r"never to|to not|that|\w+ times)\b|"
    r"\bi (?:literally |already |just |clearly |explicitly |specifically )?(?:said|asked(?: you)?|wrote)"
    r"(?: to)? (?:no|not|don'?t|do not|never|only|no more|stop)\b|\bwhat i (?:said|told you|asked(?: you)?) not to\b|"
    r"\bhow many times have i (?:told|asked) you\b|\byou(?:'re| are)? (?:keep|kept|still|keep on) ignoring\b|"
    r"\bi(?:'ve| have) (?:already )?said (?:it|this|that|so) (?:twice|before|already|\w+ times)\b|"
    r"\bi (?:already |literally )?said (?:it |this |that |so )?(?:twice|three times|\d+ times)\b|"
    r"\bi told you[,:;.!]+\s*(?:no|not|don'?t|never|do not|stop|nothing)\b|"  # "I told you, NO defender changes"
    r"\b(?:eu |j[a\u00e1] (?:te )?)(?:falei|disse) (?:pra |para |que )?n[a\u00e3]o\b|"  # pt: "eu falei pra NÃO ..."
    r"\b(?:ya )?te dije (?:que )?no\b|"  # es: "ya te dije que no ..."
    # he: "כתבתי בלי לגעת", "אמרתי לך במפורש: לא"; ro: "am zis clar să NU"; uk: "я ж казав"; fa: "بهت گفتم";
    # hu: "mondtam, hogy ne"; th: "บอกแล้วว่าอย่า"; ms: "saya dah cakap jangan"
    r"(?<!\w)(?:אמרתי|כתבתי|ביקשתי)(?:\s+[^\s:]+){0,3}?:?\s+(?:בלי|לא|אל|אין)(?!\w)|"
    r"(?<!\w)כבר אמרתי לך(?!\w)|\b(?:am zis|am spus|[\u021bt]i-am (?:zis|spus))(?: clar| deja)? "
    r"(?:s[a\u0103]|c[a\u0103]) nu\b|\bя ж (?:казав|казала|писав|писала|просив|просила)\b|"
    r"(?<!\w)(?:بهت|بهتون) (?:گفتم|گفته بودم)(?!\w)|(?<!\w)مگه نگفتم(?!\w)|"
    r"\u306a\u3044\u3067(?:\u3063\u3066|\u3068)\S{0,8}?(?:\u8a00\u3063\u305f|\u66f8\u3044\u305f|\u304a\u9858\u3044\u3057\u305f)|"
    r"\b(?:m[a\u00e1]r )?(?:mondtam|sz[o\u00f3]ltam|k[e\u00e9]rtem|[i\u00ed]rtam),? hogy ne\b|"
    r"บอก(?:ไป)?แล้ว(?:ว่า|นะ)?\s*(?:ไม่|อย่า)|\b(?:saya|aku) (?:dah |sudah )?(?:cakap|kata|beritahu|bagitahu) "
    r"(?:jangan|tak payah)\b|"
    # sw: "nimesema usifute"; tl: "sabi ko wag", "sinabi ko nang huwag"; ar: "قلتلك لا"/"قلت لك ما"; ru: "я же написал";
    # hi: "मैंने मना किया था", "बोला था मत"; bn: "বলেছিলাম ... না"
    r"\bnimesema (?:usi|msi|si)\w+|\b(?:sabi ko|sinabi ko(?: na)?(?: nang)?) (?:wag|huwag|'wag)\b|"
    r"(?<!\w)(?:قلتلك|قلت لك|قلتلكم) (?:لا|ما|متعملش|بلاش)(?!\w)|\bя же (?:написал|написала|говорил|говорила|сказал|"
    r"сказала|просил|просила)\b|मना किया था|(?:बोला|कहा) था (?:कि )?(?:मत|नहीं)|"
    r"বলেছিলাম\W+(?:\S+\s+){0,4}?(?:না|করো না|করবে না)|"
    rf"{'|'.join(_TOLD_ELSEWHERE)}|"
    r"\bwhat did i (?:just )?(?:say|tell you|ask(?: you)?)\b|\bi (?:literally |already )(?:just )?(?:said|told you)\b|"
    r"\bstop trying to\b|\bdid you even (?:open|read|look|check|try|run|test|see)\b|"
    # said at the start: "I said in my first message", "it was in my first message", "stand in meiner ersten Nachricht"
    r"\b(?:i (?:said|wrote|asked|mentioned|told you)(?: (?:it|this|that|so))?|(?:it|that|this) (?:was|is)(?: right| "
    r"already)?) in my (?:very )?(?:first|last|previous|original|earlier) (?:message|prompt|comment)\b|"
    r"\bhab(?:e)? (?:ich )?(?:\w+ ){0,4}(?:ausdr\u00fccklich|extra|explizit|klar|deutlich) (?:gesagt|geschrieben)\b|"
    r"\bstand (?:auch |doch |schon |ja )*in meiner (?:ersten |letzten )?nachricht\b|"
    # where it works: "are you even in my repo??", "are you even looking at the right file?"
    r"\b(?:are|r) (?:you|u) even (?:in|on|at|looking|using|running|reading|editing|checking|testing|connected)\b|"
    r"\b(?:is|did|has|does) (?:anything|any of (?:this|that|it)) (?:you (?:did|changed|tried) )?"
    r"(?:actually |even |really )(?:chang|mov|help|improv|do)\w*|"
    r"\banything (?:actually |even |really )(?:moved|changed|helped|improved)\b|"
    # looked at before: "you already read that file", "you've already checked this twice"
    r"\byou(?:'ve| have)? already (?:read|opened|checked|looked at|grepped|searched|tried|done) (?:that|this|it|those|"
    r"these)\b|"
    # not listening: "are you even listening?", "hörst du mir überhaupt zu?", "¿me estás escuchando?", "tu m'écoutes ?"
    r"\b(?:are you|r u|you(?:'re| are) not|you aren'?t|you don'?t) (?:even |actually )?listen(?:ing)?\b|"
    r"\bh(?:\u00f6|oe?)rst du (?:mir )?(?:\u00fcberhaupt |ueberhaupt |eigentlich |denn )?(?:nicht )?zu\b|"
    r"\b(?:me est[\u00e1a]s escuchando|no me escuchas)\b|\btu m'[\u00e9e]coutes\b"
)
"""The person saying they said it before, or asking whether the agent even looked ("I told you not to", "what did I
just say", "did you even open engine.py?", "is anything actually changing?"), in English and the languages people
write in: a complaint even as a question."""
TOLD_GATES = (
    ("told", "how many", "ignoring", "said", "asked", "wrote", "falei", "disse", "te dije", "stop trying", "did i")
    + ("listen", "rst du", "escuch", "coutes", "already", "did you even", "anything", "you even", "u even")
    + ("in my ", "gesagt", "geschrieben", "nachricht")
    + ("אמרתי", "כתבתי", "ביקשתי", "zis", "spus", "я ж", "گفتم", "mondtam", "szoltam", "sz\u00f3ltam", "k\u00e9rtem")
    + ("kertem", "irtam", "\u00edrtam", "บอก", "cakap", "kata", "beritahu", "bagitahu", "\u306a\u3044\u3067")
    + ("nimesema", "sabi ko", "sinabi ko", "قلت", "मना किया", "था", "বলেছিলাম", "я же")
    + (
        "gesagt",
        "geschrieben",
        "wie oft",
        "gezegd",
        " dit",
        "combien",
        "te lo",
        "dicho",
        "veces",
        "detto",
        "volte",
        "vezes",
    )
    + ("mówił", "mowil", "pisał", "pisal", "söyledim", "soyledim", "说", "說", "말", "했잖", "言", "伝え", "お願い")
    + ("bilang", "ngomong", "kasih ta", "berapa kali", "przecie", "ile razy")
)
"""Lowercase literals one of which ``TOLD_BEFORE`` cannot match without."""
