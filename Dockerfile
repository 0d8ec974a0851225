# syntax=docker/dockerfile:1
# rpay's production image: gunicorn serving the site, and the batches (manage.py
# process_payments / send_reminders) from the same image. `make image` builds it as
# rpay:<version of pyproject.toml>; deploy/k8s and compose.yaml name that tag.
#
# Three stages: the front-end packages from npm (Bootstrap, Chart.js), the Python
# packages and the build-time steps (compiled translations, collectstatic), then a slim
# runtime with neither compilers nor npm, run by a user that is not root.

# --- 1. front-end packages (npm) -------------------------------------------------------
FROM node:20-bookworm-slim AS assets
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error

# --- 2. Python packages, translations, static files --------------------------------------
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /srv/rpay
# Runtime requirements only: every one is a wheel (psycopg's binary one brings libpq), so
# no compiler is needed even here.
COPY requirements.txt ./
RUN python -m venv .venv && .venv/bin/pip install --no-compile -r requirements.txt
COPY manage.py pyproject.toml ./
COPY rpay_site rpay_site
COPY billing billing
COPY core core
COPY shop shop
COPY templates templates
COPY static static
COPY locale locale
COPY scripts/i18n.py scripts/i18n.py
COPY --from=assets /build/node_modules/bootstrap/dist node_modules/bootstrap/dist
COPY --from=assets /build/node_modules/chart.js/dist node_modules/chart.js/dist
# The .mo files (Babel: no gettext needed) and every static file in STATIC_ROOT
# (var/staticfiles), where WhiteNoise serves them from.
RUN .venv/bin/python scripts/i18n.py compile locale/*/LC_MESSAGES/django.po \
 && .venv/bin/python manage.py collectstatic --no-input -v 0 \
 && .venv/bin/python -m compileall -q rpay_site billing core shop

# --- 3. runtime ----------------------------------------------------------------------------
FROM python:3.11-slim AS runtime
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PATH=/srv/rpay/.venv/bin:$PATH \
    DJANGO_DEBUG=0 \
    PORT=8000
RUN groupadd --system --gid 10001 rpay \
 && useradd --system --uid 10001 --gid rpay --home-dir /srv/rpay --no-create-home --shell /usr/sbin/nologin rpay
WORKDIR /srv/rpay
COPY --from=build /srv/rpay/.venv .venv
COPY --from=build /srv/rpay/manage.py /srv/rpay/pyproject.toml ./
COPY --from=build /srv/rpay/rpay_site rpay_site
COPY --from=build /srv/rpay/billing billing
COPY --from=build /srv/rpay/core core
COPY --from=build /srv/rpay/shop shop
COPY --from=build /srv/rpay/templates templates
COPY --from=build /srv/rpay/locale locale
COPY --from=build /srv/rpay/var/staticfiles var/staticfiles
COPY deploy/container/start-web deploy/container/start-web
# var/ is the only folder the app writes (the file e-mail backend and the simulated
# gateway's ledger, when a site uses them); the code stays read-only for the app's user.
RUN mkdir -p var/mail && chown -R rpay:rpay var
USER rpay:rpay
EXPOSE 8000
# /healthz is answered before the host check (any Host header), reading nothing.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)"]
# The web server by default; a batch is `docker run IMAGE python manage.py process_payments`.
CMD ["deploy/container/start-web"]
