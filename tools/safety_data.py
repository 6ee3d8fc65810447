"""The labelled safety data: bench/data/safety/ (see the README there), and REALTALK and the
Common Voice sprint's German and French sentences read from local mirrors (neither states a
licence, so none of it is copied into the repository)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "bench" / "data" / "safety"
# Bare git clones named owner+name/repo, the layout tools/build_safety_data.py reads too.
MIRRORS = Path("/work/.mirror")
REALTALK = ("danny911kr/REALTALK", "b903e06a9770bf4e5fe9018c3e132889666d3b4a")
# Its ten chats, each two people over three weeks: chats 1-5 tune, 6-10 evaluate.
REALTALK_TUNING_CHATS = range(1, 6)
# Sentences gathered for Mozilla Common Voice's 2019 global sprint: voice-assistant commands,
# everyday and conversational sentences ("Kannst du Marleen bitte ausrichten, dass ich heute
# etwas später komme?") and parliamentary speech; German and French, split by a hash.
COMMON_VOICE = ("common-voice/cv-global-sprint-sentences", "b4e69a804357465f3fce2ad895ea58136331eca3")
COMMON_VOICE_LANGUAGES = {"de": "German", "fr": "French"}
MIRRORED = (REALTALK, COMMON_VOICE)


@dataclass(frozen=True)
class Example:
    text: str
    # "attack"; "benign" (a memory-like statement or fact), "benign turn" (a conversation
    # turn: greetings, questions to the other speaker, chat) or "benign prompt" (a question
    # or task for a model)
    label: str
    source: str


def load(name: str) -> list[Example]:
    """``tuning`` or ``evaluation``."""
    with (DATA / f"{name}.jsonl").open(encoding="utf-8") as lines:
        return [Example(**json.loads(line)) for line in lines if line.strip()]


def key(text: str) -> str:
    """What two texts share when they are the same text (case and spacing aside)."""
    return " ".join(text.casefold().split())


def missing(mirrors: Path = MIRRORS) -> list[str]:
    """The repositories of MIRRORED that ``mirrors`` lacks."""
    return [repo for repo, _ in MIRRORED if not _git_dir(repo, mirrors).is_dir()]


def mirrored(split: str, mirrors: Path = MIRRORS) -> list[Example]:
    """REALTALK's and Common Voice's texts of one split (those mirrored), less any that the other
    split holds, committed or read ("How about you?" is said in many chats): the two stay
    apart."""
    other = "evaluation" if split == "tuning" else "tuning"
    taken = {key(e.text) for e in load(other) + _read(other, mirrors)}
    return [e for e in _read(split, mirrors) if key(e.text) not in taken]


def _read(split: str, mirrors: Path) -> list[Example]:
    return (_realtalk_chats(split, mirrors) or []) + (_common_voice(split, mirrors) or [])


def _git_dir(repo: str, mirrors: Path) -> Path:
    return mirrors / repo.replace("/", "+") / "repo"


def _git(repo: str, mirrors: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(_git_dir(repo, mirrors)), *args], check=True,
                          capture_output=True, text=True).stdout


def _common_voice(split: str, mirrors: Path) -> list[Example] | None:
    """The sprint's German and French sentences of one split (half of them, by a hash of the
    text) as conversation-like turns; None without a mirror."""
    repo, commit = COMMON_VOICE
    if not _git_dir(repo, mirrors).is_dir():
        return None
    examples = []
    for code, language in COMMON_VOICE_LANGUAGES.items():
        rows = csv.reader(io.StringIO(_git(repo, mirrors, "show", f"{commit}:corpus.{code}.csv")))
        texts = sorted({row[1].strip() for row in rows if len(row) == 2 and row[1].strip()})
        examples += [Example(t, "benign turn", f"common voice/{language} sentences") for t in texts
                     if (_hash(t) % 2 == 0) == (split == "tuning")]
    return examples


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def _realtalk_chats(split: str, mirrors: Path) -> list[Example] | None:
    """REALTALK's (Lee et al., 2025) observation facts about its speakers ("Kate takes an Italian
    cooking class and makes pasta.", third person, like a memory an agent writes), the
    speakers' own messages, and their first-person statements told in the third person, for
    the ``tuning`` or ``evaluation`` chats; None without a mirror."""
    repo, commit = REALTALK
    if not _git_dir(repo, mirrors).is_dir():
        return None
    examples: list[Example] = []
    for path in _git(repo, mirrors, "ls-tree", "--name-only", commit, "data/").split():
        number = re.fullmatch(r"data/Chat_(\d+)_\w+\.json", path)
        if not number or (int(number[1]) in REALTALK_TUNING_CHATS) != (split == "tuning"):
            continue
        chat = json.loads(_git(repo, mirrors, "show", f"{commit}:{path}"))
        facts = {event["sub-event"].strip() for name, sides in chat.items()
                 if name.startswith("events_session_") for side in sides.values() for event in side}
        turns = {turn["clean_text"].strip() for name, session in chat.items()
                 if re.fullmatch(r"session_\d+", name) for turn in session}
        examples += [Example(t, "benign", "realtalk/facts") for t in sorted(facts) if t]
        examples += [Example(t, "benign turn", "realtalk/turns") for t in sorted(turns)
                     if len(t.split()) >= 3]
        told = {sentence for turn in turns for sentence in third_person(turn)}
        examples += [Example(t, "benign", "realtalk/turns, third person") for t in sorted(told)]
    return examples


# -- first-person statements told in the third person -----------------------------------------

# Who a statement is told about, picked by a hash of the text: (name, subject, object, possessive).
_PEOPLE = [("Nate", "he", "him", "his"), ("Audrey", "she", "her", "her"),
           ("James", "he", "him", "his"), ("Deborah", "she", "her", "her"),
           ("Omar", "he", "him", "his"), ("Priya", "she", "her", "her"),
           ("Tom", "he", "him", "his"), ("Maria", "she", "her", "her")]
_CONTRACTED = {"i'm": "is", "i've": "has", "i'd": "would", "i'll": "will", "im": "is", "ive": "has"}
_AGREEING = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "dont": "doesn't"}
# After these the verb stays as it is: modals, past forms, "I also/really/just ...".
_UNCHANGED = set("""can could would will should might must may shall was did had went got made took
    saw came felt found thought knew told left kept began bought brought met ran read said sent
    spent won wrote grew gave heard lost paid put sat slept stood taught""".split())
_ADVERBS = set("also really just still always never usually often recently finally actually even "
               "sometimes only mostly totally absolutely definitely currently".split())
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


def _agree(verb: str) -> str:
    lower = verb.lower()
    if lower in _AGREEING:
        return _AGREEING[lower]
    if lower in _UNCHANGED or lower.endswith("ed") or not lower.isalpha():
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(text: str) -> list[str]:
    """Each first-person statement of the text told about someone, the way a memory records
    what a speaker said ("I've been reading Dune." -> "Nate has been reading Dune."): sentences
    opening with I or My, questions left out. A rule, not a grammar: a few come out clumsy."""
    name, subject, obj, possessive = _PEOPLE[_hash(text) % len(_PEOPLE)]
    told = []
    for sentence in (s.strip() for s in _SENTENCE.findall(text)):
        words = sentence.replace("\u2019", "'").split()
        if len(words) < 4 or sentence.endswith("?") or words[0].lower() not in (
                "i", "my", *_CONTRACTED):
            continue
        out, first = [], True
        index = 0
        while index < len(words):
            word, lower = words[index], words[index].lower()
            who = name if first else subject
            if lower in _CONTRACTED:
                out += [who, _CONTRACTED[lower]]
                first = False
            elif lower == "i":
                out.append(who)
                first = False
                while index + 1 < len(words) and words[index + 1].lower() in _ADVERBS:
                    index += 1
                    out.append(words[index])
                if index + 1 < len(words):
                    index += 1
                    out.append(_agree(words[index]))
            elif lower == "my":
                out.append(f"{name}'s" if first else possessive)
                first = False
            elif lower in ("me", "myself", "mine"):
                out.append({"me": obj, "myself": f"{obj}self" if obj == "him" else "herself",
                            "mine": possessive if possessive == "his" else "hers"}[lower])
            else:
                out.append(word)
            index += 1
        told.append(" ".join(out))
    return told
