"""``bridge-table vugraph``: the public's web view of a session, from ``public/#`` only
(``app.py`` the store and the app, ``cli.py`` the command)."""
