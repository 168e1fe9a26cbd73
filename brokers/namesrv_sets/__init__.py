"""The console's name-server sets: the admin's list of tiers besides settings.MQ's (docs/clusters.md)."""
