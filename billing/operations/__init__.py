"""What both the actions (a customer's or a staff member's change) and the batches (the
daily runs) do: the operations they share, so that neither has to import the other.

Below ``billing.actions`` and ``billing.batches``, above ``billing.access``, ``billing.rules``
and ``billing.notify``: an operation never imports an action or a batch (docs/DEVELOPMENT.md,
"The rules of the layout"). Callers import the module that does the work
(``from billing.operations import payments``): this package re-exports nothing.

* ``payments``: taking a payment (the charge, its idempotency key, the amount and period
  owed, recording a paid charge, the first payment);
* ``outcomes``: what taking a payment reports (``PaymentOutcome``, ``PaymentStatus``);
* ``refunds``: refunding a charge, and the charges that bought nothing refunded whole
  (after the account's close, an upgrade whose switch was not made);
* ``retention``: how long an invoice is kept (tax law's years where the seller is);
* ``expiry``: expiring a first payment never confirmed with the bank (``incomplete``);
* ``found_charges``: a successful charge found without its receipt (by the reconciliation
  or a processor's webhook), recorded or refunded whole;
* ``webhook_signing``: the outbound webhooks' signed body and headers, and a new secret.
"""
