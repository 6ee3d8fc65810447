"""The memory library page (``/a/<account>/memory``), for people.

- ``pages``: the routes and what each does (every action one request, through
  the gateway's gRPC servicers);
- ``sessions``: sign-in sessions, cookies and CSRF tokens;
- ``forms``: form fields <-> request messages;
- ``templates/``, ``static/``: the HTML (jinja2, autoescaped), CSS and a little
  JavaScript the pages work without.
"""
