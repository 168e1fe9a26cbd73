"""The console's own API: /api/v1/auth/token, /api/v1/auth/whoami, /api/v1/auth/password (one's own),
/api/v1/users (admin; /users/{username}/password sets another's), /api/v1/tokens (admin), /api/v1/audit-log (viewer)."""

from __future__ import annotations

from django.contrib.auth import authenticate, update_session_auth_hash
from django.contrib.auth.signals import user_logged_in, user_login_failed
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework import status as http_status
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from console import lockout, passwords, selectors, services
from console.actor import Actor, actor_from_request, client_ip
from console.authentication import ApiTokenAuthentication
from console.errors import InvalidInput
from console.models import ApiToken
from console.rest import paginated_response, parse_input, query_dict, validated
from console.roles import Role, role_of
from console.serializers import (
    AuditOutput,
    AuditQuery,
    CreatedTokenOutput,
    CreatedUserOutput,
    PasswordChangedOutput,
    PasswordChangeInput,
    PasswordResetInput,
    TokenCreateInput,
    TokenListQuery,
    TokenOutput,
    TokenRequestInput,
    UserCreateInput,
    UserOutput,
    UserUpdateInput,
    WhoAmIOutput,
)


def _created_token(created) -> dict:
    return {**TokenOutput(created.info).data, "token": created.token}


class TokenLoginLocked(Throttled):
    default_code = "login_locked"

    def __init__(self, lock: lockout.LoginLock) -> None:
        super().__init__(wait=lock.retry_after_s, detail=lock.message)


@extend_schema(tags=["auth"])
class AuthTokenView(APIView):
    """POST: username and password in, an API token out (failed attempts count towards a lockout).
    DELETE: revoke the token this request is authenticated with."""

    authentication_classes = [ApiTokenAuthentication]
    write_role = Role.VIEWER  # anyone may revoke the token they call with

    def get_permissions(self):
        return [AllowAny()] if self.request.method == "POST" else super().get_permissions()

    def get_authenticators(self):
        # POST takes a password, not credentials: a stale Authorization header must not refuse it.
        if getattr(self, "request", None) is not None and self.request.method == "POST":
            return []
        return super().get_authenticators()

    def get_authenticate_header(self, request) -> str:
        return ApiTokenAuthentication.keyword  # a wrong password is a 401 (with its header) on POST too

    @extend_schema(request=TokenRequestInput, responses={201: CreatedTokenOutput}, auth=[])
    def post(self, request: Request) -> Response:
        data = parse_input(TokenRequestInput, request.data)
        # authenticate(): django-axes refuses while a lock is in force and counts failures (console.lockout)
        user = authenticate(request._request, username=data["username"], password=data["password"])
        role = role_of(user) if user is not None else None
        if user is not None and role is None:  # a password that is right for an account with no role
            user_login_failed.send(
                sender=__name__, credentials={"username": data["username"]}, request=request._request
            )
            user = None
        if user is None or role is None:  # role is None only when user is
            lock = lockout.lock_after_failed_login(request._request, data["username"])
            if lock is not None:
                raise TokenLoginLocked(lock)
            raise AuthenticationFailed("username or password is wrong")
        # a token login is a login: axes clears the failures, the audit log records it (console.login_audit)
        user_logged_in.send(sender=user.__class__, request=request._request, user=user)
        actor = Actor(username=user.get_username(), role=role, source="api", ip=client_ip(request))
        created = services.api_token_create(actor=actor, username=user.get_username(), name=data.get("name", ""))
        return Response(_created_token(created), status=http_status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: TokenOutput})
    def delete(self, request: Request) -> Response:
        if not isinstance(request.auth, ApiToken):
            raise AuthenticationFailed("authenticate with the token to revoke ('Authorization: Token <token>')")
        info = services.api_token_revoke(actor=actor_from_request(request), token_id=request.auth.pk)
        return Response(TokenOutput(info).data)


@extend_schema(tags=["auth"])
class WhoAmIView(APIView):
    @extend_schema(responses=WhoAmIOutput)
    def get(self, request: Request) -> Response:
        auth = "token" if isinstance(request.auth, ApiToken) else "session"
        return Response({"username": request.user.get_username(), "role": role_of(request.user), "auth": auth})


@extend_schema(tags=["auth"])
class PasswordChangeView(APIView):
    """POST: change the caller's own password (the current one first). The caller's other console
    sessions end; a browser session that calls this stays signed in; API tokens keep working."""

    write_role = Role.VIEWER  # every signed-in user may change its own

    @extend_schema(request=PasswordChangeInput, responses={200: PasswordChangedOutput})
    def post(self, request: Request) -> Response:
        data = parse_input(PasswordChangeInput, request.data)
        passwords.password_change(actor=actor_from_request(request), **data)
        if not isinstance(request.auth, ApiToken):  # a session: keep this one signed in
            request.user.refresh_from_db()
            update_session_auth_hash(request._request, request.user)
        return Response(
            {
                "username": request.user.get_username(),
                "detail": "password changed; your other console sessions are signed out, API tokens keep working",
            }
        )


@extend_schema(tags=["users"])
class UserViewSet(viewsets.ViewSet):
    read_role = Role.ADMIN
    write_role = Role.ADMIN
    lookup_field = "username"
    lookup_value_regex = r"[^/]+"

    @extend_schema(responses=UserOutput(many=True))
    def list(self, request: Request) -> Response:
        return paginated_response(request, self, selectors.user_list(), UserOutput)

    @extend_schema(request=UserCreateInput, responses={201: CreatedUserOutput})
    def create(self, request: Request) -> Response:
        data = parse_input(UserCreateInput, request.data)
        created = services.user_create(actor=actor_from_request(request), **data)
        return Response(
            {**UserOutput(created.user).data, "password": created.password}, status=http_status.HTTP_201_CREATED
        )

    @extend_schema(responses=UserOutput)
    def retrieve(self, request: Request, username: str) -> Response:
        return Response(UserOutput(selectors.user_detail(username=username)).data)

    @extend_schema(request=UserUpdateInput, responses=UserOutput)
    def partial_update(self, request: Request, username: str) -> Response:
        data = parse_input(UserUpdateInput, request.data)
        return Response(
            UserOutput(services.user_update(actor=actor_from_request(request), username=username, **data)).data
        )

    @extend_schema(request=PasswordResetInput, responses={200: PasswordChangedOutput})
    @action(detail=True, methods=["post"])
    def password(self, request: Request, username: str) -> Response:
        """Set another user's password (admin); its console sessions end, its API tokens keep working."""
        data = parse_input(PasswordResetInput, request.data)
        passwords.password_reset(actor=actor_from_request(request), username=username, **data)
        if username == request.user.get_username() and not isinstance(request.auth, ApiToken):
            request.user.refresh_from_db()
            update_session_auth_hash(request._request, request.user)
        return Response(
            {
                "username": username,
                "detail": "password set; the user's console sessions are signed out, API tokens keep working",
            }
        )


@extend_schema(tags=["users"])
class TokenViewSet(viewsets.ViewSet):
    read_role = Role.ADMIN
    write_role = Role.ADMIN

    @extend_schema(parameters=[TokenListQuery], responses=TokenOutput(many=True))
    def list(self, request: Request) -> Response:
        q = parse_input(TokenListQuery, query_dict(request))
        return paginated_response(
            request, self, selectors.token_list(username=q.get("username"), active=q.get("active")), TokenOutput
        )

    @extend_schema(request=TokenCreateInput, responses={201: CreatedTokenOutput})
    def create(self, request: Request) -> Response:
        data = validated(TokenCreateInput, request.data).validated_data
        created = services.api_token_create(actor=actor_from_request(request), **data)
        return Response(_created_token(created), status=http_status.HTTP_201_CREATED)

    @extend_schema(parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH)], responses={200: TokenOutput})
    def destroy(self, request: Request, pk: str) -> Response:
        try:
            token_id = int(pk)
        except ValueError:
            raise InvalidInput("id", "must be an integer.") from None
        return Response(
            TokenOutput(services.api_token_revoke(actor=actor_from_request(request), token_id=token_id)).data
        )


@extend_schema(tags=["audit"])
class AuditLogViewSet(viewsets.ViewSet):
    @extend_schema(parameters=[AuditQuery], responses=AuditOutput(many=True))
    def list(self, request: Request) -> Response:
        q = parse_input(AuditQuery, query_dict(request))
        entries = selectors.audit_list(
            actor=q.get("actor", ""),
            action=q.get("action", ""),
            target=q.get("target", ""),
            target_type=q.get("target_type", ""),
            result=q.get("result", ""),
            since=q.get("since"),
            until=q.get("until"),
            oldest_first=q.get("ordering") == "created_at",
        )
        return paginated_response(request, self, entries, AuditOutput)
