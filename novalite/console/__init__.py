"""Consoles of servers: the console tokens (``auth``) and the websocket proxies in front
of the guests' VNC and serial consoles (``novalite-novncproxy``, ``novalite-serialproxy``)."""
