"""The health app's models, which the consumers app created: state only, the database is not touched.

AlertRule, AlertEvent and HealthScan keep their tables (``db_table``: consumers_alertrule,
consumers_alertevent, consumers_healthscan), their columns, indexes and constraint; the consumers app's
0006 drops them from its state in the same way. ``migrate`` on an existing database changes nothing
but the migration records; on a new one the consumers app's migrations create the tables.
"""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("consumers", "0005_alert_defaults"),  # the tables exist before this state names them
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="HealthScan",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("namesrv_set", models.CharField(db_index=True, default="default", max_length=64)),
                        ("started_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("ok", models.BooleanField(default=True)),
                        ("error", models.TextField(blank=True, default="")),
                        ("alerts", models.JSONField(default=list)),
                        ("backlog", models.JSONField(default=dict)),
                        ("offline", models.JSONField(default=dict)),
                        ("jobs_failed", models.PositiveIntegerField(default=0)),
                    ],
                    options={
                        "db_table": "consumers_healthscan",
                        "ordering": ["-started_at", "-id"],
                    },
                ),
                migrations.CreateModel(
                    name="AlertRule",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=100)),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("lag_above", "lag_above"),
                                    ("lag_growing", "lag_growing"),
                                    ("no_consumer_online", "no_consumer_online"),
                                    ("dlq_growing", "dlq_growing"),
                                    ("topic_lag_above", "topic_lag_above"),
                                    ("topic_no_consumer_online", "topic_no_consumer_online"),
                                    ("broker_expired", "broker_expired"),
                                    ("slave_disconnected", "slave_disconnected"),
                                    ("disk_above", "disk_above"),
                                ],
                                max_length=32,
                            ),
                        ),
                        ("target", models.CharField(blank=True, default="", max_length=255)),
                        ("namesrv_set", models.CharField(db_index=True, default="default", max_length=64)),
                        ("threshold", models.FloatField(default=0)),
                        ("for_minutes", models.PositiveIntegerField(default=0)),
                        ("webhook_url", models.CharField(blank=True, default="", max_length=2000)),
                        ("emails", models.JSONField(default=list)),
                        ("enabled", models.BooleanField(default=True)),
                        ("silenced_until", models.DateTimeField(blank=True, null=True)),
                        ("silenced_by", models.CharField(blank=True, default="", max_length=150)),
                        ("created_by", models.CharField(blank=True, default="", max_length=150)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("pending_since", models.DateTimeField(blank=True, null=True)),
                        ("firing", models.BooleanField(default=False)),
                        ("last_value", models.FloatField(blank=True, null=True)),
                        ("last_evaluated_at", models.DateTimeField(blank=True, null=True)),
                        ("samples", models.JSONField(default=list)),
                        ("last_message", models.TextField(blank=True, default="")),
                        ("builtin", models.CharField(blank=True, default="", max_length=40)),
                    ],
                    options={
                        "db_table": "consumers_alertrule",
                        "ordering": ["name"],
                        "constraints": [
                            models.UniqueConstraint(
                                condition=models.Q(("builtin", ""), _negated=True),
                                fields=("namesrv_set", "builtin"),
                                name="alert_rule_one_builtin_per_set",
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="AlertEvent",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("rule_name", models.CharField(max_length=100)),
                        ("kind", models.CharField(max_length=32)),
                        ("target", models.CharField(blank=True, default="", max_length=255)),
                        (
                            "state",
                            models.CharField(
                                choices=[("firing", "firing"), ("resolved", "resolved")], db_index=True, max_length=16
                            ),
                        ),
                        ("value", models.FloatField(blank=True, null=True)),
                        ("message", models.TextField()),
                        ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ("notified", models.BooleanField(default=False)),
                        ("delivery", models.JSONField(default=list)),
                        ("acked_by", models.CharField(blank=True, default="", max_length=150)),
                        ("acked_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "rule",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="events",
                                to="health.alertrule",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "consumers_alertevent",
                        "ordering": ["-created_at", "-id"],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
