# One image for every service; the command picks the service.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY protos ./protos
COPY gen ./gen
COPY libs ./libs
COPY services ./services
RUN pip install --no-cache-dir .
USER nobody
