"""The SlateDB object store for the configured backend."""

from __future__ import annotations

from slatedb.uniffi import ObjectStore, ObjectStoreBuilder, ObjectStoreType

from services.journal.settings import StoreSettings


def build_object_store(store: StoreSettings) -> tuple[ObjectStore, str]:
    """The object store and the path prefix under which the shards live."""
    if store.kind == "local":
        root = store.local_path.resolve()
        root.mkdir(parents=True, exist_ok=True)
        builder = ObjectStoreBuilder(ObjectStoreType.LOCAL)
        builder.with_config("local_path", str(root))
        return builder.build(), ""
    builder = ObjectStoreBuilder(ObjectStoreType.S3)
    config = {
        "bucket": store.s3_bucket,
        "region": store.s3_region,
        "access_key_id": store.s3_access_key_id,
        "secret_access_key": store.s3_secret_access_key.reveal(),
    }
    if store.s3_endpoint:
        config["endpoint"] = store.s3_endpoint
        config["allow_http"] = "true" if store.s3_endpoint.startswith("http://") else "false"
    for key, value in config.items():
        if value:
            builder.with_config(key, value)
    return builder.build(), store.s3_prefix.strip("/")
