"""Adding, editing and removing name-server sets (admin only, audited); the list they read from.

A set is a tier the console can switch to (brokers.gateway.namesrv_sets): a name, its name server
list, the ACL account to sign with and a TLS flag. ``default`` (settings.MQ's) is always first and
cannot be edited here. Bad input is refused naming the field before anything changes; a secret key
is stored for signing and never shown back (``has_secret_key`` only).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from brokers.engine.common.namesrv_addr import InvalidNamesrvAddrError, parse_namesrv_addrs
from brokers.gateway.client_lifecycle import forget_admin_client
from brokers.gateway.namesrv_sets import DEFAULT, NAME_RE, default_target
from brokers.models import BrokerSighting, NamesrvSet
from console.actor import Actor
from console.audit import audited
from console.errors import InvalidInput, NotFound
from console.roles import Role

MAX_SETS = 50  # a switcher, not a fleet inventory
MAX_POSITION = 10_000


@dataclass(frozen=True)
class NamesrvSetInput:
    name: str
    namesrv_addr: str
    access_key: str = ""
    secret_key: str = ""  # on an update: "" keeps the stored one (unless access_key changes)
    tls: bool = False
    position: int = 0


@dataclass(frozen=True)
class NamesrvSetView:
    """One set as pages and the API show it: never its secret."""

    name: str
    namesrv_addr: str
    access_key: str
    has_secret_key: bool
    tls: bool
    position: int
    default: bool  # settings.MQ's tier: listed first, changed through the environment only


def _view(row: NamesrvSet) -> NamesrvSetView:
    return NamesrvSetView(
        row.name, row.namesrv_addr, row.access_key, bool(row.secret_key), row.tls, row.position, False
    )


def namesrv_set_list() -> tuple[NamesrvSetView, ...]:
    """Every set the switcher offers, ``default`` first, then the admin's by position."""
    d = default_target()
    first = NamesrvSetView(d.name, d.namesrv_addr, d.access_key, bool(d.secret_key), d.tls, 0, True)
    return (first, *(_view(row) for row in NamesrvSet.objects.all()))


def namesrv_set_get(name: str) -> NamesrvSetView:
    """One set; NotFound when none is called ``name``."""
    for view in namesrv_set_list():
        if view.name == name:
            return view
    raise NotFound(f"no name-server set is called {name!r}")


def _row(name: str) -> NamesrvSet:
    if name == DEFAULT:
        raise InvalidInput(
            "name", "default is settings.MQ's tier (NAMESRV_ADDR, MQ_ACCESS_KEY ...): change it in the environment"
        )
    row = NamesrvSet.objects.filter(name=name).first()
    if row is None:
        raise NotFound(f"no name-server set is called {name!r}")
    return row


def _checked(data: NamesrvSetInput, *, keeps_secret: bool) -> NamesrvSetInput:
    """``data`` with its address list normalised, or InvalidInput naming the first bad field."""
    if not NAME_RE.fullmatch(data.name):
        raise InvalidInput("name", "1 to 64 letters, digits, '-' or '_', starting with a letter or digit")
    if data.name == DEFAULT:
        raise InvalidInput("name", "default is settings.MQ's tier; choose another name")
    try:
        addrs = parse_namesrv_addrs(data.namesrv_addr)
    except InvalidNamesrvAddrError as exc:
        raise InvalidInput("namesrv_addr", f"{exc} (host:port;host:port)") from None
    if data.access_key and not (data.secret_key or keeps_secret):
        raise InvalidInput("secret_key", "an access key needs its secret key")
    if data.secret_key and not data.access_key:
        raise InvalidInput("access_key", "a secret key needs its access key")
    if not 0 <= data.position <= MAX_POSITION:
        raise InvalidInput("position", f"0 to {MAX_POSITION} (lower comes first)")
    return NamesrvSetInput(data.name, ";".join(addrs), data.access_key, data.secret_key, data.tls, data.position)


def namesrv_set_create(*, actor: Actor, data: NamesrvSetInput) -> NamesrvSetView:
    """Add a set (after ``default`` and the sets of a lower position)."""
    actor.require(Role.ADMIN)
    with audited(actor=actor, action="namesrv_set.create", target_type="namesrv_set", target=data.name[:255]) as note:
        data = _checked(data, keeps_secret=False)
        with transaction.atomic():
            if NamesrvSet.objects.filter(name=data.name).exists():
                raise InvalidInput("name", f"a name-server set called {data.name!r} exists")
            if NamesrvSet.objects.count() >= MAX_SETS:
                raise InvalidInput("name", f"the console holds at most {MAX_SETS} name-server sets")
            row = NamesrvSet.objects.create(
                name=data.name,
                namesrv_addr=data.namesrv_addr,
                access_key=data.access_key,
                secret_key=data.secret_key,
                tls=data.tls,
                position=data.position,
            )
        note.after = _view(row)
    return note.after


def namesrv_set_update(*, actor: Actor, name: str, data: NamesrvSetInput) -> NamesrvSetView:
    """Change a set's addresses, account, TLS flag or position (its name stays: the URL names it)."""
    actor.require(Role.ADMIN)
    with audited(actor=actor, action="namesrv_set.update", target_type="namesrv_set", target=name[:255]) as note:
        row = _row(name)
        note.before = _view(row)
        data = _checked(
            NamesrvSetInput(name, data.namesrv_addr, data.access_key, data.secret_key, data.tls, data.position),
            keeps_secret=bool(row.secret_key) and data.access_key == row.access_key,
        )
        row.namesrv_addr, row.access_key, row.tls, row.position = (
            data.namesrv_addr,
            data.access_key,
            data.tls,
            data.position,
        )
        row.secret_key = data.secret_key or (row.secret_key if data.access_key else "")
        row.updated_at = timezone.now()
        row.save()
        forget_admin_client(name)
        note.after = _view(row)
    return note.after


def namesrv_set_delete(*, actor: Actor, name: str) -> None:
    """Remove a set; sessions on it fall back to ``default``, tasks queued under it fail rather than run elsewhere.
    Its broker sightings go with it (a set added later under the same name starts with none); its alert rules,
    scans and jobs stay as history (the rules are evaluated again only if a set of that name comes back)."""
    actor.require(Role.ADMIN)
    with audited(actor=actor, action="namesrv_set.delete", target_type="namesrv_set", target=name[:255]) as note:
        row = _row(name)
        note.before = _view(row)
        row.delete()
        BrokerSighting.objects.filter(namesrv_set=name).delete()
        forget_admin_client(name)
