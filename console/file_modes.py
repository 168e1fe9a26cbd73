"""Files for their owner only: ``var/`` 0700, everything in it 0600 (directories 0700).

``var/`` holds the SQLite database (sessions included) and its journal, the secret key, the
generated admin and Redis passwords, the celery beat schedule, Redis' snapshots, the metrics lake
and the brokers' stores: nothing another local user should read. Two parts:

- :func:`use_private_umask` (umask 0o077) in the processes ``make run`` starts: ``run_embedded``
  (so every child it supervises inherits it: Redis, the cluster, Celery, the web server),
  ``run_cluster`` and ``ensure_admin``; a file created later, by any of them, is 0600;
- :func:`secure_var_dir` for what was made before (``manage.py migrate`` creates the database
  under the shell's umask; a var/ from an older Gantry).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600


def use_private_umask() -> int:
    """Make this process (and the children it starts) create files 0600 and directories 0700."""
    return os.umask(PRIVATE_UMASK)


def secure_var_dir(var_dir: Path) -> None:
    """Create ``var_dir`` 0700 if missing, then take group and other bits off everything in it."""
    var_dir = Path(var_dir)
    var_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    os.chmod(var_dir, DIR_MODE)
    for root, dirs, files in os.walk(var_dir):
        for name in dirs + files:
            path = os.path.join(root, name)
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:  # gone meanwhile (a journal, a temp file)
                continue
            if stat.S_ISLNK(mode) or not stat.S_IMODE(mode) & 0o077:
                continue
            try:
                os.chmod(path, DIR_MODE if stat.S_ISDIR(mode) else stat.S_IMODE(mode) & 0o700)
            except FileNotFoundError:
                continue
