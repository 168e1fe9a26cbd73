"""API tokens expire: ``expires_at``. Tokens made before get GANTRY_TOKEN_TTL_DAYS from the upgrade
(not from their creation, so an upgrade does not cut off every script at once)."""

from datetime import timedelta

from django.conf import settings
from django.db import migrations, models
from django.utils import timezone


def set_expiry(apps, schema_editor):
    ApiToken = apps.get_model("console", "ApiToken")
    ApiToken.objects.filter(expires_at__isnull=True).update(
        expires_at=timezone.now() + timedelta(days=settings.GANTRY_TOKEN_TTL_DAYS)
    )


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0001_initial"),
    ]

    operations = [
        migrations.AddField(model_name="apitoken", name="expires_at", field=models.DateTimeField(null=True)),
        migrations.RunPython(set_expiry, migrations.RunPython.noop),
        migrations.AlterField(model_name="apitoken", name="expires_at", field=models.DateTimeField()),
    ]
