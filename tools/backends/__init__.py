"""Embedded backends for the one-command platform and the tests: real servers
from pip wheels, started and stopped as child processes."""
