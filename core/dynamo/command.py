"""What every rpay command shares: DynamoDB trouble becomes one line and a non-zero exit."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from django.core.management.base import BaseCommand, CommandError
from pynamodb.exceptions import PynamoDBException

from core.dynamo.errors import describe_dynamodb_error


class BillingCommand(BaseCommand):
    """A command whose DynamoDB failures print one line saying what is wrong."""

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except (PynamoDBException, BotoCoreError, ClientError) as error:
            raise CommandError(describe_dynamodb_error(error)) from error
