"""Layer 4: credentials and personal data, which force an entry private.

Provider keys and tokens are found by Yelp's detect-secrets: its plugin
classes run in-process on the string (``analyze_string``; no file scanning,
no baseline, no network verification). What it does not cover is checked
here, each with a validity test so that ordinary numbers and ids pass:

- provider keys detect-secrets does not know (KEY_SHAPES: GitHub fine-grained
  tokens, Stripe test and restricted keys, bare npm tokens, ...);
- a token right after a credential word ("Datadog API key 3f1c...",
  "heroku token: 0d2e...-...", "AWS secret wJalr..."), kept only if it looks
  random (mixed character classes, or long hex) and is not a UUID or hash
  that some other word names ("commit", "sha");
- passwords in prose: "password is X", "pass S3cr3t!Pa55", "login admin /
  hunter2hunter2", when X looks like a password rather than a word, and
  passphrases of joined words ("wifi password: correct-horse-battery-staple");
- door, alarm and gate codes and PINs: "alarm code 4821";
- US social security numbers (the issuing rules; not python-stdnum's list of
  published sample numbers, which people do write down as theirs), IBANs
  (country length and mod-97 check), payment cards (Luhn), e-mail addresses
  and phone numbers.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter


@functools.cache
def provider_detectors() -> tuple:
    """(label, detector) of detect-secrets' provider detectors, built once per process on
    first use (procedure masking reads their patterns too)."""
    from detect_secrets.plugins import (
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        cloudant,
        discord,
        github_token,
        gitlab_token,
        ibm_cloud_iam,
        ibm_cos_hmac,
        jwt,
        mailchimp,
        npm,
        openai,
        private_key,
        pypi_token,
        sendgrid,
        slack,
        softlayer,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )

    return (
        ("AWS access key", aws.AWSKeyDetector()),
        ("Azure storage key", azure_storage_key.AzureStorageKeyDetector()),
        ("credentials in a URL", basic_auth.BasicAuthDetector()),
        ("Cloudant credentials", cloudant.CloudantDetector()),
        ("Discord bot token", discord.DiscordBotTokenDetector()),
        ("GitHub token", github_token.GitHubTokenDetector()),
        ("GitLab token", gitlab_token.GitLabTokenDetector()),
        ("IBM Cloud key", ibm_cloud_iam.IbmCloudIamDetector()),
        ("IBM COS key", ibm_cos_hmac.IbmCosHmacDetector()),
        ("JSON web token", jwt.JwtTokenDetector()),
        ("Mailchimp key", mailchimp.MailchimpDetector()),
        ("npm token", npm.NpmDetector()),
        ("OpenAI key", openai.OpenAIDetector()),
        ("private key", private_key.PrivateKeyDetector()),
        ("PyPI token", pypi_token.PypiTokenDetector()),
        ("SendGrid key", sendgrid.SendGridDetector()),
        ("Slack token", slack.SlackDetector()),
        ("SoftLayer key", softlayer.SoftlayerDetector()),
        ("Square token", square_oauth.SquareOAuthDetector()),
        ("Stripe key", stripe.StripeDetector()),
        ("Telegram bot token", telegram_token.TelegramBotTokenDetector()),
        ("Twilio key", twilio.TwilioKeyDetector()),
        ("Artifactory credentials", artifactory.ArtifactoryDetector()),
    )


@functools.cache
def _keyword_detector():
    from detect_secrets.plugins import keyword

    # The unquoted "name: value" / "name = value" forms of config files, and the quoted ones of code.
    return keyword.KeywordDetector(), (keyword.CONFIG_DENYLIST_REGEX_TO_GROUP,
                                       keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)


# Provider keys detect-secrets' plugins miss (its GitHub plugin knows only the classic ghp_-style
# tokens, its Stripe plugin only live secret keys, its npm plugin only .npmrc lines). Each shape
# is the provider's documented prefix and length (learning/masking.py masks looser ones).
KEY_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # github_pat_ + 22 + "_" + 59 characters today; any length from 40 on, should that change
    ("GitHub token", re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{40,}")),
    ("OpenAI key", re.compile(r"(?<![A-Za-z0-9_])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}")),
    ("Stripe key",
     re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:test|live)_[A-Za-z0-9]{16,247}(?![A-Za-z0-9_])")),
    ("npm token", re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])")),
    ("Anthropic key", re.compile(r"(?<![A-Za-z0-9_])sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_\-]{80,}")),
    ("Google API key", re.compile(r"(?<![A-Za-z0-9_])AIza[0-9A-Za-z_\-]{35}(?![A-Za-z0-9_\-])")),
    ("Hugging Face token", re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34}(?![A-Za-z0-9_])")),
)


# Every name in detect-secrets' keyword denylist contains one of these. Inside words on purpose:
# its expressions match names such as db_password, apiKey and SECRET_TOKEN.
_KEYWORD_HINT = re.compile(r"key|pass|pwd|secret|contrase", re.IGNORECASE)


def _detect_secrets(text: str) -> list[str]:
    found = []
    for kind, plugin in provider_detectors():
        if any(_plausible(kind, value) for value in plugin.analyze_string(text)):
            found.append(kind)
    found += [kind for kind, shape in KEY_SHAPES
              if any(_plausible(kind, m.group()) for m in shape.finditer(text))]
    if not _KEYWORD_HINT.search(text):
        return found  # the keyword detector's expressions are the slow part; skip them when idle
    detector, forms = _keyword_detector()
    for line in text.splitlines():
        for form in forms:
            if any(_looks_like_password(v.split()[0]) for v in
                   detector.analyze_string(line, denylist_regex_to_group=form) if v.split()):
                found.append("password or secret")
                break
    return found


# Well-formed but fake-looking values that detect-secrets' own filters also drop.
_PLACEHOLDER = re.compile(r"^(?:x+|\*+|\.+|<[^>]*>|\{[^}]*\}|\$\{?\w+\}?|null|none|changeme|example|"
                          r"your[_-]?\w*|redacted|\[redacted\])$", re.IGNORECASE)


def _plausible(kind: str, value: str) -> bool:
    from detect_secrets.filters.heuristic import is_sequential_string

    value = value.strip("'\"")
    if _PLACEHOLDER.match(value):
        return False
    if kind == "Artifactory credentials":
        # AP[0-9A-F]... also matches ordinary capitalised words; require a mix of classes.
        return _classes(value) >= 3 and len(value) >= 12
    return not is_sequential_string(value)


# -- tokens next to a credential word -----------------------------------------------------

_CREDENTIAL_WORD = (
    r"(?:api[ _-]?key|apikey|app[ _-]?key|access[ _-]?key|secret[ _-]?(?:access[ _-]?)?key|"
    r"secret|client[ _-]?secret|(?:auth|access|refresh|bearer|api|bot|session|personal "
    r"access|service|integration|webhook|app|deploy)[ _-]?tokens?|token|password|passwd|passphrase|"
    r"pwd|credentials?|private[ _-]?key|signing[ _-]?key|master[ _-]?key|license[ _-]?key|"
    r"connection[ _-]?string|auth[ _-]?key|account[ _-]?key|sas[ _-]?token|bearer|key)"
)
_TOKEN_AFTER_WORD = re.compile(
    rf"(?<![A-Za-z0-9]){_CREDENTIAL_WORD}(?![A-Za-z0-9])(?:\s+(?:is|was|for|of|from|on|at|in|=|:|->|to|the|our|my|their|"
    r"his|her|prod|production|staging|dev|test|live|new|old|\w+'s)){0,4}(?:\s*[:=]\s*|\s+)[\"'`]?"
    r"(?P<token>[A-Za-z0-9+/_\-.=~]{12,})", re.IGNORECASE)
_NAMED_DIGEST = re.compile(r"\b(?:commit|sha\d*|md5|hash|digest|checksum|etag|uuid|guid|id|"
                           r"request[ _-]?id|trace[ _-]?id|build|version|revision|ref)\b",
                           re.IGNORECASE)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


def _classes(value: str) -> int:
    return sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


# Lower-case words, numbers and version tags joined by separators: a name someone chose
# ("rotation-policy-for-2024", "reset-flow-v2"), not a generated key.
_NAME_LIKE = re.compile(r"(?:[a-z]+|\d+|v\d+)(?:[-_.](?:[a-z]+|\d+|v\d+))*")


def _random_looking(token: str) -> bool:
    token = token.strip(".=-_")
    if len(token) < 12 or _PLACEHOLDER.match(token) or _NAME_LIKE.fullmatch(token) and not \
            re.fullmatch(r"[0-9a-f-]+", token):
        return False
    if re.fullmatch(r"[0-9a-fA-F-]{16,}", token):
        return True  # hex keys (Datadog, Heroku UUIDs): a named digest was ruled out before
    if re.fullmatch(r"\d+", token):
        return False
    return _classes(token) >= 2 and re.search(r"\d", token) is not None and _entropy(token) >= 3.0 \
        or _classes(token) >= 3 and _entropy(token) >= 3.0


def _token_after_credential_word(text: str) -> bool:
    for match in _TOKEN_AFTER_WORD.finditer(text):
        token = match.group("token")
        before = text[max(0, match.start() - 30):match.start("token")]
        if _UUID.match(token) and _NAMED_DIGEST.search(before) and not re.search(
                r"key|token|secret|password", before, re.IGNORECASE):
            continue
        if _random_looking(token):
            return True
    return False


# -- passwords in prose -------------------------------------------------------------------

_COMMON = {"manager", "managers", "reset", "resets", "policy", "policies", "protected", "required",
           "rotation", "expired", "expiry", "strength", "hash", "hashes", "hashing", "field",
           "prompt", "change", "changed", "changes", "vault", "stored", "store", "storage",
           "length", "less", "based", "login", "logins", "recovery", "manager's", "generator"}


# Four or more words joined by hyphens, dots or underscores: a passphrase, when it stands
# after "password:" ("correct-horse-battery-staple"); an identifier elsewhere.
_PASSPHRASE = re.compile(r"[A-Za-z]{3,}(?:[-_.][A-Za-z]{3,}){3,}")


def _looks_like_password(value: str, *, stated: bool = False) -> bool:
    """``stated``: the value follows an explicit "password:" / "password is"."""
    value = value.strip("\"'`.,;)(")
    if len(value) < 6 or value.lower() in _COMMON or _PLACEHOLDER.match(value):
        return False
    if stated and _PASSPHRASE.fullmatch(value):
        return True
    if "`" in value or not re.search(r"[0-9]|[^A-Za-z0-9_.\-]", value):
        return False  # a word or an identifier ("password: required", "pass ``--cert``") is prose
    return _classes(value) >= 2


# The word is followed by a separator, not joined to the next one: "pin-code-note-4" and
# "password-reset-flow" are names, not a secret after its label. (A PIN is digits: the access
# code check below finds it.)
_PASSWORD_IN_PROSE = re.compile(
    r"\b(?:password|passwd|passphrase|pass(?:code)?|pwd|pw|login|creds|credentials|user(?:name)?"
    r"\s*/\s*pass(?:word)?)\b(?:\s+(?:is|was|for|of|on|at|to|the|my|our|their|his|her|wifi|wi-fi"
    r"|router|server|account|admin|root|now|still|=|:|-)){0,4}"
    r"(?P<separator>\s*[:=]\s*|\s+[-\u2013]\s+|\s+)[\"'`]?(?P<value>\S{6,})",
    re.IGNORECASE)
_USER_SLASH_PASSWORD = re.compile(
    r"\b(?:login|log in|sign in|signin|credentials?|creds|user(?:name)?|account|admin|root)\b"
    r"[^.\n]{0,40}?\b[\w.@+-]{2,}(?:\s*[/|]\s*|:(?=\S))(?P<value>\S{6,})", re.IGNORECASE)


def _stated(match: re.Match[str]) -> bool:
    """Whether the value follows "password:", "password =" or "password is"."""
    label = match.group()[:match.start("value") - match.start()]
    return re.search(r"(?:[:=]|\b(?:is|was))\s*[\"'`]?$", label, re.IGNORECASE) is not None


def _password_in_prose(text: str) -> bool:
    for pattern in (_PASSWORD_IN_PROSE, _USER_SLASH_PASSWORD):
        if any(_looks_like_password(m.group("value"), stated=_stated(m))
               and not m.group("value").startswith(("http", "/"))
               for m in pattern.finditer(text)):
            return True
    return False


_ACCESS_CODE = re.compile(
    r"\b(?:(?:alarm|door|front door|back door|gate|garage|safe|lock|bike lock|keypad|entry|entrance"
    r"|building|lockbox|key ?box|security|disarm|padlock|locker|house|apartment|flat|mailbox"
    r"|storage unit|access)\s+(?:code|pin|combination|combo|passcode)|combination)"
    r"(?:\s+(?:is|was|:|=|-|to|the|for|at|number)){0,3}\s*[:#=\-]?\s*(?P<code>\d[\d\s\-#*]{2,10}\d|\d{3,8})\b"
    r"|\bpin(?:\s+(?:code|number))?(?:\s+(?:is|was|:|=)){0,2}\s*[:=]?\s*(?P<pin>\d{4,8})\b",
    re.IGNORECASE)


# -- numbers with a validity check ----------------------------------------------------------

_SSN = re.compile(r"(?<![\d-])(\d{3})[- ](\d{2})[- ](\d{4})(?![\d-])"
                  r"|\b(?:ssn|social security(?: number| no\.?)?)\b\D{0,20}(\d{9})\b", re.IGNORECASE)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b")
_CARD = re.compile(r"(?<!\d)(?:\d[ \-]?){12,18}\d(?!\d)")
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{2,4}\)[\s.\-]?|\d{3}[\s.\-])\d{3}[\s.\-]\d{3,4}"
    r"(?![\w])")
# International numbers: a "+", then 8 to 15 digits in any grouping.
_INTERNATIONAL_PHONE = re.compile(r"(?<![\w+])\+\d[\d\s.\-()]{6,20}\d(?![\w])")


def _phone(text: str) -> bool:
    if _PHONE.search(text):
        return True
    return any(8 <= len(re.sub(r"\D", "", m.group())) <= 15 for m in _INTERNATIONAL_PHONE.finditer(text))


def _ssn(text: str) -> bool:
    """The issuing rules (no area 000, 666 or 9xx, no group 00, no serial 0000). python-stdnum
    also refuses a few published sample numbers (078-05-1120, from a wallet insert), but such a
    number written as someone's is to be kept private all the same."""
    for match in _SSN.finditer(text):
        digits = "".join(g for g in match.groups() if g)
        area, group, serial = digits[:3], digits[3:5], digits[5:]
        if area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000":
            return True
    return False


def _iban(text: str) -> bool:
    from stdnum import iban

    return any(iban.is_valid(m.group()) for m in _IBAN.finditer(text))


def _card(text: str) -> bool:
    from stdnum import luhn

    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn.is_valid(digits):
            return True
    return False


def sensitive(text: str) -> list[str]:
    """The kinds of credential or personal data in the text (empty when none)."""
    found = _detect_secrets(text)
    checks = (
        ("credential", _token_after_credential_word),
        ("password", _password_in_prose),
        ("access code", lambda t: _ACCESS_CODE.search(t) is not None),
        ("US social security number", _ssn),
        ("IBAN", _iban),
        ("card number", _card),
        ("e-mail address", lambda t: _EMAIL.search(t) is not None),
        ("phone number", _phone),
    )
    found += [kind for kind, check in checks if check(text)]
    return list(dict.fromkeys(found))
