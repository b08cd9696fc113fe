# syntax=docker/dockerfile:1
# The controllers' image: aicr, nvcrectl and nvsentinel from one wheel (docs/metrics.md, issue 10).
# Build: docker build -t dsx-cluster-tools:0.1.0 .
# Run:   docker run --rm dsx-cluster-tools:0.1.0 nvsentinel run --metrics-addr 0.0.0.0:9090

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# ---- build: the project wheel and its dependencies' wheels
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY shared ./shared
COPY aicr ./aicr
COPY nvcre ./nvcre
COPY nvsentinel ./nvsentinel
RUN python -m pip wheel --wheel-dir /wheels .

# ---- runtime: only the installed wheels, a non-root user
FROM ${PYTHON_IMAGE} AS runtime
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN groupadd --system --gid 65532 dsx \
 && useradd --system --uid 65532 --gid 65532 --home-dir /home/dsx --create-home --shell /usr/sbin/nologin dsx
COPY --from=build /wheels /wheels
RUN python -m pip install --no-index --find-links=/wheels dsx-cluster-tools \
 && rm -rf /wheels
LABEL org.opencontainers.image.title="dsx-cluster-tools" \
      org.opencontainers.image.description="aicr, nvcrectl and nvsentinel" \
      org.opencontainers.image.licenses="Apache-2.0"
USER 65532:65532
WORKDIR /home/dsx
ENV XDG_CACHE_HOME=/tmp/cache
EXPOSE 9090
# One image, three programs: the manifests set the command (nvsentinel run, nvcrectl controller, ...).
CMD ["nvsentinel", "--help"]
