#!/usr/bin/python3
"""An OTLP/HTTP trace receiver for the end-to-end tests, independent of
mcpreel's code: it decodes with Google's protobuf library over message
definitions written from the OTLP specification (proto/ here), compiled
with protoc at start.

Run it with Debian's /usr/bin/python3 (python3-protobuf) and protoc
(protobuf-compiler) on PATH.

    receiver.py serve OUT [PHASE ...]
        Listen on 127.0.0.1, a port the kernel picks; the first line on
        stdout is that port.  POST /v1/traces with application/x-protobuf
        or application/json is decoded into ExportTraceServiceRequest and
        one JSON line per request is appended to OUT (see record()).
        PHASES say how to answer, in order; a phase followed by xK lasts K
        requests, the last one lasts forever (default: ok):
            ok            200, an empty ExportTraceServiceResponse
            status N      answer N (429 and 503 with Retry-After: 1)
            slow S        sleep S seconds, then 200
        e.g. `serve out.jsonl status 500 x2 ok`: 500 twice, then 200.
        SIGTERM or SIGINT: stop.

    receiver.py decode FILE
        Read OTLP/JSON lines (one ExportTraceServiceRequest per line, as
        `mcpreel export --format otlp -o FILE` writes them) and decode each
        the same strict way; print one JSON line per input line (as in OUT,
        without the HTTP fields).  Exit 1 if any line fails to decode.

Strictness beyond the protobuf library's own: OTLP/JSON ids must be hex of
the right length (the library would take them for base64), enums must be
integers, 64-bit integers must be decimal strings, field names must be
known; binary requests must have no unknown fields; ids must have their
lengths and not be all zero; attribute keys must be unique per span.  Each
failure is a "problems" entry of the decoded line.
"""

import base64
import gzip
import http.server
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, 'proto')
PROTOS = [
    'opentelemetry/proto/common/v1/common.proto',
    'opentelemetry/proto/resource/v1/resource.proto',
    'opentelemetry/proto/trace/v1/trace.proto',
    'opentelemetry/proto/collector/trace/v1/trace_service.proto',
]
BODY_MAX = 64 * 1024 * 1024     # the OTLP specification's recommended limit
HEX = re.compile(r'^[0-9a-fA-F]*$')


def compile_protos():
    """Compile PROTOS into a temporary package directory and import it."""
    out = tempfile.mkdtemp(prefix='otlp-receiver-')
    subprocess.run(['protoc', '--proto_path=' + PROTO_DIR,
                    '--python_out=' + out] + PROTOS, check=True)
    # Regular packages, so that no installed "opentelemetry" package can
    # shadow these.
    for root, _dirs, _files in os.walk(os.path.join(out, 'opentelemetry')):
        open(os.path.join(root, '__init__.py'), 'a').close()
    sys.path.insert(0, out)
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    return out, trace_service_pb2


TMP, PB = compile_protos()
from google.protobuf import json_format  # noqa: E402


class DecodeError(Exception):
    """A body that is not a valid ExportTraceServiceRequest."""


def fix_json_ids(obj, problems, where):
    """OTLP/JSON ids are hex; check them and rewrite them as base64, which
    is what the protobuf library's JSON parser expects for bytes."""
    for key, size in (('traceId', 16), ('spanId', 8), ('parentSpanId', 8)):
        if key not in obj:
            continue
        v = obj[key]
        if not isinstance(v, str) or not HEX.match(v) or len(v) % 2:
            raise DecodeError('%s.%s is not a hex string: %r' % (where, key, v))
        if len(v) not in (0, size * 2):
            problems.append('%s.%s has %d hex digits, not %d' % (where, key, len(v), size * 2))
        obj[key] = base64.b64encode(bytes.fromhex(v)).decode()


def check_int64_json(v, problems, where):
    """A 64-bit integer in OTLP/JSON is written as a decimal string."""
    if not isinstance(v, str):
        problems.append('%s is a JSON %s, not a decimal string' % (where, type(v).__name__))


def check_enum_json(v, where):
    """OTLP/JSON enums are integers, never names."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise DecodeError('%s is %r: OTLP/JSON enums must be integers' % (where, v))


def check_anyvalue_json(v, problems, where, depth=0):
    """Walk an AnyValue for 64-bit integers written as numbers."""
    if not isinstance(v, dict) or depth > 64:
        return
    if 'intValue' in v:
        check_int64_json(v['intValue'], problems, where + '.intValue')
    for item in (v.get('arrayValue') or {}).get('values', []) or []:
        check_anyvalue_json(item, problems, where + '[]', depth + 1)
    for kv in (v.get('kvlistValue') or {}).get('values', []) or []:
        if isinstance(kv, dict):
            check_anyvalue_json(kv.get('value'), problems,
                                where + '.' + str(kv.get('key')), depth + 1)


def prepare_json(doc, problems):
    """The OTLP-specific JSON checks and the id rewrite, before parsing."""
    if not isinstance(doc, dict):
        raise DecodeError('the body is not a JSON object')
    for i, rs in enumerate(doc.get('resourceSpans') or []):
        if not isinstance(rs, dict):
            continue
        for kv in ((rs.get('resource') or {}).get('attributes') or []):
            if isinstance(kv, dict):
                check_anyvalue_json(kv.get('value'), problems, 'resource.' + str(kv.get('key')))
        for j, ss in enumerate(rs.get('scopeSpans') or []):
            if not isinstance(ss, dict):
                continue
            for k, sp in enumerate(ss.get('spans') or []):
                if not isinstance(sp, dict):
                    continue
                where = 'resourceSpans[%d].scopeSpans[%d].spans[%d]' % (i, j, k)
                fix_json_ids(sp, problems, where)
                if 'kind' in sp:
                    check_enum_json(sp['kind'], where + '.kind')
                if isinstance(sp.get('status'), dict) and 'code' in sp['status']:
                    check_enum_json(sp['status']['code'], where + '.status.code')
                for t in ('startTimeUnixNano', 'endTimeUnixNano'):
                    if t in sp:
                        check_int64_json(sp[t], problems, where + '.' + t)
                for kv in sp.get('attributes') or []:
                    if isinstance(kv, dict):
                        check_anyvalue_json(kv.get('value'), problems,
                                            where + '.' + str(kv.get('key')))


def decode(body, content_type):
    """Decode a request body; returns (ExportTraceServiceRequest, problems)."""
    problems = []
    msg = PB.ExportTraceServiceRequest()
    if content_type == 'application/x-protobuf':
        try:
            msg.ParseFromString(body)
        except Exception as e:  # the library's DecodeError, by version
            raise DecodeError('protobuf: %s' % e)
        size = msg.ByteSize()
        msg.DiscardUnknownFields()
        if msg.ByteSize() != size:
            problems.append('unknown fields (%d bytes of them)' % (size - msg.ByteSize()))
    elif content_type == 'application/json':
        try:
            doc = json.loads(body.decode('utf-8'))
        except (UnicodeDecodeError, ValueError) as e:
            raise DecodeError('JSON: %s' % e)
        prepare_json(doc, problems)
        try:
            json_format.ParseDict(doc, msg, ignore_unknown_fields=False)
        except json_format.ParseError as e:
            raise DecodeError('OTLP/JSON: %s' % e)
    else:
        raise DecodeError('unsupported content type %r' % content_type)
    return msg, problems


def anyvalue(v, depth=0):
    """An AnyValue as {"type": ..., "value": ...}, values as plain JSON."""
    which = v.WhichOneof('value')
    if which is None:
        return {'type': 'empty', 'value': None}
    if which == 'string_value':
        return {'type': 'string', 'value': v.string_value}
    if which == 'bool_value':
        return {'type': 'bool', 'value': v.bool_value}
    if which == 'int_value':
        return {'type': 'int', 'value': v.int_value}
    if which == 'double_value':
        return {'type': 'double', 'value': v.double_value}
    if which == 'bytes_value':
        return {'type': 'bytes', 'value': v.bytes_value.hex()}
    if which == 'array_value':
        return {'type': 'array', 'value': [anyvalue(x, depth + 1) for x in v.array_value.values]}
    return {'type': 'kvlist',
            'value': [[kv.key, anyvalue(kv.value, depth + 1)] for kv in v.kvlist_value.values]}


def attributes(kvs, problems, where):
    """Attributes as an object; a key seen twice is a problem."""
    out = {}
    for kv in kvs:
        if kv.key in out:
            problems.append('%s: attribute %r twice' % (where, kv.key))
        if not kv.HasField('value'):
            problems.append('%s: attribute %r has no value' % (where, kv.key))
        out[kv.key] = anyvalue(kv.value)
    return out


def flatten(msg, problems):
    """The spans of a request, one object each, with their resource and
    scope; ids as lowercase hex."""
    spans = []
    for rs in msg.resource_spans:
        res = attributes(rs.resource.attributes, problems, 'resource')
        for ss in rs.scope_spans:
            scope = {'name': ss.scope.name, 'version': ss.scope.version}
            for sp in ss.spans:
                where = 'span %r' % sp.name
                if len(sp.trace_id) != 16 or not any(sp.trace_id):
                    problems.append('%s: trace id %r' % (where, sp.trace_id.hex()))
                if len(sp.span_id) != 8 or not any(sp.span_id):
                    problems.append('%s: span id %r' % (where, sp.span_id.hex()))
                if sp.parent_span_id and (len(sp.parent_span_id) != 8 or not any(sp.parent_span_id)):
                    problems.append('%s: parent span id %r' % (where, sp.parent_span_id.hex()))
                if sp.start_time_unix_nano == 0 or sp.end_time_unix_nano < sp.start_time_unix_nano:
                    problems.append('%s: times %d..%d' % (where, sp.start_time_unix_nano,
                                                          sp.end_time_unix_nano))
                spans.append({
                    'traceId': sp.trace_id.hex(),
                    'spanId': sp.span_id.hex(),
                    'parentSpanId': sp.parent_span_id.hex(),
                    'traceState': sp.trace_state,
                    'name': sp.name,
                    'kind': sp.kind,
                    'start': str(sp.start_time_unix_nano),
                    'end': str(sp.end_time_unix_nano),
                    'flags': sp.flags,
                    'status': {'code': sp.status.code, 'message': sp.status.message},
                    'attributes': attributes(sp.attributes, problems, where),
                    'droppedAttributes': sp.dropped_attributes_count,
                    'resource': res,
                    'scope': scope,
                })
    return spans


def decoded_line(body, content_type):
    """The JSON object recorded for one body: its spans and problems, or
    the error that made it undecodable."""
    try:
        msg, problems = decode(body, content_type)
    except DecodeError as e:
        return {'error': str(e), 'spans': [], 'problems': []}
    spans = flatten(msg, problems)
    return {'spans': spans, 'problems': problems}


class Plan:
    """The answers to give, phase after phase."""

    def __init__(self, argv):
        self.phases = []
        i = 0
        while i < len(argv):
            word = argv[i]
            if word == 'ok':
                phase = {'mode': 'ok'}
                i += 1
            elif word in ('status', 'slow') and i + 1 < len(argv):
                phase = {'mode': word, 'arg': float(argv[i + 1])}
                i += 2
            else:
                sys.exit('receiver.py: bad phase %r' % word)
            phase['count'] = None
            if i < len(argv) and re.match(r'^x\d+$', argv[i]):
                phase['count'] = int(argv[i][1:])
                i += 1
            self.phases.append(phase)
        if not self.phases:
            self.phases.append({'mode': 'ok', 'count': None})
        self.lock = threading.Lock()
        self.seen = 0

    def next(self):
        """The phase for the next request, and its sequence number."""
        with self.lock:
            n = self.seen
            self.seen += 1
        left = n
        for p in self.phases:
            if p['count'] is None or left < p['count']:
                return p, n
            left -= p['count']
        return self.phases[-1], n


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'   # keep-alive, as collectors speak it
    server_version = 'otlp-test-receiver'

    def log_message(self, fmt, *args):
        sys.stderr.write('receiver: %s\n' % (fmt % args))

    def answer(self, status, body=b'', content_type='application/json', extra=()):
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer(404, b'{}')

    def do_POST(self):
        srv = self.server
        t0 = time.time()
        try:
            length = int(self.headers.get('Content-Length') or 0)
        except ValueError:
            length = -1
        if length < 0 or length > BODY_MAX:
            self.answer(413, b'{}')
            self.close_connection = True
            return
        body = self.rfile.read(length)
        if (self.headers.get('Content-Encoding') or '').lower() == 'gzip':
            try:
                body = gzip.GzipFile(fileobj=io.BytesIO(body)).read(BODY_MAX + 1)
            except (OSError, EOFError):
                body = b''
            if len(body) > BODY_MAX:
                self.answer(413, b'{}')
                self.close_connection = True
                return
        ctype = (self.headers.get('Content-Type') or '').split(';')[0].strip().lower()
        phase, n = srv.plan.next()
        line = {'n': n, 'time': t0, 'path': self.path, 'contentType': ctype,
                'headers': {k.lower(): v for k, v in self.headers.items()},
                'bytes': len(body)}
        if self.path != '/v1/traces':
            status = 404
            line['error'] = 'path %s' % self.path
            line.update(spans=[], problems=[])
        else:
            line.update(decoded_line(body, ctype))
            status = 400 if 'error' in line else 200
            if status == 200 and phase['mode'] == 'status':
                status = int(phase['arg'])
        line['answer'] = status
        if phase['mode'] == 'slow':
            line['slept'] = phase['arg']
        srv.record(line)
        if phase['mode'] == 'slow':
            time.sleep(phase['arg'])
        extra = [('Retry-After', '1')] if status in (429, 503) else []
        try:
            if status == 200 and ctype == 'application/x-protobuf':
                self.answer(200, PB.ExportTraceServiceResponse().SerializeToString(),
                            'application/x-protobuf')
            elif status == 200:
                self.answer(200, b'{}')
            else:
                msg = json.dumps({'code': 3 if status == 400 else 14,
                                  'message': line.get('error') or 'test receiver: %d' % status})
                self.answer(status, msg.encode(), 'application/json', extra)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, out, plan):
        super().__init__(('127.0.0.1', 0), Handler)
        self.out = open(out, 'a', encoding='utf-8')
        self.out_lock = threading.Lock()
        self.plan = plan

    def record(self, line):
        """Append one decoded request to OUT, whole, at once."""
        with self.out_lock:
            self.out.write(json.dumps(line, sort_keys=True) + '\n')
            self.out.flush()


def serve(out, phases):
    """The serve mode."""
    srv = Server(out, Plan(phases))

    def stop(_sig, _frame):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.stdout.write('%d\n' % srv.server_address[1])
    sys.stdout.flush()
    srv.serve_forever(poll_interval=0.1)
    srv.server_close()
    return 0


def decode_file(path):
    """The decode mode."""
    bad = 0
    with open(path, 'rb') as f:
        for i, raw in enumerate(f):
            raw = raw.rstrip(b'\n')
            line = {'line': i + 1, 'bytes': len(raw)}
            line.update(decoded_line(raw, 'application/json'))
            if 'error' in line:
                bad += 1
            sys.stdout.write(json.dumps(line, sort_keys=True) + '\n')
    return 1 if bad else 0


def main(argv):
    try:
        if len(argv) >= 2 and argv[0] == 'serve':
            return serve(argv[1], argv[2:])
        if len(argv) == 2 and argv[0] == 'decode':
            return decode_file(argv[1])
        sys.stderr.write('usage: receiver.py serve OUT [PHASE ...] | decode FILE\n')
        return 2
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
