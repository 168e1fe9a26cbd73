"""Gantry's Django settings, driven by environment variables with safe embedded defaults.

Environment: NAMESRV_ADDR (RocketMQ's variable, ';'-separated), DATABASE_URL, REDIS_URL,
SPARK_MASTER, SECRET_KEY, DEBUG, ALLOWED_HOSTS, GANTRY_VAR_DIR, GANTRY_HTTPS (serve over HTTPS
only: secure cookies, HSTS, redirect), CSRF_TRUSTED_ORIGINS (comma-separated, for a proxy in
front), GANTRY_BEHIND_PROXY (trust X-Forwarded-Proto from it), GANTRY_LOGIN_MAX_FAILURES and
GANTRY_LOGIN_LOCKOUT_MINUTES (failed-login lockout, django-axes), GANTRY_TRUSTED_PROXY_COUNT (proxies
whose X-Forwarded-For entry names the client), GANTRY_TOKEN_TTL_DAYS (API token lifetime),
GANTRY_MAX_BODY_BYTES (request bodies),
MQ_ACCESS_KEY / MQ_SECRET_KEY (the ACL account the console and Celery sign with), MQ_DEMO_ACCESS_KEY /
MQ_DEMO_SECRET_KEY (the demo workload's), GANTRY_ACL_FILE (the ACL file `make run` generates),
MQ_TLS_ENABLE / MQ_TLS_CA / MQ_TLS_CERT / MQ_TLS_KEY / MQ_TLS_VERIFY / MQ_TLS_SERVER_NAME (TLS to the
name servers and brokers, for a cluster run with --tls-mode enforcing or permissive).

``python manage.py check --deploy`` passes with DEBUG=0, a SECRET_KEY of 50+ characters,
ALLOWED_HOSTS and GANTRY_HTTPS=1 (tests/console/test_settings.py runs it).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url

from console.log_format import logging_config
from console.redis_server import private_redis_url

BASE_DIR = Path(__file__).resolve().parent.parent
# what the processes of this host write: database, stores, lake, logs, keys
VAR_DIR = Path(os.environ.get("GANTRY_VAR_DIR", BASE_DIR / "var"))


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept under var/."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = VAR_DIR / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = secrets.token_urlsafe(50)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(key)
        return key


SECRET_KEY = _secret_key()
DEBUG = _env_bool("DEBUG", False)  # Django's debug pages; never in production
# comma-separated names the console answers to
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from vendored static files, no CDN
    "django_htmx",
    "axes",  # failed-login lockout (console.lockout); before console so its signal receivers run first
    "console",
    "brokers",
    "topics",
    "consumers",
    "health",  # the health scan and alert rules (cluster-wide)
    "analytics",
    "metadata",  # exportMetadata JSON: export, dry-run and apply an import
]

MIDDLEWARE = [
    "console.request_id.RequestIdMiddleware",  # first: everything after logs and audits with the request's id
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files from STATIC_ROOT (collectstatic), hashed names
    "console.metrics.RequestMetricsMiddleware",  # /metrics: requests and their time per view
    "console.middleware.ContentSecurityPolicyMiddleware",
    "console.middleware.BodySizeLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",  # after sessions, before common: the language cookie or Accept-Language
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "console.preferences.PreferenceMiddleware",  # the user's time zone and language for pages; /api/ stays UTC, English
    "brokers.namesrv_set_scope.NamesrvSetMiddleware",  # ?namesrv_set= / the session's choice: the tier this request talks to
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "console.middleware.EngineErrorMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into console.lockout.lockout_response
]

ROOT_URLCONF = "console.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context_processors.gantry_role",
                "console.menu.menu",  # the role; the header's menu and its current entry
                "brokers.context_processors.namesrv_switcher",  # the header's cluster switcher
            ],
            # {% translate %}; {{ t|local_time }}
            "builtins": [
                "django.templatetags.i18n",
                "console.templatetags.local_time",
            ],
        },
    },
]
WSGI_APPLICATION = "console.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(  # the console's database: sqlite:///PATH or postgres://USER:PASSWORD@HOST/NAME
        default=f"sqlite:///{VAR_DIR / 'console.sqlite3'}", conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server, Celery workers and beat share the embedded SQLite file: wait for a lock
    # instead of failing, let readers run beside a writer (WAL), and take the write lock when a
    # transaction begins so two processes never deadlock upgrading a read lock.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE"}
    )
    # Tests use a file, not :memory:, so a real Celery worker process sees the same database
    # (one per test process: concurrent runs must not share it).
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-console-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
# The console's languages (a user picks one in the header; a new visitor gets the browser's): English and
# Simplified Chinese, translated in locale/ (docs/i18n.md). Times are stored and served by the API in UTC.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
# WhiteNoise serves STATIC_ROOT: hashed names (cached a year) and gzip copies written by collectstatic (make run
# runs it before gunicorn; tests render with the plain storage: tests/fixtures/console.py).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# The engine's part: one namespaced dict. The engine never reads Django settings; the
# Django side builds the engine's frozen config objects from this.
MQ = {
    "NAMESRV_ADDR": os.environ.get("NAMESRV_ADDR", "127.0.0.1:9876"),
    # run_cluster's store root: a directory per broker
    "STORE_DIR": os.environ.get("GANTRY_STORE_DIR", str(VAR_DIR / "store")),
    # run_cluster's flushDiskType without --flush: ASYNC_FLUSH or SYNC_FLUSH
    "FLUSH_DISK_TYPE": os.environ.get("GANTRY_FLUSH", "ASYNC_FLUSH"),
    # Admin calls from web requests must answer fast; a dead name server should not hang a page.
    "ADMIN_TIMEOUT_S": float(os.environ.get("GANTRY_ADMIN_TIMEOUT_S", "3")),
    # The ACL account the console, Celery and mqadmin sign every request with (RocketMQ's
    # AccessKey/SecretKey; empty: unsigned). `make run` passes its generated admin account here.
    "ACCESS_KEY": os.environ.get("MQ_ACCESS_KEY", ""),
    "SECRET_KEY": os.environ.get("MQ_SECRET_KEY", ""),
    # The demo workload's producer and consumers (run_demo); empty: ACCESS_KEY / SECRET_KEY.
    "DEMO_ACCESS_KEY": os.environ.get("MQ_DEMO_ACCESS_KEY", ""),
    "DEMO_SECRET_KEY": os.environ.get("MQ_DEMO_SECRET_KEY", ""),
    # The ACL file `make run` generates on first start and runs the cluster with.
    "ACL_FILE": os.environ.get("GANTRY_ACL_FILE", str(VAR_DIR / "acl" / "plain_acl.yml")),
    # TLS to the name servers and brokers (brokers/engine/remoting/tls.py) for the console, Celery,
    # mqadmin and the demo: on with MQ_TLS_ENABLE; TLS_CA is the CA that signed the servers'
    # certificates (empty: the system's CAs); TLS_CERT / TLS_KEY a client certificate for servers run
    # with --tls-client-auth; TLS_VERIFY=0 skips the server check (tests only); TLS_SERVER_NAME the
    # name to check in the servers' certificates (empty: the address dialled, an IP for brokers).
    "TLS_ENABLE": _env_bool("MQ_TLS_ENABLE", False),
    "TLS_CA": os.environ.get("MQ_TLS_CA", ""),
    "TLS_CERT": os.environ.get("MQ_TLS_CERT", ""),
    "TLS_KEY": os.environ.get("MQ_TLS_KEY", ""),
    "TLS_VERIFY": _env_bool("MQ_TLS_VERIFY", True),
    "TLS_SERVER_NAME": os.environ.get("MQ_TLS_SERVER_NAME", ""),
}

# Console-side figures that are cheap to keep a few seconds (per-broker topic counts on the
# overview); per process unless REDIS_URL points at a shared cache. In Redis the values are JSON
# (console.cache): the Redis Celery shares never holds a pickle the web process would load.
CACHES = {
    "default": (
        {"BACKEND": "console.cache.JSONRedisCache", "LOCATION": os.environ["REDIS_URL"], "KEY_PREFIX": "gantry-cache"}
        if os.environ.get("REDIS_URL")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "gantry"}
    )
}

# Redis: Celery's broker and result backend. Without REDIS_URL, `make run` starts a private
# redis-server on loopback (GANTRY_REDIS_PORT) with its data under var/redis and a password
# generated once into var/redis-password (console.redis_server).
PRIVATE_REDIS = not os.environ.get("REDIS_URL")
PRIVATE_REDIS_PORT = int(os.environ.get("GANTRY_REDIS_PORT", "6479"))  # off 6379 so a system redis is left alone
REDIS_URL = os.environ.get("REDIS_URL") or private_redis_url(VAR_DIR, PRIVATE_REDIS_PORT)
# where dashboard refreshes run: local[*] or spark://HOST:7077 (docs/analytics.md)
SPARK_MASTER = os.environ.get("SPARK_MASTER", "local[*]")

# -- Celery (console/celery.py reads every CELERY_* name) ------------------------------------------
# A message a worker took but did not acknowledge (acks_late) goes back to the queue after the
# visibility timeout: it must exceed every task's hard time limit, or a slow task runs twice.
CELERY_VISIBILITY_TIMEOUT_S = int(os.environ.get("GANTRY_CELERY_VISIBILITY_TIMEOUT_S", "3600"))
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_VISIBILITY_TIMEOUT_S,
    "socket_connect_timeout": 1,  # a request that enqueues must fail fast when Redis is down
    "socket_timeout": 5,
    # look for unacknowledged messages past the visibility timeout every 10 s (kombu's default
    # scans only every 10th look, so a lost task would wait up to 100 s more)
    "unacked_restore_interval": 10,
    "unacked_restore_throttle": 1,
}
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"socket_connect_timeout": 1, "socket_timeout": 5}
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 1
CELERY_REDIS_SOCKET_TIMEOUT = 5
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True  # workers wait for Redis at start
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]  # tasks accept JSON only: no pickle from a shared Redis
CELERY_WORKER_ENABLE_REMOTE_CONTROL = False  # no broadcast commands (shutdown, revoke, pool changes) through Redis
CELERY_TASK_ACKS_LATE = True  # a task killed with its worker is delivered again
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # ... also when only the pool child dies
CELERY_WORKER_PREFETCH_MULTIPLIER = 1  # long tasks: a worker holds one message at a time
CELERY_TASK_TRACK_STARTED = True
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_TIMEZONE = "UTC"
CELERY_TASK_DEFAULT_QUEUE = "celery"
# Spark jobs go to their own queue, served by a worker of concurrency 1 (one job at a time).
CELERY_TASK_ROUTES = {"analytics.tasks.dashboard_refresh_task": {"queue": "analytics"}}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Hard limits per task (seconds); each stays below the visibility timeout (checked at import).
GANTRY_TASK_TIME_LIMITS = {
    "rebalance": min(300, CELERY_VISIBILITY_TIMEOUT_S - 10),
    "dashboard_refresh": min(3000, CELERY_VISIBILITY_TIMEOUT_S - 10),
    "short": min(60, CELERY_VISIBILITY_TIMEOUT_S - 5),  # health scan, metrics sampling
    "promotion": min(120, CELERY_VISIBILITY_TIMEOUT_S - 10),  # promote a slave: the call (30 s) and the route's change
}

# The health scan (health/scan.py): a group's backlog is "rising" when it grew at each of the
# last BACKLOG_SCANS scans by BACKLOG_RISE_MIN messages in all; alerts older than FRESH_SCANS scan
# periods are not shown (the overview then runs the live check itself).
GANTRY_HEALTH = {
    "BACKLOG_SCANS": int(os.environ.get("GANTRY_HEALTH_BACKLOG_SCANS", "3")),
    "BACKLOG_RISE_MIN": int(os.environ.get("GANTRY_HEALTH_BACKLOG_RISE_MIN", "1000")),
    "FRESH_SCANS": int(os.environ.get("GANTRY_HEALTH_FRESH_SCANS", "3")),
}

# Broker groups (health/scan.py): the health scan raises "slave_lagging" when a slave is behind its
# master by more than either figure. 64 MiB is a quarter of haSlaveFallbehindMax (256 MiB, past which a
# SYNC_MASTER stops counting the slave and answers SLAVE_NOT_AVAILABLE): the operator hears first. 10 s:
# steady replication on a LAN stays far below a second, and with ASYNC_MASTER the lag is the window of
# acknowledged messages a lost master disk takes with it.
GANTRY_HA_LAG_ALERT_BYTES = int(os.environ.get("GANTRY_HA_LAG_ALERT_BYTES", str(64 << 20)))
GANTRY_HA_LAG_ALERT_S = float(os.environ.get("GANTRY_HA_LAG_ALERT_S", "10"))  # the same alert by seconds behind

# Alert rules (health/rules.py, docs/alerts.md): webhooks to loopback, private or link-local
# addresses are refused (server-side request forgery) unless this is on (a chat server inside the network).
GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE = _env_bool("GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE", False)
# reminder of an unacknowledged firing alert; 0 = never
GANTRY_ALERT_REPEAT_MINUTES = int(os.environ.get("GANTRY_ALERT_REPEAT_MINUTES", "60"))
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")  # the SMTP server alert e-mail goes through
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))  # its port
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")  # its login (empty: none)
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")  # secret
EMAIL_USE_TLS = _env_bool("EMAIL_USE_TLS", False)  # STARTTLS
EMAIL_TIMEOUT = 10  # seconds: the health scan waits no longer for the mail server
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "gantry@localhost")  # the sender of alert e-mail

# Analytics: the metrics lake and the dashboards (docs/analytics.md).
GANTRY_ANALYTICS: dict[str, Any] = {
    # the metrics lake; with several hosts a path all of them mount
    "LAKE_DIR": os.environ.get("GANTRY_LAKE_DIR", str(VAR_DIR / "lake")),
    # seconds between metrics samples (beat)
    "SAMPLE_INTERVAL_S": float(os.environ.get("GANTRY_SAMPLE_INTERVAL_S", "10")),
    # beat's incremental dashboard refresh; 0: nightly only
    "LIVE_REFRESH_S": float(os.environ.get("GANTRY_LIVE_REFRESH_S", "60")),
}

from celery.schedules import crontab  # noqa: E402  (settings stay one flat module)

# The one periodic schedule (celery beat).
CELERY_BEAT_SCHEDULE = {
    # Health scan: expired brokers, slaves disconnected or lagging, queues owned twice or by nobody, rising backlogs -> overview alerts;
    # also fails rebalance jobs whose worker vanished. Batched: a few calls per broker, one running-info per member.
    "health-scan": {
        "task": "consumers.tasks.health_scan_task",
        "schedule": float(os.environ.get("GANTRY_HEALTH_SCAN_S", "30")),
        "options": {"expires": 25},  # a scan that waited longer than its period is stale: drop it
    },
    # Metrics sampling: every queue's max offset and every group's committed offsets into the lake.
    "metrics-sample": {
        "task": "analytics.tasks.metrics_sample_task",
        "schedule": GANTRY_ANALYTICS["SAMPLE_INTERVAL_S"],
        "options": {"expires": max(1.0, GANTRY_ANALYTICS["SAMPLE_INTERVAL_S"] - 1)},
    },
    # Nightly dashboard refresh at 02:00 UTC (the console and API also run it on demand).
    "dashboard-refresh-nightly": {
        "task": "analytics.tasks.dashboard_refresh_task",
        "schedule": crontab(hour=2, minute=0),
        "kwargs": {"trigger": "nightly"},
    },
}
if GANTRY_ANALYTICS["LIVE_REFRESH_S"] > 0:
    # Live dashboards: an incremental refresh (the windows with new samples) every minute; skipped
    # while another refresh is queued or running; dropped when it waited a whole period (a full run).
    CELERY_BEAT_SCHEDULE["dashboard-refresh-live"] = {
        "task": "analytics.tasks.dashboard_refresh_task",
        "schedule": GANTRY_ANALYTICS["LIVE_REFRESH_S"],
        "kwargs": {"trigger": "live"},
        "options": {"expires": max(1.0, GANTRY_ANALYTICS["LIVE_REFRESH_S"] - 5)},
    }

# One line layout for every process, Celery's too (console.log_format, console.celery), with the request id
GANTRY_LOG_FORMAT = os.environ.get("GANTRY_LOG_FORMAT", "text")  # text, or json: JSON lines for a log shipper
# its start-up banner on every manage.py command
LOGGING = logging_config(
    fmt=GANTRY_LOG_FORMAT,
    level=os.environ.get("LOG_LEVEL", "INFO"),  # LOG_LEVEL: DEBUG, INFO, WARNING or ERROR
    extra_loggers={"axes.apps": {"level": "WARNING"}},
)
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Request bodies larger than this are refused with 413 before anything reads them: API inputs
# are small JSON documents; a test message body is the largest thing a form sends.
MAX_BODY_BYTES = int(os.environ.get("GANTRY_MAX_BODY_BYTES", str(256 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES

# Overview alerts beyond the brokers' own: dotted paths of callables (cluster_info) -> [Alert]
# (brokers.gateway.overview.Alert). Consumer-group alerts plug in here.
GANTRY_ALERT_SOURCES: list[str] = [
    "health.scan.health_scan_alerts",  # the last health scan's group alerts (unowned/shared queues, rising backlog); live check without beat
    "health.scan.firing_rule_alerts",  # alert rules firing now (the default rules: a group without consumers, say)
]
# the overview's health lines of other apps: (ClusterInfo) -> [HealthLine]
GANTRY_HEALTH_SOURCES: list[str] = ["health.scan.group_health"]
# The health scan's parts that belong to the consumers app (health/scan.py calls them each scan):
# alerts of groups whose queues nobody or two members hold, (cluster_info) -> [Alert]
GANTRY_HEALTH_SCAN_ALERTS: list[str] = ["consumers.alerts.unowned_queue_alerts"]
# rebalance jobs that lost their worker, failed: (namesrv_set) -> how many
GANTRY_HEALTH_SCAN_SWEEPS: list[str] = ["consumers.rebalance.jobs.rebalance_jobs_sweep_set"]
# whether a consumer group exists (an alert rule's target is checked): (name=) -> bool
GANTRY_GROUP_KNOWN = "consumers.selectors.group_known"

# API tokens expire this many days after they are created (the tokens page and the API show when).
GANTRY_TOKEN_TTL_DAYS = int(os.environ.get("GANTRY_TOKEN_TTL_DAYS", "90"))

# Failed logins (console and token endpoint), counted per username and client address by django-axes
# (console.lockout reads GANTRY_LOGIN at each attempt).
GANTRY_LOGIN = {
    "MAX_FAILURES": int(os.environ.get("GANTRY_LOGIN_MAX_FAILURES", "5")),
    "LOCKOUT_MINUTES": int(os.environ.get("GANTRY_LOGIN_LOCKOUT_MINUTES", "15")),
}
# Proxies in front of the web server that append the address they saw to X-Forwarded-For: the client
# address (lockout, audit log) is the one the outermost of them saw. 0: REMOTE_ADDR is the client.
GANTRY_TRUSTED_PROXY_COUNT = int(os.environ.get("GANTRY_TRUSTED_PROXY_COUNT", "0"))
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses while a lock is in force
    "django.contrib.auth.backends.ModelBackend",
]
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]  # one client's failures lock that username from there only
AXES_FAILURE_LIMIT = "console.lockout.failure_limit"
AXES_COOLOFF_TIME = "console.lockout.lockout_time"
AXES_CLIENT_IP_CALLABLE = "console.actor.client_ip"
AXES_LOCKOUT_CALLABLE = "console.lockout.lockout_response"
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # logins are in the audit log (console.login_audit)
AXES_ENABLE_ADMIN = False
AXES_HTTP_RESPONSE_CODE = 429

# DRF and drf-spectacular (the OpenAPI schema): fixed, no environment variables (console/api_settings.py)
from console.api_settings import REST_FRAMEWORK, SPECTACULAR_SETTINGS  # noqa: E402, F401 (Django reads settings from this module)

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_AGE = 12 * 3600  # a working day; operators log in again the next morning
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]
if _env_bool("GANTRY_BEHIND_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

X_FRAME_OPTIONS = "DENY"
# Sent on every response (console.middleware): scripts and styles from our own static files only (htmx,
# uPlot and Swagger UI are vendored); data: images for Swagger UI's icons; no framing, no plugins.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page (base.html), not the cookie
if not DEBUG:
    if _env_bool("GANTRY_HTTPS", False):
        SESSION_COOKIE_SECURE = True
        CSRF_COOKIE_SECURE = True
        SECURE_SSL_REDIRECT = True
        SECURE_REDIRECT_EXEMPT = [r"^health$", r"^healthz$", r"^readyz$"]  # load balancers probe over plain HTTP
        SECURE_HSTS_SECONDS = 31536000
        SECURE_HSTS_INCLUDE_SUBDOMAINS = True
        SECURE_HSTS_PRELOAD = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
