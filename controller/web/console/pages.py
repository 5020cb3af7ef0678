"""The console's two HTML pages (the login form and the page ``console.js`` draws), in the
director's language."""

from __future__ import annotations

import html
import re

from starlette.requests import Request
from starlette.responses import HTMLResponse

from controller.web.auth import Session
from controller.web.i18n import LANGS, label


def lang_of(request: Request) -> str:
    lang = request.query_params.get("lang") or request.cookies.get("bt_lang") or "en"
    return lang if lang in LANGS else "en"


#: the console's views are ``#room``, ``#log`` and ``#table/NAME``: anything else is dropped
_FRAGMENT = re.compile(r"#[A-Za-z0-9/_.%-]{1,80}")


def landing_fragment(fragment: str) -> str:
    """The fragment the login page carried (the view asked for before logging in, which
    the browser keeps from the server): itself when it is a plain view name, else ``""``."""
    return fragment if _FRAGMENT.fullmatch(fragment) else ""


def login_page(lang: str, error: bool = False, status: int = 200) -> HTMLResponse:
    def t(key: str) -> str:
        return html.escape(label(key, lang))
    langs = " ".join(f'<a href="/login?lang={code}">{code}</a>' for code in LANGS)
    err = f'<p class="error" id="login-error" role="alert">{t("wrong_password")}</p>' \
        if error else ""
    body = f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{t("title")}</title>
<link rel="stylesheet" href="/static/common/common.css">
<script src="/static/console/login.js" defer></script></head>
<body class="login"><main><h1>{t("title")}</h1>{err}
<form method="post" action="/login">
<input type="hidden" name="lang" value="{lang}">
<input type="hidden" name="fragment" id="login-fragment" value="">
<label>{t("name")} <input name="name" autocomplete="username"></label>
<label>{t("password")} <input name="password" type="password" autocomplete="current-password"
 required autofocus></label>
<button type="submit">{t("login")}</button></form>
<p class="langs">{langs}</p></main></body></html>"""
    return HTMLResponse(body, status_code=status)


def console_page(session: Session, lang: str) -> HTMLResponse:
    title = html.escape(label("title", lang))
    body = f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{html.escape(session.csrf)}">
<meta name="director" content="{html.escape(session.name)}">
<title>{title}</title>
<link rel="stylesheet" href="/static/common/common.css">
<link rel="stylesheet" href="/static/console/console.css">
<script src="/static/console/console.js" defer></script></head>
<body><header><h1>{title}</h1><nav>
<a href="#room" id="nav-room"></a> <a href="#log" id="nav-log"></a>
<select id="lang" aria-label="language">{"".join(
        f'<option value="{c}"{" selected" if c == lang else ""}>{c}</option>'
        for c in LANGS)}</select>
<span id="clock" class="clock"></span>
<span id="live" class="live"></span>
<form method="post" action="/logout"><input type="hidden" name="csrf"
 value="{html.escape(session.csrf)}"><button id="logout" type="submit"></button></form>
</nav></header><main id="app"></main></body></html>"""
    return HTMLResponse(body)
