from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Gantry console"

    def ready(self) -> None:
        from console import schema  # noqa: F401  (registers the token scheme with drf-spectacular)
