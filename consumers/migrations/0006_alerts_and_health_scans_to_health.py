"""AlertRule, AlertEvent and HealthScan moved to the health app: state only, their tables stay as they are
(the health app's 0001 names them with ``db_table``)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("consumers", "0005_alert_defaults"),
        ("health", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="alertevent", name="rule"),
                migrations.DeleteModel(name="HealthScan"),
                migrations.DeleteModel(name="AlertEvent"),
                migrations.DeleteModel(name="AlertRule"),
            ],
            database_operations=[],
        ),
    ]
