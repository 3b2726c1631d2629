"""The person saying the work still fails, a row per language besides English (``STILL_FAILING``): its name, its gates
and its pattern. Pure data, joined into ``_persists``'s English patterns.

Why apart from ``_phrases``: a language added, or a way of saying "still broken" heard in one, changes this table
only; the ways of saying the agent goes in circles or that the person said it before (in every language) are
``_phrases``'s.
"""

from __future__ import annotations

# fmt: off
# a row per language: its name, its gates (lowercase literals its pattern cannot match without), its pattern
STILL_FAILING: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("es", ("sigue", "otra vez", "todav", "a\u00fan", "aun ", "mismo", "funcion", "igual", "nada", "cambi", "probaste"),
        r"\bsigue (?:sin funcionar|fallando|igual|dando (?:el mismo |un )?(?:error|\d{3})|diciendo|mostrando|saliendo|"
        r"apareciendo|siendo|mal|rot[oa]|vac[i\u00ed][oa])\b|\bsigue en [\d$\u20ac]|"
        r"\botra vez (?:lo mismo|igual|el mismo|la misma)\b|"
        r"(?:^|[.!?]\s+)\W*(?:otra vez|sigue|(?:nada\W+)?igual)\b"
        r"(?!,? (?:por favor|con|para|adelante|as[i\u00ed]|de)\b)|"
        r"\b(?:todav[i\u00ed]a|a[u\u00fa]n) no (?:funciona|anda|sirve|carga)\b|\bmismo error\b|\bno funcion\u00f3\b|"
        # "todavía 12 miniaturas", "nada, aún en blanco": still, said first (not "todavía falta el footer")
        r"^\W*(?:(?:nada|no)\W+)?(?:todav[i\u00ed]a|a[u\u00fa]n)\b(?!\s+(?:no|falta\w*|quiero|necesito|tengo|hay|m[a\u00e1]s|"
        r"un|una|unos|unas|puedes|podr\w+|estoy|estamos|me|sin prisa)\b)|"
        # "nada." alone (not "nada más"), "mismo resultado", "y lo mismo", "no cambió nada", "¿lo probaste siquiera?"
        r"(?:^|[.!?]\s+)\W*nada\s*(?:[.!]|$)|\bmismo resultado\b|\by lo mismo\b|\bigualito\b|"
        r"\bno (?:ha )?cambi[o\u00f3a]do? nada\b|\bsin cambios\b|\bprobaste siquiera\b|\bsiquiera lo probaste\b"),
    ("pt", ("continua", "ainda", "mesm", "funcionou", "de novo", "igual", "fez isso", "nada mudou", "mudou nada",
            "tentado", "tentei"),
        r"\bcontinuam? (?:sem funcionar|dando (?:o mesmo )?erro|falhando)\b|\bainda n[a\u00e3]o funciona\b|"
        # "ainda 12 miniaturas", "nada, ainda em branco": still, said first (not "ainda falta o rodapé")
        r"^\W*(?:(?:nada|n[a\u00e3]o)\W+)?ainda\b(?!\s+(?:n[a\u00e3]o|falta\w*|quero|preciso|tenho|tem|h[a\u00e1]|mais|um|uma|"
        r"pode|podes|estou|estamos|bem|me|sem pressa)\b)|"
        r"\bmesmo (?:erro|resultado|espa[c\u00e7]o em branco|diff)\b|\bmesma tela\b|"
        r"\bn[a\u00e3]o funcionou\b|"
        r"\bde novo (?:o mesmo|a mesma)\b|\bcontinuam? (?:igua(?:l|is)|"
        r"o mesmo)\b|(?:^|[.!?]\s+)\W*(?:de novo|igual)\b(?!,? (?:por favor|com|pra|para|a|ao|de)\b)|\bmesma coisa\b|"
        r"\bde novo(?=\s*(?:[.!?]|$))|\b(?:vc|voc[e\u00ea]) j[a\u00e1] fez isso\b|"
        # "igualzinho", "nada mudou", "não mudou nada", "mesmíssimo", "eu já tinha tentado" (the person tried it before)
        r"\bigualzinh[oa]\b|\bnada mudou\b|\bn[a\u00e3]o mudou nada\b|\bmesm[i\u00ed]ssim[oa]\b|"
        r"\bj[a\u00e1] (?:tinha )?(?:tentei|tentado)\b|"
        # "continua." said first, "continua em branco", "ainda o mesmo", "sem gráfico ainda"
        r"(?:^|[.!?]\s+)\W*continuam?\b(?!\s+(?:funcionando|a funcionar|ok|bem|certo|normal|com|a|o|no|na|de|do|da|pra|"
        r"para)\b)|\bcontinuam? (?:em branco|vazi[oa]s?|travad[oa]s?|quebrad[oa]s?|girando|carregando|sem)\b|"
        r"\bainda (?:o mesmo|a mesma|igual|est[a\u00e1] (?:em branco|vazi|quebrad|travad|dando)|d[a\u00e1] (?:erro|o "
        r"mesmo))\b|\bsem [\w\u00e0-\u00fa]+ ainda\b"),
    ("fr", ("toujours", "encore", "m\u00eame", "meme", "n'a pas", "pareil"),
        r"\btoujours pas\b|\b(?:est|sont) toujours (?!(?:bon|bien|ok|correct|valide)\b)\w|\bencore (?:le m|la m|"
        r"pareil)|\bm[e\u00ea]me erreur\b|\bn'a pas (?:march|fonctionn)[e\u00e9]\b|"
        # a sentence opening on "toujours" says it is still so ("Toujours Safari."); "pareil" alone, "c'est pareil"
        r"(?:^|[.!?]\s+)\W*toujours\b(?!\s+(?:plus|moins|faire|utiliser|mettre|garder|v[e\u00e9]rifier)\b)|"
        r"(?:^|[.!?,]\s+)\W*(?:c'est\s+)?(?:toujours\s+|exactement\s+)?pareil\b(?!\s+(?:pour|que|qu')\b)"),
    ("de", ("immer noch", "fehler", "hat nicht", "wieder", "gleich", "kaputt", "schlimmer", "schlechter", "selbe",
            "nichts", "nix"),
        r"\bimmer noch (?:nicht|kaputt|falsch|leer)\b|\b(?:der )?(?:gleicher?|selber?|derselbe) fehler\b|"
        r"\bhat nicht (?:funktioniert|geklappt)\b|^\W*(?:nein\W+)?(?:immer noch|(?:schon )?wieder)\b|"
        # "gleich.", "exakt das gleiche im excel", "alles kaputt"; not "das gleiche für die Tabelle" (a request)
        r"^\W*(?:(?:nein|nope)\W+)?(?:(?:genau|exakt)\s+)?(?:das\s+)?gleiche?(?=\s*(?:[.!,;:]|$)|\s+(?:im|in|wie "
        r"vorher|wie davor)\b)|\b(?:genau|exakt|immer noch|wieder) das gleiche\b|"
        r"\b(?:alles|wieder|noch immer) kaputt\b|\b(?:schlimmer|schlechter) als (?:vorher|davor|zuvor)\b|"
        r"\bnoch schlimmer\b|"
        # "gleiche kurve.", "derselbe Plot!", "ändern gar nix.", "hat nichts gebracht"; not "gleiche Farbe wie der
        # Header", "ändert nichts an der API"
        r"^\W*(?:(?:nein|nope)\W+)?(?:genau |exakt )?(?:die |der |das )?"
        r"(?:gleiche|selbe|dieselbe|derselbe|dasselbe)\s+\w+(?=\s*(?:[.!,;:]|$))|"
        r"\b(?:[\u00e4a]ndert|[\u00e4a]ndern|bringt|bringen) (?:gar |\u00fcberhaupt )?(?:nichts|nix)"
        r"(?=\s*(?:[.!,;:]|$))|"
        r"\bhat (?:gar |\u00fcberhaupt )?(?:nichts|nix) (?:ge[\u00e4a]ndert|gebracht)\b"),
    # ru: всё ещё падает, до сих пор пусто, опять та же ошибка, одно и то же, ничего не поменялось, цифры не
    # поменялись; not "опять же, ..." (then again), "снова запусти" (run it again), "что результат не изменился",
    # "опять ошибка" (an error again: which one, its paste says)
    ("ru", ("\u0435\u0449", "\u0442\u0430 \u0436\u0435", "\u0442\u043e\u0439 \u0436\u0435",
            "\u043f\u043e\u043c\u043e\u0433", "до сих пор", "по-прежнему", "опять", "снова", "одно и то же",
            "тот же", "поменял", "изменил"),
        r"(?:до сих пор|по-прежнему) (?:не (?:работа|груз|открыва|видн|показыва|сохраня|запуска|собира|проход|"
        r"исправ|почин|отобража|появля|меня)|то же|та же|тот же|пуст|пада|висит|ошибк|сломан|0\b|ноль|[1-5]\d\d\b)|"
        r"(?:опять|снова) (?:то же|та же|тот же|одно и то же|не |пуст|ничего|сломал)|"
        r"(?:^|[.!?]\s*)\W*(?:опять|снова)(?! же)\W*(?:[.!]|$)|\bодно и то же\b|"
        r"\bтот же (?:результат|вывод|график|экран|AIC|ответ)|\bничего не (?:поменял|изменил)\w*|"
        r"(?:^|[.!?,;]\s*)(?:цифры|числа|результат\w*|вывод|график) (?:вообще |совсем )?не (?:поменял|изменил)\w*|"
        r"\b(?:\u0432\u0441[\u0435\u0451] \u0435\u0449[\u0435\u0451] (?:\u043d\u0435|\u043f\u0430\u0434\u0430|"
        r"\u043e\u0448\u0438\u0431|\u0441\u043b\u043e\u043c\u0430\u043d)|"
        r"\u0442\u043e\u0439 \u0436\u0435 \u043e\u0448\u0438\u0431\u043a|"
        r"\u0442\u0430 \u0436\u0435 (?:\u043e\u0448\u0438\u0431\u043a\u0430|"
        r"\u043f\u0440\u043e\u0431\u043b\u0435\u043c\u0430)|"
        r"\u043d\u0435 \u043f\u043e\u043c\u043e\u0433\u043b\u043e)"),
    ("zh", ("\u8fd8\u662f", "\u4ecd\u7136", "\u4f9d\u7136", "\u540c\u6837", "\u4e00\u6837", "还在", "没用",
            "没有用", "到底", "又", "没变", "没有变", "一直"),
        r"一直都是(?:\s*\d|这样|这个|同样|一样)|(?:\u8fd8\u662f|\u4ecd\u7136|\u4f9d\u7136)(?:\u4e0d\u884c|\u62a5\u9519|\u5931\u8d25|\u4e00\u6837|"
        r"\u6ca1\u6709?(?:\u7528|\u53cd\u5e94|\u53d8\u5316))|(?:\u540c\u6837|"
        r"\u4e00\u6837)\u7684(?:\u9519\u8bef|\u95ee\u9898)|"
        r"还在(?=\s*(?:[。！!，,；;]|$))|(?:也|都|还是|根本)?没(?:有)?用(?=\s*(?:[。！!，,；;]|$))|"
        r"(?:^|[。！!？?])\W*(?:还是)?一样(?:的)?\s*(?:[。！!，,]|$)|你到底有没有|"
        # again: 又报错了, 又是这个错误, 又不行了, 又挂了
        r"又(?:是|出现|来)?(?:报错|出错|错了|失败|挂了|崩|不行|不能|没用|一样|这个错|同样|白屏|卡住|卡死)|"
        # still as it was: 还是旧的, 还是横着, 一样横着, 没变化; not a choice asked (还是用红色的？)
        r"(?:还是|仍然|依然|一样)[^，。！？,.!?\s]{1,6}?(?:的|着)(?![^，。！？]*[吗？?])|没(?:有)?变(?:化)?(?=\s*(?:[。！!，,；;]|$))"),
    ("ja", ("\u307e\u3060", "\u540c\u3058", "\u5909\u308f", "\u5909\u5316", "\u76f4\u3089", "\u76f4\u308a",
            "\u76f4\u3063", "\u52b9\u679c", "\u76f8\u5909\u308f\u3089\u305a", "\u307e\u307e", "\u304a\u306a\u3058",
            "また", "だめ", "ダメ", "止まって", "ずっと"),
        # まだ動かない/エラー/直ってない/同じ/変わらない, 同じエラー/結果, さっきと同じ, ...が同じです, 変わらないです,
        # 直りません, 変わってないね, 効果なし, 相変わらず
        r"\u307e\u3060(?:\u52d5\u304b\u306a\u3044|\u52d5\u304d\u307e\u305b\u3093|\u30a8\u30e9\u30fc|"
        r"\u76f4\u3063\u3066(?:\u3044)?(?:\u306a\u3044|\u307e\u305b\u3093)|\u540c\u3058|\u5909\u308f\u3089|"
        r"\u30c0\u30e1|\u3060\u3081|\u5931\u6557)|"
        r"\u540c\u3058(?:\u30a8\u30e9\u30fc|\u7d50\u679c|\u554f\u984c|\u75c7\u72b6|\u753b\u9762|\u72b6\u614b|"
        r"\u30ed\u30b0)|(?:\u3055\u3063\u304d|\u524d|\u5148\u307b\u3069|\u524d\u56de|\u6700\u521d)\u3068"
        r"(?:\u5168\u304f|\u307e\u3063\u305f\u304f)?\u540c\u3058|"
        r"(?<!\u3068)(?:\u5168\u304f|\u307e\u3063\u305f\u304f)?\u540c\u3058(?:\u3067\u3059|\u3067\u3057\u305f|"
        r"\u3060)(?:\u306d|\u3088)?(?=[\u3002\uff01!\u3001\s]|$)|"
        r"(?:\u5909\u308f\u3089(?:\u306a\u3044|\u306a\u304b\u3063\u305f)|\u5909\u308f\u308a\u307e\u305b\u3093|"
        r"\u76f4\u3089(?:\u306a\u3044|\u306a\u304b\u3063\u305f)|\u76f4\u308a\u307e\u305b\u3093|"
        r"\u76f4\u3063\u3066(?:\u3044)?\u306a\u3044|\u5909\u308f\u3063\u3066(?:\u3044)?(?:\u306a\u3044|\u307e\u305b\u3093))"
        r"(?:\u3067\u3059|\u3067\u3057\u305f)?(?:\u306d|\u3088)?"
        r"(?=[\u3002\uff01!\u3001\s]|$)|\u5909\u5316(?:\u306a\u3057|\u304c?\u306a\u3044|\u3042\u308a\u307e\u305b\u3093)|"
        r"\u52b9\u679c(?:\u306a\u3057|\u304c?\u306a\u3044|\u3042\u308a\u307e\u305b\u3093)|"
        r"\u76f8\u5909\u308f\u3089\u305a|"
        # まだ18412のまま, まだNULL残ってる, 同じテストのまま, 止まってるって, ずっと5/5で落ちてる
        r"まだ(?:\d|\S{0,12}?(?:残って|のまま))|同じ\S{0,8}?のまま(?!で(?:いい|お願い|OK|大丈夫|よい))|"
        r"止まって(?:る|ます)(?:って|よ|ね|けど|じゃん)?(?=[\u3002\uff01!\uff1f?\u3001\s]|$)|"
        r"ずっと\S{0,20}?(?:落ちて|失敗|エラー|止まって|同じ(?:エラー|結果|まま|画面))|"
        # 被ったまま (still overlapping: a state that remains), 全く同じ。, おなじ。 said alone
        r"[\u305f\u3060]\u307e\u307e(?=\s*(?:\u3067\u3059|\u3060|[\u3002\uff01!\u3001]|$))|"
        r"(?:\u5168\u304f|\u307e\u3063\u305f\u304f)\u540c\u3058(?=\s*(?:[\u3002\uff01!\u3001]|$))|"
        r"(?:^|[\u3002\uff01!])\s*(?:\u540c\u3058|\u304a\u306a\u3058)(?:\u3067\u3059)?\s*(?:[\u3002\uff01!]|$)|"
        # said first: 変わらず。, だめ。; まだ送信される (it still gets sent), not まだ終わってない (not done yet)
        r"(?:^|[\u3002\uff01!])\s*(?:変わらず|だめ|ダメ)(?:です|でした|だった)?\s*(?:[\u3002\uff01!、]|$)|"
        r"(?:^|[\u3002\uff01!])\s*まだ(?!終わ|かか|途中|待|実行中|処理中)[^\s\u3002\u3001]{1,8}(?:される|されます|されて|なる|なります|出る|出ます)|"
        # again: またエラー, また落ちた, また動かない; the agent doing it again: また skip にしてる, また書き換えてます
        r"また\S{0,12}?(?:エラー|落ち|失敗|壊れ|動かな|止ま|クラッシュ|固ま|ダメ|だめ|同じ|書き換え|して(?:る|ます|いる|います))"),
    ("it", ("ancora", "sempre", "niente da fare", "non funziona", "stesso", "identic", "di nuovo", "stessa cosa",
            "uguale", "resta", "rimane", "rimast", "un'altra volta"),
        r"^\W*(?:(?:niente|no)\W+)?ancora\b(?!\s+(?:una|un|uno|qualche|due|tre|da|del|della|dei|delle|di|pi\u00f9|"
        r"meglio|prima)\b)|"
        r"\bancora (?:non|niente|lo stesso|la stessa|uguale)\b|\bsempre (?:lo stesso|la stessa|uguale)\b|"
        # "niente, sempre 404", "di nuovo 404": a status or an error again
        r"\b(?:sempre|di nuovo) (?:\d{3}\b|errore|bianc|vuot)|\bdi nuovo (?:lo stesso|la stessa)\b|"
        r"\bniente da fare\b|\bnon funziona (?:ancora|pi\u00f9)\b|\bstesso errore\b|\bidentic[oa]\b|"
        # "stessa cosa di prima" (not "fai la stessa cosa di prima": a request), "uguale." or "sempre chiaro." first,
        # "resta bianco", "è rimasto vuoto": a state that stays
        r"(?<!fai la )(?<!fare la )\bstessa cosa (?:di prima|dell'altra volta|di ieri)\b|"
        r"^\W*(?:(?:niente|no)\W+)?(?:stessa cosa|uguale)\b(?!\s+(?:per|anche|su|con|a|al|alla|nel|nella)\b)|"
        r"^\W*(?:(?:niente|no)\W+)?sempre (?!(?:meglio|pi\u00f9|con|quando|se|per|cos\u00ec)\b|\w+[aei]re\b)\w+|"
        r"\b(?:resta|rimane|[e\u00e8] rimast[oa])\s+(?:tutt[oa]\s+)?(?:bianc|vuot|ugual|ferm|bloccat|ner[oa]\b)|"
        # "di nuovo slavati" said first (not "di nuovo, lancia i test"), "il GPS c'è ancora", "uguale alla prima volta",
        # "slavati un'altra volta." (not "prova un'altra volta.")
        r"^\W*di nuovo\b(?!,)(?!\s+(?:per favore|con|per|da)\b)|"
        r"\bc'[e\u00e8] ancora\b(?!\s+(?:da|un|una|qualche|tempo)\b)|"
        r"\bci sono ancora\b(?!\s+(?:da|dei|delle|due|tre|altri|altre)\b)|\buguale (?:a prima|alla prima volta)\b|"
        r"(?<!\S)(?!(?:prova|riprova|fallo|rifallo|lancialo|controlla|fai|lancia|esegui)\s)\w+ un'altra volta\s*[.!]"),
    ("nl", ("nog ", "hetzelfde", "weer", "dezelfde"),
        r"\bnog steeds\b|\bnog altijd (?:niet|hetzelfde)\b|\b(?:precies )?hetzelfde\b|^\W*(?:nee\W+)?weer\b|"
        r"\bdezelfde fout\b"),
    ("sv", ("fortfarande", "samma fel", "precis som", "igen"),
        r"\bfortfarande\b|\bsamma fel\b|\bprecis som (?:innan|f\u00f6rut)\b|^\W*(?:nej\W+)?igen\b"),
    ("pl", ("nadal", "wci\u0105\u017c", "dalej", "znowu", "zn\u00f3w", "ten sam", "to samo", "jak w", "jak wcze",
            "identycznie", "tak samo"),
        r"\b(?:nadal|wci\u0105\u017c|dalej) nie\b|^\W*znowu\b|\bten sam b\u0142\u0105d\b|\bto samo\b|"
        # "nadal 404", "znowu biała strona"; "znowu wciągnąłeś Reacta" (you did it again)
        r"\b(?:nadal|wci\u0105\u017c|dalej|znowu|zn\u00f3w) (?:\d{3}\b|bia\u0142|pust|b\u0142\u0105d)|"
        r"\b(?:znowu|zn\u00f3w) \w+(?:\u0142e\u015b|\u0142a\u015b)\b|"
        # "dalej się kręci" (still spinning), "nadal tak samo", "wciąż wisi"
        r"\b(?:nadal|wci\u0105\u017c|dalej) (?:si\u0119 (?:kr\u0119ci|wiesza|\u0142aduje|sypie|wysypuje|zawiesza)|"
        r"tak samo|wisi)\b|"
        # "dalej." or "no i znowu." said first as a sentence of its own; "dokładnie jak w pierwszym teście",
        # "identycznie jak o 10:40", "tak samo jak wcześniej" (the same as before)
        r"^\W*(?:(?:no|a|i|nie)\W+){0,2}(?:nadal|wci\u0105\u017c|dalej|znowu|zn\u00f3w)\s*[.!]|"
        r"(?:^|[.!?]\s+)\W*(?:dok\u0142adnie|identycznie|tak samo) jak (?:w |przy |o |za )?"
        r"(?:pierwsz|poprzedni|wcze\u015bniej|ostatni|przedtem|rano|wczoraj|\d)"),
    ("cs", ("po\u0159\u00e1d", "furt", "zase to", "st\u00e1le", "nezm\u011bnilo", "stejn"),
        # "pořád stejné", "furt to samý", "pořád to padá", "stejná chyba", "pořád:" or "pořád." said first
        r"\b(?:po\u0159\u00e1d|furt) (?:stejn|to sam|to pad|ta sam|rozbit|nefung|nic|pad\u00e1)|\bzase to (?:sam|"
        r"stejn|pad)|\bst\u00e1le (?:stejn|nefung|rozbit|pad)|\bnic se nezm\u011bnilo\b|^\W*stejn[\u00e9\u00fd]\b|"
        r"\bstejn[\u00e1\u00e9] chyb|^\W*(?:po\u0159\u00e1d|furt)\s*[.:!]"),
    ("el", ("\u03af\u03b4\u03b9\u03bf", "\u03ac\u03bb\u03bb\u03b1\u03be\u03b5"),
        r"\u03b1\u03ba\u03cc\u03bc[\u03b1\u03b7] \u03c4\u03bf \u03af\u03b4\u03b9\u03bf|"
        r"\u03af\u03b4\u03b9\u03bf \u03bb\u03ac\u03b8\u03bf\u03c2|"
        r"\u03c0\u03ac\u03bb\u03b9 \u03c4\u03bf \u03af\u03b4\u03b9\u03bf|"
        r"\u03c4\u03af\u03c0\u03bf\u03c4\u03b1 \u03b4\u03b5\u03bd \u03ac\u03bb\u03bb\u03b1\u03be\u03b5|"
        r"^\W*\u03af\u03b4\u03b9\u03bf\b"),
    ("id, ms", ("masih", "tetap", "tetep", "sama saja", "sama je", "sama aja", "sama persis", "berubah",
                "tiada perubahan", "tak jalan"),
        r"\bmasih (?:\d{3}\b|sama|error|gagal|belum|tidak|tak|ga|gak|nggak|rusak|kosong)\b|"
        r"\btet[ae]p (?:\d{3}\b|sama|error|gagal|ga|gak|nggak|tidak)\b|"  # spoken: "masih 419 mas", "tetep 419"
        r"\bsama (?:saja|je|aja|persis)\b|\b(?:tak|tidak) (?:berubah|jalan)\b|\btiada perubahan\b"),
    ("tr", ("hala", "h\u00e2l\u00e2", "ayn\u0131"),
        r"\bh[a\u00e2]l[a\u00e2] (?:ayn\u0131|\u00e7al\u0131\u015fm\u0131yor|olmuyor|hata)|\byine ayn\u0131\b|"
        r"\bayn\u0131 hata\b"),
    ("vi", ("v\u1eabn", "l\u1ea1i ", "như cũ", "tác dụng", "thay đổi"),
        r"\bv\u1eabn (?:l\u1ed7i|v\u1eady|nh\u01b0 c\u0169|b\u1ecb|kh\u00f4ng)|\bl\u1ea1i l\u1ed7i\b|"
        # still white, as before, again nothing, no effect, nothing changed; not "vẫn cần" (still need)
        r"\bvẫn (?!(?:cần|muốn|nên|phải|được|ok|ổn|tốt|chạy tốt|đang)\b)\w+|(?:^|[.!,]\s*)như cũ\b|"
        r"\blại (?:bị|lỗi|không|hỏng|trắng|trống)\b|\bkhông có tác dụng\b|\b(?:không|chẳng|chả) (?:có gì )?thay đổi\b"),
    ("ko", ("\uc5ec\uc804", "\uc544\uc9c1\ub3c4", "\ub611\uac19", "또", "같"),
        r"\uc5ec\uc804\ud788|\uc544\uc9c1\ub3c4 (?:\uc548|\uac19|\uc5d0\ub7ec|\uc624\ub958)|\ub611\uac19|"
        r"또 (?:에러|오류|안 ?[돼되]|같은|실패|죽|멈|깨|터|튕)|"  # again: 또 에러, 또 안돼요, 또 같은 오류
        # the same as before or at first: 아까랑 똑같음, 처음이랑 같은 문제, 저번이랑 같아요
        r"(?:아까|처음|저번|이전|전)(?:이랑|랑|하고|과|와) (?:똑)?같"),
    # ar, MSA and spoken: نفس الخطأ/الايرور/الرسالة, لسه نفس, مش شغال, ما زبط, ما تغير شي; "نفس الشي" said first
    ("ar", ("\u0646\u0641\u0633", "\u0632\u0627\u0644", "لسه", "لسا", "لسة", "شغال", "اشتغل", "زبط", "ظبط", "نفع",
            "تغير", "اتغير", "يعمل"),
        r"\u0646\u0641\u0633 (?:\u0627\u0644\u062e\u0637\u0623|\u0627\u0644\u0645\u0634\u0643\u0644\u0629)|"
        r"\u0644\u0627 \u064a\u0632\u0627\u0644|\u0645\u0627 ?\u0632\u0627\u0644|"
        r"(?<!\w)نفس (?:ال)?(?:خطا|ايرور|إيرور|مشكله|رسالة|رساله|نتيجة|نتيجه|error)(?!\w)|"
        r"^\W*(?:(?:لا|لأ|برضو|برضه|بردو)\W+)?نفس (?:الشي|الشيء|الحاجة|الحاجه|الكلام)(?!\w)|"
        r"(?<!\w)(?:لسه|لسا|لسة|لساته|لسى|لازال) (?:نفس|مش|ما|مو|بيطلع|يطلع|طالع|موجود|خربان|بايظ|واقف|نفسه|"
        r"الايرور|الخطأ|error)(?!\w)|"
        r"(?<!\w)(?:مش|مو|ما|مب) (?:شغال|شغالة|اشتغل|اشتغلت|زابط|زبط|ظبط|نفع|نفعت|تغير شي|اتغير حاجة|تغيرت)(?!\w)|"
        r"(?<!\w)(?:لم|لا) (?:يعمل|يتغير شيء|تتغير)(?!\w)|(?<!\w)(?:مفيش|ما في|مافي) (?:حاجة|شي) (?:اتغيرت|تغير)"),
    # hi (Devanagari): अभी भी वही error, फिर से वही, कुछ नहीं बदला, काम नहीं कर रहा; not "अभी भी GST column चाहिए"
    ("hi", ("अभी भी", "अब भी", "फिर से", "वही", "नहीं बदला", "फर्क", "फ़र्क", "काम नहीं", "ठीक नहीं"),
        r"(?<!\w)(?:अभी भी|अब भी|फिर से|फिर भी) (?:वही|वैसा|वैसे|वैसी|same|error|एरर|नहीं|खराब|खाली|ब्लैंक|crash|fail)(?!\w)|"
        r"(?<!\w)वही (?:error|एरर|गलती|ग़लती|समस्या|दिक्कत|प्रॉब्लम|problem|हाल)(?!\w)|^\W*(?:(?:भाई|यार|नहीं)\W+)?"
        r"(?:फिर से )?वही(?=\s*(?:[.!।,]|$))|(?<!\w)कुछ (?:भी )?नहीं बदला|(?<!\w)कोई (?:फर्क|फ़र्क|बदलाव) नहीं|"
        r"(?<!\w)काम नहीं (?:कर रहा|कर रही|किया|हुआ|बना)|(?<!\w)ठीक नहीं हुआ"),
    # bn: এখনো একই, একই ভুল/সমস্যা, আবার সেই, কাজ করছে না, কিছুই বদলায়নি; not "এখনো ... menu button দরকার"
    ("bn", ("এখনো", "এখনও", "তবুও", "একই", "আবার সেই", "আবার একই", "কাজ করছে না", "ঠিক হয়নি", "বদলায়নি", "পরিবর্তন"),
        r"(?:এখনো|এখনও|তবুও) (?:একই|সেই|হচ্ছে না|হয়নি|কাজ করছে না|ঠিক হয়নি|ভাঙা|খালি|error|এরর|আসছে না|দেখাচ্ছে না)|"
        r"একই (?:ভুল|সমস্যা|error|এরর|অবস্থা|ফল)|একই (?:রকম|জিনিস)(?=\s*(?:[.!,।]|$|আবার))|আবার (?:সেই|একই)|"
        r"কাজ করছে না|ঠিক হয়নি|কিছুই (?:বদলায়নি|বদলাল না|পরিবর্তন হয়নি)|কোন(?:ো)? পরিবর্তন (?:নেই|হয়নি)"),
    # sw: bado ni ile ile error, bado haifanyi kazi, hakuna kilichobadilika; not "bado sijaona" (not yet)
    ("sw", ("bado", "ile ile", "ileile", "vile vile", "haifanyi", "badilika"),
        r"\bbado (?:ni |iko |kuna |tu )?(?:ile ile|ileile|vile vile|vilevile|error|hitilafu|haifanyi|haifanyi kazi|"
        r"inagoma|haijafanya|inakataa|tatizo|sawa tu)\b|\b(?:error|hitilafu|tatizo) (?:ni |bado )?(?:ile ile|ileile)\b|"
        r"\bhaifanyi kazi\b|\bhakuna (?:kilichobadilika|mabadiliko)\b|\bhaijabadilika\b"),
    # tl: ganun pa rin, same pa rin, hindi pa rin gumagana, walang nagbago; not "kailangan pa rin ng rotation"
    ("tl", ("pa rin", "pa din", "nagbago", "pareho"),
        r"\b(?:ganun|ganon|ganoon|same|sira|error|ayaw|hindi|di|pareho|wala) (?:pa rin|pa din|parin|padin)\b|"
        r"\b(?:walang|wala pa ring|wala paring) (?:nagbago|pagbabago)\b|\bpareho lang\b"),
    # he: עדיין לא עובד, עדיין אותו דבר, אותה שגיאה, לא עזר, שום דבר לא השתנה
    ("he", ("עדיין", "אותה", "אותו", "עזר", "השתנה", "שוב"),
        r"עדיין (?:לא (?:עובד|עובדת|עובדים|עבד|תקין|נפתח|נטען|מופיע|מתחבר|נשמר)|אותו (?:דבר|מצב|באג)|"
        r"אותה (?:שגיאה|בעיה|תקלה)|שבור|תקוע)|(?<!\w)אותה (?:שגיאה|בעיה|תקלה)(?!\w)|(?:שוב|בדיוק) אותו דבר|"
        r"^\W*(?:לא\W+)?אותו דבר(?=\s*(?:[.!?,]|$))|(?<!\w)לא עזר(?!\w)|(?:שום דבר|כלום) לא השתנה|"
        r"לא השתנה כלום|(?<!\w)שוב (?:נגעת|שברת|מחקת|שינית|הרצת|עשית|הוספת|ערכת|דרסת)(?!\w)"),
    # th: ยังไม่หาย, ยังเหมือนเดิม, เหมือนเดิมเลย, error เดิม, ไม่ได้ผล, ไม่มีอะไรเปลี่ยน (no spaces between words: no \b)
    ("th", ("ยัง", "เดิม", "ไม่ได้ผล", "เปลี่ยน", "อีกแล้ว", "เหมือน"),
        r"ยัง(?:ไม่(?:หาย|ได้ผล|ทำงาน|ดีขึ้น)|เหมือนเดิม|(?:โดน|ถูก)?(?:ตัด|พัง|ค้าง)|เป็นเหมือนเดิม|error|เออเร่อ)|"
        r"เหมือนเดิม(?:เลย|เป๊ะ|ทุกอย่าง)|(?:error|เออเร่อ|ข้อผิดพลาด|อาการ)\s*เดิม|ไม่ได้ผล|ไม่มีอะไรเปลี่ยน|ไม่เห็นเปลี่ยน|"
        r"\S{1,12}อีกแล้ว|เหมือน(?:รอบ|ครั้ง)(?:แรก|ก่อน|ที่แล้ว)"),  # ล้นอีกแล้ว (overflows again), as the first time
    # uk: досі не працює, все ще те саме, та сама помилка, знову те саме, не допомогло, нічого не змінилося
    ("uk", ("досі", "все ще", "все одно", "сам", "та ж", "той ж", "допомог", "змін"),
        r"\b(?:досі|все ще|все одно) (?:не|те саме|та сама|той самий|помилк|каша|порожн)|"
        r"\b(?:та сама|та ж|така сама) (?:помилка|проблема|картина|каша)\b|\b(?:той самий|такий самий|той же) "
        r"(?:результат|екран|текст|баг)\b|\bрезультат (?:той самий|такий самий|той же)\b|\bзнову те (?:саме|ж)\b|"
        r"^\W*(?:ні\W+)?те саме\b|\bне допомогл[оа]\b|\bнічого не змінил(?:ось|ося)\b"),
    # fa: هنوز کار نمی‌کنه, هنوز همونه, همون خطا, فرقی نکرد, هیچی عوض نشد
    ("fa", ("هنوز", "همون", "همان", "فرقی", "نشد", "نکرد"),
        "هنوز (?:کار نمی|درست نشده|همون|همان|خطا|ارور|مشکل|خرابه|خالیه|نمی\u200c?(?:شه|شود|کنه|کند))|"
        r"(?:همون|همان) (?:خطا|ارور|مشکل|نتیجه)|فرقی نکرد|هیچ فرقی نکرد|(?:هیچی|هیچ چیز|چیزی) (?:عوض|تغییر) "
        r"(?:نشد|نکرد)|(?<!\w)درست نشد(?!\w)"),
    ("ro", ("tot ", "la fel", "aceea", "ajutat", "schimbat", "a mers"),
        r"\btot nu (?:merge|func\w+|apare|se \w+|a mers)|\btot (?:la fel|aceea\w*)\b|"
        r"\b(?:aceea[s\u0219]i|aceeasi) (?:eroare|problem\w*)|\b(?:iar|din nou) la fel\b|"
        r"\b(?:nu|n-)\s?a (?:ajutat|mers|func\w+)\b|\bnu s-a schimbat nimic\b|\bnimic nu s-a schimbat\b|"
        r"\bla fel ca (?:[i\u00ee]nainte|data trecut[a\u0103])\b"),
    ("hu", ("m\u00e9g mindig", "meg mindig", "ugyanaz", "seg\u00edtett", "segitett", "v\u00e1ltozott", "valtozott"),
        r"\bm[\u00e9e]g mindig (?:nem|ugyanaz|ugyan\w+|hib\w*|rossz|[\u00fcu]res)|"
        r"\bugyanaz a (?:hiba|probl[\u00e9e]ma|eredm[\u00e9e]ny)\b|\bmegint ugyanaz|^\W*(?:nem\W+)?ugyanaz\b|"
        r"\bnem seg[\u00edi]tett\b|\bsemmi(?: sem| nem)? v[\u00e1a]ltozott\b|\bnem v[\u00e1a]ltozott semmi\b"),
    ("hi (Latin script)", ("bhi", "phir se", "wahi", "nahi", "nhi", "fark", "farak"),
        r"\b(?:abhi|ab) bhi (?:same|wahi|wohi|vahi|error|nahi|nhi|fail|crash|khali|blank|[1-5]\d\d)\b|"
        r"\bphir se (?:wahi|wohi|vahi|same|error|fail|crash|[1-5]\d\d)\b|\bwahi error\b|"
        r"^\W*(?:(?:bhai|yaar|arre|nahi|nhi)\W+)?(?:nahi|nhi) (?:hua|hue|chala|bana)\b|"
        r"\b(?:kaam|fix|theek) (?:nahi|nhi) (?:hua|kiya|kar raha|kar rahi|ho raha|ho rahi)\b|"
        r"\b(?:kuch|koi) (?:fark|farak|change) (?:nahi|nhi)\b"),
)
# fmt: on
"""The person saying it still fails, in the languages people most often write to an agent in besides English: a row
per language, its pattern (read case-insensitively beside the English ones, ``person.PERSIST``) and its gates.
"sigue sin funcionar", "toujours pas", "immer noch nicht", "还是不行", "ancora NaN", "nog steeds hetzelfde",
"fortfarande fel", "nadal nie działa", "pořád stejné", "ακόμα το ίδιο", "masih sama", "hâlâ aynı", "vẫn lỗi",
"여전히 안 돼요", "نفس الخطأ", "abhi bhi same error"."""
