"""Layer 1: invisible characters, and the normalised copy every later layer reads.

Hidden characters are judged on the raw text. Everything else matches a
normalised copy, so that case, spacing, punctuation between letters, accents,
full-width forms, look-alike letters from other scripts and digit or symbol
substitutions ("ign0re", "d!sregard", "i.g.n.o.r.e") do not hide a phrase.
"""

from __future__ import annotations

import re
import unicodedata

_ZERO_WIDTH = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e"}
_BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ZWJ, _ZWNJ = "\u200d", "\u200c"


def _is_pictographic(char: str) -> bool:
    return bool(char) and (ord(char) >= 0x1F000 or 0x2600 <= ord(char) <= 0x27BF
                           or char == "\ufe0f")


def _neighbours(text: str, index: int) -> tuple[str, str]:
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return before, after


def _joins_emoji(text: str, index: int) -> bool:
    """ZWJ inside an emoji sequence (e.g. a family emoji) is part of the emoji."""
    before, after = _neighbours(text, index)
    return _is_pictographic(before) and _is_pictographic(after)


def _joins_letters(text: str, index: int) -> bool:
    """ZWNJ between letters is ordinary spelling in Persian and Indic scripts."""
    before, after = _neighbours(text, index)
    return (before.isalpha() and after.isalpha()
            and not (before.isascii() or after.isascii()))


def hidden_characters(text: str) -> str | None:
    """Why the raw text hides something from a reader, or None."""
    for index, char in enumerate(text):
        if char in _BIDI_CONTROLS:
            return "bidirectional override characters"
        if char in _ZERO_WIDTH:
            if char == _ZWJ and _joins_emoji(text, index):
                continue
            if char == _ZWNJ and _joins_letters(text, index):
                continue
            return "zero-width characters"
    return None


_LOOKALIKES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d",
    "ԛ": "q", "ԝ": "w", "ӏ": "l",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "γ": "y",
    # Latin look-alikes NFKC keeps
    "ı": "i", "ɡ": "g", "ɑ": "a", "ł": "l", "ø": "o", "ß": "ss",
})
# Digits stand for letters only inside a word that has letters ("ign0re", not "2024");
# symbols only when a letter or digit follows ("d!sregard", "@dmin", not "now!!!").
_LEET_DIGITS = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"})
_LEET_SYMBOL = re.compile(r"[@$!|](?=[a-z0-9])")
_SYMBOL_LETTERS = {"@": "a", "$": "s", "!": "i", "|": "l"}
# Only words holding a digit or one of those symbols need a second look.
_TOKEN = re.compile(r"[^\s0-9@$!|]*[0-9@$!|]\S*")
# Letters spaced out one separator apart ("i g n o r e", "i.g.n.o.r.e") form a word.
_SPACED_LETTERS = re.compile(r"\b(?:[a-z][\s._\-*/\\~+]){2,}[a-z]\b")
# So a sentence spaced out letter by letter becomes one run of letters ("pleaseignoreall..."),
# as does one typed without spaces. Later layers let a match start inside a word only where
# at least this many letters run on from it: not at the tail of an ordinary word ("robot has no
# filters", "an hour now playing", "the outbreak previous guidelines").
RUN_ON = r"(?=[a-z]{12})"


def _deleet(token: re.Match[str]) -> str:
    word = token.group()
    if not re.search(r"[a-z]", word):
        return word
    word = _LEET_SYMBOL.sub(lambda m: _SYMBOL_LETTERS[m.group()], word)
    return word.translate(_LEET_DIGITS) if re.search(r"[a-z]", word) else word


def fold(text: str) -> str:
    """Compatibility forms, accents, zero-width characters and look-alikes removed; lower case."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(c) and c not in _ZERO_WIDTH)
    return text.casefold().translate(_LOOKALIKES)


def normalise(text: str) -> str:
    """Lower-case ASCII-ish words separated by single spaces."""
    text = _TOKEN.sub(_deleet, fold(text))
    text = _SPACED_LETTERS.sub(lambda m: re.sub(r"[^a-z]", "", m.group()), text)
    return re.sub(r"[^a-z0-9:]+", " ", text).strip()
