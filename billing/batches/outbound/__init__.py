"""Outbound webhooks: the sender (``sender``), its metrics (``metrics``) and the e-mail to
staff when an endpoint is disabled (``alerts``). The signed body and headers are
billing/operations/webhook_signing.py's: registering an endpoint (an action) makes its secret
and sends its test event with them too."""
