"""Sign-in and who the reader is, for every page.

With an ``[auth]`` table in ``.streamlit/secrets.toml`` (Streamlit's own OpenID Connect sign-in:
``st.login``, ``st.user``, ``st.logout``; docs/deploy.md), every page asks for sign-in first, and
the access file (:mod:`evalcore.access`) gives the signed-in address its role; an address it does not
admit is told so and can sign out. Without ``[auth]`` the dashboard is in local mode, as on one
person's machine: the local identity with every role, said in the sidebar.

What a role may do is decided in :mod:`evalcore.access` alone; pages ask :func:`may` to show or hide
an action, and the store refuses it anyway (a forged request gets nowhere).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.render import md_escape
from evalcore.access import ACTIONS, Access, Identity, access_path, article, load_access, local_identity
from evalcore.errors import SetupError

WHO = "_ragtriage_identity"


class SignInMisconfigured(Exception):
    """The secrets cannot be read, or an access file names a team but sign-in is not configured."""


def sign_in_configured() -> bool:
    """Whether the server's secrets have an ``[auth]`` table. Fails closed: secrets that exist but
    cannot be read, or an access file (a team's) without ``[auth]``, raise
    :class:`SignInMisconfigured` rather than opening every page to everyone as local mode."""
    from streamlit.errors import StreamlitSecretNotFoundError

    try:
        configured = "auth" in st.secrets
    except StreamlitSecretNotFoundError:  # no secrets file at all
        configured = False
    except Exception as exc:  # a secrets file that does not parse
        msg = f"the dashboard's secrets could not be read ({type(exc).__name__}): fix .streamlit/secrets.toml"
        raise SignInMisconfigured(msg) from exc
    if not configured and access_path() is not None:
        msg = (
            f"an access file ({access_path()}) names who may use this ragtriage, but sign-in is not "
            "configured: add an [auth] table to .streamlit/secrets.toml (docs/deploy.md), or remove the "
            "access file for a single-user install"
        )
        raise SignInMisconfigured(msg)
    return configured


@st.cache_resource(show_spinner=False, ttl=30)
def _access(path: str | None, mtime: float) -> Access:  # (mtime: an edit is a new key)
    return load_access(Path(path) if path else None)


def access() -> Access:
    """The access file, read again when it changes (an admin's edit applies within 30 s, without a
    restart)."""
    path = access_path()
    mtime = path.stat().st_mtime if path is not None and path.exists() else 0.0
    return _access(str(path) if path else None, mtime)


def gate() -> Identity:
    """The reader, or the page stops: in local mode the local identity; with sign-in, the signed-in
    person admitted by the access file (else a sign-in screen, or a refusal with a way out)."""
    try:
        configured = sign_in_configured()
    except SignInMisconfigured as exc:
        st.error(md_escape(str(exc)), icon=":material/lock:")
        st.stop()
    if not configured:
        return local_identity()
    if not st.user.is_logged_in:
        st.title("ragtriage")
        st.markdown("Sign in to see this team's evaluation runs.")
        if st.button("Sign in", type="primary", key="auth_login", icon=":material/login:"):
            st.login()
        st.stop()
    email = str(st.user.get("email") or "")
    name = str(st.user.get("name") or "")
    try:
        acc = access()
    except SetupError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
        st.stop()
    if not acc.source:
        st.error(
            "Sign-in is on, but no access file names who may use this ragtriage: set RAGTRIAGE_ACCESS "
            "(or create .streamlit/access.toml); see docs/deploy.md.",
            icon=":material/lock:",
        )
        st.stop()
    # An address the provider says it has not verified is nobody's (it could name anyone).
    unverified = st.user.get("email_verified") is False
    who = acc.identity(email, name) if email and not unverified else None
    if who is None:
        st.title("ragtriage")
        st.error(
            md_escape(
                f"{email or 'This account'} is not admitted to this ragtriage. Ask an admin to add you to "
                "the access file, or sign in with another account."
            ),
            icon=":material/block:",
        )
        if st.button("Sign out", key="auth_logout_refused", icon=":material/logout:"):
            st.logout()
        st.stop()
    return who


def current() -> Identity:
    """The reader of this page run (set by the frame's :func:`gate`). Before the gate ran, nobody
    with any right to write: the local identity only where sign-in is off."""
    got = st.session_state.get(WHO)
    if isinstance(got, Identity):
        return got
    try:
        configured = sign_in_configured()
    except SignInMisconfigured:
        configured = True
    return Identity("nobody@signed-out", "viewer") if configured else local_identity()


def may(action: str) -> bool:
    return current().may(action)


def sidebar(who: Identity) -> None:
    """Who is signed in and their role, with a way out; or that this is local mode."""
    if who.local:
        st.caption(
            ":material/person: Local mode: no sign-in, every role.",
            help="To share the dashboard with sign-in and roles, configure `[auth]` in "
            "`.streamlit/secrets.toml` (docs/deploy.md).",
        )
        return
    st.caption(f":material/person: {md_escape(who.email)} · {who.role}")
    if st.button("Sign out", key="auth_logout", icon=":material/logout:"):
        st.logout()


def locked(action: str, what: str) -> None:
    """Say, in place of an action the reader's role may not take, which role it needs."""
    st.caption(
        f":material/lock: {what} needs the {ACTIONS[action]} role (you are {article(current().role)})."
    )


def name_field(key: str, container: object = None) -> str:
    """Who is deciding: in local mode a "Your name" field; signed in, the signed-in person (no field:
    the store records them whatever is typed)."""
    where = container if container is not None else st
    me = current()
    if me.local:
        return str(where.text_input("Your name", key=key))  # type: ignore[attr-defined]
    where.caption(f"Acting as **{md_escape(me.email)}**")  # type: ignore[attr-defined]
    return me.email
