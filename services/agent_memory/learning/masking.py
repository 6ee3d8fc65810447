"""What a procedure must not keep: secrets masked, personal data scrubbed.

Applied to everything a procedure records (the task, each call's arguments and
result) before it is written, in this order:

1. every credential the run was given (the caller passes them to
   StartRun/FinishRun; held in memory only): each occurrence, also JSON- and
   URL-escaped; values shorter than 8 characters only as whole words;
2. argument values (at any depth of the JSON) whose key names a secret:
   password, passwd, pwd, pass, passphrase, passcode, secret, token, key,
   apikey, credential, auth, authorization, cookie, session, signature, otp,
   pin (matched per word of the name, so ``apiKey``, ``X-Auth-Token`` and
   ``db_password`` match; ``keyword`` and ``max_tokens`` do not); the same
   names in ``name=value`` / ``name: value`` text;
3. values shaped like an API key or token: detect-secrets' provider patterns
   (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, JWT, private keys, Twilio,
   SendGrid, npm, PyPI, ...; the whole token a pattern hits is masked),
   common key prefixes (``sk-``, ``AIza``, ``hf_``, ...), ``Bearer`` values,
   credentials in URLs, and long mixed-case alphanumeric tokens;
4. e-mail addresses, and phone numbers (Google's libphonenumber: international
   numbers, and national ones in the US and UK formats).
"""

from __future__ import annotations

import functools
import json
import re
import urllib.parse
from collections.abc import Sequence
from typing import Any

from services.agent_memory.safety import credentials

MASK = "[masked]"
EMAIL = "[email]"
PHONE = "[phone]"

_SECRET_WORDS = frozenset({
    "password", "passwd", "pwd", "pass", "passphrase", "passcode", "secret", "secrets", "token",
    "key", "apikey", "credential", "credentials", "auth", "authorization", "cookie", "session",
    "sessionid", "signature", "otp", "pin", "bearer", "privatekey", "accesskey", "secretkey",
})
_NAME_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def secret_name(name: str) -> bool:
    """Whether a key name says its value is a secret (per word: ``apiKey`` -> api, key)."""
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    joined = "".join(words)
    return any(w in _SECRET_WORDS for w in words) or joined in _SECRET_WORDS


# -- values shaped like keys -------------------------------------------------------------

@functools.cache
def _provider_patterns() -> tuple[re.Pattern[str], ...]:
    """The patterns of the safety screen's provider detectors (detect-secrets)."""
    return tuple(p for _, detector in credentials.provider_detectors()
                 for p in detector.denylist)


_KEY_SHAPES = re.compile(
    r"(?:sk|rk|pk)-(?:proj-|ant-|live-)?[A-Za-z0-9_\-]{16,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"
    r"|AIza[0-9A-Za-z_\-]{30,}|hf_[A-Za-z0-9]{20,}|glpat-[0-9A-Za-z_\-]{16,}|xox[abposr]-[\w-]{10,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|npm_[A-Za-z0-9]{20,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)")
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)(\s+)([A-Za-z0-9._~+/\-]{8,}=*)")
_URL_CREDENTIALS = re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)")
# A long token mixing upper and lower case and digits: what generated keys look like
# (UUIDs and hex digests have no upper case and pass).
_RANDOM_TOKEN = re.compile(r"(?<![\w\-])(?=[\w\-]*[a-z])(?=[\w\-]*[A-Z])(?=[\w\-]*\d)[\w\-]{24,}")
_TOKEN_CHARS = re.compile(r"[^\s\"'`,;()\[\]{}<>&?=:]+")
# A name and its separator; the value after it is found separately, so that a value
# never swallows the next name ("url: https://x?api_key=...").
_NAME_AND_SEPARATOR = re.compile(r"(?<![\w.\-])([A-Za-z][\w.\-]{0,40})(\s*[:=]\s*|\s+is\s+)[\"']?")
_VALUE = re.compile(r"[^\s\"'&,;]+")
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_PHONE_REGIONS = ("US", "GB")


def _whole_token(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a match to the token it sits in (a pattern may match only part of a key)."""
    while start > 0 and _TOKEN_CHARS.fullmatch(text[start - 1]):
        start -= 1
    while end < len(text) and _TOKEN_CHARS.fullmatch(text[end]):
        end += 1
    return start, end


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    spans.sort()
    merged = [list(spans[0])]
    for start, end in spans[1:]:
        if start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    parts, last = [], 0
    for start, end in merged:
        parts += [text[last:start], MASK]
        last = end
    return "".join(parts + [text[last:]])


def _key_shaped(text: str) -> str:
    spans = []
    for pattern in (*_provider_patterns(), _KEY_SHAPES, _RANDOM_TOKEN):
        for match in pattern.finditer(text):
            if match.end() > match.start():
                spans.append(_whole_token(text, match.start(), match.end()))
    text = _mask_spans(text, spans)
    text = _BEARER.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)
    return _URL_CREDENTIALS.sub(lambda m: f"{m[1]}{MASK}{m[3]}", text)


def _named_values(text: str) -> str:
    """``password=hunter2``, ``api_key: abc``, ``the token is abc`` in free text."""
    spans = []
    for match in _NAME_AND_SEPARATOR.finditer(text):
        if secret_name(match[1]):
            value = _VALUE.match(text, match.end())
            if value is not None and value[0] != MASK:
                spans.append((value.start(), value.end()))
    return _mask_spans(text, spans)


# -- the run's own credentials --------------------------------------------------------

def _variants(credential: str) -> set[str]:
    return {credential, json.dumps(credential)[1:-1], urllib.parse.quote(credential, safe=""),
            urllib.parse.quote_plus(credential)}


def _credentials(text: str, credentials: Sequence[str]) -> str:
    for credential in sorted(credentials, key=len, reverse=True):
        for variant in _variants(credential):
            if len(variant) >= 8:
                text = text.replace(variant, MASK)
            elif variant:
                text = re.sub(rf"(?<!\w){re.escape(variant)}(?!\w)", MASK, text)
    return text


# -- personal data ----------------------------------------------------------------------

def scrub_personal(text: str) -> str:
    text = _EMAIL.sub(EMAIL, text)
    import phonenumbers

    spans = set()
    for region in _PHONE_REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(text, region):
            spans.add((match.start, match.end))
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + PHONE + text[end:]
    return text


# -- the whole --------------------------------------------------------------------------

class Masker:
    """Masks one run's texts, with that run's credentials."""

    def __init__(self, credentials: Sequence[str] = ()) -> None:
        self._credentials = [c for c in credentials if c]

    @property
    def has_credentials(self) -> bool:
        return bool(self._credentials)

    def credentials(self, text: str) -> str:
        """Only the run's own credentials masked (what extraction reads)."""
        return _credentials(text, self._credentials)

    def text(self, text: str) -> str:
        text = _credentials(text, self._credentials)
        text = _named_values(_key_shaped(text))
        return scrub_personal(text)

    def arguments(self, arguments: str) -> str:
        """Tool-call arguments: JSON masked per key name, then as text; other text as text."""
        arguments = _credentials(arguments, self._credentials)
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return self.text(arguments)
        return json.dumps(self._value(parsed), ensure_ascii=False, separators=(",", ":"))

    def _value(self, value: Any, name: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self._value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v, name) for v in value]
        if name and secret_name(name) and value is not None and not isinstance(value, bool):
            return MASK
        if isinstance(value, str):
            return self.text(value)
        return value
