"""The memory library page (``/a/<account>/memory``), for people.

- ``pages``: the routes and what each does (every action one request, through
  the gateway's gRPC servicers);
- ``sessions``: sign-in sessions, cookies and CSRF tokens;
- ``bodies``: the forms' request bodies (urlencoded, and the import's one file), bounded;
- ``forms``: form fields <-> request messages, and what a credential may write;
- ``display``: replies as text a person reads (enum names, times, audit records,
  the overview's rows);
- ``paging``: previous and next links over forward-only page tokens;
- ``templates/``, ``static/``: the HTML (jinja2, autoescaped), CSS and a little
  JavaScript the pages work without.
"""
