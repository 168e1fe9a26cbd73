from django.apps import AppConfig


class HealthConfig(AppConfig):
    """Cluster-wide health: the periodic health scan, the operators' alert rules and their delivery."""

    name = "health"
    verbose_name = "Health and alerts"
