"""The REST API's keys from the command line (docs/API.md): ``create`` prints a new key
once (only its hash is kept), ``list`` shows them with their last use, ``revoke`` refuses
one from the next call on."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from billing import access
from billing.actions import api_keys
from billing.models import ApiKeyScope
from core.dynamo.command import BillingCommand

ACTOR = "manage.py api_keys"


class Command(BillingCommand):
    help = "Create, list or revoke the REST API's keys."

    def add_arguments(self, parser: CommandParser) -> None:
        commands = parser.add_subparsers(dest="command", required=True)
        create = commands.add_parser("create", help="make a key and print it (shown this once)")
        create.add_argument("--name", required=True, help="who or what uses it (the audit's actor)")
        create.add_argument("--scope", required=True, choices=[s.value for s in ApiKeyScope])
        commands.add_parser("list", help="every key: id, name, scope, created, last used, revoked")
        revoke = commands.add_parser("revoke", help="refuse a key from its next call on")
        revoke.add_argument("key_id", help="the key's id, as list shows it")

    def handle(self, *args: Any, **options: Any) -> None:
        command = options["command"]
        if command == "create":
            name = options["name"].strip()
            if not name or len(name) > 100 or not name.isprintable():
                raise CommandError("--name: 1-100 printable characters")
            key, secret = api_keys.create_key(name, options["scope"], actor=ACTOR)
            self.stderr.write(f"key {key.KeyId} ({key.Scope}) for {key.Name}; it is shown only this once:")
            self.stdout.write(secret)
        elif command == "list":
            for key in access.list_api_keys():
                self.stdout.write("\t".join([key.KeyId, key.Name, key.Scope, key.CreatedAt,
                                             key.LastUsedAt or "never used",
                                             f"revoked {key.RevokedAt}" if key.revoked else "live"]))
        else:
            key = access.find_api_key(options["key_id"])
            if key is None:
                raise CommandError(f"no key {options['key_id']}")
            api_keys.revoke_key(key, actor=ACTOR)
            self.stdout.write(f"revoked {key.KeyId} ({key.Name})")
