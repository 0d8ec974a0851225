"""rpay's translations (docs/I18N.md): extract, check, compile, fill.

    python scripts/i18n.py extract          # sources -> locale/<ll>/LC_MESSAGES/django.po
    python scripts/i18n.py check            # every message translated, none fuzzy, .po current
    python scripts/i18n.py compile [PO...]  # .po -> .mo (Babel: no gettext needed)
    python scripts/i18n.py todo LL          # the untranslated or fuzzy msgids of one locale
    python scripts/i18n.py fill FILE.json   # {"msgid": {"it": ..., "ko": ..., "zh_Hans": ...}}

Extraction is Django's ``makemessages`` (GNU gettext's xgettext and msgmerge: Debian's
``gettext`` package); compiling is Babel's, so ``make install`` needs nothing beyond
requirements.txt. A plural message's translation in ``fill`` is a list, one string per
plural form of the language (Korean and Chinese have one).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "locale"
# settings.LANGUAGES less English (the source language), as locale folder names.
LOCALES = ("it", "ko", "zh_Hans")
# What makemessages reads: the apps, the project package and the templates.
SOURCES = ("core", "billing", "shop", "rpay_site", "templates", "manage.py")
IGNORE = ("tests", "scripts", "node_modules", "var", "artifacts", "mutants", "deploy", "docs", "static")


def po_path(locale: str, root: Path = ROOT) -> Path:
    return root / "locale" / locale / "LC_MESSAGES" / "django.po"


def extract(root: Path = ROOT) -> None:
    """Run makemessages for every locale in ``root`` (the checkout, or a copy of it)."""
    if shutil.which("xgettext") is None:
        sys.exit("i18n: extraction needs GNU gettext (apt-get install gettext)")
    command = [sys.executable, "manage.py", "makemessages", "--no-obsolete", "--no-location",
               "--extension", "html,txt,py", *(f"--locale={code}" for code in LOCALES)]
    for pattern in IGNORE:
        command += ["--ignore", pattern]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "rpay_site.settings"}
    subprocess.run(command, cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)


def load(path: Path) -> Catalog:
    """A .po file, read with its locale (the folder's name), so Babel keeps the language's
    plural forms (Korean and Chinese have one; makemessages writes two empty ones)."""
    locale = path.parent.parent.name
    with path.open("rb") as f:
        catalog = read_po(f, locale=locale)
    # A header with an empty "Language:" (as makemessages writes it) unsets the locale.
    if not catalog.locale:
        catalog.locale = Locale.parse(locale)
    return catalog


def message_ids(catalog: Catalog) -> set[tuple[object, str | None]]:
    return {(m.id, m.context) for m in catalog if m.id}


def problems(catalog: Catalog, locale: str) -> list[str]:
    """The messages of one catalog that are untranslated or fuzzy, one line each."""
    found = []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple | list) else (message.string,)
        label = message.id[0] if isinstance(message.id, tuple | list) else message.id
        if message.fuzzy:
            found.append(f"{locale}: fuzzy: {label!r}")
        elif not all(strings):
            found.append(f"{locale}: untranslated: {label!r}")
    return found


def stale(root: Path = ROOT) -> list[str]:
    """The msgids the sources have and a .po lacks, or the other way round: extraction
    is run on a copy of the sources, so the checkout is not touched."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp)
        for name in SOURCES:
            source = root / name
            if source.is_dir():
                shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.mo"))
            else:
                shutil.copy2(source, copy / name)
        shutil.copytree(root / "locale", copy / "locale", ignore=shutil.ignore_patterns("*.mo"))
        extract(copy)
        found = []
        for locale in LOCALES:
            fresh, kept = message_ids(load(po_path(locale, copy))), message_ids(load(po_path(locale, root)))
            found += [f"{locale}: not in the .po (run make messages): {m[0]!r}" for m in sorted(fresh - kept, key=str)]
            found += [f"{locale}: no longer in the sources (run make messages): {m[0]!r}"
                      for m in sorted(kept - fresh, key=str)]
        return found


def check(root: Path = ROOT, *, sources: bool = True) -> list[str]:
    found = []
    for locale in LOCALES:
        found += problems(load(po_path(locale, root)), locale)
    if sources:
        found += stale(root)
    return found


def compile_mo(po: Path) -> bytes:
    """The .mo of one .po, as bytes; fuzzy messages are left out, as msgfmt does."""
    from io import BytesIO

    out = BytesIO()
    write_mo(out, load(po), use_fuzzy=False)
    return out.getvalue()


def compile_all(paths: Iterable[Path]) -> None:
    for po in paths:
        po.with_suffix(".mo").write_bytes(compile_mo(po))


def todo(locale: str) -> list[str]:
    return [m.id if isinstance(m.id, str) else list(m.id) for m in load(po_path(locale))
            if m.id and (m.fuzzy or not all(m.string if isinstance(m.string, tuple | list) else (m.string,)))]


def fill(translations: dict[str, dict[str, str | list[str]]]) -> int:
    """Set the given translations (by msgid, or by the singular of a plural) and clear
    their fuzzy flag; returns how many were set."""
    count = 0
    for locale in LOCALES:
        path = po_path(locale)
        catalog = load(path)
        catalog.fuzzy = False  # the header makemessages writes is marked fuzzy
        catalog.project, catalog.version = "rpay", ""
        for message in catalog:
            if not message.id:
                continue
            key = message.id[0] if isinstance(message.id, tuple | list) else message.id
            text = translations.get(key, {}).get(locale)
            if text is None:
                continue
            message.string = tuple(text) if isinstance(message.id, tuple | list) else text
            message.flags.discard("fuzzy")
            count += 1
        with path.open("wb") as f:
            write_po(f, catalog, width=79, omit_header=False, include_previous=False)
    return count


def main(argv: list[str]) -> int:
    command, *args = argv or ["check"]
    if command == "extract":
        extract()
    elif command == "check":
        found = check(sources="--no-sources" not in args)
        print("\n".join(found) or "i18n: every message translated, none fuzzy, the .po files are current")
        return 1 if found else 0
    elif command == "compile":
        compile_all([Path(a) for a in args] or [po_path(locale) for locale in LOCALES])
    elif command == "todo":
        print(json.dumps(todo(args[0]), ensure_ascii=False, indent=1))
    elif command == "fill":
        print(f"i18n: {fill(json.loads(Path(args[0]).read_text()))} translations set")
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
