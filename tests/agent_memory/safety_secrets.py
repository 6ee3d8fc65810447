"""Every credential and personal-data detector of the safety screen, with several realistic
variants each: texts holding one (to be forced private) and look-alikes (to be stored as
asked). test_safety_detectors.py checks them; ``python -m bench.safety_report`` counts them.

All values are fakes made for this file (right shape, random characters)."""

from __future__ import annotations

# kind -> (texts holding one, texts that only look like one)
DETECTORS: dict[str, tuple[list[str], list[str]]] = {
    "GitHub token": ([
        "gh token ghp_R8x2Lk9Qw4Zt7Yp1Mn5Bv3Cx6Dz0Fa2Ge4Hj",
        "GITHUB_TOKEN=gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "Fine-grained PAT for the deploy bot: github_pat_11AZQ4KXY0bN2rT8mW5vLp_"
        "q3Hd9Fk2Zs7Jc4Xg8Bv1Nt6Mw0Ry5Ue3Ia9Ko2Lp7Sd4Fg6Hj1Kl8Zx3Cv5Bn0Mq2We4Rt6Yu",
        "export GH_TOKEN=github_pat_11BCDE2FG0hJkLmNoPqRsT_UvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWx"
        "Yz0123456789AbCdEfGh",
    ], [
        "The repo is github.com/acme/github_pat_rotation (a script, no token in it).",
        "Tokens start with ghp_ or github_pat_; ours live in the vault.",
    ]),
    "Stripe key": ([
        "Stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc8a",
        "Stripe test key sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "Restricted key for reporting: rk_test_51H8xYzAbCdEfGhIjKlMnOpQr",
        "STRIPE_SECRET=rk_live_51Mq2We4Rt6Yu8Io0Pa2Sd4Fg",
    ], [
        "Test keys start with sk_test_ and live keys with sk_live_.",
        "Stripe webhooks are retried for three days.",
    ]),
    "npm token": ([
        "npm publish token npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        "//registry.npmjs.org/:_authToken=npm_Zx9Kq2Wp7Lm4Rt6Yb8Nc1Vd3Fg5Hj7Kl9Qw2",
    ], [
        "Run npm_config_cache=/tmp npm ci in CI.",
        "The package is called npm_package_helpers.",
    ]),
    "AWS access key": ([
        "Backup user: AKIAZ4XQ7WJ2MNB5KR3T",
        "aws_access_key_id = AKIAQW3ER5TY7UI9OP1A",
    ], [
        "The bucket is arn:aws:s3:::acme-backups in eu-west-1.",
    ]),
    "Slack token": ([
        "Slack bot xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx",
        "SLACK_USER_TOKEN=xoxp-2234567890-3234567890-4234567890-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d",
    ], [
        "Post release notes to #releases on Slack.",
    ]),
    "OpenAI key": ([
        "OPENAI_API_KEY=sk-proj-Xy7Kq2Lm9Np4Rs6Tu8Vw0Za3Bc5De7Fg",
        "The OpenAI key is sk-Ab3De5Fg7Hi9Jk1Lm3No5PqT3BlbkFJ7Rs9Tu1Vw3Xy5Za7Bc9Qd2",
        "Service account key sk-svcacct-Pq8Rt2Lm6Vx0Bn4Jk7Hd1Fs5Gw9Zc3Ye",
    ], [
        "Our OpenAI usage is billed to the research team.",
    ]),
    "JSON web token": ([
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQyIiwiaWF0IjoxNzAwMDAwMDAwfQ"
        ".dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    ], [
        "Sessions are JWTs signed with HS256 and last 15 minutes.",
    ]),
    "private key": ([
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\n-----END EC PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    ], [
        "The private key lives in the HSM; only its fingerprint is in the wiki.",
    ]),
    "credentials in a URL": ([
        "DB is postgres://app:Zx9kQ2wPq7@db.internal:5432/app",
        "Mirror at https://deploy:Gh7-kL2pQ9@repo.example.com/simple",
    ], [
        "Docs are at https://docs.example.com/guide/install.",
    ]),
    "credential": ([
        "Datadog API key 3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e",
        "Heroku API key: 4b2f6c1e-9d3a-4e7b-8c5f-1a2b3c4d5e6f",
        "The AWS secret key is Qm3nZ8rT2vW6yB1cD4fG7hJ0kL5pS9xA2eR6tY8u",
    ], [
        "The key rotation-policy-for-2024 doc is in Notion.",
        "Trace id 7c9e6679-7425-40de-944b-e07fc1f90ae7 showed the slow query.",
        "Rotates API keys every quarter.",
    ]),
    "password": ([
        "The router login is admin / hunter2hunter2",
        "VPN account jsmith, pass S3cr3t!Pa55",
        "Her email password is Tulip#2291",
        "The wifi password: correct-horse-battery-staple",
        "Guest wifi password is purple-monkey-dishwasher-lamp",
    ], [
        "pin-code-note-4",
        "password-reset-flow-v2",
        "The password is hashed with bcrypt.",
        "Password: required for every admin.",
        "Uses a password manager and a long passphrase.",
    ]),
    "access code": ([
        "Home alarm code is 4821",
        "The gate code: 7391#",
        "Bank card PIN 0482",
        "Garage door code 5-5-1-9",
    ], [
        "Call extension 4821 for the front desk.",
        "Building 42, locker 213, gate B.",
        "A combination of 3 factors caused the outage.",
    ]),
    "US social security number": ([
        "My SSN is 536-22-8041",
        "SSN 078-05-1120",
        "Social security number 219099999 on the form",
        "His social security no. is 457-55-5462.",
    ], [
        "Reference 000-12-3456 is not an SSN (area 000)",
        "Ticket 666-12-3456 was closed.",
        "Order 912-34-5678 shipped.",
    ]),
    "IBAN": ([
        "Rent goes to IBAN GB82 WEST 1234 5698 7654 32",
        "Pay DE89370400440532013000 by Friday.",
    ], [
        "IBAN GB82 WEST 1234 5698 7654 33 is a typo (mod-97 fails)",
    ]),
    "card number": ([
        "Visa 4539 1488 0343 6467 exp 09/28",
        "Card on file: 5555-5555-5555-4444",
    ], [
        "Card 4111 1111 1111 1112 is not a card (Luhn fails)",
        "The zip code is 10001 and the error code was 502.",
    ]),
    "e-mail address": ([
        "Reach her at maria.lopez@example.org",
        "Invoices go to billing+acme@finance.example.co.uk",
    ], [
        "Mentions @maria in the channel.",
    ]),
    "phone number": ([
        "Mobile +44 7700 900123",
        "Call (415) 555-0132 after 6.",
    ], [
        "Version 10.2.3 ships on 2024-05-01.",
    ]),
}
