# The checkers server: `docker build -t checkers .` then see docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATABASE_URL=sqlite+aiosqlite:////data/checkers.db

WORKDIR /srv/checkers

# Editable install: `checkers migrate` finds migrations/ next to the app/ package.
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
RUN pip install -e . \
    && useradd --system --uid 10001 --no-create-home --home-dir /srv/checkers checkers \
    && mkdir /data \
    && chown checkers:checkers /data

# Without DATABASE_URL pointing elsewhere, the SQLite file lives in this volume.
VOLUME ["/data"]
USER checkers
EXPOSE 8000

HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4)"]

CMD ["sh", "-c", "checkers migrate && exec checkers serve --host 0.0.0.0 --port 8000"]
