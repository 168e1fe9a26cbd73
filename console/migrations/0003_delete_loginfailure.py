"""Failed logins are counted by django-axes now (console.lockout): the hand-written counter goes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0002_apitoken_expires_at"),
    ]

    operations = [
        migrations.DeleteModel(name="LoginFailure"),
    ]
