/*
 * The store's views for people: per-method statistics (counts, errors,
 * nearest-rank latency percentiles) and requests left unanswered, on
 * sessions written through the writer with latencies set exactly.
 */

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "store.h"
#include "unit.h"

#define MS	1000000LL

static char	query_dir[64];

static void
query_setup(void)
{
	snprintf(query_dir, sizeof query_dir, "/tmp/mcpreel-unit-XXXXXX");
	cr_assert_not_null(mkdtemp(query_dir), "mkdtemp failed");
}

static int
query_rm_cb(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	return remove(path);
}

static void
query_teardown(void)
{
	if (query_dir[0] != '\0')
		nftw(query_dir, query_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(query, .init = query_setup, .fini = query_teardown,
    .timeout = UNIT_TIMEOUT);

/* The monotonic time the next message is stamped with. */
static int64_t	query_clock = 1000 * MS;

/* How a request is answered. */
enum answer {
	ANSWER_NONE,
	ANSWER_OK,
	ANSWER_FAILED,		/* a result with "isError": true */
	ANSWER_NOT_FAILED,	/* "isError": false, the words in a string */
	ANSWER_ERROR,
	ANSWER_MAX
};

/* Queue text as a message of dir stamped at mono. */
static void
query_put(struct writer *w, struct wsession *s, enum dir dir, int64_t mono,
    const char *text)
{
	struct msg	*m;

	m = msg_new(dir, text, strlen(text));
	m->mono_ns = mono;
	/*
	 * The writer takes it either way; 1 only asks a live producer to
	 * pause (a loaded machine can keep the writer off the CPU past its
	 * lag bound), which these tests need not do.
	 */
	(void)writer_message(w, s, NULL, m);
}

/* A request of dir for method with id, answered after lat as a says. */
static void
query_exchange(struct writer *w, struct wsession *s, enum dir dir,
    const char *method, int id, int64_t lat, enum answer a)
{
	char	text[256];

	snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"%s\"}", id, method);
	query_put(w, s, dir, query_clock, text);
	switch (a) {
	case ANSWER_OK:
		snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{}}", id);
		break;
	case ANSWER_FAILED:
		snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{\"content\":[],\"isError\":true}}", id);
		break;
	case ANSWER_NOT_FAILED:
		snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{\"isError\":false,\"x\":"
		    "\"\\\"isError\\\":true\"}}", id);
		break;
	case ANSWER_ERROR:
		snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"error\":{\"code\":1,\"message\":\"no\"}}", id);
		break;
	default:
		text[0] = '\0';
		break;
	}
	if (text[0] != '\0')
		query_put(w, s, dir == DIR_C2S ? DIR_S2C : DIR_C2S,
		    query_clock + lat, text);
	query_clock += 200 * MS;
}

/*
 * Two sessions: the first has 100 tools/call answered in 1..100 ms (in a
 * shuffled order) and one left hanging, three pings from the server (one
 * an error), and calls whose results say isError true and false; the
 * second one more tools/call.  Returns the sessions' ids.
 */
static void
query_record(const char *path, int64_t *one, int64_t *two)
{
	struct store	*st;
	struct writer	*w;
	struct wsession	*s;
	char		*cause = NULL;
	int		 i, id = 1;

	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "%s", cause);
	w = writer_start(st, &cause);
	cr_assert_not_null(w, "%s", cause);
	s = writer_session_begin(w, "one", "stdio", "[\"x\"]");
	for (i = 0; i < 100; i++)
		query_exchange(w, s, DIR_C2S, "tools/call", id++,
		    (int64_t)((i * 37) % 100 + 1) * MS, ANSWER_OK);
	query_exchange(w, s, DIR_C2S, "tools/call", id++, 0, ANSWER_NONE);
	query_exchange(w, s, DIR_S2C, "ping", 1, 5 * MS, ANSWER_OK);
	query_exchange(w, s, DIR_S2C, "ping", 2, 1 * MS, ANSWER_ERROR);
	query_exchange(w, s, DIR_S2C, "ping", 3, 3 * MS, ANSWER_OK);
	query_exchange(w, s, DIR_C2S, "a/b", id++, 7 * MS, ANSWER_FAILED);
	query_exchange(w, s, DIR_C2S, "a/b", id++, 9 * MS, ANSWER_NOT_FAILED);
	writer_session_end(w, s, 0, 0, "done");
	writer_stop(w);
	*one = writer_session_id(s);
	writer_session_free(s);

	/* The writer closed the store: open it again. */
	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	w = writer_start(st, &cause);
	cr_assert_not_null(w, "%s", cause);
	s = writer_session_begin(w, "two", "stdio", "[\"x\"]");
	query_exchange(w, s, DIR_C2S, "tools/call", 1, 1000 * MS, ANSWER_OK);
	writer_stop(w);
	*two = writer_session_id(s);
	writer_session_free(s);
}

struct stats_seen {
	int			n;
	struct method_stats	row[8];
	char			method[8][32];
};

static int
query_stats_cb(const struct method_stats *ms, void *arg)
{
	struct stats_seen	*seen = arg;

	cr_assert_lt(seen->n, 8);
	seen->row[seen->n] = *ms;
	snprintf(seen->method[seen->n], sizeof seen->method[0], "%s",
	    ms->method);
	seen->row[seen->n].method = NULL;
	seen->n++;
	return 0;
}

/* Check one row of method statistics. */
static void
query_check(const struct stats_seen *seen, int i, enum dir dir,
    const char *method, int64_t req, int64_t ans, int64_t err, int64_t p50,
    int64_t p95, int64_t p99, int64_t max)
{
	const struct method_stats	*r = &seen->row[i];

	cr_assert_str_eq(seen->method[i], method);
	cr_assert_eq(r->dir, dir, "%s: dir", method);
	cr_assert_eq(r->requests, req, "%s: requests %lld", method,
	    (long long)r->requests);
	cr_assert_eq(r->answered, ans, "%s: answered", method);
	cr_assert_eq(r->errors, err, "%s: errors %lld", method,
	    (long long)r->errors);
	cr_assert_eq(r->p50_ns, p50, "%s: p50 %lld", method,
	    (long long)r->p50_ns);
	cr_assert_eq(r->p95_ns, p95, "%s: p95 %lld", method,
	    (long long)r->p95_ns);
	cr_assert_eq(r->p99_ns, p99, "%s: p99 %lld", method,
	    (long long)r->p99_ns);
	cr_assert_eq(r->max_ns, max, "%s: max", method);
}

/*
 * Percentiles by nearest rank: of 1..100 ms the 50th, 95th and 99th; of
 * three (1, 3, 5 ms) the 2nd, 3rd and 3rd; of two, the 1st, 2nd, 2nd.
 * Errors count error responses and isError true, nothing else.
 */
Test(query, method_stats, .timeout = UNIT_TIMEOUT)
{
	struct stats_seen	 seen;
	struct store		*st;
	char			*path, *cause = NULL;
	int64_t			 one, two;

	xasprintf(&path, "%s/s.db", query_dir);
	query_record(path, &one, &two);
	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);

	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_method_stats(st, one, query_stats_cb, &seen,
	    &cause), 0, "%s", cause);
	cr_assert_eq(seen.n, 3);
	query_check(&seen, 0, DIR_C2S, "a/b", 2, 2, 1, 7 * MS, 9 * MS,
	    9 * MS, 9 * MS);
	query_check(&seen, 1, DIR_C2S, "tools/call", 101, 100, 0, 50 * MS,
	    95 * MS, 99 * MS, 100 * MS);
	query_check(&seen, 2, DIR_S2C, "ping", 3, 3, 1, 3 * MS, 5 * MS,
	    5 * MS, 5 * MS);

	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_method_stats(st, two, query_stats_cb, &seen,
	    &cause), 0, "%s", cause);
	cr_assert_eq(seen.n, 1);
	query_check(&seen, 0, DIR_C2S, "tools/call", 1, 1, 0, 1000 * MS,
	    1000 * MS, 1000 * MS, 1000 * MS);

	/* Every session: 101 answered of 102, the slowest at 1 s. */
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_method_stats(st, 0, query_stats_cb, &seen,
	    &cause), 0, "%s", cause);
	cr_assert_eq(seen.n, 3);
	query_check(&seen, 1, DIR_C2S, "tools/call", 102, 101, 0, 51 * MS,
	    96 * MS, 100 * MS, 1000 * MS);
	store_close(st);
	free(path);
}

struct hung_seen {
	int		n;
	struct hung_row	row[4];
	char		method[4][32];
};

static int
query_hung_cb(const struct hung_row *h, void *arg)
{
	struct hung_seen	*seen = arg;

	cr_assert_lt(seen->n, 4);
	seen->row[seen->n] = *h;
	snprintf(seen->method[seen->n], sizeof seen->method[0], "%s",
	    h->method);
	seen->row[seen->n].method = NULL;
	seen->row[seen->n].rpc_id = NULL;
	seen->n++;
	return 0;
}

/* The one request never answered, with its seq and its session's end. */
Test(query, hung, .timeout = UNIT_TIMEOUT)
{
	struct hung_seen	 seen;
	struct store		*st;
	char			*path, *cause = NULL;
	int64_t			 one, two;

	xasprintf(&path, "%s/h.db", query_dir);
	query_record(path, &one, &two);
	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_hung(st, 0, query_hung_cb, &seen, &cause), 0,
	    "%s", cause);
	cr_assert_eq(seen.n, 1);
	cr_assert_eq(seen.row[0].session_id, one);
	cr_assert_eq(seen.row[0].seq, 201, "after 100 answered requests");
	cr_assert_eq(seen.row[0].dir, DIR_C2S);
	cr_assert_str_eq(seen.method[0], "tools/call");
	cr_assert_gt(seen.row[0].ended_ns, seen.row[0].ts_ns);
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_hung(st, two, query_hung_cb, &seen, &cause), 0);
	cr_assert_eq(seen.n, 0);
	store_close(st);
	free(path);
}

/* Queue text as a message of dir at mono, of fault n in role. */
static void
query_put_fault(struct writer *w, struct wsession *s, enum dir dir,
    int64_t mono, const char *text, int64_t n, int role)
{
	struct msg	*m;

	m = msg_new(dir, text, strlen(text));
	m->mono_ns = mono;
	m->fault = n;
	m->fault_role = role;
	(void)writer_message(w, s, NULL, m);
}

/* Queue a faults row n of action at mono. */
static void
query_fault(struct writer *w, struct wsession *s, int64_t n, int64_t mono,
    const char *action)
{
	struct wfault	f;

	memset(&f, 0, sizeof f);
	f.n = n;
	f.ts_ns = mono;
	f.mono_ns = mono;
	f.rule_index = 1;
	f.rule = "method=tools/call";
	f.action = action;
	f.has_dir = 1;
	f.dir = DIR_C2S;
	f.method = "tools/call";
	writer_fault(w, s, &f);
}

/* What a timeline walk saw, as text: "m1" a message, "e" an event, ... */
struct faults_seen {
	char	 order[256];
	int64_t	 fault[16];	/* by seq */
	int	 role[16];
	int	 rows;
};

static int
query_faults_cb(const struct timeline_row *r, void *arg)
{
	struct faults_seen	*seen = arg;
	size_t			 len = strlen(seen->order);

	seen->rows++;
	if (r->is_event && r->e.fault != NULL) {
		cr_assert_str_eq(r->e.kind, "fault");
		snprintf(seen->order + len, sizeof seen->order - len, "f%lld ",
		    (long long)r->e.fault->n);
	} else if (r->is_event)
		snprintf(seen->order + len, sizeof seen->order - len, "e ");
	else {
		snprintf(seen->order + len, sizeof seen->order - len, "m%lld ",
		    (long long)r->m.seq);
		cr_assert_lt(r->m.seq, 16);
		seen->fault[r->m.seq] = r->m.fault;
		seen->role[r->m.seq] = r->m.fault_role;
	}
	return 0;
}

static int
query_action_cb(const char *action, int64_t n, void *arg)
{
	char	*out = arg;
	size_t	 len = strlen(out);

	snprintf(out + len, 128 - len, "%s %lld,", action, (long long)n);
	return 0;
}

/*
 * A session with an error injected in place of tools/call 2 (its request
 * 'original', the error 'injected') and tools/call 3's answer delayed:
 * the statistics count the faulted call apart; the timeline gives each
 * fault before the messages of its time, and QUERY_UNFAULTED leaves out
 * the two messages; the counts and actions are the session's.
 */
Test(query, faults, .timeout = UNIT_TIMEOUT)
{
	struct stats_seen	 seen;
	struct faults_seen	 fs;
	struct query_filter	 f;
	struct query_cursor	 c;
	struct store		*st;
	struct writer		*w;
	struct wsession		*s;
	char			*path, *cause = NULL, actions[128] = "";
	int64_t			 id, n;
	int			 any;

	xasprintf(&path, "%s/f.db", query_dir);
	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "%s", cause);
	w = writer_start(st, &cause);
	cr_assert_not_null(w, "%s", cause);
	s = writer_session_begin(w, "f", "stdio", "[\"x\"]");
	query_put(w, s, DIR_C2S, 100 * MS, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/call\"}");
	query_put(w, s, DIR_S2C, 110 * MS, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"result\":{}}");
	query_fault(w, s, 1, 200 * MS, "error");
	query_put_fault(w, s, DIR_C2S, 200 * MS, "{\"jsonrpc\":\"2.0\","
	    "\"id\":2,\"method\":\"tools/call\"}", 1, FAULT_ROLE_ORIGINAL);
	query_put_fault(w, s, DIR_S2C, 201 * MS, "{\"jsonrpc\":\"2.0\","
	    "\"id\":2,\"error\":{\"code\":-1,\"message\":\"x\"}}", 1,
	    FAULT_ROLE_INJECTED);
	query_put(w, s, DIR_C2S, 300 * MS, "{\"jsonrpc\":\"2.0\",\"id\":3,"
	    "\"method\":\"tools/call\"}");
	query_fault(w, s, 2, 400 * MS, "delay");
	query_put_fault(w, s, DIR_S2C, 700 * MS, "{\"jsonrpc\":\"2.0\","
	    "\"id\":3,\"result\":{}}", 2, FAULT_ROLE_DELAYED);
	writer_event(w, s, "note", "x", 1);
	writer_session_end(w, s, 0, 0, "done");
	writer_stop(w);
	id = writer_session_id(s);
	writer_session_free(s);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_method_stats(st, id, query_stats_cb, &seen,
	    &cause), 0, "%s", cause);
	cr_assert_eq(seen.n, 1);
	query_check(&seen, 0, DIR_C2S, "tools/call", 2, 2, 0, 10 * MS,
	    400 * MS, 400 * MS, 400 * MS);
	cr_assert_eq(seen.row[0].faulted, 1);

	memset(&fs, 0, sizeof fs);
	cr_assert_eq(query_timeline(st, id, QUERY_EVENTS, query_faults_cb,
	    &fs, &cause), 0, "%s", cause);
	cr_assert_str_eq(fs.order, "m1 m2 f1 m3 m4 m5 f2 m6 e ");
	cr_assert_eq(fs.fault[3], 1);
	cr_assert_eq(fs.role[3], FAULT_ROLE_ORIGINAL);
	cr_assert_eq(fs.role[4], FAULT_ROLE_INJECTED);
	cr_assert_eq(fs.fault[6], 2);
	cr_assert_eq(fs.role[6], FAULT_ROLE_DELAYED);
	cr_assert_eq(fs.fault[5], 0);
	cr_assert_eq(fs.role[5], FAULT_ROLE_NONE);
	memset(&fs, 0, sizeof fs);
	cr_assert_eq(query_timeline(st, id, QUERY_UNFAULTED, query_faults_cb,
	    &fs, &cause), 0, "%s", cause);
	cr_assert_str_eq(fs.order, "m1 m2 m5 m6 ", "the delayed one stays");

	/* Filtered: faults among the rows, once; without f.faults none. */
	query_filter_init(&f);
	query_cursor_init(&c);
	memset(&fs, 0, sizeof fs);
	cr_assert_eq(query_timeline_next(st, id, &f, &c, query_faults_cb, &fs,
	    &cause), 0, "%s", cause);
	cr_assert_str_eq(fs.order, "m1 m2 f1 m3 m4 m5 f2 m6 e ");
	fs.rows = 0;
	cr_assert_eq(query_timeline_next(st, id, &f, &c, query_faults_cb, &fs,
	    &cause), 0, "%s", cause);
	cr_assert_eq(fs.rows, 0, "nothing twice when following");
	query_filter_init(&f);
	query_cursor_init(&c);
	f.faults = 0;
	f.dir = "s2c";
	f.events = 0;
	memset(&fs, 0, sizeof fs);
	cr_assert_eq(query_timeline_next(st, id, &f, &c, query_faults_cb, &fs,
	    &cause), 0, "%s", cause);
	cr_assert_str_eq(fs.order, "m2 m4 m6 ");
	/* A fault is kept by --method and --dir on its own columns. */
	query_filter_init(&f);
	query_cursor_init(&c);
	f.dir = "c2s";
	f.method = "tools/*";
	f.events = 0;
	memset(&fs, 0, sizeof fs);
	cr_assert_eq(query_timeline_next(st, id, &f, &c, query_faults_cb, &fs,
	    &cause), 0, "%s", cause);
	cr_assert_str_eq(fs.order, "m1 f1 m3 m5 f2 ");

	cr_assert_eq(faults_left_out(st, id, &n, &cause), 0, "%s", cause);
	cr_assert_eq(n, 2);
	cr_assert_eq(faults_left_out(st, 0, &n, &cause), 0, "%s", cause);
	cr_assert_eq(n, 2);
	cr_assert_eq(faults_count(st, id, &n, &cause), 0, "%s", cause);
	cr_assert_eq(n, 2);
	cr_assert_eq(faults_any(st, id, &any, &cause), 0, "%s", cause);
	cr_assert_eq(any, 1);
	cr_assert_eq(faults_any(st, id + 1, &any, &cause), 0, "%s", cause);
	cr_assert_eq(any, 0);
	cr_assert_eq(faults_by_action(st, id, query_action_cb, actions,
	    &cause), 0, "%s", cause);
	cr_assert_str_eq(actions, "delay 1,error 1,");
	store_close(st);
	free(path);
}

/*
 * A session with tools/call 2's request mutated (the client's 'original',
 * the forwarded 'injected', the server's answer to the latter), tools/call
 * 3's answer mutated (the server's 'original', the 'injected' the client
 * got) and a notification dropped at the time of an event recorded before
 * its fault: QUERY_UNFAULTED keeps what travelled between mcpreel and the
 * server (the forwarded request, the server's answer); the statistics
 * count each faulted call once and the mutated request is not hung; a
 * fault comes before the message and the event of its time.
 */
Test(query, faults_mutate, .timeout = UNIT_TIMEOUT)
{
	struct stats_seen	 seen;
	struct hung_seen	 hung;
	struct faults_seen	 fs;
	struct store		*st;
	struct writer		*w;
	struct wsession		*s;
	struct msg		*ev;
	char			*path, *cause = NULL;
	int64_t			 id, n;

	xasprintf(&path, "%s/fm.db", query_dir);
	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "%s", cause);
	w = writer_start(st, &cause);
	cr_assert_not_null(w, "%s", cause);
	s = writer_session_begin(w, "fm", "stdio", "[\"x\"]");
	query_put(w, s, DIR_C2S, 100 * MS, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/call\"}");
	query_put(w, s, DIR_S2C, 110 * MS, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"result\":{}}");
	query_fault(w, s, 1, 200 * MS, "mutate");
	query_put_fault(w, s, DIR_C2S, 200 * MS, "{\"jsonrpc\":\"2.0\","
	    "\"id\":2,\"method\":\"tools/call\"}", 1, FAULT_ROLE_ORIGINAL);
	query_put_fault(w, s, DIR_C2S, 200 * MS, "{\"jsonrpc\":\"2.0\","
	    "\"id\":2,\"method\":\"tools/call\",\"params\":{}}", 1,
	    FAULT_ROLE_INJECTED);
	query_put(w, s, DIR_S2C, 250 * MS, "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"result\":{}}");
	query_put(w, s, DIR_C2S, 300 * MS, "{\"jsonrpc\":\"2.0\",\"id\":3,"
	    "\"method\":\"tools/call\"}");
	query_fault(w, s, 2, 350 * MS, "mutate");
	query_put_fault(w, s, DIR_S2C, 350 * MS, "{\"jsonrpc\":\"2.0\","
	    "\"id\":3,\"result\":{}}", 2, FAULT_ROLE_ORIGINAL);
	query_put_fault(w, s, DIR_S2C, 350 * MS, "{\"jsonrpc\":\"2.0\","
	    "\"id\":3,\"result\":{\"x\":1}}", 2, FAULT_ROLE_INJECTED);
	ev = msg_new(DIR_S2C, "x", 1);
	ev->mono_ns = 500 * MS;
	writer_event_msg(w, s, "note", ev);
	query_fault(w, s, 3, 500 * MS, "drop");
	query_put_fault(w, s, DIR_C2S, 500 * MS, "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/x\"}", 3, FAULT_ROLE_ORIGINAL);
	writer_session_end(w, s, 0, 0, "done");
	writer_stop(w);
	id = writer_session_id(s);
	writer_session_free(s);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	memset(&fs, 0, sizeof fs);
	cr_assert_eq(query_timeline(st, id, QUERY_EVENTS, query_faults_cb,
	    &fs, &cause), 0, "%s", cause);
	cr_assert_str_eq(fs.order, "m1 m2 f1 m3 m4 m5 m6 f2 m7 m8 f3 m9 e ");
	memset(&fs, 0, sizeof fs);
	cr_assert_eq(query_timeline(st, id, QUERY_UNFAULTED, query_faults_cb,
	    &fs, &cause), 0, "%s", cause);
	cr_assert_str_eq(fs.order, "m1 m2 m4 m5 m6 m7 ",
	    "what the server got and sent");
	cr_assert_eq(faults_left_out(st, id, &n, &cause), 0, "%s", cause);
	cr_assert_eq(n, 3);

	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_method_stats(st, id, query_stats_cb, &seen,
	    &cause), 0, "%s", cause);
	cr_assert_eq(seen.n, 1);
	cr_assert_eq(seen.row[0].requests, 1);
	cr_assert_eq(seen.row[0].faulted, 2, "each faulted call once: %lld",
	    (long long)seen.row[0].faulted);
	memset(&hung, 0, sizeof hung);
	cr_assert_eq(query_hung(st, id, query_hung_cb, &hung, &cause), 0,
	    "%s", cause);
	cr_assert_eq(hung.n, 0, "the mutated call was answered");
	store_close(st);
	free(path);
}

/* What query_timeline() gave, to hold against query_stream. */
struct stream_seen {
	size_t	n;
	int64_t	seq[256];
	int64_t	reply_seq[256];
	char	raw[256][128];
};

static int
query_stream_seen_cb(const struct timeline_row *r, void *arg)
{
	struct stream_seen	*seen = arg;

	cr_assert(!r->is_event);
	cr_assert_lt(seen->n, 256);
	seen->seq[seen->n] = r->m.seq;
	seen->reply_seq[seen->n] = r->m.reply_seq;
	snprintf(seen->raw[seen->n], sizeof seen->raw[0], "%.*s",
	    (int)r->m.len, (const char *)r->m.raw);
	seen->n++;
	return 0;
}

/*
 * The stream gives a session's messages one at a time as
 * query_timeline() gives them all: the same order, bytes and pairing;
 * then 0, and 0 again.
 */
Test(query, stream_as_timeline, .timeout = UNIT_TIMEOUT)
{
	struct stream_seen		 seen;
	const struct timeline_row	*r;
	struct query_stream		*qs;
	struct store			*st;
	char				 path[128], *cause = NULL;
	int64_t				 one, two;
	size_t				 i = 0;

	snprintf(path, sizeof path, "%s/s.db", query_dir);
	query_record(path, &one, &two);
	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_timeline(st, one, 0, query_stream_seen_cb, &seen,
	    &cause), 0, "%s", cause);
	cr_assert_gt(seen.n, 200);

	qs = query_stream_open(st, one, 0, &cause);
	cr_assert_not_null(qs, "%s", cause);
	while (query_stream_next(qs, &r, &cause) == 1) {
		cr_assert_lt(i, seen.n);
		cr_assert_eq(r->m.seq, seen.seq[i]);
		cr_assert_eq(r->m.reply_seq, seen.reply_seq[i], "seq %lld",
		    (long long)r->m.seq);
		cr_assert_eq(r->m.len, strlen(seen.raw[i]));
		cr_assert_eq(memcmp(r->m.raw, seen.raw[i], r->m.len), 0);
		i++;
	}
	cr_assert_null(cause);
	cr_assert_eq(i, seen.n, "%zu of %zu messages", i, seen.n);
	cr_assert_eq(query_stream_next(qs, &r, &cause), 0);
	query_stream_close(qs);

	/* Another session's stream gives only its own. */
	qs = query_stream_open(st, two, QUERY_UNFAULTED, &cause);
	cr_assert_not_null(qs, "%s", cause);
	for (i = 0; query_stream_next(qs, &r, &cause) == 1; i++)
		;
	cr_assert_eq(i, 2);
	query_stream_close(qs);
	store_close(st);
}
