from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    """The ``live`` trigger: beat's frequent incremental refresh."""

    dependencies = [("analytics", "0001_results")]

    operations = [
        migrations.AlterField(
            model_name="refreshrun",
            name="trigger",
            field=models.CharField(
                choices=[("nightly", "Nightly"), ("manual", "Manual"), ("api", "Api"), ("live", "Live")], max_length=16
            ),
        ),
    ]
