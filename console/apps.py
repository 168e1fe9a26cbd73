from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Gantry console"

    def ready(self) -> None:
        from console import login_audit, schema  # noqa: F401  (schema registers the token scheme with drf-spectacular)

        login_audit.connect()  # logins and failed logins in the audit log
