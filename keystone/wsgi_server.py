"""Keystone's WSGI application under Python's own WSGI server, on 127.0.0.1
only: enough for the Keystone test (keystone/run.sh), with nothing more to
install than Debian's python3-keystone. One request at a time: Keystone on
SQLite fails concurrent writes with "database is locked".

Usage: wsgi_server.py CONFIG_FILE PORT
"""
import os
import sys
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

config_file, port = sys.argv[1], int(sys.argv[2])
os.environ["OS_KEYSTONE_CONFIG_FILES"] = config_file
del sys.argv[1:]  # oslo.config parses the command line too

from keystone.server import wsgi  # noqa: E402  (reads the configuration named above)


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


httpd = make_server("127.0.0.1", port, wsgi.initialize_public_application(), WSGIServer, QuietHandler)
print("keystone listening on 127.0.0.1:%d" % port, flush=True)
httpd.serve_forever()
