"""What the console keeps of topics: the progress of a safe shrink.

Topics themselves live on the brokers; the one thing the brokers cannot tell is *when* the
console lowered a topic's write queues, which the read step waits on (producers see the new
route at their next poll). The shrink service writes it here and the shrink status reads it.
"""

from __future__ import annotations

from django.db import models


class ShrinkProgress(models.Model):
    """A topic's shrink to ``target_queue_nums``: when the write queues were lowered, then the read queues."""

    topic = models.CharField(max_length=255, unique=True)
    target_queue_nums = models.PositiveIntegerField()
    write_lowered_at = models.DateTimeField()
    read_lowered_at = models.DateTimeField(null=True, blank=True)  # None until the read step: the shrink is under way

    class Meta:
        ordering = ["topic"]

    def __str__(self) -> str:
        return f"{self.topic} -> {self.target_queue_nums} queues"
