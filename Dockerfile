# syntax=docker/dockerfile:1.7
# offsetguard images (BuildKit). Two targets:
#   docker build -t offsetguard:0.1.0 .                             the service (default, last stage)
#   docker build --target pipeline -t offsetguard-pipeline:0.1.0 .   the Spark history pipeline
# Layer cache: dependency wheels are built from pyproject.toml alone, so editing code rebuilds only the
# small project wheel and its install layer.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- builder: dependency wheels from a requirements export, then the project wheel --------------------
FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml ./
# The requirements export: [project.dependencies] (plus the extras named as arguments), one per line.
# Only pyproject.toml is needed, so these layers stay cached while the code changes.
RUN python -c "import sys, tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; x = p.get('optional-dependencies', {}); print('\n'.join(p['dependencies'] + [d for e in sys.argv[1:] for d in x[e]]))" > requirements.txt \
    && pip wheel --no-cache-dir --wheel-dir /wheels -r requirements.txt
COPY README.md ./
COPY alerts ./alerts
COPY collectors ./collectors
COPY pipeline ./pipeline
COPY service ./service
COPY store ./store
COPY cli ./cli
COPY drills ./drills
COPY sandbox ./sandbox
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

# --- spark-builder: the wheels of the pyspark extra (only built for the pipeline target) ----------------
FROM builder AS spark-builder
# Fails (KeyError) when pyproject.toml has no `spark` extra: the pipeline image needs pyspark.
RUN python -c "import sys, tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; x = p.get('optional-dependencies', {}); print('\n'.join(p['dependencies'] + [d for e in sys.argv[1:] for d in x[e]]))" spark > requirements-spark.txt \
    && pip wheel --no-cache-dir --wheel-dir /wheels-spark -r requirements-spark.txt

# --- jre: a Java 17 runtime for Spark, copied into the pipeline image ----------------------------------
FROM eclipse-temurin:17-jre-jammy AS jre

# --- pipeline: `offsetguard pipeline history ...` on Spark (Java 17 JRE + the spark extra) --------------
FROM ${PYTHON_IMAGE} AS pipeline
ENV JAVA_HOME=/opt/java/openjdk \
    PATH=/opt/java/openjdk/bin:/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=jre /opt/java/openjdk /opt/java/openjdk
RUN groupadd --system --gid 10001 offsetguard \
    && useradd --system --uid 10001 --gid offsetguard --home-dir /var/lib/offsetguard \
       --shell /usr/sbin/nologin offsetguard \
    && python -m venv /opt/venv \
    && install -d -o offsetguard -g offsetguard -m 0750 /var/lib/offsetguard /var/lib/offsetguard/snapshots
RUN --mount=type=bind,from=spark-builder,source=/wheels-spark,target=/wheels \
    --mount=type=bind,from=spark-builder,source=/src/requirements-spark.txt,target=/tmp/requirements.txt \
    pip install --no-cache-dir --no-index --find-links=/wheels -r /tmp/requirements.txt
RUN --mount=type=bind,from=builder,source=/dist,target=/dist \
    pip install --no-cache-dir --no-index --no-deps /dist/offsetguard-*.whl
USER 10001:10001
WORKDIR /var/lib/offsetguard
VOLUME ["/var/lib/offsetguard"]
ENTRYPOINT ["offsetguard", "pipeline", "history"]
CMD ["--help"]

# --- runtime (default target): the service, one uvicorn worker, non-root --------------------------------
FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="offsetguard" \
      org.opencontainers.image.description="Kafka consumer offset-safety monitor" \
      org.opencontainers.image.licenses="Apache-2.0"
# Settings: the mounted YAML file, overridden by OFFSETGUARD_* variables (nested with __).
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    OFFSETGUARD_HTTP_PORT=8080 \
    OFFSETGUARD_STORE__PATH=/var/lib/offsetguard/offsetguard.db \
    OFFSETGUARD_SNAPSHOTS__DIRECTORY=/var/lib/offsetguard/snapshots
RUN groupadd --system --gid 10001 offsetguard \
    && useradd --system --uid 10001 --gid offsetguard --home-dir /var/lib/offsetguard \
       --shell /usr/sbin/nologin offsetguard \
    && python -m venv /opt/venv \
    && install -d -o offsetguard -g offsetguard -m 0750 /var/lib/offsetguard /var/lib/offsetguard/snapshots \
    && install -d -m 0755 /etc/offsetguard \
    && printf 'clusters: []\n' > /etc/offsetguard/offsetguard.yaml
# Dependencies first (cached until pyproject.toml changes), then the project wheel without its deps.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    --mount=type=bind,from=builder,source=/src/requirements.txt,target=/tmp/requirements.txt \
    pip install --no-cache-dir --no-index --find-links=/wheels -r /tmp/requirements.txt
RUN --mount=type=bind,from=builder,source=/dist,target=/dist \
    pip install --no-cache-dir --no-index --no-deps /dist/offsetguard-*.whl
USER 10001:10001
WORKDIR /var/lib/offsetguard
# The SQLite store (WAL) and the __consumer_offsets snapshots; the snapshots directory may be its own mount.
VOLUME ["/var/lib/offsetguard", "/var/lib/offsetguard/snapshots"]
EXPOSE 8080
# No curl in the image: the interpreter checks /healthz on the configured port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('OFFSETGUARD_HTTP_PORT', '8080'), timeout=4)"]
# uvicorn runs in this process with one worker (the scheduler must run once); exec form, so SIGTERM from
# `docker stop` / the kubelet reaches it and the lifespan finishes the cycle and closes the store.
STOPSIGNAL SIGTERM
ENTRYPOINT ["offsetguard", "serve", "--config", "/etc/offsetguard/offsetguard.yaml", "--host", "0.0.0.0"]
