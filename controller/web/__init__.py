"""The web apps (director's console, vugraph): one starlette + uvicorn stack.

Common parts live here (``broker``, ``listener``, ``sse``, ``i18n``, ``auth``, ``app``,
``static/common.css``); each app has its own subpackage. The apps talk to the tables only
through MQTT, as any third-party program would.
"""
