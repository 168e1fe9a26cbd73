"""The Django project. The Celery app is loaded with it so ``shared_task`` binds to it."""

from console.celery import app as celery_app

__all__ = ("celery_app",)
