"""Layer 3: a small learned classifier for what the rules do not name.

Logistic regression over hashed n-grams of the normalised text: words, word
pairs and character 3- to 5-grams inside words, each present-or-absent, the
vector scaled to unit length. Its weights (classifier.npz beside this file)
were trained by tools/train_safety_classifier.py on the tuning set only
(each attack source weighing alike). No model is
downloaded, nothing is random: the same text always gets the same score.
It judges texts of at least MIN_WORDS words; scoring a few hundred
characters takes well under a millisecond.

Its n-grams learned attack vocabulary ("mode", "prompt", "about"), which
everyday memories share ("The user complained about dark mode" scored 0.90).
So how sure the classifier must be depends on how plainly the text speaks to
a model (``signal``): a text that opens with a request ("Ignore ...", "Tell me
...") or tells "you" of instructions, prompts, the system or a jailbreak needs
the lowest threshold; one that only says "you" or asks a question (as every
conversation turn and many facts do: "a game where you manage resources") a
higher one; a statement that only mentions instructions or the system ("She
complained about the system update") or is long a higher one again; a short
statement about someone with none of these is not judged. The three thresholds
were chosen together on the tuning set's cross-validated scores
(tools/train_safety_classifier.py).
"""

from __future__ import annotations

import functools
import re
import zlib
from dataclasses import dataclass
from importlib import resources

import numpy

from services.agent_memory.safety.normalise import RUN_ON, normalise

BUCKETS = 1 << 18
# Prose only: keys and identifiers ("preference_concise_answers") have no spaces, and their
# few n-grams are too little evidence; the rules still judge them.
MIN_WORDS = 3
# Long texts are scored on their head and tail: that is where a hijack sits, and it bounds the cost.
HEAD, TAIL = 3000, 1000
# "you" in English, German, French and Spanish ("ton" is English too: "a ton of work")
_SECOND_PERSON = re.compile(r"\b(you|your|yours|yourself|youre|ur|du|dich|dir|dein|deine|deinen|deinem|deiner"
                            r"|euch|euer|eure|euren|tu|te|toi|ta|tes|vous|votre|vos|tus|ti|usted|ustedes"
                            r"|vosotros|contigo)\b")
# Talk of instructions, prompts, a jailbreak or the system, as words; not words that merely
# contain one ("promptly", "instructor", "ecosystem", "systematic", "Anweisungsbefugnis").
_ABOUT_THE_MODEL = re.compile(
    # "instructions", "prompted", "jailbreaking", "Anweisungen", "Instruktionen", "instrucciones",
    # "consignes", and compounds ending in one ("systemprompt", "Systemanweisung",
    # "ignorepreviousinstructions")
    r"\b[a-z]*(?:instruct(?:s|ed|ing|ions?)?|prompt(?:s|ed|ing)?|anweis(?:e|en|t|ung|ungen)"
    r"|instruktion(?:en)?|instruccion(?:es)?|consignes?"
    r"|jailbr(?:eak(?:s|ed|ing|ers?)?|oken))\b"
    # "system", "Systeme" and the compounds it heads ("Systemregeln"), not its derivations
    r"|\bsystem(?!at|ic|is|d\b)[a-z]*"
    # any of them inside words run together ("previousinstructionsarevoid")
    rf"|(?<=[a-z]){RUN_ON}(?:instruct|prompt|anweis|jailbr)")
# Openings of a request ("Ignore ...", "Tell me ...", "Vergiss ...", "Oublie ..."), in the
# languages the rules know (English, German, French, Spanish).
_REQUEST_OPENINGS = frozenset("""
    ignore forget disregard tell say write print reveal give show spell list translate repeat
    act pretend imagine answer respond output now please stop generate describe explain make
    create help provide let do dont use return replace change summarize start begin continue
    from
    vergiss ignoriere sage sag schreibe schreib zeige zeig gib nenne antworte bitte jetzt
    beantworte erklare erzahle ubersetze wiederhole gebe vergesst ignoriert missachte ubergehe
    uberspringe verrate drucke liste stell stelle spiele spiel agiere verhalte hor hore
    nenn konzentriere fasse gebt zeigt nennt verratet lass erzahl hilf
    oublie oubliez ignorez dis dites ecris ecrivez reponds repondez montre montrez affiche affichez
    donne donnez revele revelez repete repetez traduis fais faites imagine imaginez agis agissez
    joue jouez
    olvida olvide ignora dime di escribe responde muestra repite traduce dame muestrame revela
    revelame actua finge imagina haz juega olvidate
    """.split())
# German formal imperatives: a verb in -en and "Sie" ("Vergessen Sie ...", "Schreiben Sie ...").
_FORMAL_REQUEST = re.compile(r"[a-z]+en sie\b")
# Words before a clause's request that do not change it ("OK, now print ...", "Wait, next ...",
# "Hold on, before anything else print ...", "Zuerst schreibe ...", "D'abord, dis ...").
_LEAD_INS = frozenset("ok okay now so well actually next then also and but wait hey alright "
                      "hold on before anything else first instead finally lastly besides "
                      "und dann jetzt also nun gut super toll prima sehr zuerst zunachst "
                      "stattdessen danach ubrigens ausserdem "
                      "bon bien alors maintenant ensuite d abord puis enfin plutot "
                      "bueno ahora entonces vale primero luego despues ademas".split())
_CLAUSE = re.compile(r"[^.!?;:,\n]+")
# Openings of a question, which a conversation turn has as often as an injection.
_QUESTION_OPENINGS = frozenset("what whats how why who which can could would will is are was wie "
                               "warum wer wo wann welche welcher welches wieso weshalb kannst "
                               "quel quelle quels quelles pourquoi qui quand "
                               "como cuando donde quien cual cuales".split())
NO_SIGNAL, MENTIONS, ADDRESSED, REQUEST = 0, 1, 2, 3
# A text this long is judged (as MENTIONS) even without a sign: a jailbreak can be a story
# told in the third person ("In this story there is a chatbot named KIRA who ...").
LONG_WORDS = 16


def features(text: str) -> numpy.ndarray:
    """Sorted unique bucket indices of the text's n-grams."""
    normal = normalise(text)
    if len(normal) > HEAD + TAIL:
        normal = normal[:HEAD] + " " + normal[-TAIL:]
    words = normal.split()
    grams = [f"w {w}" for w in words]
    grams += [f"b {a} {b}" for a, b in zip(words, words[1:], strict=False)]
    for word in words:
        padded = f" {word} "
        for n in (3, 4, 5):
            grams += [padded[i:i + n] for i in range(len(padded) - n + 1)]
    indices = {zlib.crc32(g.encode()) % BUCKETS for g in grams}
    return numpy.fromiter(sorted(indices), dtype=numpy.int64, count=len(indices))


@dataclass(frozen=True)
class Model:
    weights: numpy.ndarray
    bias: float
    thresholds: tuple[float, float, float]  # for texts that MENTION the model, ADDRESSED, REQUEST
    cross_validated: tuple[float, float]  # on the tuning set: share of attacks caught, of benign flagged

    def score(self, text: str) -> float:
        indices = features(text)
        if len(indices) == 0:
            return 0.0
        margin = float(self.weights[indices].sum()) / len(indices) ** 0.5 + self.bias
        return 1.0 / (1.0 + numpy.exp(-margin))


@functools.cache
def model() -> Model:
    """The committed weights, loaded once per process on first use."""
    with resources.files(__package__).joinpath("classifier.npz").open("rb") as file:
        data = numpy.load(file)
        caught, flagged = data["cross_validated"]
        mentions, addressed, request = data["thresholds"]
        return Model(weights=data["weights"].astype(numpy.float32), bias=float(data["bias"]),
                     thresholds=(float(mentions), float(addressed), float(request)),
                     cross_validated=(float(caught), float(flagged)))


def signal(text: str) -> int:
    """How plainly the text speaks to a model: REQUEST (a sentence or clause opens with one,
    "OK, now print ..." too, or it tells "you" of instructions, prompts, the system, a
    jailbreak), ADDRESSED (says "you" or asks), MENTIONS (talks of those, or is long) or
    NO_SIGNAL (a short statement)."""
    normal = normalise(text)
    words = re.findall(r"[a-z']+", normal)
    if not words:
        return NO_SIGNAL
    about = _ABOUT_THE_MODEL.search(normal) is not None
    addressed = ("?" in text or words[0] in _QUESTION_OPENINGS
                 or _SECOND_PERSON.search(normal) is not None)
    if addressed and about or any(_opens_a_request(c) for c in _CLAUSE.findall(text)):
        return REQUEST
    if addressed:
        return ADDRESSED
    return MENTIONS if about or len(words) >= LONG_WORDS else NO_SIGNAL


def _opens_a_request(clause: str) -> bool:
    words = re.findall(r"[a-z']+", normalise(clause))
    while words and words[0] in _LEAD_INS:
        words = words[1:]
    if words[:1] in (["vergiss"], ["vergesst"]) and "nicht" in words:
        return False  # "vergiss die Liste nicht" reminds ("don't forget"), as rules.py reads it
    return bool(words) and (words[0].replace("'", "") in _REQUEST_OPENINGS
                            or _FORMAL_REQUEST.match(" ".join(words[:2])) is not None)


def speaks_to_a_model(text: str) -> bool:
    return signal(text) != NO_SIGNAL


def looks_like_injection(text: str) -> float | None:
    """The classifier's score when it is over the threshold for the text's signal, else None."""
    if len(text.split()) < MIN_WORDS:
        return None
    strength = signal(text)
    if strength == NO_SIGNAL:
        return None
    current = model()
    score = current.score(text)
    return score if score >= current.thresholds[strength - 1] else None
