"""moto server (S3, DynamoDB, Secrets Manager) on 127.0.0.1 that handles one request at a time.

moto's request handlers are not atomic when requests run concurrently: two
conditional UpdateItems on one item can both pass their condition, which real
DynamoDB never allows (the store contract's concurrency cases catch it). The
server still accepts connections on many threads; the application is serialized.

Usage: python3 moto_server.py PORT
"""

import signal
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()


def serialized(environ, start_response):
    with lock:
        # Produce the whole body under the lock: the response is computed lazily.
        return [b"".join(app(environ, start_response))]


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    run_simple("127.0.0.1", int(sys.argv[1]), serialized, threaded=True)
