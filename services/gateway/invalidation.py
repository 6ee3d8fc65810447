"""The channels the gateway's own statements announce on: what every gateway replica
must forget at once (the listener is ``libs.invalidations``)."""

THREADS = "gateway_threads"
API_KEYS = "gateway_api_keys"
