from django.apps import AppConfig


class BrokersConfig(AppConfig):
    name = "brokers"
    verbose_name = "Brokers"
