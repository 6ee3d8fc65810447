"""The platform's services, one package each: ``python -m services.<name>``."""
