# One image for every service; the command picks the service.
# It installs the production dependencies only: no embedded engine (the `embedded`
# extra of `make run` and the tests), and no local embedding model unless built with
# --build-arg EXTRAS=local-model (otherwise set EMBEDDINGS_BASE_URL).
FROM python:3.11-slim
ARG EXTRAS=""
WORKDIR /app
COPY pyproject.toml README.md ./
COPY protos ./protos
COPY gen ./gen
COPY libs ./libs
COPY services ./services
RUN pip install --no-cache-dir ".${EXTRAS:+[$EXTRAS]}"
# The gateway's gRPC port and its HTTP listener (REST, MCP); each service sets its own port.
EXPOSE 50051 8080
USER nobody
