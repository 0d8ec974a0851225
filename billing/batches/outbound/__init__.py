"""Outbound webhooks: the sender (``sender``), the signed body and headers (``signing``),
and the e-mail to staff when an endpoint is disabled (``alerts``)."""
