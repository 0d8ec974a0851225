"""The ``admin`` role: ``manage_integrations`` (the merchant's webhook endpoints, and the
API's keys), given to a new ``admin`` group. The permission is made here as 0003 made the
others (by content type and codename, as Django would), and the model's options list it."""

from django.db import migrations

CODENAME = "manage_integrations"
NAME = "Can manage webhook endpoints and API keys"


def create_admin_role(apps, schema_editor) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    db = schema_editor.connection.alias
    content_type, _ = ContentType.objects.using(db).get_or_create(app_label="billing", model="billingpermission")
    permission, _ = Permission.objects.using(db).get_or_create(content_type=content_type, codename=CODENAME,
                                                               defaults={"name": NAME})
    view, _ = Permission.objects.using(db).get_or_create(
        content_type=content_type, codename="view_billing",
        defaults={"name": "Can view customers' billing pages, upcoming payments and batch runs"})
    group, _ = Group.objects.using(db).get_or_create(name="admin")
    group.permissions.set([permission, view])


def remove_admin_role(apps, schema_editor) -> None:
    apps.get_model("auth", "Group").objects.using(schema_editor.connection.alias).filter(name="admin").delete()


class Migration(migrations.Migration):

    dependencies = [
        ("billing", "0003_staff_roles"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="billingpermission",
            options={"default_permissions": (), "managed": False, "permissions": [
                ("view_billing", "Can view customers' billing pages, upcoming payments and batch runs"),
                ("cancel_subscription", "Can cancel a customer's subscription"),
                ("change_payment_day", "Can change a subscription's payment day"),
                ("manage_money", "Can refund and retry payments"),
                ("manage_catalog", "Can add, edit and retire products"),
                (CODENAME, NAME),
            ]},
        ),
        migrations.RunPython(create_admin_role, remove_admin_role),
    ]
