"""A fixed corpus of conversations and the message each query must find first."""

from testkit.journal_client import ASSISTANT, USER

THREADS = {
    "billing": [
        (USER, "How are invoice numbers generated in the billing service?"),
        (ASSISTANT, "Invoice numbers combine the year and a per-year sequence, like 2024-000123."),
        (USER, "Can we reset the invoice sequence in January?"),
        (ASSISTANT, "Yes, the sequence resets every January first at midnight UTC."),
        (USER, "What currency do refunds use?"),
        (ASSISTANT, "Refunds are always issued in the original payment currency."),
    ],
    "deploys": [
        (USER, "When do we deploy to production?"),
        (ASSISTANT, "Production deploys happen on Tuesdays and Thursdays after the change review."),
        (USER, "Is there a freeze before holidays?"),
        (ASSISTANT, "There is a deployment freeze during the last two weeks of December."),
        (USER, "Who approves hotfixes?"),
        (ASSISTANT, "Hotfixes need approval from the on-call engineer and the team lead."),
    ],
    "travel": [
        (USER, "I'm flying to Lisbon next week for the conference."),
        (ASSISTANT, "Lisbon in spring is lovely; the conference venue is near the river."),
        (USER, "Book me a vegetarian meal on the flight please."),
        (ASSISTANT, "Done: a vegetarian meal is requested on your flight to Lisbon."),
        (USER, "What's the hotel's checkout time?"),
        (ASSISTANT, "Checkout is at eleven in the morning; late checkout costs extra."),
    ],
    "database": [
        (USER, "Which database stores customer profiles?"),
        (ASSISTANT, "Customer profiles live in PostgreSQL, replicated to a read replica."),
        (USER, "How often are backups taken?"),
        (ASSISTANT, "Backups run nightly and are kept for thirty days in object storage."),
        (USER, "Do we use connection pooling?"),
        (ASSISTANT, "Yes, PgBouncer pools connections in transaction mode."),
    ],
    "hiring": [
        (USER, "We're hiring two backend engineers this quarter."),
        (ASSISTANT, "The interview loop has a system design round and a coding round."),
        (USER, "Can candidates interview remotely?"),
        (ASSISTANT, "All interviews are remote over video calls."),
    ],
}

# query -> (thread, message index within the thread)
EXPECTED = {
    "invoice numbers year sequence": ("billing", 1),
    "sequence resets midnight UTC": ("billing", 3),
    "refunds issued in which currency": ("billing", 5),
    "what currency do refunds use": ("billing", 4),
    "production deploys tuesdays thursdays": ("deploys", 1),
    "december freeze": ("deploys", 3),
    "hotfixes approval team lead": ("deploys", 5),
    "flying to lisbon next week": ("travel", 0),
    "vegetarian meal requested": ("travel", 3),
    "checkout eleven in the morning": ("travel", 5),
    "late checkout": ("travel", 5),
    "customer profiles postgresql": ("database", 1),
    "nightly backups retention": ("database", 3),
    "pgbouncer connection pooling": ("database", 5),
    "hiring backend engineers": ("hiring", 0),
    "system design interview": ("hiring", 1),
    "remote interviews video": ("hiring", 3),
    "read replica": ("database", 1),
    "change review tuesdays": ("deploys", 1),
    "conference venue river": ("travel", 1),
    "original payment currency": ("billing", 5),
    "on-call engineer approval": ("deploys", 5),
    "object storage thirty days": ("database", 3),
    "which database stores customer profiles": ("database", 0),
}
