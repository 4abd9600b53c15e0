/*
 * What export and import stand on: the scanner's walk over an object's
 * members (import reads its lines with it), base64 back to bytes, and the
 * writer recording a session that happened elsewhere with the times,
 * origin and columns it brings along; the export queries read it back.
 */

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "store.h"
#include "unit.h"

/* An input with its length, so it may hold NUL bytes. */
#define RAW(s)	(s), sizeof(s) - 1

/* Members found by import_members_cb, as "key=value" lines. */
struct members_seen {
	const char	*buf;
	char		 out[512];
	size_t		 n;
	int		 stop_at;	/* return non-zero at this member (1..) */
};

static int
import_members_cb(const struct scan_member *mb, void *arg)
{
	struct members_seen	*ms = arg;
	size_t			 left = sizeof ms->out - strlen(ms->out);

	ms->n++;
	snprintf(ms->out + strlen(ms->out), left, "%.*s%s=%.*s\n",
	    (int)mb->key_len, ms->buf + mb->key_off,
	    mb->key_escaped ? "(esc)" : "", (int)mb->val_len,
	    ms->buf + mb->val_off);
	return (ms->stop_at != 0 && (int)ms->n == ms->stop_at);
}

struct members_case {
	const char	*name;
	const char	*in;
	size_t		 len;
	int		 rc;
	const char	*seen;		/* what the callback saw */
};

static const struct members_case members_cases[] = {
	{ "values kept as written",
	  RAW(" {\"a\" : 1.50 ,\"b\":\"x\\ny\", \"c\":{ \"d\" : [1, {}] },"
	  "\"e\":null}\r\n"), 0,
	  "a=1.50\nb=\"x\\ny\"\nc={ \"d\" : [1, {}] }\ne=null\n" },
	{ "empty object", RAW("{}"), 0, "" },
	{ "escaped key", RAW("{\"m\\u0065\":true}"), 0, "m\\u0065(esc)=true\n" },
	{ "numbers beyond 64 bits stay text",
	  RAW("{\"n\":123456789012345678901234567890}"), 0,
	  "n=123456789012345678901234567890\n" },
	{ "duplicate keys each seen", RAW("{\"a\":1,\"a\":2}"), 0,
	  "a=1\na=2\n" },
	{ "not an object", RAW("[1,2]"), -1, "" },
	{ "not JSON", RAW("{\"a\":1,}"), -1, "a=1\n" },
	{ "bad value", RAW("{\"a\":tru}"), -1, "" },
	{ "trailing bytes", RAW("{\"a\":1} x"), -1, "a=1\n" },
	{ "invalid UTF-8 in a value", RAW("{\"a\":\"\xff\"}"), -1, "" },
};

/* The members of an object, in order, with their text as written. */
Test(import, scan_members, .timeout = UNIT_TIMEOUT)
{
	struct members_seen	 ms;
	size_t			 i;
	int			 rc;

	for (i = 0; i < sizeof members_cases / sizeof members_cases[0]; i++) {
		const struct members_case *c = &members_cases[i];

		memset(&ms, 0, sizeof ms);
		ms.buf = c->in;
		rc = scan_members(c->in, c->len, import_members_cb, &ms);
		cr_assert_eq(rc, c->rc, "%s: rc %d", c->name, rc);
		cr_assert_str_eq(ms.out, c->seen, "%s", c->name);
	}
	/* The callback stops the walk. */
	memset(&ms, 0, sizeof ms);
	ms.buf = "{\"a\":1,\"b\":2,\"c\":3}";
	ms.stop_at = 2;
	cr_assert_eq(scan_members(ms.buf, strlen(ms.buf), import_members_cb,
	    &ms), -1);
	cr_assert_eq(ms.n, 2);
}

static int
import_key_cb(const struct scan_member *mb, void *arg)
{
	const char	**names = arg;

	cr_assert(scan_key_is(names[0], mb, names[1]), "key is not %s",
	    names[1]);
	cr_assert_not(scan_key_is(names[0], mb, "other"));
	return 0;
}

/* A key compares equal to a name whether escaped or not. */
Test(import, scan_key_is, .timeout = UNIT_TIMEOUT)
{
	const char	*plain[] = { "{\"raw\":1}", "raw" };
	const char	*esc[] = { "{\"r\\u0061w\":1}", "raw" };
	const char	*slash[] = { "{\"a\\/b\":1}", "a/b" };

	cr_assert_eq(scan_members(plain[0], strlen(plain[0]), import_key_cb,
	    plain), 0);
	cr_assert_eq(scan_members(esc[0], strlen(esc[0]), import_key_cb,
	    esc), 0);
	cr_assert_eq(scan_members(slash[0], strlen(slash[0]), import_key_cb,
	    slash), 0);
}

/* Every length round-trips; text that is not padded base64 is refused. */
Test(import, b64_round_trip, .timeout = UNIT_TIMEOUT)
{
	static const char	*bad[] = { "QQ=", "Q===", "QQ=A", "QUJD!A==",
	    "Q Q=" };
	unsigned char		 in[64];
	char			*enc;
	unsigned char		*dec;
	size_t			 i, n, elen, dlen;

	for (i = 0; i < sizeof in; i++)
		in[i] = (unsigned char)(i * 37 + 255);
	for (n = 0; n <= sizeof in; n++) {
		enc = b64_encode(in, n, &elen);
		dec = b64_decode(enc, elen, &dlen);
		cr_assert_not_null(dec, "length %zu: %s refused", n, enc);
		cr_assert_eq(dlen, n);
		cr_assert_eq(memcmp(dec, in, n), 0, "length %zu differs", n);
		free(enc);
		free(dec);
	}
	dec = b64_decode("/w==", 4, &dlen);
	cr_assert_eq(dlen, 1);
	cr_assert_eq(dec[0], 0xff);
	free(dec);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_null(b64_decode(bad[i], strlen(bad[i]), &dlen),
		    "%s accepted", bad[i]);
}

/* The directory of the running test, removed after it. */
static char	import_dir[64];

static void
import_setup(void)
{
	snprintf(import_dir, sizeof import_dir, "/tmp/mcpreel-unit-XXXXXX");
	cr_assert_not_null(mkdtemp(import_dir), "mkdtemp failed");
}

static int
import_rm_cb(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	return remove(path);
}

static void
import_teardown(void)
{
	if (import_dir[0] != '\0')
		nftw(import_dir, import_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* What the export queries gave back. */
struct import_read {
	struct session_info	 info;
	char			*strs[8];
	int			 messages, events, exchanges;
	int64_t			 exchange_id;
	char			 order[32];	/* 'm' and 'e' as they came */
};

static const char *
import_keep(struct import_read *rd, int i, const char *s)
{
	rd->strs[i] = (s != NULL) ? xstrdup(s) : NULL;
	return rd->strs[i];
}

static int
import_info_cb(const struct session_info *si, void *arg)
{
	struct import_read	*rd = arg;

	rd->info = *si;
	rd->info.name = import_keep(rd, 0, si->name);
	rd->info.transport = import_keep(rd, 1, si->transport);
	rd->info.target = import_keep(rd, 2, si->target);
	rd->info.end_reason = import_keep(rd, 3, si->end_reason);
	rd->info.store_error = import_keep(rd, 4, si->store_error);
	rd->info.imported_from = import_keep(rd, 5, si->imported_from);
	rd->info.mcpreel_version = import_keep(rd, 6, si->mcpreel_version);
	return 0;
}

static int
import_exchange_cb(const struct exchange_row *x, void *arg)
{
	struct import_read	*rd = arg;

	rd->exchanges++;
	rd->exchange_id = x->id;
	cr_assert_str_eq(x->method, "POST");
	cr_assert_eq(x->started_ns, 5000);
	cr_assert(x->has_status);
	cr_assert_eq(x->status, 200);
	cr_assert_eq(x->response_mono_ns, 60);
	cr_assert_not(x->has_ended, "an exchange ended at no time has an end");
	cr_assert_str_eq(x->outcome, "complete");
	cr_assert(x->has_body);
	cr_assert_eq(x->body_len, 3);
	return 0;
}

static int
import_row_cb(const struct export_row *r, void *arg)
{
	struct import_read	*rd = arg;

	rd->order[strlen(rd->order)] = r->is_event ? 'e' : 'm';
	if (r->is_event) {
		rd->events++;
		cr_assert_eq(r->e.ts_ns, 7000);
		cr_assert_eq(r->e.mono_ns, 15);
		cr_assert_str_eq(r->e.kind, "stderr");
		return 0;
	}
	rd->messages++;
	if (r->m.seq == 1) {
		cr_assert_eq(r->m.ts_ns, 6000);
		cr_assert_eq(r->m.mono_ns, 10);
		cr_assert_eq(r->m.kind, KIND_REQUEST);
		cr_assert_eq(r->exchange, rd->exchange_id);
		cr_assert_eq(r->wire_size, 9999);
		cr_assert_str_eq(r->sha256, "ab12");
		cr_assert(r->truncated && r->redacted);
	} else {
		cr_assert_eq(r->m.mono_ns, 20);
		cr_assert_eq(r->m.kind, KIND_RESPONSE);
		cr_assert_str_eq(r->m.method, "tools/list");
		cr_assert_eq(r->reply_to_seq, 1);
		cr_assert_str_eq(r->sse_id, "ev1");
		cr_assert_eq(r->wire_size, -1);
		cr_assert_null(r->sha256);
		cr_assert_not(r->truncated || r->redacted);
	}
	return 0;
}

/*
 * A session from elsewhere keeps its own times, recorder and end, says
 * where it came from, and the export queries read every column back.
 */
Test(import, writer_imports_session, .init = import_setup,
    .fini = import_teardown, .timeout = UNIT_TIMEOUT)
{
	const char		*req =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
	const char		*resp = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
	struct wsession_meta	 meta;
	struct wexchange_info	 info;
	struct import_read	 rd;
	struct wexchange	*x;
	struct wsession		*s;
	struct writer		*w;
	struct store		*st;
	struct msg		*m;
	char			*path, *cause = NULL;
	int64_t			 id, nm, ne, nx;
	int			 i;

	xasprintf(&path, "%s/i.db", import_dir);
	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "%s", cause);
	w = writer_start(st, &cause);
	cr_assert_not_null(w, "%s", cause);

	memset(&meta, 0, sizeof meta);
	meta.started_ns = 5000;
	meta.recorder_pid = 4242;
	meta.version = "0.0.9";
	meta.imported_from = "/tmp/x.jsonl (jsonl)";
	meta.store_error = "disk full";
	meta.lost = 3;
	s = writer_session_import(w, "imp", "http", "http://up/mcp", &meta);

	memset(&info, 0, sizeof info);
	info.conn = 1;
	info.method = "POST";
	info.path = "/mcp";
	info.headers = "[]";
	info.ts_ns = 5000;
	info.mono_ns = 5;
	x = writer_exchange_begin(w, s, &info);
	info.headers = "[[\"Content-Type\",\"application/json\"]]";
	info.mono_ns = 60;
	writer_exchange_response(w, x, 200, &info);

	m = msg_new(DIR_C2S, req, strlen(req));
	m->ts_ns = 6000;
	m->mono_ns = 10;
	m->wire_size = 9999;
	m->sha256 = xstrdup("ab12");
	m->flags = MSG_TRUNCATED | MSG_REDACTED;
	writer_message(w, s, x, m);
	m = msg_new(DIR_S2C, "boom", 4);
	m->ts_ns = 7000;
	m->mono_ns = 15;
	writer_event_msg(w, s, "stderr", m);
	m = msg_new(DIR_S2C, resp, strlen(resp));
	m->mono_ns = 20;
	m->sse_id = xstrdup("ev1");
	writer_message(w, s, x, m);
	writer_exchange_end_at(w, x, WRITER_NO_TIME, "complete", "abc", 3);
	writer_session_end_at(w, s, 9000, 0, 0, "server exited");
	writer_stop(w);
	id = writer_session_id(s);
	cr_assert_gt(id, 0);
	cr_assert_eq(writer_session_lost(s), 0);
	writer_session_free(s);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	memset(&rd, 0, sizeof rd);
	cr_assert_eq(query_session_info(st, id, import_info_cb, &rd, &cause),
	    0, "%s", cause);
	cr_assert_str_eq(rd.info.name, "imp");
	cr_assert_str_eq(rd.info.transport, "http");
	cr_assert_eq(rd.info.started_ns, 5000);
	cr_assert(rd.info.has_ended);
	cr_assert_eq(rd.info.ended_ns, 9000);
	cr_assert_eq(rd.info.exit_status, 0);
	cr_assert_str_eq(rd.info.end_reason, "server exited");
	cr_assert_eq(rd.info.messages_lost, 3);
	cr_assert_str_eq(rd.info.store_error, "disk full");
	cr_assert_str_eq(rd.info.imported_from, "/tmp/x.jsonl (jsonl)");
	cr_assert_eq(rd.info.recorder_pid, 4242);
	cr_assert_str_eq(rd.info.mcpreel_version, "0.0.9");

	cr_assert_eq(query_exchanges(st, id, import_exchange_cb, &rd,
	    &cause), 0, "%s", cause);
	cr_assert_eq(rd.exchanges, 1);
	cr_assert_eq(query_export(st, id, 0, import_row_cb, &rd, &cause), 0,
	    "%s", cause);
	cr_assert_eq(rd.messages, 2);
	cr_assert_eq(rd.events, 1);
	cr_assert_str_eq(rd.order, "mem", "events come among the messages "
	    "by time");

	cr_assert_eq(query_session_counts(st, id, &nm, &ne, &nx, &cause), 0);
	cr_assert(nm == 2 && ne == 1 && nx == 1);
	cr_assert_eq(query_drop_session(st, id, &cause), 0, "%s", cause);
	cr_assert_eq(query_session_counts(st, id, &nm, &ne, &nx, &cause), 0);
	cr_assert(nm == 0 && ne == 0 && nx == 0, "the drop left rows");
	store_close(st);
	for (i = 0; i < 8; i++)
		free(rd.strs[i]);
	free(path);
}

/* An import that never reached its end is marked so, and never ended. */
Test(import, unfinished_import_is_marked, .init = import_setup,
    .fini = import_teardown, .timeout = UNIT_TIMEOUT)
{
	struct wsession_meta	 meta;
	struct import_read	 rd;
	struct wsession		*s;
	struct writer		*w;
	struct store		*st;
	char			*path, *cause = NULL;
	int			 i;

	xasprintf(&path, "%s/i.db", import_dir);
	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "%s", cause);
	w = writer_start(st, &cause);
	cr_assert_not_null(w, "%s", cause);
	memset(&meta, 0, sizeof meta);
	meta.started_ns = 1;
	meta.imported_from = "f (mcp-tape)";
	s = writer_session_import(w, NULL, "stdio", "[]", &meta);
	writer_stop(w);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	memset(&rd, 0, sizeof rd);
	cr_assert_eq(query_session_info(st, writer_session_id(s),
	    import_info_cb, &rd, &cause), 0, "%s", cause);
	cr_assert_str_eq(rd.info.end_reason, WRITER_IMPORTING);
	cr_assert_not(rd.info.has_ended);
	cr_assert_eq(rd.info.recorder_pid, 0, "no recorder pid was given");
	cr_assert_null(rd.info.mcpreel_version);
	store_close(st);
	writer_session_free(s);
	for (i = 0; i < 8; i++)
		free(rd.strs[i]);
	free(path);
}
