"""Refresh runs take the lease of every leased job (console.leased_jobs): ``attempts`` and ``lease_until``.

Existing rows keep everything; a run that had started was taken once (``attempts`` 1). A running
run without a lease is still judged by its last beat (``RefreshRun.patience_s``), as before.
"""

from django.db import migrations, models


def count_the_first_take(apps, schema_editor):
    apps.get_model("analytics", "RefreshRun").objects.filter(started_at__isnull=False).update(attempts=1)


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0003_per_set"),
    ]

    operations = [
        migrations.AddField(
            model_name="refreshrun",
            name="attempts",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="refreshrun",
            name="lease_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(count_the_first_take, migrations.RunPython.noop),
    ]
