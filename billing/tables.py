"""The billing table as the engine knows it, registered at start-up (billing/apps.py)
so that ``setup_dynamodb``, ``export_workbench_model`` and the tests' fixtures find it;
and as a NoSQL Workbench table model (the format of the seed's RecurringPaymentsSchema.json):
``core.dynamo.workbench`` builds it from the models, this module gives the sample items.
``export_workbench_model`` writes it; the tests compare it with the live table's
description."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from django.conf import settings

from billing import access
from billing.models import (
    ENTITIES,
    Account,
    ApiIdempotency,
    ApiKey,
    ApiRateWindow,
    AuditAction,
    AuditEvent,
    BatchRun,
    BillingItem,
    Card,
    Coupon,
    CreditNote,
    CreditNoteCounter,
    DisputeEntry,
    MerchantEvent,
    Meter,
    MeterEventRecord,
    PaymentDetails,
    Price,
    PriceTierMap,
    Product,
    Receipt,
    ReceiptCounter,
    ReceiptNumberLookup,
    RevenueCohort,
    RevenueMonth,
    RevenueRollup,
    RevenueViewDays,
    RevenueViews,
    SellerMap,
    SellerProfile,
    SubIdLookup,
    Subscription,
    SubscriptionStatus,
    TableMeta,
    TaxLineMap,
    TaxTotal,
    TrialUse,
    UsageAggregate,
    UsageBilledThrough,
    UsageValueMarker,
    UserLink,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from core.dynamo import workbench
from core.dynamo.table import RegisteredTable, enable_ttl, register, ttl_status


def _sample_items() -> dict[type[BillingItem], list[BillingItem]]:
    """A few made-up items per entity, keyed through each entity's own templates.
    The card is a gateway token and last four digits: never a card number (invariant 3)."""
    acc = "7f3a9c2e41d05b68"
    acc2 = "0b1d2e3f4a5b6c7d"
    card = PaymentDetails(Token="tok_sim_5e1f0c9a", Brand="Visa", Last4="4242", ExpMonth=12, ExpYear=2029,
                          BillingAddress="12 Bridge Street, Birmingham, B12 7ST")

    def sub(account_id: str, sub_id: str, sku: str, day: int, amount: int, currency: str, nxt: str,
            status: SubscriptionStatus = SubscriptionStatus.ACTIVE) -> Subscription:
        item = access.due_subscription(
            account_id, sub_id, due=date.fromisoformat(nxt), card=card, sku=sku, product_name=sku.title(),
            email="customer@rpay.localhost", payment_day=day, amount=amount, currency=currency,
            shards=settings.DUE_SHARDS)  # made from the code: the table is never read
        item.CreatedDate, item.Version = "2026-03-01T09:41:25+00:00", 3
        if status == SubscriptionStatus.CANCELLED:
            # An ended subscription leaves both indexes: no Next* keys (docs/TABLE.md, "Sparse indexes").
            item.Status = status
            for name, value in access.no_due_attributes().items():
                setattr(item, name, value)
            item.CancelledDate, item.CancelReason = "2026-11-02T10:00:00+00:00", "customer"
        return item

    def receipt(account_id: str, sub_id: str, sku: str, billed: str, amount: int, currency: str,
                number: str) -> Receipt:
        return Receipt(
            Receipt.pk(account_id=account_id), Receipt.sk(billing_date=billed, sku=sku, sub_id=sub_id),
            sub_id=sub_id, SKU=sku, ProductName=sku.title(), Email="customer@rpay.localhost",
            BillingDate=billed, ProcessedDate=f"{billed}T06:00:02+00:00", ProcessedAmount=amount,
            Currency=currency, ChargeId="ch_sim_9d8c7b6a5f4e", CardBrand="Visa", CardLast4="4242",
            Status="paid", RefundedAmount=0, TTL=datetime(2027, 5, 19, tzinfo=UTC), Number=number,
        )

    coupon_sub = sub(acc, "a1b2c3d4e5f60718", "NEWS-DAILY", 31, 999, "USD", "2026-11-30")
    coupon_sub.CouponCode, coupon_sub.CouponPercentOff, coupon_sub.CouponPaymentsLeft = "WELCOME20", 20, 2
    return {
        Account: [
            Account(Account.pk(account_id=acc), Account.sk(account_id=acc), Email="customer@rpay.localhost",
                    Name="Customer", UserId=2, CreatedDate="2026-03-01T09:40:00+00:00", BillingCountry="IT",
                    CardCountry="US"),
            Account(Account.pk(account_id=acc2), Account.sk(account_id=acc2), Email="ada@example.com",
                    Name="Ada", UserId=3, CreatedDate="2026-03-02T11:00:00+00:00", BillingCountry="DE",
                    VatNumber="DE136695976", VatNumberCheck="vies", VatCheckedAt="2026-03-02"),
        ],
        SellerProfile: [SellerProfile(
            SellerProfile.pk(), SellerProfile.sk(), LegalName="rpay S.r.l.", Address="Via Roma 1\n20121 Milano",
            Country="IT", VatNumber="IT00743110157", OssRegistered=True, UnderThreshold=False,
            PricesIncludeTax=True, Registrations={"GB": "20", "KR": "10"},
            UpdatedAt="2026-10-01T09:00:00+00:00", Version=2)],
        SubIdLookup: [
            SubIdLookup(SubIdLookup.pk(sub_id=sid), SubIdLookup.sk(sub_id=sid), AccountId=acc, SKU=sku)
            for sid, sku in (("a1b2c3d4e5f60718", "NEWS-DAILY"), ("18e9374a55c47382", "CLOUD-200"))
        ],
        Card: [Card(Card.pk(account_id=acc), Card.sk(card_id="c4d5e6f7a8b9c0d1"), CreatedDate="2026-03-01T09:41:00+00:00",
                    Details=PaymentDetails(Token="tok_sim_5e1f0c9a", Brand="Visa", Last4="4242", ExpMonth=12,
                                           ExpYear=2029, BillingAddress="12 Bridge Street, Birmingham, B12 7ST",
                                           CardId="c4d5e6f7a8b9c0d1"))],
        UserLink: [UserLink(UserLink.pk(user_id=2), UserLink.sk(user_id=2), AccountId=acc,
                            Email="customer@rpay.localhost")],
        Subscription: [
            coupon_sub,
            sub(acc, "18e9374a55c47382", "CLOUD-200", 29, 299, "EUR", "2026-11-29"),
            sub(acc, "99aa88bb77cc66dd", "MUSIC-FAMILY", 15, 1699, "USD", "2026-11-15",
                status=SubscriptionStatus.CANCELLED),
        ],
        Receipt: [
            receipt(acc, "a1b2c3d4e5f60718", "NEWS-DAILY", "2026-10-31", 999, "USD", "R-2026-S07-004211"),
            receipt(acc, "18e9374a55c47382", "CLOUD-200", "2026-10-29", 299, "EUR", "R-2026-S07-004187"),
        ],
        ReceiptCounter: [ReceiptCounter(ReceiptCounter.pk(year=2026, series="07"),
                                        ReceiptCounter.sk(year=2026, series="07"), LastNumber=4300)],
        ReceiptNumberLookup: [
            ReceiptNumberLookup(
                ReceiptNumberLookup.pk(number=number), ReceiptNumberLookup.sk(number=number), AccountId=acc,
                ReceiptSK=Receipt.sk(billing_date=billed, sku=sku, sub_id=sid), TTL=datetime(2027, 5, 19, tzinfo=UTC))
            for number, billed, sku, sid in (("R-2026-S07-004211", "2026-10-31", "NEWS-DAILY", "a1b2c3d4e5f60718"),
                                             ("R-2026-S07-004187", "2026-10-29", "CLOUD-200", "18e9374a55c47382"))
        ],
        Product: [
            Product(Product.pk(), Product.sk(sku="NEWS-DAILY"), SKU="NEWS-DAILY", Name="Daily News digital",
                    PaymentAmount=999, Currency="USD", Status="active", CreatedDate="2026-01-01T00:00:00+00:00"),
            Product(Product.pk(), Product.sk(sku="GYM-CITY"), SKU="GYM-CITY", Name="City Gym membership",
                    PaymentAmount=4500, Currency="GBP", Status="retired", CreatedDate="2026-01-01T00:00:00+00:00"),
            Product(Product.pk(), Product.sk(sku="CLOUD-200"), SKU="CLOUD-200", Name="Cloud storage 200 GB",
                    PaymentAmount=299, Currency="EUR", Status="active", CreatedDate="2026-01-01T00:00:00+00:00",
                    TrialDays=14),
        ],
        # The account had CLOUD-200's free trial (one per account and product).
        TrialUse: [TrialUse(TrialUse.pk(account_id=acc), TrialUse.sk(sku="CLOUD-200"), SubId="18e9374a55c47382",
                            TrialEnd="2026-03-14", CreatedDate="2026-03-01T09:41:25+00:00")],
        BatchRun: [BatchRun(
            BatchRun.pk(kind="payments"), BatchRun.sk(started="2026-11-21T06:00:00+00:00", run_id="r7c1"),
            Kind="payments", RunId="r7c1", StartedAt="2026-11-21T06:00:00+00:00",
            FinishedAt="2026-11-21T06:00:41+00:00", FirstDate="2026-11-21", LastDate="2026-11-21",
            Outcome="completed", Counts={"due": 41, "charged": 40, "declined": 1},
            Failures=[{"sub_id": "18e9374a55c47382", "reason": "card_declined"}], Host="batch-1",
            ShardFirst=0, ShardLast=3, ShardCount=8,
        )],
        TableMeta: [TableMeta(TableMeta.pk(), TableMeta.sk(), DueShards=settings.DUE_SHARDS,
                              UpdatedAt="2026-11-01T08:00:00+00:00")],
        DisputeEntry: [DisputeEntry(
            DisputeEntry.pk(), DisputeEntry.sk(opened="2026-11-12T14:03:11+00:00", dispute_id="dp_1QxZa9AbCdEf"),
            DisputeId="dp_1QxZa9AbCdEf", AccountId=acc,
            ReceiptSK=Receipt.sk(billing_date="2026-10-31", sku="NEWS-DAILY", sub_id="a1b2c3d4e5f60718"),
            ReceiptNumber="R-2026-S07-004211", ChargeId="pi_3QxYz2AbCdEf", Amount=999, Currency="USD",
            Reason="fraudulent", Status="won", OpenedAt="2026-11-12T14:03:11+00:00",
            ClosedAt="2026-11-20T09:00:00+00:00", UpdatedAt="2026-11-20T09:00:00+00:00",
        )],
        Coupon: [
            Coupon(Coupon.pk(), Coupon.sk(code="WELCOME20"), Code="WELCOME20", PercentOff=20, Duration="repeating",
                   DurationPayments=3, MaxUses=500, Uses=41, ValidUntil="2026-12-31", Status="active",
                   CreatedDate="2026-10-01T09:00:00+00:00"),
            Coupon(Coupon.pk(), Coupon.sk(code="FIVE-OFF"), Code="FIVE-OFF", AmountOff=500, Currency="USD",
                   Duration="once", Uses=7, Status="ended", CreatedDate="2026-09-01T09:00:00+00:00",
                   UpdatedDate="2026-10-01T09:00:00+00:00"),
        ],
        WebhookEndpoint: [WebhookEndpoint(
            WebhookEndpoint.pk(), WebhookEndpoint.sk(endpoint_id="ep_3f2a9c1d7e5b4a60"), EndpointId="ep_3f2a9c1d7e5b4a60",
            Url="https://crm.example.com/rpay/webhooks", Description="the CRM",
            EventTypes=["payment.succeeded", "subscription.cancelled"],
            Secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Status="enabled",
            Cursor="evt_20261121T060004120934Z_5be0c2a1", DoneThrough="evt_20261121T060004120934Z_5be0c2a1",
            Inserts=0, CreatedAt="2026-11-01T09:00:00.000000+00:00", CreatedBy="staff@rpay.localhost",
        )],
        WebhookDelivery: [WebhookDelivery(
            WebhookDelivery.pk(endpoint_id="ep_3f2a9c1d7e5b4a60"),
            WebhookDelivery.sk(position="evt_20261121T060004120934Z_5be0c2a1"),
            EventId="evt_20261121T060004120934Z_5be0c2a1", EventType="payment.succeeded",
            Payload='{"data":{"id":"R-2026-S07-004211","object":"receipt"},"id":"evt_20261121T060004120934Z_5be0c2a1",'
                    '"timestamp":"2026-11-21T06:00:04.120934+00:00","type":"payment.succeeded"}',
            Status="succeeded", Attempts=1, CreatedAt="2026-11-21T06:00:10.002311+00:00",
            FirstAttemptAt="2026-11-21T06:00:10.004120+00:00", LastAttemptAt="2026-11-21T06:00:10.004120+00:00",
            LastStatusCode=200, LastResponse="ok", LastDurationMs=84, DeliveredAt="2026-11-21T06:00:10.090021+00:00",
            TTL=datetime(2026, 12, 21, 6, tzinfo=UTC),
        )],
        WebhookEvent: [WebhookEvent(
            WebhookEvent.pk(day="2026-11-21"), WebhookEvent.sk(created="2026-11-21T06:00:03+00:00",
                                                              event_id="evt_1QxYz2AbCdEf"),
            EventId="evt_1QxYz2AbCdEf", Type="payment_intent.succeeded", Status="done",
            Outcome="pi_3QxYz2AbCdEf: receipt R-2026-004211 recorded already",
            CreatedAt="2026-11-21T06:00:03+00:00", ReceivedAt="2026-11-21T06:00:04+00:00", Attempts=1,
            TTL=datetime(2026, 12, 21, tzinfo=UTC),
        )],
        # The REST API: a key (its SHA-256 only), a window of its rate counter, an Idempotency-Key's record.
        ApiKey: [ApiKey(ApiKey.pk(), ApiKey.sk(key_hash=API_KEY_HASH), KeyId=API_KEY_HASH[:12], Name="warehouse",
                        Scope="write", Prefix="rpay_Xk3v", CreatedAt="2026-11-01T08:00:00+00:00",
                        CreatedBy="staff@rpay.localhost", LastUsedAt="2026-11-21T06:10:00+00:00")],
        ApiRateWindow: [ApiRateWindow(ApiRateWindow.pk(key_id=API_KEY_HASH[:12], window=1795241400),
                                      ApiRateWindow.sk(key_id=API_KEY_HASH[:12], window=1795241400), Calls=17,
                                      TTL=datetime(2026, 11, 21, 6, 12, tzinfo=UTC))],
        ApiIdempotency: [ApiIdempotency(
            ApiIdempotency.pk(key_id=API_KEY_HASH[:12], idempotency_key=IDEMPOTENCY_HASH),
            ApiIdempotency.sk(key_id=API_KEY_HASH[:12], idempotency_key=IDEMPOTENCY_HASH),
            Fingerprint="5b1e0c2d9f3a4b6c7d8e9f0a1b2c3d4e5f6a7b8c9dae0f1a2b3c4d5e6f7a8b9c", State="done",
            StartedAt="2026-11-21T06:10:00+00:00", ResponseStatus=200, ResponseBody='{"object": "subscription"}',
            ExpiresAt=1795328400, TTL=datetime(2026, 11, 22, 6, 10, tzinfo=UTC))],
        # The outbox: one event for the merchant's systems, in its UTC day's partition.
        MerchantEvent: [MerchantEvent(
            MerchantEvent.pk(day="2026-11-21"), "evt_20261121T060041123456Z_9c0d1e2f",
            EventId="evt_20261121T060041123456Z_9c0d1e2f", Type="subscription.cancelled",
            CreatedAt="2026-11-21T06:00:41.123456+00:00", AccountId=acc, ObjectType="subscription",
            ObjectId="99aa88bb77cc66dd",
            Data={"object": "subscription", "id": "99aa88bb77cc66dd", "customer": acc, "status": "cancelled",
                  "stored_status": "cancelled", "product": "MUSIC-FAMILY", "amount": 1499, "currency": "EUR"},
            TTL=datetime(2026, 12, 21, 6, 0, 41, tzinfo=UTC),
        )],
        # The EUR receipt's invoice was refunded in part: its credit note, and the quarter's
        # totals (one shard of DE 19% through the OSS: the invoice less the credit note).
        CreditNote: [CreditNote(
            CreditNote.pk(account_id=acc), CreditNote.sk(issued="2026-11-03", number="CN-2026-S03-000017"),
            Number="CN-2026-S03-000017", InvoiceNumber="R-2026-S07-004187",
            ReceiptSK=Receipt.sk(billing_date="2026-10-29", sku="CLOUD-200", sub_id="18e9374a55c47382"),
            RefundId="re_3QxYz2AbCdEf", IssuedAt="2026-11-03T10:12:00+00:00", Currency="EUR", Net=-84, Tax=-16,
            Gross=-100, TaxRate="19", TaxCountry="DE", TaxTreatment="oss",
            TaxLines=[TaxLineMap(Description="Cloud storage 200 GB", PeriodStart="2026-10-29",
                                 PeriodEnd="2026-11-28", Net=-84, TaxRate="19", Tax=-16, Gross=-100)],
            Seller=SellerMap(Name="Rpay S.r.l.", Address="Via Roma 1, 00184 Roma", Country="IT",
                             VatNumber="IT00743110157"),
            BuyerCountry="DE", Reason="goodwill", Language="en", TTL=datetime(2027, 5, 19, tzinfo=UTC),
        )],
        CreditNoteCounter: [CreditNoteCounter(CreditNoteCounter.pk(year=2026, series="03"),
                                              CreditNoteCounter.sk(year=2026, series="03"), LastNumber=17)],
        TaxTotal: [TaxTotal(TaxTotal.pk(quarter="2026Q4"),
                            TaxTotal.sk(seller="IT00743110157", country="DE", rate="19", currency="EUR",
                                        treatment="oss", shard="07"),
                            Net=167, Tax=32, Gross=199, Invoices=1, SellerName="Rpay S.r.l.", SellerCountry="IT")],
        AuditEvent: [AuditEvent(
            AuditEvent.pk(account_id=acc), AuditEvent.sk(at="2026-11-02T10:00:00+00:00", event_id="e5f6a7b8"),
            At="2026-11-02T10:00:00+00:00", Actor="staff@rpay.localhost", Action=AuditAction.STAFF_CANCEL,
            Subject=Subscription.sk(sub_id="99aa88bb77cc66dd", sku="MUSIC-FAMILY"),
            Before={"Status": "active"}, After={"Status": "cancelled"},
        )],
        **_usage_samples(acc),
        **_price_samples(),
        **_revenue_samples(),
    }


def _usage_samples(acc: str) -> dict[type[BillingItem], list[BillingItem]]:
    """Metered usage (docs/USAGE.md): a meter, an event's record, a day's aggregate (one
    shard), a unique_count meter's value marker, the "billed through" watermark."""
    usage = {"account_id": acc, "event_name": "api_calls"}
    return {
        Meter: [Meter(Meter.pk(), Meter.sk(event_name="api_calls"), EventName="api_calls", Name="API calls",
                      Aggregation="sum", CreatedAt="2026-11-01T09:00:00+00:00", CreatedBy="staff@rpay.localhost")],
        MeterEventRecord: [MeterEventRecord(
            MeterEventRecord.pk(account_id=acc, identifier="req_8f2c61d0"),
            MeterEventRecord.sk(account_id=acc, identifier="req_8f2c61d0"), EventName="api_calls", Value="3",
            Timestamp=1795241400, Day="2026-11-21", ReceivedAt="2026-11-21T06:10:01+00:00", ExpiresAt=1798265401,
            TTL=datetime(2026, 12, 26, 6, 10, 1, tzinfo=UTC))],
        UsageAggregate: [UsageAggregate(UsageAggregate.pk(**usage), UsageAggregate.sk(day="2026-11-21", shard="07"),
                                        Events=412, Sum=Decimal("1236"))],
        UsageValueMarker: [UsageValueMarker(UsageValueMarker.pk(account_id=acc, event_name="active_users"),
                                            UsageValueMarker.sk(day="2026-11-21",
                                                                value_hash="9f86d081884c7d659a2feaa0c55ad015"))],
        UsageBilledThrough: [UsageBilledThrough(UsageBilledThrough.pk(**usage), UsageBilledThrough.sk(shard="07"),
                                                BilledThrough="2026-10-31", UpdatedAt="2026-11-01T06:00:05+00:00")],
    }



def _price_samples() -> dict[type[BillingItem], list[BillingItem]]:
    """A product's prices (docs/PRICING.md): a yearly per-unit price and a metered price in
    graduated tiers (first 1,000 calls free, then 0.2 cents a call)."""
    yearly, metered = "price_NEWS-DAILY_4f1c2a9e7b3d5a60", "price_NEWS-DAILY_9d8e7c6b5a4f3e21"
    return {Price: [
        Price(Price.pk(), Price.sk(sku="NEWS-DAILY", price_id=yearly), PriceId=yearly, SKU="NEWS-DAILY", Currency="USD",
              UnitAmount=9990, Interval="year", IntervalCount=1, BillingScheme="per_unit", Status="active",
              CreatedDate="2026-11-02T10:00:00+00:00", Nickname="Yearly"),
        Price(Price.pk(), Price.sk(sku="NEWS-DAILY", price_id=metered), PriceId=metered, SKU="NEWS-DAILY",
              Currency="USD", Interval="month", IntervalCount=1, BillingScheme="tiered", TiersMode="graduated",
              Tiers=[PriceTierMap(UpTo=1000, UnitAmount="0", FlatAmount=0),
                     PriceTierMap(UpTo=None, UnitAmount="0.2", FlatAmount=0)],
              UnitLabel="call", Meter="api_calls", Status="active", CreatedDate="2026-11-02T10:05:00+00:00"),
    ]}

def _revenue_samples() -> dict[type[BillingItem], list[BillingItem]]:
    """A day's revenue rollup of one shard, a month's, a cohort month, and the views a split
    rebuild keeps (docs/ANALYTICS.md, "Kept figures")."""
    figures = {"USD": {"mrr": 14900, "new": 1900, "expansion": 0, "contraction": 0, "churn": 0, "reactivation": 0,
                       "paying": 3, "new_customers": 1, "churned_customers": 0, "reactivated_customers": 0}}
    return {RevenueRollup: [RevenueRollup(RevenueRollup.pk(month="2026-11"), RevenueRollup.sk(day="2026-11-21",
                                                                                              shard="07"),
                                          Figures=figures, Paying=3, Shards=16,
                                          DayCounts={"new_customers": 1, "trial": 2, "trials_ended": 1},
                                          DayMoney={"USD": {"refunds": 1, "refunded": 500, "disputes": 0,
                                                         "disputed": 0}},
                                          RebuiltAt="2026-11-22T01:00:04+00:00")],
            RevenueCohort: [RevenueCohort(RevenueCohort.pk(), RevenueCohort.sk(month="2026-09"), Through="2026-11-21",
                                          Members={"*": 3, "USD": 3}, Retained={"*": [3, 3, 2], "USD": [3, 3, 2]},
                                          Mrr={"USD": [2900, 2900, 1900]},
                                          RebuiltAt="2026-11-22T01:00:04+00:00")],
            RevenueMonth: [RevenueMonth(RevenueMonth.pk(), RevenueMonth.sk(month="2026-10", shard="07"),
                                        Close="2026-10-31", Figures=figures, Paying=3,
                                        MonthCounts={"new_customers": 1, "lost": 1, "trials_ended": 2},
                                        MonthMoney={}, Shards=16, RebuiltAt="2026-11-22T01:00:04+00:00")],
            RevenueViews: [RevenueViews(RevenueViews.pk(), RevenueViews.sk(),
                                        Views={"PRODUCT#NEWS-DAILY", "INTERVAL#month", "CURRENCY#USD"})],
            RevenueViewDays: [RevenueViewDays(RevenueViewDays.pk(dimension="PRODUCT", value="NEWS-DAILY"),
                                              RevenueViewDays.sk(month="2026-11", shard="00"), Close="2026-11-02",
                                              Days={day: {"figures": figures, "paying": 3, "counts": {}, "money": {}}
                                                    for day in ("2026-11-01", "2026-11-02")},
                                              Shards=1, RebuiltAt="2026-11-22T01:00:04+00:00")]}


# Made-up SHA-256 digests (a key's, an Idempotency-Key's): the table holds no key itself.
API_KEY_HASH = "3f9a1c7e5b2d4a6f8e0c1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a"
IDEMPOTENCY_HASH = "a7c9e1b3d5f70a2c4e6b8d0f1a3c5e7b9d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c"

NAME = "rpay recurring payments"
DESCRIPTION = ("Generated from billing/models.py: one table, entities told apart by EntityType, "
               "two sparse GSIs. Amounts are integer minor units with a Currency.")


def billing_table_model() -> dict[str, Any]:
    """The billing table's entry of a Workbench model's ``DataModel`` list."""
    return workbench.table_model(
        BillingItem, ENTITIES, _sample_items(), facet_name=lambda entity: entity.__name__,
        key_aliases=lambda entity: (entity.pk_template.template, entity.sk_template.template))

def prepare_table(due_shards: int | None = None, ttl: bool = True) -> dict[str, Any]:
    """After the table exists: receipts expire through ``TTL`` (``ttl=False``: left as it
    is, for setup_dynamodb's report on a table that exists), and the due indexes' shard
    count is recorded if the table has none yet (``due_shards``, default
    ``settings.DUE_SHARDS``)."""
    layout = access.record_due_shards(due_shards or settings.DUE_SHARDS)
    return {"ttl": enable_ttl(BillingItem, Receipt.TTL.attr_name) if ttl else ttl_status(BillingItem),
            "due_shards": layout}


def register_billing_table() -> None:
    register(RegisteredTable(
        label="billing", base=BillingItem, description="the billing table", prepare=prepare_table,
        ttl_attribute=Receipt.TTL.attr_name,
        workbench=billing_table_model, workbench_name=NAME, workbench_description=DESCRIPTION))
