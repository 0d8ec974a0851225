"""The three staff roles as Django groups: support, finance, catalog.

Django creates Permission rows only after all migrations have run (post_migrate), so
this migration makes the ones it needs itself, by content type and codename exactly as
Django would: the later post_migrate pass finds them and adds nothing. Running it
again changes nothing (get_or_create; a group's permissions are set, not appended).
The role table is frozen here, as a migration must be; later changes take a new one.
"""

from django.db import migrations

PERMISSIONS = {
    "view_billing": "Can view customers' billing pages, upcoming payments and batch runs",
    "cancel_subscription": "Can cancel a customer's subscription",
    "change_payment_day": "Can change a subscription's payment day",
    "manage_money": "Can refund and retry payments",
    "manage_catalog": "Can add, edit and retire products",
}

# Finance also views billing pages: a refund or a retry starts from the account page.
ROLES = {
    "support": ["view_billing", "cancel_subscription", "change_payment_day"],
    "finance": ["view_billing", "manage_money"],
    "catalog": ["manage_catalog"],
}


def create_roles(apps, schema_editor) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    db = schema_editor.connection.alias
    content_type, _ = ContentType.objects.using(db).get_or_create(app_label="billing", model="billingpermission")
    permissions = {}
    for codename, name in PERMISSIONS.items():
        permissions[codename], _ = Permission.objects.using(db).get_or_create(
            content_type=content_type, codename=codename, defaults={"name": name})
    for role, codenames in ROLES.items():
        group, _ = Group.objects.using(db).get_or_create(name=role)
        group.permissions.set([permissions[c] for c in codenames])


def remove_roles(apps, schema_editor) -> None:
    apps.get_model("auth", "Group").objects.using(schema_editor.connection.alias).filter(name__in=ROLES).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("billing", "0002_staff_permissions"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_roles, remove_roles)]
