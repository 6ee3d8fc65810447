"""A real S3-compatible server (SeaweedFS) for tests: the launcher in tools/backends/s3.py."""

from tools.backends.s3 import ACCESS_KEY, BUCKET, SECRET_KEY, S3Server, start_s3_server

__all__ = ["ACCESS_KEY", "BUCKET", "SECRET_KEY", "S3Server", "start_s3_server"]
