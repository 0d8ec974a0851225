"""Write the tables as a NoSQL Workbench data model, generated from the PynamoDB models
(``core.dynamo.workbench``): each app's registered table, one or all of them."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.dynamo import workbench
from core.dynamo.command import BillingCommand
from core.dynamo.table import registered


class Command(BillingCommand):
    help = "Write the table as a NoSQL Workbench data model (JSON), generated from the PynamoDB models."

    def add_arguments(self, parser: CommandParser) -> None:
        labels = [t.label for t in registered() if t.workbench]
        parser.add_argument("--output", "-o", help="file to write (default: standard output)")
        parser.add_argument("--table", choices=[*labels, "all"], default=labels[0] if labels else None,
                            help=f"which table: {', '.join(labels)} (default: the first), or all in one model")

    def handle(self, *args: Any, **options: Any) -> None:
        tables = [t for t in registered() if t.workbench]
        if not tables:
            raise CommandError("no table is registered")
        chosen = tables if options["table"] == "all" else [t for t in tables if t.label == options["table"]]
        # A model of several tables is named after the first (the main one).
        model = workbench.document(chosen[0].workbench_name, chosen[0].workbench_description,
                                   [t.workbench() for t in chosen])
        text = json.dumps(model, indent=2, default=_json_default) + "\n"
        if options["output"]:
            path = Path(options["output"])
            path.write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {path} ({len(text)} bytes)")
        else:
            self.stdout.write(text, ending="")


def _json_default(value: Any) -> str:
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
