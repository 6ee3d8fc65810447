"""Write-time screening of memory content.

Two outcomes, as the seed specifies:

- prompt-injection patterns are rejected outright: "ignore previous
  instructions" and its variants, "you are now <someone else>", a leading
  ``system:``, zero-width characters, bidirectional overrides, and curl/wget
  commands carrying credentials;
- credentials and personal data (API keys, tokens, passwords, private keys,
  e-mail addresses, phone numbers, card numbers) are not rejected: they force
  the entry to ``private``.

Injection patterns are matched on a normalised copy of the text so that case,
spacing, punctuation between letters, accents, full-width forms, look-alike
letters from other scripts and digit substitutions do not hide them. The
corpus in tests/agent_memory/safety_corpus.py measures both error rates;
``python -m bench.safety_report`` prints them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# -- invisible and directional characters (checked on the raw text) -----------

_ZERO_WIDTH = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e"}
_BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ZWJ, _ZWNJ = "\u200d", "\u200c"


def _joins_emoji(text: str, index: int) -> bool:
    """ZWJ inside an emoji sequence (e.g. a family emoji) is part of the emoji."""
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return _is_pictographic(before) and _is_pictographic(after)


def _is_pictographic(char: str) -> bool:
    return bool(char) and (ord(char) >= 0x1F000 or 0x2600 <= ord(char) <= 0x27BF
                           or char == "\ufe0f")


def _joins_letters(text: str, index: int) -> bool:
    """ZWNJ between letters is ordinary spelling in Persian and Indic scripts."""
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return (before.isalpha() and after.isalpha()
            and not (before.isascii() or after.isascii()))


def _hidden_characters(text: str) -> str | None:
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


# -- normalisation for pattern matching ---------------------------------------

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
    # digits and symbols used as letters
    "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i",
    "|": "l",
})
# Letters spaced out one separator apart ("i g n o r e", "i.g.n.o.r.e") form a word.
_SPACED_LETTERS = re.compile(r"\b(?:[a-z][\s._\-*/\\~+]){2,}[a-z]\b")


def normalise(text: str) -> str:
    """Lower-case ASCII-ish words separated by single spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(c) and c not in _ZERO_WIDTH)
    text = text.casefold().translate(_LOOKALIKES)
    text = _SPACED_LETTERS.sub(lambda m: re.sub(r"[^a-z]", "", m.group()), text)
    return re.sub(r"[^a-z0-9:]+", " ", text).strip()


# -- injection patterns (on normalised text) -----------------------------------

_S = " ?"  # normalised words may also have been squeezed together


def _words(*alternatives: str) -> str:
    return "(?:" + "|".join(a.replace(" ", _S) for a in alternatives) + ")"


_OVERRIDE_VERBS = _words("ignore", "disregard", "forget", "override", "bypass", "skip", "discard",
                         "ditch", "throw away", "pay no attention to", "do not follow",
                         "dont follow", "stop following")
_FILLERS = _words("all", "any", "every", "each", "of", "the", "your", "my", "these", "those",
                  "that", "everything", "what", "whatever", "previously", "you were given")
_EARLIER = _words("previous", "prior", "preceding", "above", "earlier", "former", "original",
                  "initial", "system", "existing", "old", "preset", "default", "developer")
_DIRECTIVES = _words("instruction", "instructions", "prompt", "prompts", "rule", "rules",
                     "directive", "directives", "guideline", "guidelines", "guidance", "orders",
                     "commands", "context", "programming", "constraints", "restrictions",
                     "messages", "policies", "policy")
_IGNORE_PREVIOUS = re.compile(
    rf"{_OVERRIDE_VERBS}(?:{_S}{_FILLERS}){{0,3}}{_S}{_EARLIER}"
    rf"(?:{_S}(?:and|or|{_EARLIER})){{0,3}}{_S}{_DIRECTIVES}"
    rf"|{_OVERRIDE_VERBS}{_S}{_words('all', 'everything')}{_S}"
    rf"{_words('you were told', 'you have been told', 'above', 'before this', 'said before')}"
)
_PERSONAS = _words("ai", "ai model", "language model", "llm", "chatbot", "assistant", "bot", "gpt",
                   "dan", "jailbroken", "jailbreak", "unrestricted", "unfiltered", "uncensored",
                   "developer mode", "dev mode", "god mode", "evil", "malicious", "hacker",
                   "pirate", "character", "persona", "new identity", "new role",
                   "no longer bound", "no longer restricted", "no longer an ai",
                   "no longer an assistant", "not bound by", "free of all restrictions",
                   "without restrictions", "without any restrictions", "without limits")
_NOW_YOU_ARE = _words("you are now", "you re now", "youre now", "from now on you are",
                      "from now on you re", "you will now be", "you shall now be",
                      "henceforth you are")
_NO_LONGER = _words("you are no longer an ai", "you are no longer an assistant",
                    "you are no longer bound", "you are no longer restricted")
_YOU_ARE_NOW = re.compile(
    rf"{_NOW_YOU_ARE}(?:{_S}[a-z]+){{0,3}}?{_S}{_PERSONAS}(?![a-z])|{_NO_LONGER}"
)
_LEADING_SYSTEM = re.compile(r"^(?:system|sys|system prompt|system message)\s?:")
_CHAT_TEMPLATE = re.compile(r"<\|?\s*(?:im_start|system|start_header_id)\s*\|?>", re.IGNORECASE)
_CURL_WITH_CREDENTIALS = re.compile(
    r"\b(?:curl|wget)\b[^\n]*?(?:"
    r"(?:-H|--header)[\s=]*[\"']?\s*(?:authorization|proxy-authorization|x-api-key|api-key|"
    r"x-auth-token|x-access-token|cookie|private-token)\s*:"
    r"|--oauth2-bearer\b|(?:-u|--user)\s+[^\s:]+:\S+|--password\b|--http-password\b"
    r"|-b\s+[\"']?\w+=)",
    re.IGNORECASE,
)


def _injection(text: str) -> str | None:
    hidden = _hidden_characters(text)
    if hidden:
        return hidden
    if _CURL_WITH_CREDENTIALS.search(unicodedata.normalize("NFKC", text)):
        return "a curl/wget command carrying credentials"
    if _CHAT_TEMPLATE.search(unicodedata.normalize("NFKC", text)):
        return "a chat-template role marker"
    normal = normalise(text)
    if _LEADING_SYSTEM.match(normal):
        return "a leading 'system:' role marker"
    if _IGNORE_PREVIOUS.search(normal):
        return "an instruction to ignore previous instructions"
    if _YOU_ARE_NOW.search(normal):
        return "an instruction to take on another identity ('you are now ...')"
    return None


# -- credentials and personal data (on the raw text) ----------------------------

_SENSITIVE: list[tuple[str, re.Pattern[str]]] = [
    ("private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("API key", re.compile(
        r"\b(?:sk-(?:proj-|ant-|live-)?[A-Za-z0-9_\-]{20,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}"
        r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abposr]-[A-Za-z0-9-]{10,}"
        r"|AIza[0-9A-Za-z_\-]{35}|(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"
        r"|glpat-[0-9A-Za-z_\-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36})\b")),
    ("token", re.compile(
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
        r"|\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*", re.IGNORECASE)),
    ("credential assignment", re.compile(
        r"\b(?:api[_\s-]?key|access[_\s-]?key|secret(?:[_\s-]?key)?|client[_\s-]?secret|"
        r"auth[_\s-]?token|access[_\s-]?token|refresh[_\s-]?token|token)\b\s*(?:is|[:=])\s*"
        r"[\"']?[A-Za-z0-9_\-./+=]{12,}", re.IGNORECASE)),
    ("password", re.compile(
        r"\b(?:password|passwd|passphrase|passcode|pwd|pin code|pin)\b\s*(?:is|was|[:=])\s*"
        r"[\"']?\S{3,}", re.IGNORECASE)),
    ("e-mail address", re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*"
                                  r"\.[A-Za-z]{2,}\b")),
    ("phone number", re.compile(
        r"(?<![\w+])(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{2,4}\)[\s.\-]?|\d{3}[\s.\-])\d{3}[\s.\-]\d{3,4}"
        r"(?![\w])|(?<![\w+])\+\d{9,15}(?!\w)")),
]
_CARD_CANDIDATE = re.compile(r"(?<!\d)(?:\d[ \-]?){12,18}\d(?!\d)")


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _sensitive(text: str) -> list[str]:
    found = [kind for kind, pattern in _SENSITIVE if pattern.search(text)]
    for match in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _luhn(digits):
            found.append("card number")
            break
    return found


@dataclass(frozen=True)
class Screening:
    """What screening found: a reason to reject, and kinds of sensitive data."""

    rejected: str | None = None
    sensitive: list[str] = field(default_factory=list)


def screen(text: str) -> Screening:
    reason = _injection(text)
    if reason:
        return Screening(rejected=reason)
    return Screening(sensitive=_sensitive(text))
