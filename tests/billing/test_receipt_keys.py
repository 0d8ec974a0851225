"""The SKU in a change's receipt key: marked so it never meets the period's receipt, and
read back as the product's whatever the mark."""

from hypothesis import given
from hypothesis import strategies as st

from billing.rules.receipt_keys import product_sku, seats_receipt_sku, switch_receipt_sku

skus = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=1, max_size=20)


def test_a_switch_within_a_product_is_marked_and_between_products_is_not() -> None:
    assert switch_receipt_sku("PRO", "PRO") == "PRO~switch"
    assert switch_receipt_sku("BASIC", "PRO") == "PRO"


def test_a_change_of_seats_is_marked_with_its_version() -> None:
    assert seats_receipt_sku("TEAM", 3) == "TEAM~seats3"
    assert seats_receipt_sku("TEAM", None) == "TEAM~seats0"


@given(old=skus, new=skus, version=st.integers(min_value=0, max_value=10**6))
def test_every_mark_reads_back_as_the_product(old: str, new: str, version: int) -> None:
    assert product_sku(switch_receipt_sku(old, new)) == new
    assert product_sku(seats_receipt_sku(new, version)) == new
    assert product_sku(new) == new
    # a change's key never meets the period's receipt of the same product
    assert seats_receipt_sku(new, version) != new
    assert switch_receipt_sku(new, new) != new
