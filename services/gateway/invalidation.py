"""What every gateway replica must forget at once (``libs.invalidations``): the
channels the gateway's own statements announce on."""

from libs.invalidations import Invalidations

__all__ = ["API_KEYS", "THREADS", "Invalidations"]

THREADS = "gateway_threads"
API_KEYS = "gateway_api_keys"
