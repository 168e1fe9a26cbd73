"""Create the first admin account (role admin) with a generated password when no superuser exists."""

from __future__ import annotations

import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from console.admin_account import DEFAULT_URL, login_line, password_path
from console.file_modes import secure_var_dir, use_private_umask
from console.models import AccountRole
from console.roles import Role


class Command(BaseCommand):
    help = "Create an admin account with a generated password if none exists, and say how to log in."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--url", default=DEFAULT_URL)

    def handle(self, *args, username: str, url: str, **options):
        use_private_umask()
        secure_var_dir(settings.VAR_DIR)  # the database migrate made, under the shell's umask
        User = get_user_model()
        path = password_path()
        line = login_line(url)
        if line is not None:
            self.stdout.write(line)
            return
        password = secrets.token_urlsafe(18)
        user = User.objects.create_superuser(username=username, email="", password=password)
        AccountRole.objects.update_or_create(user=user, defaults={"role": Role.ADMIN})
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(password + "\n")
        self.stdout.write(
            self.style.SUCCESS(
                f"Created admin account. Log in at {url} as {username} with password {password}"
                f" (saved in {path}, readable only by you)."
            )
        )
