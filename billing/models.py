"""The one DynamoDB table (docs/TABLE.md), modelled with PynamoDB.

Every entity is a subclass of ``BillingItem`` told apart by the ``EntityType``
discriminator, and declares its key templates once, next to its attributes (the
ElectroDB habit): all code builds keys through ``Entity.pk(...)`` / ``Entity.sk(...)``.

Only ``Subscription`` carries the GSI key attributes, so the two indexes are sparse:
accounts, receipts, products, batch runs and events never appear in them.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Any, ClassVar

from pynamodb.attributes import (
    BooleanAttribute,
    DiscriminatorAttribute,
    JSONAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
    VersionAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex, IncludeProjection
from pynamodb.models import Model

from core.dynamo import engine
from core.dynamo.invoice_tax import InvoiceTaxAttributes
from core.dynamo.keys import KeyPart, KeyTemplate

# --- the table --------------------------------------------------------------------------


class BillingItem(Model):
    """Base model of the single table: generic PK/SK and the entity discriminator.

    ``Meta`` is filled in by :func:`configure` from Django settings, so that tests can
    point the same classes at moto or at a DynamoDB Local server.
    """

    class Meta:
        table_name = "RecurringPayments"
        region = "us-east-1"
        host: str | None = None
        billing_mode = "PAY_PER_REQUEST"
        max_retry_attempts = 5
        max_pool_connections = 64
        connect_timeout_seconds = 3
        read_timeout_seconds = 10

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)
    EntityType = DiscriminatorAttribute()

    pk_template: ClassVar[KeyTemplate]
    sk_template: ClassVar[KeyTemplate]

    @classmethod
    def pk(cls, **values: Any) -> str:
        return cls.pk_template.format(**values)

    @classmethod
    def sk(cls, **values: Any) -> str:
        return cls.sk_template.format(**values)


ACCOUNT_PK = KeyTemplate("ACC#{account_id}")


class Account(BillingItem, discriminator="Account"):
    pk_template = ACCOUNT_PK
    sk_template = ACCOUNT_PK

    Email = UnicodeAttribute()
    Name = UnicodeAttribute(null=True)
    # The Django user that owns this account (users live in Django's database).
    UserId = NumberAttribute(null=True)
    CreatedDate = UnicodeAttribute()
    # The customer's language (a code of settings.LANGUAGES, e.g. "zh-hans"); copied onto
    # the user link (read at log-in) and each subscription (read by the batches from the
    # GSIs), so neither needs another request to know it. Null: the site's default.
    Language = UnicodeAttribute(null=True)
    # The wallet card new subscriptions use unless told otherwise; when it is
    # unset or names a removed card, the wallet's oldest card is the default.
    DefaultCardId = UnicodeAttribute(null=True)
    # The account's customer at the payment processor (Stripe's ``cus_…``), made with its
    # first card; the wallet's cards are that customer's payment methods.
    StripeCustomerId = UnicodeAttribute(null=True)
    # When the account was closed (billing/actions/data_rights.py): its personal data is
    # erased, only its receipts' invoice fields remain, until their TTL.
    ClosedDate = UnicodeAttribute(null=True)
    # The customer's tax identity (billing/actions/tax_identity.py): the country the VAT
    # follows (ISO 3166 alpha-2, as the customer declared it) and an optional VAT number
    # (compact, with its prefix: "IT00743110157"), checked offline (``VatNumberCheck``
    # "format") or confirmed by the EU's VIES service ("vies", on ``VatCheckedAt``). Both
    # copied onto each live subscription, which the payment run reads alone.
    BillingCountry = UnicodeAttribute(null=True)
    VatNumber = UnicodeAttribute(null=True)
    VatNumberCheck = UnicodeAttribute(null=True)
    VatCheckedAt = UnicodeAttribute(null=True)
    # The default card's country as its issuer says (the evidence of where the customer
    # is, beside the declared country): staff see the account flagged when they differ.
    CardCountry = UnicodeAttribute(null=True)

    account_id = KeyPart(ACCOUNT_PK)


class UserLink(BillingItem, discriminator="UserLink"):
    """Maps a Django user to the billing account it owns (one GetItem at log-in)."""

    pk_template = KeyTemplate("USER#{user_id}")
    sk_template = KeyTemplate("USER#{user_id}")

    AccountId = UnicodeAttribute()
    Email = UnicodeAttribute()
    Language = UnicodeAttribute(null=True)  # the account's, so log-in knows it (one GetItem)


class SubIdLookup(BillingItem, discriminator="SubIdLookup"):
    """Maps a subscription id to its account (and SKU), so staff can find a subscription
    by its id alone with one GetItem: subscriptions live in their account's partition.
    Written when the subscription is created, never changed (ids are never reused)."""

    pk_template = KeyTemplate("SUBID#{sub_id}")
    sk_template = KeyTemplate("SUBID#{sub_id}")

    AccountId = UnicodeAttribute()
    SKU = UnicodeAttribute()


class PaymentDetails(MapAttribute):
    """What the gateway gave back for a card: never the card number or the CVC."""

    Token = UnicodeAttribute()
    Brand = UnicodeAttribute()
    Last4 = UnicodeAttribute()
    ExpMonth = NumberAttribute()
    ExpYear = NumberAttribute()
    BillingAddress = UnicodeAttribute(null=True)
    # The wallet card (``Card``) this copy was made from; absent on a subscription made
    # before the wallet ("the card on this subscription"). Inside the map, so it travels
    # with PaymentDetails in both index projections.
    CardId = UnicodeAttribute(null=True)
    # A renewal's charge the bank wants the cardholder to confirm (strong customer
    # authentication): the processor's PaymentIntent id, while the subscription is past due
    # waiting for the customer. Kept in this map because both due indexes project it (the
    # payment run reminds instead of retrying, with no extra read), and because it belongs
    # to this card: a card replaced is a new map, and the next charge goes to the new card.
    AwaitingCharge = UnicodeAttribute(null=True)
    # The card's country as its issuer says (Stripe's ``card.country``): tax evidence.
    Country = UnicodeAttribute(null=True)


class Card(BillingItem, discriminator="Card"):
    """A card in the account's wallet: the gateway's token and what the pages
    show, never the number or the CVC (invariant 3). Each subscription keeps a copy in
    its ``PaymentDetails`` (with this card's id), so the batches read no Card item."""

    pk_template = ACCOUNT_PK
    sk_template = KeyTemplate("CARD#{card_id}")

    Details = PaymentDetails()
    CreatedDate = UnicodeAttribute()
    UpdatedDate = UnicodeAttribute(null=True)

    account_id = KeyPart(ACCOUNT_PK)
    card_id = KeyPart(sk_template, "SK")


# Projections (docs/TABLE.md). EntityType must be projected, or PynamoDB's discriminator
# filter drops every row of a query made through the Subscription class. Each index also
# projects its own date (``NextReminderDate`` / ``NextPaymentDate``): the hash key is now
# the derived ``<date>#<shard>``, and the batches check and condition on the plain date;
# GSI-2 also ``DueReminderKey``, so migrate_due_shards sees from it whether both keys are right.
# A subscription's coupon (docs/MONEY.md "Coupons") is in both projections: the
# payment run charges the discounted amount and the reminder shows it, with no extra read.
COUPON_ATTRIBUTES = ("CouponCode", "CouponPercentOff", "CouponAmountOff", "CouponPaymentsLeft")
# The buyer's tax identity (``Account.BillingCountry``, ``VatNumber``, copied): the charge's
# VAT rate, and the amount the reminder announces, come from the index with no extra read.
# With the price's ``TaxBehavior`` (copied): whether the amount includes the tax or has it added.
TAX_ATTRIBUTES = ("BillingCountry", "VatNumber", "TaxBehavior")
# The cadence beside ``PaymentDay`` (billing/rules/schedule.py ``cadence_of``): the run's
# period and the reminder's next date are computed from the index alone, for every interval.
INTERVAL_ATTRIBUTES = ("Interval", "IntervalCount", "IntervalAnchor")
GSI1_PROJECTION = [
    "PK", "SK", "EntityType", "SKU", "Email", "NextPaymentDate", "PaymentAmount",
    "Currency", "PaymentDetails", "Status", "ProductName", "PaymentDay", "NextReminderDate", "Language",
    *COUPON_ATTRIBUTES, *TAX_ATTRIBUTES, *INTERVAL_ATTRIBUTES,
    # A metered subscription's reminder announces the usage so far too (its reads only for these).
    "MeteredPriceId",
    # Its add-ons: the merchant's ``invoice.upcoming`` itemises the fee an add-on a line.
    "AddOns",
]
GSI2_PROJECTION = [
    "PK", "SK", "EntityType", "Email", "PaymentDay", "PaymentAmount", "Currency", "SKU",
    "PaymentDetails", "Status", "BillingPeriod", "RetryCount", "ProductName",
    "NextReminderDate", "LastReminderDate", "Version", "NextPaymentDate", "DueReminderKey", "Language",
    *COUPON_ATTRIBUTES, *TAX_ATTRIBUTES, *INTERVAL_ATTRIBUTES, "MeteredPriceId",
    # Its further metered prices: the run bills their usage with the first's; and those
    # removed, each billed through its last day only.
    "OtherMeteredPriceIds", "MeteredPriceEnds", "MeteredPriceStarts",
    # The seats the fixed fee pays for (and one seat's price): named on the renewal's
    # invoice line by the charge's metadata (billing/rules/seat_lines.py).
    "Quantity", "UnitAmount",
    # Its add-ons: the renewal's invoice has a line for each it bills (billing/rules/add_ons.py).
    "AddOns",
]

# The hash keys of both due indexes: a date and a write shard. One date's
# items are spread over ``DUE_SHARDS`` partition key values, so no GSI partition takes a
# whole 1st of the month. Built only by billing/access/due_dates.py.
DUE_KEY = KeyTemplate("{day}#{shard}")


class DueRemindersIndex(GlobalSecondaryIndex):
    """GSI-1: subscriptions whose reminder is due on a date, per shard (getDueRemindersByDate)."""

    class Meta:
        index_name = "GSI-1"
        projection = IncludeProjection([a for a in GSI1_PROJECTION if a not in ("PK", "SK")])

    DueReminderKey = UnicodeAttribute(hash_key=True)
    LastReminderDate = UnicodeAttribute(range_key=True)


class DuePaymentsIndex(GlobalSecondaryIndex):
    """GSI-2: subscriptions whose payment is due on a date, per shard (getDuePaymentsByDate)."""

    class Meta:
        index_name = "GSI-2"
        projection = IncludeProjection([a for a in GSI2_PROJECTION if a not in ("PK", "SK")])

    DuePaymentKey = UnicodeAttribute(hash_key=True)
    LastPaymentDate = UnicodeAttribute(range_key=True)


class SubscriptionStatus(StrEnum):
    ACTIVE = "active"
    PAST_DUE = "past_due"
    CANCELLED = "cancelled"
    # Stripe Billing's words for a first payment the bank wants the customer to confirm
    # (3-D Secure): not live (in neither due index, never charged by the run, in no total)
    # until confirmed; expired when still unconfirmed ``INCOMPLETE_HOURS`` after it was
    # made (billing/operations/expiry.py): it never started.
    INCOMPLETE = "incomplete"
    INCOMPLETE_EXPIRED = "incomplete_expired"


# How long an incomplete subscription waits for its first payment's confirmation (Stripe's 23 hours).
INCOMPLETE_HOURS = 23


# Live subscriptions are billed and carry the GSI keys (docs/TABLE.md, "Sparse indexes").
LIVE_STATUSES = (SubscriptionStatus.ACTIVE, SubscriptionStatus.PAST_DUE)


class MeteredEndMap(MapAttribute):
    """A metered price removed from a subscription at its period's end: the last day whose
    usage it bills (``Subscription.MeteredPriceEnds``)."""

    PriceId = UnicodeAttribute()
    LastDay = UnicodeAttribute()  # ISO date: the last day paid for when it was removed


class MeteredStartMap(MapAttribute):
    """A metered price that replaces another of its meter at the period's end: the first
    day whose usage it bills (``Subscription.MeteredPriceStarts``)."""

    PriceId = UnicodeAttribute()
    FirstDay = UnicodeAttribute()  # ISO date: the day after the replaced price's last one


class AddOnMap(MapAttribute):
    """A further fixed price a subscription pays beside its plan (docs/PRICING.md,
    "Add-ons"): billed with the plan's fee by every payment from ``FirstDay`` (a payment
    day) on, and, once removed, by none after ``LastDay`` (the last day paid for)."""

    PriceId = UnicodeAttribute()
    Name = UnicodeAttribute()  # its product's name, as the invoice line names it
    Amount = NumberAttribute()  # minor units, a period of the subscription's cadence
    FirstDay = UnicodeAttribute()  # ISO date
    LastDay = UnicodeAttribute(null=True)  # ISO date


class Subscription(BillingItem, discriminator="Subscription"):
    pk_template = ACCOUNT_PK
    sk_template = KeyTemplate("SUB#{sub_id}#SKU#{sku}")

    Email = UnicodeAttribute()
    SKU = UnicodeAttribute()
    ProductName = UnicodeAttribute(null=True)
    PaymentDay = NumberAttribute()
    # The cadence (billing/rules/schedule.py ``Cadence``, docs/MONEY.md "Cadences"): every
    # ``IntervalCount`` (null: 1) ``Interval`` units (day, week, month, year; null: month).
    # ``IntervalAnchor``: the first full period's first day (ISO date): the month years and
    # every N months count from, the weekday and phase of weeks and days; null for monthly.
    Interval = UnicodeAttribute(null=True)
    IntervalCount = NumberAttribute(null=True)
    IntervalAnchor = UnicodeAttribute(null=True)
    PaymentAmount = NumberAttribute()  # minor units, for one period of the cadence
    Currency = UnicodeAttribute()
    # The schedule's dates (the seed's names): present on every live subscription, the
    # Next* ones absent once cancelled.
    NextPaymentDate = UnicodeAttribute(null=True)
    LastPaymentDate = UnicodeAttribute(null=True)
    NextReminderDate = UnicodeAttribute(null=True)
    LastReminderDate = UnicodeAttribute(null=True)
    # The payment (its day) whose usage the merchant's ``invoice.upcoming`` announced
    # (billing/batches/upcoming_invoices.py): the claim that writes that event once.
    UpcomingNoticeFor = UnicodeAttribute(null=True)
    # The GSI hash keys derived from the Next* dates and the id's shard (``DUE_KEY``):
    # set and removed with them, only by billing/access/due_dates.py.
    DuePaymentKey = UnicodeAttribute(null=True)
    DueReminderKey = UnicodeAttribute(null=True)
    PaymentDetails = PaymentDetails()
    CreatedDate = UnicodeAttribute()
    Status = UnicodeAttribute(default=SubscriptionStatus.ACTIVE)
    # The anchor date of the period being paid while a payment is retried (dunning).
    BillingPeriod = UnicodeAttribute(null=True)
    RetryCount = NumberAttribute(default=0)
    # The last day the payments made cover (docs/MONEY.md M1, paid in advance): the day before
    # NextPaymentDate while active, before BillingPeriod while past due; after a cancel,
    # the day the service ends. Null only on items written before it existed.
    PaidThroughDate = UnicodeAttribute(null=True)
    CancelledDate = UnicodeAttribute(null=True)
    CancelReason = UnicodeAttribute(null=True)
    # The account's language, copied here so the batches' e-mails (read from the GSIs,
    # which project it) go out in it without reading the account (Account.Language).
    Language = UnicodeAttribute(null=True)
    # How a customer or staff cancel ends the service (billing/rules/lifecycle.py CancelMode):
    # "period_end" keeps it to PaidThroughDate and may be undone ("keep") until then.
    CancelMode = UnicodeAttribute(null=True)
    CancelComment = UnicodeAttribute(null=True)  # the customer's own words, if any
    # A pause of collection (billing/rules/lifecycle.py): from the first unpaid day; until the
    # first payment after it (that payment's NextPaymentDate), or open (no Next* keys).
    PausedFrom = UnicodeAttribute(null=True)
    PausedUntil = UnicodeAttribute(null=True)
    # A switch of product (billing/rules/switch.py): SKU, ProductName and PaymentAmount are
    # the new product's at once; the SK keeps the SKU the subscription was made with
    # (``key_sku``). A downgrade is paid from the next payment, ``SwitchFrom``: until then the
    # customer keeps the product paid for, ``PreviousProductName`` (``PreviousSKU``).
    PreviousSKU = UnicodeAttribute(null=True)
    PreviousProductName = UnicodeAttribute(null=True)
    SwitchFrom = UnicodeAttribute(null=True)
    LastSwitchDate = UnicodeAttribute(null=True)  # one switch a day (its receipt's key holds the day)
    # Upgrade charges of one day that failed (declined, refused by the bank, abandoned):
    # "<day>:<count>". Each failure gives the next attempt that day a key of its own
    # (``:retry<N>``, billing/actions/switch.py), so that a new card is really tried.
    SwitchFailures = UnicodeAttribute(null=True)
    # A coupon applied (``Coupon``; billing/rules/coupons.py): a copy of its discount, so the
    # batches read it from the indexes. ``CouponPaymentsLeft``: payments still discounted
    # (null: every one); the four go when it reaches 0. Absent: no coupon.
    CouponCode = UnicodeAttribute(null=True)
    CouponPercentOff = NumberAttribute(null=True)
    CouponAmountOff = NumberAttribute(null=True)  # minor units of the subscription's Currency
    CouponPaymentsLeft = NumberAttribute(null=True)
    # A free trial (docs/MONEY.md "Free trials"): its last free day. Set at
    # subscribing and never changed; the first charge is due the day after
    # (``NextPaymentDate``), ``PaidThroughDate`` starts at this day (served free).
    TrialEnd = UnicodeAttribute(null=True)
    # The account's tax identity (``Account.BillingCountry``, ``Account.VatNumber``),
    # copied here by the action that changes it, so a charge's VAT needs no other read.
    BillingCountry = UnicodeAttribute(null=True)
    VatNumber = UnicodeAttribute(null=True)
    # Its price's ``Price.TaxBehavior``, copied at subscribing ("inclusive", "exclusive";
    # null: as the seller's profile says): the charge's tax needs no read of the price.
    TaxBehavior = UnicodeAttribute(null=True)
    # Seats (docs/MONEY.md M7, billing/rules/seats.py): how many, and the price of one a
    # period. ``PaymentAmount`` stays the whole price a period (= UnitAmount x Quantity),
    # so the due indexes, the projection and the run charge it unchanged: neither is
    # projected. Null: one seat (``Quantity``), the whole price (``UnitAmount``).
    Quantity = NumberAttribute(null=True)
    UnitAmount = NumberAttribute(null=True)  # minor units
    # The catalog price subscribed to (docs/PRICING.md); null: its product's derived
    # default price (``price_default_<SKU>``), as every subscription made before prices.
    PriceId = UnicodeAttribute(null=True)
    # A metered price (``Price.Meter``; docs/USAGE.md "Billing a period"): each payment also
    # charges the usage of the period just ended, in arrears. In GSI-2 (the run charges it).
    MeteredPriceId = UnicodeAttribute(null=True)
    # Its further metered prices, in the order attached (each of another meter, in GSI-2):
    # one payment bills every one's usage, a line each. Only beside ``MeteredPriceId``,
    # which stays the first (GSI-1 projects it alone: a reminder reads a metered item by key).
    OtherMeteredPriceIds = ListAttribute(of=UnicodeAttribute, null=True)
    # Those of them removed (docs/USAGE.md "Removing a metered price"): each still bills its
    # usage through its ``LastDay``, with the next payment, and is gone once a payment after
    # that day is made (``LastPaymentDate`` later than it). In GSI-2, as the ids.
    MeteredPriceEnds = ListAttribute(of=MeteredEndMap, null=True)
    # Those that replace one removed (docs/USAGE.md "Changing a metered price"): each bills
    # its meter's usage from its ``FirstDay`` on, the day after the one it replaces ends.
    MeteredPriceStarts = ListAttribute(of=MeteredStartMap, null=True)
    # Its add-ons (billing/rules/add_ons.py), in the order added: ``PaymentAmount`` is the
    # plan's fee plus those the next payment bills, so nothing that reads the fee changes.
    AddOns = ListAttribute(of=AddOnMap, null=True)
    Version = VersionAttribute()

    due_reminders = DueRemindersIndex()
    due_payments = DuePaymentsIndex()

    account_id = KeyPart(ACCOUNT_PK)
    sub_id = KeyPart(sk_template, "SK")
    # The SKU in the item's key: the product it was made for (``SKU`` is the current one).
    key_sku = KeyPart(sk_template, "SK", field="sku")

    @property
    def is_live(self) -> bool:
        return self.Status in LIVE_STATUSES

    @property
    def metered_price_ids(self) -> list[str]:
        """Every metered price whose usage its payments bill, the first first: those it
        lists, but a removed one whose last day a payment has passed (gone)."""
        ends, paid_from = self.metered_ends, getattr(self, "LastPaymentDate", None)
        return [price_id for price_id in self.listed_metered_price_ids
                if price_id not in ends or not paid_from or paid_from <= ends[price_id]]

    @property
    def listed_metered_price_ids(self) -> list[str]:
        """The metered prices the item lists, gone ones too (what a write rewrites)."""
        if not self.MeteredPriceId:
            return []
        return [self.MeteredPriceId, *(getattr(self, "OtherMeteredPriceIds", None) or [])]

    @property
    def metered_starts(self) -> dict[str, str]:
        """The first days of the metered prices that replace others (ISO dates), by price id."""
        return {start.PriceId: start.FirstDay for start in getattr(self, "MeteredPriceStarts", None) or []}

    @property
    def metered_ends(self) -> dict[str, str]:
        """The removed metered prices' last days (ISO dates), by price id."""
        return {end.PriceId: end.LastDay for end in getattr(self, "MeteredPriceEnds", None) or []}


# A dispute's statuses once it is over (Stripe's ``charge.dispute.closed``): ``won`` and
# ``lost``, or ``warning_closed`` for an inquiry that never became a chargeback.
CLOSED_DISPUTE_STATUSES = ("won", "lost", "warning_closed")


class ReceiptStatus(StrEnum):
    PAID = "paid"
    REFUNDED = "refunded"
    PARTIALLY_REFUNDED = "partially_refunded"


class Refund(MapAttribute):
    """One refund of a receipt's charge, as the gateway made it."""

    RefundId = UnicodeAttribute()
    Amount = NumberAttribute()  # minor units
    At = UnicodeAttribute()
    Actor = UnicodeAttribute(null=True)
    Reason = UnicodeAttribute(null=True)
    # The staff form's request id (its idempotency key's tail): a second submit of the
    # same form finds its refund made, rather than "refunded meanwhile".
    RequestId = UnicodeAttribute(null=True)
    # The credit note this refund of an invoice issued (written in the same transaction):
    # the pages link it without reading the account's credit notes.
    CreditNoteNumber = UnicodeAttribute(null=True)
    # The one invoice line this refund credits alone (its index in the invoice's lines, as
    # the API's ``tax.lines``), or absent: shared over the lines (billing/rules/credit_lines.py).
    Line = NumberAttribute(null=True)


class UsageMap(MapAttribute):
    """A metered price's usage on a receipt beside its first (``Receipt.OtherUsage``)."""

    PriceId = UnicodeAttribute()
    Meter = UnicodeAttribute()
    Quantity = NumberAttribute()
    Amount = NumberAttribute()  # minor units, before tax


class TaxLineMap(MapAttribute):
    """One line of an invoice or credit note: what it is for, its days and its tax."""

    Description = UnicodeAttribute(null=True)
    PeriodStart = UnicodeAttribute(null=True)
    PeriodEnd = UnicodeAttribute(null=True)
    Net = NumberAttribute()  # minor units (negative on a credit note)
    TaxRate = UnicodeAttribute()
    Tax = NumberAttribute()
    Gross = NumberAttribute()
    # A usage line by tier (billing/rules/usage_lines.py): the tier's figures, worded at
    # display in the reader's language (``price_words.part_words``); absent on any other line.
    UsageUnits = NumberAttribute(null=True)  # the tier's units (a package price: its packages)
    UnitAmount = UnicodeAttribute(null=True)  # minor units, a decimal string ("0.2")
    FlatAmount = NumberAttribute(null=True)
    PackageSize = NumberAttribute(null=True)
    UnitLabel = UnicodeAttribute(null=True)  # the price's unit ("call")
    # A switch's fixed fee of several seats (billing/rules/seat_lines.py), as Stripe's line
    # shows its item's quantity: the seats and one seat's price a period (minor units;
    # absent with seats: priced by tiers), worded at display; absent on a line of one seat.
    Quantity = NumberAttribute(null=True)
    SeatPrice = NumberAttribute(null=True)
    # A change of seats' charge pays for the seats added alone: the seats before it (the
    # line reads "2 → 5 seats"); absent on every other line.
    SeatsFrom = NumberAttribute(null=True)


class SellerMap(MapAttribute):
    """The seller as printed on an invoice (a snapshot: an invoice is never edited)."""

    Name = UnicodeAttribute(null=True)
    Address = UnicodeAttribute(null=True)
    Country = UnicodeAttribute(null=True)
    VatNumber = UnicodeAttribute(null=True)


class Receipt(BillingItem, InvoiceTaxAttributes, discriminator="Receipt"):
    pk_template = ACCOUNT_PK
    # Keyed by billing date, not processing time: a retried payment finds the same key.
    sk_template = KeyTemplate("REC#{billing_date}#SKU#{sku}#SUB#{sub_id}")

    # Stored as the seed's ``SubId``; read as ``receipt.sub_id``, like ``sub.sub_id``.
    sub_id = UnicodeAttribute(attr_name="SubId")
    SKU = UnicodeAttribute()
    ProductName = UnicodeAttribute(null=True)
    Email = UnicodeAttribute(null=True)
    BillingDate = UnicodeAttribute()
    # The days the charge pays for (inclusive); PeriodStart is the BillingDate.
    PeriodStart = UnicodeAttribute(null=True)
    PeriodEnd = UnicodeAttribute(null=True)
    ProcessedDate = UnicodeAttribute()
    ProcessedAmount = NumberAttribute()  # minor units
    Currency = UnicodeAttribute()
    ChargeId = UnicodeAttribute(null=True)
    CardBrand = UnicodeAttribute(null=True)
    CardLast4 = UnicodeAttribute(null=True)
    Status = UnicodeAttribute(default=ReceiptStatus.PAID)
    # Several partial refunds, up to ProcessedAmount (money rule M5); RefundedAmount is
    # their sum, kept so that a refund's conditional update can check it in one place.
    RefundedAmount = NumberAttribute(default=0)
    Refunds = ListAttribute(of=Refund, null=True)
    # The subscription's language when it was paid: a refund's e-mail is written in it.
    Language = UnicodeAttribute(null=True)
    TTL = TTLAttribute(null=True)
    # The human receipt number (``R-2026-S07-000123``, ``ReceiptCounter``; before the
    # series ``R-2026-000123``); null on receipts
    # written before numbers existed, which are still shown (by key).
    Number = UnicodeAttribute(null=True)
    # ``switch``: the charge of an upgrade (billing/rules/switch.py) for the days already
    # paid, PeriodStart..PeriodEnd: the new product's price of them (``SwitchCharge``) less
    # the unused share of what paid them at the old price (``SwitchCredit``). Null: a
    # period's payment.
    Kind = UnicodeAttribute(null=True)
    SwitchCharge = NumberAttribute(null=True)
    SwitchCredit = NumberAttribute(null=True)
    PreviousProductName = UnicodeAttribute(null=True)
    # A chargeback of the charge (Stripe's ``charge.dispute.*`` events; one per charge):
    # set by billing/access/disputes.py with conditional updates, so a late or repeated
    # "opened" never moves a closed dispute back. ``DisputeStatus`` is the processor's word
    # (needs_response, under_review, ... while open; won, lost, warning_closed once closed).
    DisputeId = UnicodeAttribute(null=True)
    DisputeStatus = UnicodeAttribute(null=True)
    DisputeReason = UnicodeAttribute(null=True)
    DisputeAmount = NumberAttribute(null=True)  # minor units, of the receipt's Currency
    DisputeOpenedAt = UnicodeAttribute(null=True)
    DisputeClosedAt = UnicodeAttribute(null=True)
    # A coupon's discount on this charge (what the gateway's metadata says was taken off):
    # the period's price was ProcessedAmount + DiscountAmount.
    DiscountAmount = NumberAttribute(null=True)  # minor units
    CouponCode = UnicodeAttribute(null=True)
    # The usage billed in arrears with this payment (docs/USAGE.md "Billing a period"): a
    # metered price's quantity over UsageStart..UsageEnd (UsageEnd exclusive) and its amount
    # before tax, its second line; ProcessedAmount includes it. Null: no usage billed.
    UsagePriceId = UnicodeAttribute(null=True)
    UsageMeter = UnicodeAttribute(null=True)
    UsageStart = UnicodeAttribute(null=True)
    UsageEnd = UnicodeAttribute(null=True)
    UsageQuantity = NumberAttribute(null=True)
    UsageAmount = NumberAttribute(null=True)  # minor units, before tax
    # The other metered prices' usage billed with it (of the same days), in the charge's
    # order: their lines follow the first's. Absent: one metered price.
    OtherUsage = ListAttribute(of=UsageMap, null=True)
    # The name and billing address the customer gave with the card that paid (the card's
    # ``PaymentDetails.BillingAddress`` when paid: name, then address lines), as printed
    # on the receipt; null on receipts written before it was kept.
    BillingAddress = UnicodeAttribute(null=True)
    # A staff refund under way (billing/access/receipts.py ``claim_refund``): its request
    # id and when it was claimed. Claimed only while RefundedAmount is what the refund
    # form showed, so two tabs open on the same receipt make one refund, not two.
    RefundClaim = UnicodeAttribute(null=True)
    RefundClaimAt = UnicodeAttribute(null=True)
    # The invoice's tax (billing/access/tax_ledger.py), written once with the receipt and
    # never changed: ``ProcessedAmount`` is its gross, ``Net + Tax``. Absent (no ``Net``):
    # a receipt written before taxes were kept, shown as before.
    Net = NumberAttribute(null=True)  # minor units
    Tax = NumberAttribute(null=True)  # minor units
    # TaxRate, TaxTreatment, BuyerCountry, BuyerVatNumber: ``InvoiceTaxAttributes``.
    TaxCountry = UnicodeAttribute(null=True)
    PricesIncludeTax = BooleanAttribute(null=True)
    TaxLines = ListAttribute(of=TaxLineMap, null=True)
    Seller = SellerMap(null=True)  # the seller as it was when invoiced
    BuyerName = UnicodeAttribute(null=True)

    @property
    def is_invoice(self) -> bool:
        """A receipt with its tax figures is an invoice (Article 226 of the VAT Directive)."""
        return self.Net is not None

    account_id = KeyPart(ACCOUNT_PK)

    @property
    def price_amount(self) -> int:
        """The period's price before the discount, in minor units (with tax-exclusive
        prices, the net's: the coupon came off before the tax)."""
        before = int(self.Net) if self.PricesIncludeTax is False and self.Net is not None else int(self.ProcessedAmount)
        return before + int(self.DiscountAmount or 0)

    @property
    def dispute_closed(self) -> bool:
        return self.DisputeStatus in CLOSED_DISPUTE_STATUSES

    @property
    def url_id(self) -> str:
        """What the receipt's URLs carry: its number, or its key when it has none."""
        return self.Number or self.SK

    @property
    def net_amount(self) -> int:
        """What the customer paid after refunds, in minor units."""
        return int(self.ProcessedAmount) - int(self.RefundedAmount or 0)


class ReceiptCounter(BillingItem, discriminator="ReceiptCounter"):
    """The last receipt number of one series in a year (``R-<year>-S<series>-<n>``).
    Moved on only inside the transaction that writes the receipt with that number, on
    condition it still holds the value read (``access.receipt_numbers``): a number exists
    only if its receipt does, so each series runs 1, 2, 3... without gaps. Several series
    (``settings.RECEIPT_NUMBER_SERIES``) share the load: no item takes more than its
    ~1,000 writes/s. (Before the series, one item per year, ``RCPTSEQ#<year>``, was moved by
    blocks of numbers: those items stay, never written again.)"""

    pk_template = KeyTemplate("RCPTSEQ#{year}#S{series}")
    sk_template = KeyTemplate("RCPTSEQ#{year}#S{series}")

    LastNumber = NumberAttribute(default=0)


class ReceiptNumberLookup(BillingItem, discriminator="ReceiptNumberLookup"):
    """Maps a receipt number to its receipt (account and key), so a URL that carries the
    number is served by two GetItems (this, then the receipt), like ``SubIdLookup``.
    Written in the receipt's own transaction, on condition it is absent: a number is
    never given to two receipts."""

    pk_template = KeyTemplate("RCPTNO#{number}")
    sk_template = KeyTemplate("RCPTNO#{number}")

    AccountId = UnicodeAttribute()
    ReceiptSK = UnicodeAttribute()
    TTL = TTLAttribute(null=True)  # the receipt's own: the look-up goes when it does


class CreditNote(BillingItem, InvoiceTaxAttributes, discriminator="CreditNote"):
    """A refund's invoice correction (billing/access/credit_notes.py): negative net, tax
    and gross, the refund's share of the invoice it corrects (``InvoiceNumber``), written
    in the refund's own transaction; never changed."""

    pk_template = ACCOUNT_PK
    sk_template = KeyTemplate("CRN#{issued}#{number}")

    Number = UnicodeAttribute()  # CN-<year>-S<series>-<6 digits>, ``CreditNoteCounter``
    InvoiceNumber = UnicodeAttribute(null=True)
    ReceiptSK = UnicodeAttribute()
    RefundId = UnicodeAttribute()
    IssuedAt = UnicodeAttribute()
    Currency = UnicodeAttribute()
    Net = NumberAttribute()  # minor units, negative
    Tax = NumberAttribute()
    Gross = NumberAttribute()
    # TaxRate, TaxTreatment, BuyerCountry, BuyerVatNumber: ``InvoiceTaxAttributes``.
    TaxCountry = UnicodeAttribute(null=True)
    TaxLines = ListAttribute(of=TaxLineMap, null=True)
    Seller = SellerMap(null=True)
    BuyerName = UnicodeAttribute(null=True)
    BillingAddress = UnicodeAttribute(null=True)
    Reason = UnicodeAttribute(null=True)
    Language = UnicodeAttribute(null=True)
    TTL = TTLAttribute(null=True)  # the invoice's own

    account_id = KeyPart(ACCOUNT_PK)


class CreditNoteCounter(BillingItem, discriminator="CreditNoteCounter"):
    """The last credit note number of one series in a year (``ReceiptCounter``'s twin:
    credit notes have their own series, ``CN-<year>-S<series>-<n>``, taken the same way)."""

    pk_template = KeyTemplate("CRNSEQ#{year}#S{series}")
    sk_template = KeyTemplate("CRNSEQ#{year}#S{series}")

    LastNumber = NumberAttribute(default=0)


class TaxTotal(BillingItem, discriminator="TaxTotal"):
    """A quarter's running totals of one seller, country, rate, currency and treatment (one
    of 16 shards: docs/TABLE.md), moved only by ``ADD`` in the transaction of the invoice or
    credit note they count; or, ``SELLER#<seller>#RC#<BuyerVatNumber>#<Currency>``, the
    reverse-charge sales to one business. The quarter's report sums the shards, per seller
    (one Query). ``<seller>`` is the invoice's seller snapshot's VAT number (its country
    code with ``-NOVAT`` without one): a seller's return never holds another's sales.

    Items written before the seller was in the key (``<country>#...``, ``RC#...``) are still
    read: their seller is "not recorded" (docs/TAX.md, "Totals written before")."""

    pk_template = KeyTemplate("TAXQ#{quarter}")
    sk_template = KeyTemplate("SELLER#{seller}#{country}#{rate}#{currency}#{treatment}#{shard}")
    # The reverse-charge sales to one business (the EC Sales List's figures).
    reverse_charge_template: ClassVar[KeyTemplate] = KeyTemplate("SELLER#{seller}#RC#{vat_number}#{currency}")

    Net = NumberAttribute(default=0)  # minor units
    Tax = NumberAttribute(null=True)
    Gross = NumberAttribute(null=True)
    Invoices = NumberAttribute(null=True)  # invoices counted (credit notes do not count)
    # The seller's name and country as its latest document named them (for the report's title).
    SellerName = UnicodeAttribute(null=True)
    SellerCountry = UnicodeAttribute(null=True)

    quarter = KeyPart(pk_template)

    @property
    def is_reverse_charge_sales(self) -> bool:
        parts = self.SK.split("#")
        return parts[0] == "RC" or (parts[0] == "SELLER" and len(parts) > 2 and parts[2] == "RC")


class WebhookEvent(BillingItem, discriminator="WebhookEvent"):
    """One event the payment processor sent to ``/webhooks/stripe/``: written (only if
    absent) before it is handled, so a replay is known; ``Status`` says how it ended
    (``received`` while in hand, ``done``, ``ignored``, ``failed``: handled again when
    the processor retries). Kept for ``WEBHOOK_RETENTION_DAYS`` (Stripe retries for 3).

    Keyed by the event's own ``created`` time (the same on every redelivery), so the
    conditional put still finds an event by its id, and one Query lists a day's events,
    newest first (the staff page): one partition per UTC day."""

    pk_template = KeyTemplate("WEBHOOKS#{day}")
    sk_template = KeyTemplate("{created}#{event_id}")

    EventId = UnicodeAttribute()
    Type = UnicodeAttribute()
    Status = UnicodeAttribute()
    Outcome = UnicodeAttribute(null=True)
    CreatedAt = UnicodeAttribute()  # the event's ``created`` (UTC ISO-8601), as in the key
    ReceivedAt = UnicodeAttribute()  # the first delivery's arrival
    # How many times it was handled: 1, plus one per redelivery of one not done or ignored.
    Attempts = NumberAttribute(default=1)
    TTL = TTLAttribute(null=True)


class DisputeEntry(BillingItem, discriminator="DisputeEntry"):
    """One dispute of a subscription's charge, in the staff-wide list: one partition,
    sorted by when the dispute was opened, so the list is one Query, newest first.
    Written by the same webhook handlers as the receipt's ``Dispute*`` attributes: put if
    absent when opened, its status set when closed (both safe to repeat, in any order).
    Disputes are rare (a fraction of a percent of charges): one partition takes them."""

    pk_template = KeyTemplate("DISPUTES")
    sk_template = KeyTemplate("{opened}#{dispute_id}")

    DisputeId = UnicodeAttribute()
    AccountId = UnicodeAttribute()
    ReceiptSK = UnicodeAttribute()
    ReceiptNumber = UnicodeAttribute(null=True)
    ChargeId = UnicodeAttribute(null=True)  # the PaymentIntent, as on the receipt
    Amount = NumberAttribute()  # minor units
    Currency = UnicodeAttribute()
    Reason = UnicodeAttribute(null=True)
    Status = UnicodeAttribute()
    OpenedAt = UnicodeAttribute()
    ClosedAt = UnicodeAttribute(null=True)
    UpdatedAt = UnicodeAttribute()

    @property
    def closed(self) -> bool:
        return self.Status in CLOSED_DISPUTE_STATUSES


class ProductStatus(StrEnum):
    ACTIVE = "active"
    RETIRED = "retired"


class Product(BillingItem, discriminator="Product"):
    """The catalog: one partition, so listing it is a single Query."""

    pk_template = KeyTemplate("CATALOG")
    sk_template = KeyTemplate("SKU#{sku}")

    SKU = UnicodeAttribute()
    Name = UnicodeAttribute()
    Description = UnicodeAttribute(null=True)
    PaymentAmount = NumberAttribute()  # monthly price, minor units
    Currency = UnicodeAttribute()
    Status = UnicodeAttribute(default=ProductStatus.ACTIVE)
    CreatedDate = UnicodeAttribute()
    # Days of free trial a new subscription gets (docs/MONEY.md "Free trials");
    # 0 or absent: none. Once per account and product (``TrialUse``).
    TrialDays = NumberAttribute(null=True)
    # Offered as an add-on to the subscriptions of other products (billing/rules/add_ons.py);
    # absent: sold on its own only.
    AddOn = BooleanAttribute(null=True)

    @property
    def trial_days(self) -> int:
        return int(self.TrialDays or 0)

    @property
    def sold_as_add_on(self) -> bool:
        return bool(getattr(self, "AddOn", None))


MAX_TRIAL_DAYS = 365


class TrialUse(BillingItem, discriminator="TrialUse"):
    """An account has had the free trial of a product: written, only if absent, in the
    same transaction as the subscription that got the trial, so of two subscribes at once
    only one gets it. Never deleted: one trial per account and product, ever."""

    pk_template = ACCOUNT_PK
    sk_template = KeyTemplate("TRIAL#{sku}")

    SubId = UnicodeAttribute()  # the subscription that had it
    TrialEnd = UnicodeAttribute()
    CreatedDate = UnicodeAttribute()
    # When its ``subscription.trial_will_end`` event was written: set in that event's own
    # transaction, only if absent, so a re-run of the batch never writes it twice.
    EndNoticeAt = UnicodeAttribute(null=True)

    account_id = KeyPart(ACCOUNT_PK)


class IncompleteEntry(BillingItem, discriminator="IncompleteEntry"):
    """A subscription made ``incomplete`` (its first payment waits for the customer's
    bank), so that the payment run finds the ones to expire with one Query, never a Scan
    (an incomplete subscription is in neither due index): one partition, sorted by
    creation time, so ``SK < <now - 23 h>`` reads exactly those past their deadline,
    however many days the runs missed. One partition, as ``DisputeEntry``: only first
    payments the bank questions land here, and a partition per day would take the same
    day's writes all the same. Deleted once the subscription is confirmed or expired
    (whoever finds it settled deletes it); its TTL clears any left behind."""

    pk_template = KeyTemplate("INCOMPLETE")
    sk_template = KeyTemplate("{created}#{sub_id}")

    AccountId = UnicodeAttribute()
    SubId = UnicodeAttribute()
    SKU = UnicodeAttribute()  # the key's SKU (``Subscription.key_sku``): one GetItem
    ChargeId = UnicodeAttribute(null=True)
    CreatedDate = UnicodeAttribute()  # the subscription's, as in the key
    TTL = TTLAttribute(null=True)


class UsageEndEntry(BillingItem, discriminator="UsageEndEntry"):
    """A cancelled subscription with a metered price whose last period's usage is still to
    bill: no payment is left to carry it. Put in the cancel's own transaction. A cancel at
    period end's is due the day after its last day served; a cancel now's the next day,
    should its own attempt fail (declined, the processor unreachable: a declined charge is
    retried on ``PAYMENT_RETRY_DAYS``, each retry under its own key). The payment run bills
    the due ones (billing/operations/final_usage.py ``bill_ended_periods``) and deletes
    them. One partition sorted by the due day (``SK <= <today>~`` reads exactly those due,
    however many days the runs missed), as ``IncompleteEntry``. An entry whose subscription
    was kept, or cancelled now meanwhile (which billed the usage itself), is deleted by the
    run that finds it; its TTL clears any left behind."""

    pk_template = KeyTemplate("USAGE#ENDING")
    sk_template = KeyTemplate("{due}#{sub_id}")

    AccountId = UnicodeAttribute()
    SubId = UnicodeAttribute()
    SKU = UnicodeAttribute()  # the key's SKU (``Subscription.key_sku``): one GetItem
    LastDay = UnicodeAttribute()  # the last day served, billed through
    Mode = UnicodeAttribute(default="period_end")  # the cancel's ``CancelMode``: a later cancel now voids it
    Attempts = NumberAttribute(default=0)  # declined charges so far: each retry has a key of its own
    # The day the customer was reminded of this last charge (the reminder run's claim, so
    # two runs send it once); null until then, and on a retry's entry (never reminded).
    RemindedOn = UnicodeAttribute(null=True)
    # The first day a reminder run looks at it: the due day less the cadence's lead (the due
    # day itself for a cadence with no reminder, which no run reaches before the charge), so
    # the runs before it read no subscription. Null on an entry written before it was kept.
    RemindOn = UnicodeAttribute(null=True)
    # The day the merchant's ``invoice.upcoming`` of this last charge was written (its
    # claim, as ``RemindedOn`` the e-mail's): ``UPCOMING_INVOICE_DAYS`` before the charge.
    UpcomingNoticeOn = UnicodeAttribute(null=True)
    TTL = TTLAttribute(null=True)

    @property
    def due(self) -> date:
        """The payment run's day that bills it (the key's first part)."""
        return date.fromisoformat(self.SK.split("#", 1)[0])


class CouponStatus(StrEnum):
    ACTIVE = "active"
    ENDED = "ended"  # no new uses; subscriptions that have it keep it


class Coupon(BillingItem, discriminator="Coupon"):
    """A code staff made for subscriptions (docs/MONEY.md "Coupons"): one
    partition, so listing every coupon is one Query. ``Uses`` is counted by a conditional
    update in the same transaction as the write that gives it to a subscription."""

    pk_template = KeyTemplate("COUPONS")
    sk_template = KeyTemplate("CODE#{code}")

    Code = UnicodeAttribute()
    PercentOff = NumberAttribute(null=True)
    AmountOff = NumberAttribute(null=True)  # minor units of Currency
    Currency = UnicodeAttribute(null=True)  # only with AmountOff
    Duration = UnicodeAttribute()  # rules.coupons.CouponDuration
    DurationPayments = NumberAttribute(null=True)  # for "repeating"
    MaxUses = NumberAttribute(null=True)  # null: no limit
    Uses = NumberAttribute(default=0)
    # UTC days (YYYY-MM-DD), both included; text compares as dates in a condition.
    ValidFrom = UnicodeAttribute(null=True)
    ValidUntil = UnicodeAttribute(null=True)
    Status = UnicodeAttribute(default=CouponStatus.ACTIVE)
    CreatedDate = UnicodeAttribute()
    UpdatedDate = UnicodeAttribute(null=True)


class BatchKind(StrEnum):
    PAYMENTS = "payments"
    REMINDERS = "reminders"


class RunOutcome(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"  # an infrastructure error remained after retries
    INTERRUPTED = "interrupted"  # stopped by SIGTERM/SIGINT; the next run carries on
    # A "running" record whose lease ran out (the process was killed, or lost DynamoDB
    # before it could record its end); stored so by the next run, which reports it once.
    ABANDONED = "abandoned"


class BatchRun(BillingItem, discriminator="BatchRun"):
    """A record of one run of a daily batch (``Kind`` is a ``BatchKind``).

    One partition per kind, sorted by start time, so the history and the last
    completed run are one Query each.
    """

    pk_template = KeyTemplate("RUN#{kind}")
    sk_template = KeyTemplate("{started}#{run_id}")

    Kind = UnicodeAttribute()
    RunId = UnicodeAttribute()
    StartedAt = UnicodeAttribute()
    FinishedAt = UnicodeAttribute(null=True)
    FirstDate = UnicodeAttribute()
    LastDate = UnicodeAttribute()
    Outcome = UnicodeAttribute(default=RunOutcome.RUNNING)
    # A running run renews its lease (heartbeat); one whose lease has passed is abandoned.
    LeaseUntil = UnicodeAttribute(null=True)
    Counts = JSONAttribute(null=True)
    Failures = JSONAttribute(null=True)  # a list of {"subject": ..., "reason": ...}
    Host = UnicodeAttribute(null=True)
    # The due-index shards the run covered: ``ShardFirst``..``ShardLast`` of
    # ``ShardCount``. One record per process; none of the three: every shard (older runs).
    ShardFirst = NumberAttribute(null=True)
    ShardLast = NumberAttribute(null=True)
    ShardCount = NumberAttribute(null=True)

    def covers_shard(self, shard: int, count: int) -> bool:
        """Whether this run took the items of ``shard`` (of ``count``): a run over every
        shard of any count took every item; a partial run under another count, none known."""
        if self.ShardCount is None or self.ShardFirst is None or self.ShardLast is None:
            return True
        if self.ShardFirst == 0 and self.ShardLast == self.ShardCount - 1:
            return True
        return self.ShardCount == count and self.ShardFirst <= shard <= self.ShardLast

    def status_at(self, now_iso: str) -> RunOutcome:
        """The outcome as staff should read it at ``now_iso`` (UTC ISO-8601)."""
        if self.Outcome == RunOutcome.RUNNING and self.LeaseUntil and self.LeaseUntil < now_iso:
            return RunOutcome.ABANDONED
        return RunOutcome(self.Outcome)


class TableMeta(BillingItem, discriminator="TableMeta"):
    """Settings recorded with the table itself, so that every process agrees on them: the
    number of write shards of the due indexes (``DUE_SHARDS``), and while
    ``migrate_due_shards`` runs, the count it is moving to. One item, read once per process."""

    pk_template = KeyTemplate("META#TABLE")
    sk_template = KeyTemplate("META#TABLE")

    DueShards = NumberAttribute()
    # Set while a migration to another count runs: writers use it, readers read both.
    MigratingTo = NumberAttribute(null=True)
    UpdatedAt = UnicodeAttribute(null=True)


class AuditAction(StrEnum):
    """What an audit event records (``AuditEvent.Action``): one name per kind of change."""

    SUBSCRIPTION_CREATED = "subscription.created"
    PAYMENT_SUCCEEDED = "payment.succeeded"
    PAYMENT_DECLINED = "payment.declined"
    # A renewal the bank wants the customer to confirm (3-D Secure): past due, waiting for them.
    PAYMENT_ACTION_REQUIRED = "payment.action_required"
    PAID_AFTER_CANCEL = "payment.succeeded_after_cancel"
    PAYMENT_DAY_CHANGED = "subscription.payment_day_changed"
    CARD_REPLACED = "subscription.card_replaced"
    SUBSCRIPTION_CANCELLED = "subscription.cancelled"
    STAFF_CANCEL = "staff.cancel_subscription"
    SUBSCRIPTION_KEPT = "subscription.kept"  # a cancel at period end undone
    SUBSCRIPTION_SWITCHED = "subscription.switched"  # another product (billing/rules/switch.py)
    STAFF_SWITCH = "staff.switch_product"
    # A change of seats (billing/rules/seats.py): by the customer (or the API), by staff.
    QUANTITY_CHANGED = "subscription.quantity_changed"
    STAFF_QUANTITY = "staff.change_quantity"
    # An add-on added or removed from the next payment (billing/rules/add_ons.py), by
    # the customer, the API or staff (the event's actor says which).
    ADD_ON_ADDED = "subscription.add_on_added"
    ADD_ON_REMOVED = "subscription.add_on_removed"
    SUBSCRIPTION_PAUSED = "subscription.paused"
    SUBSCRIPTION_RESUMED = "subscription.resumed"
    STAFF_PAUSE = "staff.pause_subscription"
    STAFF_RESUME = "staff.resume_subscription"
    STAFF_PAYMENT_DAY = "staff.change_payment_day"
    STAFF_RETRY = "staff.retry_payment"
    STAFF_RETRY_FAILED = "staff.retry_payment_failed"
    STAFF_REFUND = "staff.refund"  # a refund made (recorded by access.record_refund)
    # The unused days a customer's own cancel now refunds them: theirs, not a staff refund.
    CANCEL_REFUND = "subscription.cancel_refund"
    STAFF_REFUND_FAILED = "staff.refund_failed"
    STAFF_REFUND_UNRECORDED = "staff.refund_unrecorded"
    # The wallet: the account's cards; a subscription's choice of card is
    # CARD_REPLACED above.
    CARD_ADDED = "card.added"
    CARD_UPDATED = "card.replaced"
    CARD_REMOVED = "card.removed"
    DEFAULT_CARD_CHANGED = "card.default_changed"
    # The card's bank sent new details (expiry, maybe number) through the processor
    # (Stripe's ``payment_method.automatically_updated``): same token, new brand/last4/expiry.
    CARD_UPDATED_BY_BANK = "card.updated_by_bank"
    # A card kept on a subscription only (made before the wallet) saved to the wallet: the
    # subscription now names it (its card does not change).
    CARD_SAVED = "subscription.card_saved_to_wallet"
    # A chargeback of a receipt's charge, as the payment processor reported it.
    DISPUTE_OPENED = "payment.dispute_opened"
    DISPUTE_CLOSED = "payment.dispute_closed"
    PRODUCT_CREATED = "staff.create_product"
    PRODUCT_UPDATED = "staff.update_product"
    PRODUCT_RETIRED = "staff.retire_product"
    COUPON_CREATED = "staff.create_coupon"
    COUPON_UPDATED = "staff.update_coupon"
    COUPON_ENDED = "staff.end_coupon"
    COUPON_APPLIED = "subscription.coupon_applied"
    # The first payment waits for the customer's bank (3-D Secure): incomplete, not live.
    SUBSCRIPTION_INCOMPLETE = "subscription.incomplete"
    # Unconfirmed after INCOMPLETE_HOURS: expired, it never started.
    SUBSCRIPTION_EXPIRED = "subscription.incomplete_expired"
    # Data rights (docs/PORTAL.md, "Your data"): a copy of the account's data made, the account closed.
    DATA_EXPORTED = "account.data_exported"
    STAFF_DATA_EXPORTED = "staff.export_data"
    ACCOUNT_CLOSED = "account.closed"
    STAFF_CLOSE_ACCOUNT = "staff.close_account"
    # The customer's billing country and VAT number (account and live subscriptions).
    TAX_IDENTITY_CHANGED = "account.tax_identity_changed"
    # The seller's business and tax profile (filed under ``SELLER_EVENTS_ACCOUNT``).
    SELLER_PROFILE_CHANGED = "staff.seller_profile"


# Catalogue changes belong to no customer: their audit events are filed in the
# pseudo-account partition ``ACC#CATALOG`` (not the product partition ``CATALOG``).
CATALOG_EVENTS_ACCOUNT = "CATALOG"
# Coupon changes likewise, in ``ACC#COUPONS`` (a coupon applied is in its account's).
COUPON_EVENTS_ACCOUNT = "COUPONS"
# The seller's profile changes likewise, in ``ACC#SELLER``.
SELLER_EVENTS_ACCOUNT = "SELLER"


class AuditEvent(BillingItem, discriminator="Event"):
    """Something that happened to an account: who, what, when, before and after."""

    pk_template = ACCOUNT_PK
    sk_template = KeyTemplate("EVT#{at}#{event_id}")

    At = UnicodeAttribute()
    Actor = UnicodeAttribute()
    Action = UnicodeAttribute()
    Subject = UnicodeAttribute(null=True)
    Before = JSONAttribute(null=True)
    After = JSONAttribute(null=True)
    Note = UnicodeAttribute(null=True)


class ApiKeyScope(StrEnum):
    READ = "read"
    WRITE = "write"  # reads too


class ApiKey(BillingItem, discriminator="ApiKey"):
    """A key of the REST API (docs/API.md): only the SHA-256 of the secret is kept, so the
    table never holds a usable key. One partition, so a call's look-up is one GetItem by
    the hash and the staff list is one Query (keys are few: made by hand)."""

    pk_template = KeyTemplate("APIKEYS")
    sk_template = KeyTemplate("KEY#{key_hash}")

    KeyId = UnicodeAttribute()  # the first characters of the hash: what staff and the command name it by
    Name = UnicodeAttribute()
    Scope = UnicodeAttribute()  # an ApiKeyScope
    Prefix = UnicodeAttribute()  # the key's first characters, shown so a person can tell keys apart
    CreatedAt = UnicodeAttribute()
    CreatedBy = UnicodeAttribute()
    # Written at most once a minute (a conditional UpdateItem), so reads stay one GetItem.
    LastUsedAt = UnicodeAttribute(null=True)
    RevokedAt = UnicodeAttribute(null=True)
    RevokedBy = UnicodeAttribute(null=True)

    key_hash = KeyPart(sk_template, "SK")

    @property
    def revoked(self) -> bool:
        return bool(self.RevokedAt)


class ApiRateWindow(BillingItem, discriminator="ApiRateWindow"):
    """A key's calls in one fixed window (``API_RATE_LIMIT`` per ``API_RATE_WINDOW_SECONDS``):
    one conditional UpdateItem ``ADD Calls :1`` per call, refused at the limit. The web
    processes share nothing but the table, so the counter lives here; its TTL clears it."""

    pk_template = KeyTemplate("APIRATE#{key_id}#{window}")
    sk_template = KeyTemplate("APIRATE#{key_id}#{window}")

    Calls = NumberAttribute(default=0)
    TTL = TTLAttribute(null=True)


class ApiIdempotency(BillingItem, discriminator="ApiIdempotency"):
    """An ``Idempotency-Key`` of one API key: put (only if absent or expired) before the
    write runs, holding the request's fingerprint; then its answer. A repeat within 24
    hours replays the answer; another request with the same key is refused."""

    pk_template = KeyTemplate("APIIDEM#{key_id}#{idempotency_key}")
    sk_template = KeyTemplate("APIIDEM#{key_id}#{idempotency_key}")

    Fingerprint = UnicodeAttribute()  # SHA-256 of the method, path and body
    State = UnicodeAttribute()  # "running", then "done"
    StartedAt = UnicodeAttribute()
    ResponseStatus = NumberAttribute(null=True)
    ResponseBody = UnicodeAttribute(null=True)  # the JSON answer, as sent
    ExpiresAt = NumberAttribute()  # epoch seconds: a condition compares it (TTL deletes lazily)
    TTL = TTLAttribute(null=True)


class MerchantEventType(StrEnum):
    """What a merchant's systems hear (``MerchantEvent.Type``): the webhooks' and the API's
    event types. Each is written in the same transaction as the change it reports
    (billing/access/outbox.py)."""

    SUBSCRIPTION_CREATED = "subscription.created"
    SUBSCRIPTION_ACTIVATED = "subscription.activated"  # its first payment confirmed
    SUBSCRIPTION_UPDATED = "subscription.updated"  # payment day, card, coupon, a cancel undone
    SUBSCRIPTION_SWITCHED = "subscription.switched"
    SUBSCRIPTION_PAUSED = "subscription.paused"
    SUBSCRIPTION_RESUMED = "subscription.resumed"
    SUBSCRIPTION_CANCEL_SCHEDULED = "subscription.cancel_scheduled"  # ends at the end of the paid period
    SUBSCRIPTION_CANCELLED = "subscription.cancelled"
    SUBSCRIPTION_TRIAL_WILL_END = "subscription.trial_will_end"
    PAYMENT_SUCCEEDED = "payment.succeeded"
    PAYMENT_FAILED = "payment.failed"
    PAYMENT_ACTION_REQUIRED = "payment.action_required"
    REFUND_CREATED = "refund.created"
    DISPUTE_CREATED = "dispute.created"
    DISPUTE_CLOSED = "dispute.closed"
    INVOICE_CREATED = "invoice.created"
    # A metered subscription's coming payment (the upcoming endpoint's object), with its reminder.
    INVOICE_UPCOMING = "invoice.upcoming"


# An event's id: ``evt_`` + the UTC time of the change to the microsecond + 8 random hex
# digits. Fixed width, so ids sort by time, across days too (``events_after``).
MERCHANT_EVENT_ID = KeyTemplate("evt_{stamp}Z_{suffix}")


class MerchantEvent(BillingItem, discriminator="MerchantEvent"):
    """One event for the merchant's systems (the outbox): written in the same
    TransactWriteItems as the change it reports, so neither exists without the other.
    One partition per UTC day, sorted by id (= by time): ``events_after`` reads them in
    order with one Query per day, never a Scan (docs/TABLE.md)."""

    pk_template = KeyTemplate("EVT#{day}")
    sk_template = MERCHANT_EVENT_ID

    EventId = UnicodeAttribute()  # = SK
    Type = UnicodeAttribute()  # a MerchantEventType
    CreatedAt = UnicodeAttribute()  # UTC ISO-8601, to the microsecond, as in the id
    AccountId = UnicodeAttribute()
    ObjectType = UnicodeAttribute()  # subscription, receipt, payment, refund, dispute
    ObjectId = UnicodeAttribute()
    Data = JSONAttribute()  # the object as the API shows it (billing/rules/api_objects.py), at that moment
    TTL = TTLAttribute(null=True)  # MERCHANT_EVENT_RETENTION_DAYS after it was made

# --- outbound webhooks (docs/TABLE.md, "Outbound webhooks") ------------------------------


class EndpointStatus(StrEnum):
    ENABLED = "enabled"
    DISABLED = "disabled"


class WebhookEndpoint(BillingItem, discriminator="WebhookEndpoint"):
    """A merchant's URL that hears the ``MerchantEvent`` stream, signed by the Standard
    Webhooks scheme. One partition for every endpoint, so listing them (the staff page, each
    pass of the sender) is one Query: a site has tens of endpoints, never thousands.

    The secret is stored as it is (``whsec_<base64>``), not hashed: the sender needs it to sign
    every delivery (an HMAC key, unlike an API key, cannot be checked against a hash). The
    table is encrypted at rest and only the web and batch roles read it; the pages show a
    secret once, when it is made."""

    pk_template = KeyTemplate("WHENDPOINTS")
    sk_template = KeyTemplate("EP#{endpoint_id}")

    EndpointId = UnicodeAttribute()
    Url = UnicodeAttribute()
    Description = UnicodeAttribute(null=True)
    # The event types it wants; absent: every type.
    EventTypes = ListAttribute(of=UnicodeAttribute, null=True)
    Secret = UnicodeAttribute()
    # After a rotation the old secret signs beside the new one until this time (UTC ISO).
    PreviousSecret = UnicodeAttribute(null=True)
    PreviousSecretUntil = UnicodeAttribute(null=True)
    Status = UnicodeAttribute(default=EndpointStatus.ENABLED)
    # The fan-out cursor: the last MerchantEvent id turned into this endpoint's deliveries.
    Cursor = UnicodeAttribute()
    # Every delivery whose key is at or before this is finished (succeeded or abandoned):
    # the sender reads the endpoint's queue from here. Never after ``Cursor`` (billing/access/endpoints.py).
    DoneThrough = UnicodeAttribute()
    FailingSince = UnicodeAttribute(null=True)  # the first failure of the current run of failures
    DisabledAt = UnicodeAttribute(null=True)
    DisabledReason = UnicodeAttribute(null=True)  # "failing" (by the sender) or "staff"
    # Counts the deliveries put just after the cursor (a test event, a resend): the sender's
    # move of ``DoneThrough`` is conditioned on it, so it never steps over one it has not read.
    Inserts = NumberAttribute(default=0)
    # Attempts by outcome, added once per endpoint per pass of the sender: /metrics sums them.
    SucceededCount = NumberAttribute(null=True)
    FailedCount = NumberAttribute(null=True)
    AbandonedCount = NumberAttribute(null=True)
    CreatedAt = UnicodeAttribute()
    CreatedBy = UnicodeAttribute()
    UpdatedAt = UnicodeAttribute(null=True)

    @property
    def enabled(self) -> bool:
        return self.Status == EndpointStatus.ENABLED

    def wants(self, event_type: str) -> bool:
        return not self.EventTypes or event_type in self.EventTypes


class DeliveryStatus(StrEnum):
    PENDING = "pending"  # not tried yet (or its attempt is in hand: ``LeaseUntil``)
    FAILED = "failed"  # its last attempt failed; tried again at ``NextAttemptAt``
    SUCCEEDED = "succeeded"
    ABANDONED = "abandoned"  # failed for WEBHOOK_RETRY_DAYS: no more attempts (Resend makes one)


UNFINISHED_DELIVERIES = (DeliveryStatus.PENDING, DeliveryStatus.FAILED)


class WebhookDelivery(BillingItem, discriminator="WebhookDelivery"):
    """One event for one endpoint, and how its attempts went: the endpoint's queue and its
    delivery log at once. One partition per endpoint, sorted by the event's id (ids sort by
    time), so "oldest first" is the partition's order and the log is one Query, newest
    first. A test event or a resend gets a key just after the endpoint's cursor
    (``<cursor>~<time>_<hex>``): after everything already queued, before any event to come.

    An attempt is claimed by one conditional UpdateItem (status unfinished, ``Attempts``
    as read, no live lease), which counts it and takes a lease: of several senders only one
    makes each attempt, and a sender killed mid-attempt loses the lease, not the delivery."""

    pk_template = KeyTemplate("WHDELIVERIES#{endpoint_id}")
    sk_template = KeyTemplate("{position}")

    EventId = UnicodeAttribute()
    EventType = UnicodeAttribute()
    # The event's body as sent (JSON text): fixed at fan-out, so every attempt signs the same bytes.
    Payload = UnicodeAttribute()
    Status = UnicodeAttribute(default=DeliveryStatus.PENDING)
    Attempts = NumberAttribute(default=0)
    CreatedAt = UnicodeAttribute()
    NextAttemptAt = UnicodeAttribute(null=True)
    FirstAttemptAt = UnicodeAttribute(null=True)
    LeaseUntil = UnicodeAttribute(null=True)
    LeaseOwner = UnicodeAttribute(null=True)
    LastAttemptAt = UnicodeAttribute(null=True)
    LastStatusCode = NumberAttribute(null=True)
    LastResponse = UnicodeAttribute(null=True)  # the first 1 KB of the answer, or why there was none
    LastDurationMs = NumberAttribute(null=True)
    DeliveredAt = UnicodeAttribute(null=True)
    Kind = UnicodeAttribute(null=True)  # "test" or "resend"; absent: an event of the stream
    TTL = TTLAttribute(null=True)

    endpoint_id = KeyPart(pk_template)

    @property
    def finished(self) -> bool:
        return self.Status not in UNFINISHED_DELIVERIES


class SellerProfile(BillingItem, discriminator="SellerProfile"):
    """The seller's business and tax profile (the staff page "Business & tax"): one item,
    read once per payment run. Absent: the settings ``RPAY_SELLER`` and
    ``RPAY_SELLER_COUNTRY`` (billing/access/seller.py)."""

    pk_template = KeyTemplate("SELLER#profile")
    sk_template = KeyTemplate("SELLER#profile")

    LegalName = UnicodeAttribute()
    Address = UnicodeAttribute(null=True)
    Country = UnicodeAttribute()  # ISO 3166 alpha-2
    VatNumber = UnicodeAttribute(null=True)  # compact, with its prefix
    OssRegistered = BooleanAttribute(default=True)
    # Under EUR 10,000 of cross-border EU consumer sales a year, charging its own VAT.
    UnderThreshold = BooleanAttribute(default=False)
    PricesIncludeTax = BooleanAttribute(default=True)
    # Countries outside the EU the seller is registered in: country -> percent ("20", "7.7").
    Registrations = MapAttribute(null=True)
    UpdatedAt = UnicodeAttribute(null=True)
    Version = VersionAttribute()


ENTITIES: tuple[type[BillingItem], ...] = (
    Account, UserLink, Subscription, Receipt, Product, BatchRun, AuditEvent, SubIdLookup, TableMeta,
    Card, ReceiptCounter, ReceiptNumberLookup, WebhookEvent, DisputeEntry, Coupon, TrialUse, ApiKey,
    ApiRateWindow, ApiIdempotency, MerchantEvent, WebhookEndpoint, WebhookDelivery, CreditNote, CreditNoteCounter,
    TaxTotal, SellerProfile,
)


def configure(**settings: Any) -> None:
    """Point every billing entity at its table (``table_name``) on the engine
    (``region``, ``host``, retries, pool, timeouts: ``core.dynamo.engine.configure``)."""
    engine.configure(BillingItem, ENTITIES, **settings)


# --- Django permission holder (staff) ----------------------------------------------------
# Billing data is not in Django's database, but Django's permissions need a model to
# hang on. This one has no table (managed = False); its migrations only give the staff
# permissions a content type and Permission rows, and make the three role groups
# (support, finance, catalog: billing/migrations/0003_staff_roles.py).
from django.db import models as django_models  # noqa: E402


class BillingPermission(django_models.Model):
    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("view_billing", "Can view customers' billing pages, upcoming payments and batch runs"),
            ("cancel_subscription", "Can cancel a customer's subscription"),
            ("change_payment_day", "Can change a subscription's payment day"),
            # The finance permission; its codename predates the roles and is kept.
            ("manage_money", "Can refund and retry payments"),
            ("manage_catalog", "Can add, edit and retire products"),
            # The admin role (billing/migrations/0004_admin_role.py): the merchant's integrations.
            ("manage_integrations", "Can manage webhook endpoints and API keys"),
        ]

    def __str__(self) -> str:
        return "billing permissions"


# --- metered usage (docs/USAGE.md) ---------------------------------------------------------
from decimal import Decimal  # noqa: E402


class MeterAggregation(StrEnum):
    """How a meter turns a period's events into one quantity (billing/rules/usage.py)."""

    COUNT = "count"  # the events
    SUM = "sum"  # of their values
    MAX = "max"  # the largest value
    UNIQUE_COUNT = "unique_count"  # the distinct values
    LAST = "last"  # the value of the latest event by its timestamp


class DecimalAttribute(NumberAttribute):
    """A number kept exactly (PynamoDB's NumberAttribute goes through JSON floats): usage
    values and their sums are ``Decimal``s, as DynamoDB stores them (38 digits)."""

    def serialize(self, value: Any) -> str:
        return str(Decimal(value))

    def deserialize(self, value: str) -> Decimal:  # type: ignore[override]
        return Decimal(value)


# Every item of one account's usage of one meter: the day aggregates, the distinct-value
# markers and the "billed through" watermark (docs/TABLE.md, "Metered usage").
USAGE_PK = KeyTemplate("USAGE#{account_id}#{event_name}")


class Meter(BillingItem, discriminator="Meter"):
    """A meter: the events named ``EventName`` and how they aggregate. One partition (meters
    are few, made by staff or the API), so the list is one Query and an event's meter one GetItem."""

    pk_template = KeyTemplate("METERS")
    sk_template = KeyTemplate("{event_name}")

    EventName = UnicodeAttribute()  # = SK
    Name = UnicodeAttribute()
    Aggregation = UnicodeAttribute()  # a MeterAggregation
    CreatedAt = UnicodeAttribute()
    CreatedBy = UnicodeAttribute()


class MeterEventRecord(BillingItem, discriminator="MeterEventRecord"):
    """A usage event as first received: put only if absent (or past ``ExpiresAt``) in the
    same TransactWriteItems as the aggregate it moves, so a repeated identifier counts once.
    Kept 35 days (the oldest timestamp an event may carry)."""

    pk_template = KeyTemplate("MEVT#{account_id}#{identifier}")
    sk_template = KeyTemplate("MEVT#{account_id}#{identifier}")

    EventName = UnicodeAttribute()
    # The number as sent; a unique_count meter's value (text that may name a person) only as
    # ``sha256:<its hash>`` (``access.usage.recorded_value``). Older records: as sent.
    Value = UnicodeAttribute(null=True)
    Timestamp = NumberAttribute()  # Unix seconds, the event's own
    Day = UnicodeAttribute()  # Timestamp's day in BILLING_TIMEZONE: the aggregate it went to
    ReceivedAt = UnicodeAttribute()
    ExpiresAt = NumberAttribute()  # epoch seconds: a condition compares it (TTL deletes lazily)
    TTL = TTLAttribute(null=True)


class UsageAggregate(BillingItem, discriminator="UsageAggregate"):
    """One billing day (``BILLING_TIMEZONE``'s) of one account's usage of one meter, in one of ``USAGE_SHARDS`` write
    shards (CRC-32 of the identifier): moved only inside an event's transaction. A period's
    usage is one Query over its days, merging the shards (billing/rules/usage.py)."""

    pk_template = USAGE_PK
    sk_template = KeyTemplate("{day}#{shard}")

    Events = NumberAttribute(default=0)  # every meter: the events counted
    Sum = DecimalAttribute(null=True)  # sum
    Max = DecimalAttribute(null=True)  # max: raised only by a larger value (a conditional SET)
    Last = DecimalAttribute(null=True)  # last: the value of the latest (LastAt, LastId)
    LastAt = NumberAttribute(null=True)
    LastId = UnicodeAttribute(null=True)  # the tie-break of two events in one second

    account_id = KeyPart(USAGE_PK)


class UsageValueMarker(BillingItem, discriminator="UsageValueMarker"):
    """A unique_count meter's value seen on a day (its SHA-256, so any text fits a key):
    put in the event's transaction; a period's distinct values are counted when read."""

    pk_template = USAGE_PK
    sk_template = KeyTemplate("U#{day}#{value_hash}")


class UsageBilledThrough(BillingItem, discriminator="UsageBilledThrough"):
    """The last day of one account's usage of one meter that has been billed, one copy per
    write shard: every event's transaction checks its day is after its shard's copy, so no
    event lands in a period already billed, and one customer's events spread their checks
    over the shards as their updates. Only ever advanced, all shards (``mark_billed``)."""

    pk_template = USAGE_PK
    sk_template = KeyTemplate("BILLED#{shard}")

    BilledThrough = UnicodeAttribute()  # YYYY-MM-DD
    UpdatedAt = UnicodeAttribute(null=True)


ENTITIES = (*ENTITIES, Meter, MeterEventRecord, UsageAggregate, UsageValueMarker, UsageBilledThrough)


# --- a product's prices (docs/PRICING.md) ---------------------------------------------------


class PriceStatus(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"


class PriceTierMap(MapAttribute):
    """One tier of a tiered price (billing/rules/pricing.py ``Tier``)."""

    UpTo = NumberAttribute(null=True)  # the last unit in the tier; null: no end (Stripe's inf)
    UnitAmount = UnicodeAttribute()  # minor units as a decimal string ("0.2"): kept exact
    FlatAmount = NumberAttribute(default=0)  # minor units, for the tier


class Price(BillingItem, discriminator="Price"):
    """A price of a product, in the catalog's partition beside the product: a product's
    prices are one Query (``PRICE#<SKU>#``). Its amounts never change: archive it and add
    another, as Stripe does. The id holds the SKU (``price_<SKU>_<random>``), so a price is
    one GetItem by its id alone."""

    pk_template = KeyTemplate("CATALOG")
    sk_template = KeyTemplate("PRICE#{sku}#{price_id}")

    PriceId = UnicodeAttribute()
    SKU = UnicodeAttribute()
    Currency = UnicodeAttribute()
    # per_unit: whole minor units (null when a fraction of one: then UnitAmountDecimal);
    # UnitAmountDecimal: the unit amount as a decimal string when it is not whole ("0.2").
    UnitAmount = NumberAttribute(null=True)
    UnitAmountDecimal = UnicodeAttribute(null=True)
    Interval = UnicodeAttribute()  # day, week, month, year
    IntervalCount = NumberAttribute(default=1)
    BillingScheme = UnicodeAttribute()  # per_unit, tiered
    TiersMode = UnicodeAttribute(null=True)  # graduated, volume
    Tiers = ListAttribute(of=PriceTierMap, null=True)
    PackageSize = NumberAttribute(null=True)  # Stripe's transform_quantity.divide_by, rounded up
    UnitLabel = UnicodeAttribute(null=True)  # what one unit is called ("seat", "call")
    TrialDays = NumberAttribute(null=True)
    MinQuantity = NumberAttribute(null=True)
    MaxQuantity = NumberAttribute(null=True)
    Meter = UnicodeAttribute(null=True)  # a metered price: its meter's event name
    # Stripe's tax_behavior: "inclusive" or "exclusive"; null: unspecified, as the seller's
    # profile says at each charge (billing/rules/tax.py ``TaxBehavior``). Never changes.
    TaxBehavior = UnicodeAttribute(null=True)
    Status = UnicodeAttribute(default=PriceStatus.ACTIVE)
    CreatedDate = UnicodeAttribute()
    Nickname = UnicodeAttribute(null=True)


ENTITIES = (*ENTITIES, Price)


# --- Revenue rollups (docs/ANALYTICS.md, "Kept figures") ----------------------------------


class RevenueRollup(BillingItem, discriminator="RevenueRollup"):
    """One day's revenue figures of one shard of the customers (a customer's shard is fixed
    by its account id), written by ``manage.py revenue_rebuild``. A month's days are one
    partition, so a month is one Query; the shards are added up on read. ``Figures``: per
    currency, ``{"mrr", "new", "expansion", "contraction", "churn", "reactivation",
    "paying", "new_customers", "churned_customers", "reactivated_customers"}`` in minor units
    and counts; ``Paying``: the shard's customers paying in any currency at the day's close;
    ``DayCounts``: the page's other counts of the day (customers in any currency, trials,
    past-due episodes, subscriptions not counted; only those above 0); ``DayMoney``: per
    currency, the day's refunds and disputes (only currencies that had one)."""

    pk_template = KeyTemplate("REVENUE#{month}")
    sk_template = KeyTemplate("{day}#{shard}")

    Figures = MapAttribute(default=dict)
    Paying = NumberAttribute(default=0)
    DayCounts = MapAttribute(default=dict)
    DayMoney = MapAttribute(default=dict)
    Shards = NumberAttribute()  # how many shards the day was cut into when written
    RebuiltAt = UnicodeAttribute()
    # per currency, the usage billed by the charges paid on the day, net of tax; absent on an
    # item written before it was kept: readers recompute (docs/ANALYTICS.md, "Usage revenue")
    Usage = MapAttribute(null=True)


ENTITIES = (*ENTITIES, RevenueRollup)


class RevenueCohort(BillingItem, discriminator="RevenueCohort"):
    """One cohort month's retention, kept by ``manage.py revenue_rebuild`` (docs/ANALYTICS.md,
    "Kept figures"): the customers whose first paying day fell in ``month`` and how many of
    them pay at the close of each month since (index 0: the cohort's own month), each month
    closing on its last day or on ``Through`` (the rebuild's last day), whichever is first.
    ``Members`` and ``Retained`` per currency (a cohort of that currency's first payments) and
    under ``*`` (any currency); ``Mrr``: each currency's cohort's MRR in it at the same closes.
    One partition, so a range of cohorts is one Query. The same items kept for one product
    or one price interval (the Revenue page's filters) have a partition each
    (``scoped_pk_template``: ``REVENUE#COHORTS#PRODUCT#<SKU>``, ``...#INTERVAL#year``)."""

    pk_template = KeyTemplate("REVENUE#COHORTS")
    scoped_pk_template = KeyTemplate("REVENUE#COHORTS#{dimension}#{value}")
    sk_template = KeyTemplate("{month}")
    # one part's row of a rebuild split over processes (``Shards`` parts)
    part_sk_template = KeyTemplate("{month}#{part}")

    Through = UnicodeAttribute()
    Members = MapAttribute(default=dict)
    Retained = MapAttribute(default=dict)
    Mrr = MapAttribute(default=dict)
    # A rebuild split over processes (``REVENUE_REBUILD_PARTS``) keeps one item per part,
    # ``SK=<month>#<part>``, with the number of parts here; absent: one item, ``SK=<month>``.
    Shards = NumberAttribute(null=True)
    RebuiltAt = UnicodeAttribute()


ENTITIES = (*ENTITIES, RevenueCohort)


class RevenueMonth(BillingItem, discriminator="RevenueMonth"):
    """One month's revenue figures of one shard of the customers, to ``Close`` (its last day,
    or the rebuild's last day for the month it ran in), kept by ``manage.py revenue_rebuild``
    from its days' rollups: ``Figures``, ``Paying``, ``MonthCounts`` and ``MonthMoney`` as a
    ``RevenueRollup``'s, the day's amounts and counts summed over the month's days, the
    levels (``mrr``, ``paying``; ``lost``, ``trial``, ``paused``) those of ``Close``. Every
    month is one partition, so a year of months is one Query of 16 items a month. The months
    kept for one product or one price interval have a partition each (``scoped_pk_template``),
    one shard a month: only the rebuild writes them."""

    pk_template = KeyTemplate("REVENUE#MONTHS")
    scoped_pk_template = KeyTemplate("REVENUE#MONTHS#{dimension}#{value}")
    sk_template = KeyTemplate("{month}#{shard}")

    Close = UnicodeAttribute()
    Figures = MapAttribute(default=dict)
    Paying = NumberAttribute(default=0)
    MonthCounts = MapAttribute(default=dict)
    MonthMoney = MapAttribute(default=dict)
    Shards = NumberAttribute()
    RebuiltAt = UnicodeAttribute()
    Usage = MapAttribute(null=True)  # as a ``RevenueRollup``'s, summed over the month's days


ENTITIES = (*ENTITIES, RevenueMonth)


class RevenueViews(BillingItem, discriminator="RevenueViews"):
    """The views (``<PRODUCT|INTERVAL|CURRENCY>#<value>``) whose months and cohorts a rebuild
    split over processes keeps: every part adds those its own customers were ever in and
    keeps them all, so that each view has every part's months even where a part's customers
    were never in it (docs/ANALYTICS.md, "A rebuild split over processes")."""

    pk_template = KeyTemplate("REVENUE#VIEWS")
    sk_template = KeyTemplate("VIEWS")

    Views = UnicodeSetAttribute(null=True)


ENTITIES = (*ENTITIES, RevenueViews)


class RevenueViewDays(BillingItem, discriminator="RevenueViewDays"):
    """One month of one view's days (a product, a price interval, a currency, or some of
    them together), of one part of the rebuild, kept by ``manage.py revenue_rebuild``:
    ``Days``, JSON text, each day of the month from its first to ``Close`` with what a
    ``RevenueRollup`` holds (``figures``, ``paying``, ``counts``, ``money``): one text
    attribute, not a map, as it is only ever read whole. One item a
    month, not one a day: a view's days are read with one Query whatever the range (a
    year's, 13 items), and a night rewrites its month's item (a few KB: about 500 bytes a
    day at three currencies)."""

    pk_template = KeyTemplate("REVENUE#DAYS#{dimension}#{value}")
    sk_template = KeyTemplate("{month}#{shard}")

    Close = UnicodeAttribute()
    Days = JSONAttribute()
    Shards = NumberAttribute()
    RebuiltAt = UnicodeAttribute()


ENTITIES = (*ENTITIES, RevenueViewDays)
