# The SDK's version, which follows the protos (clients/versions.txt).
__version__ = "1.2.0"
