"""What the console saw of brokers: the last time each broker was registered and answering.

The name server forgets a broker that stops heartbeating; these rows remember it, so the
overview can say "known before and now gone" (an alert) and show when the console last saw it.
"""
from __future__ import annotations

from django.db import models
from django.utils import timezone


class BrokerSighting(models.Model):
    addr = models.CharField(max_length=255, unique=True)
    cluster = models.CharField(max_length=255)
    broker_name = models.CharField(max_length=255)
    broker_id = models.IntegerField(default=0)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["cluster", "broker_name", "broker_id"]

    def __str__(self) -> str:
        return f"{self.cluster}/{self.broker_name}/{self.broker_id} {self.addr}"
