#!/usr/bin/env python3
"""A stand-in OpenTelemetry collector for bench/run.sh: it answers 200 to
every POST (reading the body whole, keep-alive) and counts requests and
bytes, which it prints on stderr when stopped (SIGTERM).  It decodes
nothing: the benchmark measures what exporting costs mcpreel, not a
collector.  Prints "otlp_sink: listening on http://127.0.0.1:PORT" first.
"""

import http.server
import signal
import sys

counts = {'requests': 0, 'bytes': 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def do_POST(self):
        n = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(n)
        counts['requests'] += 1
        counts['bytes'] += len(body)
        self.send_response(200)
        self.send_header('Content-Type', 'application/x-protobuf')
        self.send_header('Content-Length', '0')
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    print('otlp_sink: listening on http://127.0.0.1:%d' % srv.server_address[1], flush=True)

    def stop(*_):
        print('otlp_sink: requests=%d bytes=%d' % (counts['requests'], counts['bytes']),
              file=sys.stderr, flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    srv.serve_forever()


if __name__ == '__main__':
    main()
