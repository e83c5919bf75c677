"""Hooks for ci/schemathesis.sh: the service's binary request bodies are
sent as raw bytes, as schemathesis sends application/octet-stream."""

import schemathesis

schemathesis.serializer.alias(
    ["application/vnd.triskel.keys", "application/vnd.triskel.job"],
    "application/octet-stream",
)
