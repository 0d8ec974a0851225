"""What a receipt of nothing credits when prices are before tax (billing/rules/switch.py
``unused_credit`` and ``net_left``): nothing, and no error, whatever refund it records. No
code refunds a charge of 0.00, but a stored receipt saying so (a 100% coupon's period, its
RefundedAmount written by hand) must not stop a switch's or the seats' quote."""

from __future__ import annotations

from datetime import date

from billing.models import Receipt
from billing.rules.switch import net_left, unused_credit


def free_period(refunded: int | None) -> Receipt:
    # paid 0.00 for 10 April to 9 May, no tax
    return Receipt(sub_id="s1", BillingDate="2027-04-10", PeriodStart="2027-04-10", PeriodEnd="2027-05-09",
                   ProcessedAmount=0, RefundedAmount=refunded, Net=0, Tax=0)


def test_a_receipt_of_nothing_holds_no_net_and_credits_nothing_whatever_refund_it_records() -> None:
    for refunded in (None, 0, 1, 500):
        assert net_left(free_period(refunded)) == 0
        assert unused_credit(free_period(refunded), date(2027, 4, 25), before_tax=True) == 0
