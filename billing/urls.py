from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from billing import views

AUTH = "portal/auth/"

urlpatterns = [
    path("", views.home, name="home"),
    # the header's language switcher (Django's set_language + the account's language)
    path("i18n/setlang/", views.set_language, name="set_language"),
    # accounts
    path("signup/", views.signup, name="signup"),
    path("signup/confirm/<str:token>/", views.signup_confirm, name="signup_confirm"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/change/", auth_views.PasswordChangeView.as_view(
        template_name=AUTH + "password_change.html", success_url=reverse_lazy("password_change_done")),
        name="password_change"),
    path("password/change/done/", auth_views.PasswordChangeDoneView.as_view(
        template_name=AUTH + "password_change_done.html"), name="password_change_done"),
    path("password/reset/", auth_views.PasswordResetView.as_view(
        template_name=AUTH + "password_reset.html",
        email_template_name="billing/email/password_reset.txt",
        subject_template_name="billing/email/password_reset_subject.txt",
        success_url=reverse_lazy("password_reset_done")), name="password_reset"),
    path("password/reset/sent/", auth_views.PasswordResetDoneView.as_view(
        template_name=AUTH + "password_reset_done.html"), name="password_reset_done"),
    path("password/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(
        template_name=AUTH + "password_reset_confirm.html", success_url=reverse_lazy("password_reset_complete")),
        name="password_reset_confirm"),
    path("password/reset/complete/", auth_views.PasswordResetCompleteView.as_view(
        template_name=AUTH + "password_reset_complete.html"), name="password_reset_complete"),
    # data rights: a copy of the account's data, closing the account (docs/PORTAL.md, "Your data")
    path("account/data/", views.download_data, name="download_data"),
    path("account/close/", views.close_account, name="close_account"),
    path("account/closed/", views.account_closed, name="account_closed"),
    # the billing country and VAT number (the VAT of each invoice follows them)
    path("account/billing/", views.billing_details, name="billing_details"),
    # subscriptions
    path("subscribe/", views.subscribe, name="subscribe"),
    path("subscribe/confirm/", views.subscribe_confirm, name="subscribe_confirm"),
    path("subscribe/authenticate/", views.subscribe_authenticate, name="subscribe_authenticate"),
    # Stripe's events: signed by Stripe, not by a session (billing/views/webhook_pages.py)
    path("webhooks/stripe/", views.stripe_webhook, name="stripe_webhook"),
    path("subscriptions/<str:sub_id>/", views.subscription_detail, name="subscription"),
    path("subscriptions/<str:sub_id>/usage/", views.subscription_usage, name="subscription_usage"),
    path("subscriptions/<str:sub_id>/payment-day/", views.change_day, name="change_day"),
    path("subscriptions/<str:sub_id>/card/", views.replace_card, name="replace_card"),
    # a renewal the bank wants the customer to confirm (3-D Secure): "action required"
    path("subscriptions/<str:sub_id>/confirm-payment/", views.confirm_payment, name="confirm_payment"),
    path("subscriptions/<str:sub_id>/card/choose/", views.choose_card, name="choose_card"),
    path("subscriptions/<str:sub_id>/switch/", views.switch_product, name="switch_product"),
    path("subscriptions/<str:sub_id>/seats/", views.change_seats, name="change_seats"),
    path("subscriptions/<str:sub_id>/add-ons/", views.add_ons, name="add_ons"),
    path("subscriptions/<str:sub_id>/cancel/", views.cancel, name="cancel"),
    path("subscriptions/<str:sub_id>/cancelled/", views.cancelled, name="cancelled"),
    path("subscriptions/<str:sub_id>/keep/", views.keep, name="keep"),
    path("subscriptions/<str:sub_id>/pause/", views.pause, name="pause"),
    path("subscriptions/<str:sub_id>/resume/", views.resume, name="resume"),
    # the wallet
    path("wallet/", views.wallet_page, name="wallet"),
    path("wallet/add/", views.wallet_add, name="wallet_add"),
    path("wallet/<str:card_id>/replace/", views.wallet_replace, name="wallet_replace"),
    path("wallet/<str:card_id>/default/", views.wallet_default, name="wallet_default"),
    path("wallet/<str:card_id>/remove/", views.wallet_remove, name="wallet_remove"),
    path("wallet/save/<str:sub_id>/", views.wallet_save, name="wallet_save"),
    # receipts
    path("receipts/", views.receipts, name="receipts"),
    path("receipts/export.csv", views.receipts_csv, name="receipts_csv"),
    # by number (R-2026-000123); receipts written before numbers existed, by key
    path("receipts/<str:receipt_id>/", views.receipt_detail, name="receipt"),
    path("receipts/<str:receipt_id>/pdf/", views.receipt_pdf, name="receipt_pdf"),
    # a refund's credit note, by number (CN-2026-000001)
    path("credit-notes/<str:number>/", views.credit_note_detail, name="credit_note"),
    path("credit-notes/<str:number>/pdf/", views.credit_note_pdf, name="credit_note_pdf"),
]
