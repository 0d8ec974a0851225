"""Recognising and describing DynamoDB failures for people (503 page, command errors)."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError
from django.conf import settings
from pynamodb.exceptions import PynamoDBException

DYNAMODB_ERRORS = (PynamoDBException, BotoCoreError, ClientError)

_UNAVAILABLE_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "ResourceNotFoundException",
}


def _root(error: BaseException) -> BaseException:
    seen = error
    while getattr(seen, "cause", None) is not None or seen.__cause__ is not None:
        seen = getattr(seen, "cause", None) or seen.__cause__
    return seen


def is_unavailable(error: BaseException) -> bool:
    """True when DynamoDB could not serve the request: unreachable, throttled, failing,
    or the table is missing. A failed condition is not this: it is a business outcome."""
    if not isinstance(error, DYNAMODB_ERRORS):
        return False
    code = getattr(error, "cause_response_code", None)
    if code == "ConditionalCheckFailedException":
        return False
    if code in _UNAVAILABLE_CODES:
        return True
    root = _root(error)
    if isinstance(root, BotoCoreError):
        return True
    if isinstance(root, ClientError):
        return root.response.get("Error", {}).get("Code") in _UNAVAILABLE_CODES
    return code is None


def describe_dynamodb_error(error: BaseException) -> str:
    """One line: what went wrong and where to look."""
    endpoint = settings.DYNAMODB_ENDPOINT or f"AWS DynamoDB ({settings.AWS_REGION})"
    root = _root(error)
    code = getattr(error, "cause_response_code", None)
    if isinstance(root, EndpointConnectionError) or "Could not connect" in str(root):
        return (f"cannot reach DynamoDB at {endpoint}: is the local engine running "
                f"('make run' starts it) or DYNAMODB_ENDPOINT set right?")
    if code == "ResourceNotFoundException":
        return (f"table {settings.DYNAMODB_TABLE!r} not found at {endpoint}: "
                f"run 'python manage.py setup_dynamodb'")
    if code in _UNAVAILABLE_CODES:
        return f"DynamoDB at {endpoint} is busy or failing ({code}); try again shortly"
    message = str(getattr(error, "msg", None) or error).splitlines()[0]
    return f"DynamoDB error at {endpoint}: {message}"
