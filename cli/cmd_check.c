/* mcpreel check: what in a recorded session breaks the protocol. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "check_session.h"
#include "store.h"

enum check_form {
	FORM_TEXT,
	FORM_JSON,
	FORM_SARIF,
	FORM_JUNIT,
	FORM_MAX
};

/*
 * HTTP exchanges whose heads are held at once: a message's exchange is
 * nearly always one of the last few begun (SSE streams interleave with
 * POSTs), and the others are read again when needed.  A session of a
 * million exchanges then costs their ids (8 bytes each) and a flag, not
 * their heads.
 */
#define CHECK_XCH_CACHE	16

/* An HTTP exchange's heads, as the rules read them. */
struct xch {
	int64_t			 id;		/* 0: the entry is empty */
	struct check_http	 h;
};

/* Reading one session into the checker. */
struct run {
	struct check_out	*out;
	struct check		*chk;
	int64_t			 session;
	int64_t			*xid;		/* its exchanges' ids, sorted */
	unsigned char		*used;		/* a message came in xid[i] */
	size_t			 nxch, xalloc;
	struct exchange_lookup	*lookup;
	struct xch		 cache[CHECK_XCH_CACHE];
	size_t			 cnext;		/* the entry to replace next */
	char			*cause;		/* reading an exchange failed */
	int64_t			 messages;
	size_t			 order;
	int			 legacy_sse;	/* recorded as HTTP+SSE */
	int			 flags;		/* QUERY_UNFAULTED, or 0 */
};

void
cmd_check_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel check [--db PATH] [--json | --sarif | --junit]\n"
	    "                     [-o FILE] [--include-faults] [SESSION | --all]\n"
	    "\n"
	    "Check a recorded session against the MCP specification, message by\n"
	    "message (SESSION: an id, a name or 'last', the default), or every\n"
	    "session with --all.\n" CLI_SESSION_WORDS CLI_SESSION_CASSETTE
	    "Each message is read under the protocol revision the session\n"
	    "negotiated (initialize's protocolVersion; for 2026-07-28 the one\n"
	    "each request names in params._meta) and checked for: its shape\n"
	    "(required members, types, enums); JSON-RPC (ids unique among a\n"
	    "sender's pending requests, and before 2026-07-28 never used again\n"
	    "once answered; responses to unknown or already answered ids,\n"
	    "requests never answered, batches only in 2025-03-26); the\n"
	    "lifecycle (initialize first, only pings until\n"
	    "the handshake ends, the version the server answers); capabilities\n"
	    "(a side using what the other did not declare); over HTTP the\n"
	    "MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method and Mcp-Name\n"
	    "headers, statuses, Content-Type and Accept; progress, cancellation,\n"
	    "tools called that the last tools/list did not name, and cursors\n"
	    "that repeat.\n"
	    "\n"
	    "A finding is an error (the specification says MUST), a warning\n"
	    "(SHOULD, or most likely a fault) or a note (worth knowing).  A\n"
	    "request never answered is a warning when the session ended, a note\n"
	    "when it has not; a cancelled request needs no answer.\n"
	    "\n"
	    "Output, to stdout:\n"
	    "  (default)  text: each message with findings, in seq order, then\n"
	    "             its findings: severity, rule, sentence, JSON path and\n"
	    "             the specification page; a line of counts at the end;\n"
	    "  --json     one object: {\"sessions\": [...], \"findings\": [{\"session\",\n"
	    "             \"seq\", \"direction\", \"method\", \"id\", \"rule\", \"severity\",\n"
	    "             \"message\", \"path\", \"spec\"}...], \"counts\": {...}};\n"
	    "  --sarif    SARIF 2.1.0, for code-scanning views: the rules used,\n"
	    "             one result per finding, located by session and seq;\n"
	    "  --junit    JUnit XML: a suite per session, a testcase per message\n"
	    "             with findings, failing when any is an error.\n"
	    "  -o, --output FILE  write it to FILE, not stdout\n"
	    "\n"
	    "Of the messages of faults injected by --fault (record, mock), what\n"
	    "did not pass between mcpreel and the server is left out, as if\n"
	    "absent: a client's message the server did not get as sent, what\n"
	    "mcpreel sent the client in place of the server's (a mutated\n"
	    "request as forwarded and the server's own answer stay: the server\n"
	    "got and sent them; so do 'delayed' ones).  A line on stderr says\n"
	    "how many.\n"
	    "  --include-faults   check them too\n"
	    "At most %d findings are listed per session; past that they are only\n"
	    "counted.\n"
	    "\n"
	    "Exit status: 0 when no finding is an error, 1 when one is, 2 on bad\n"
	    "usage or when the database or session cannot be read.\n",
	    CHECK_OUT_MAX);
}

/* Keep a finding for the output. */
static void
check_finding_keep_cb(const struct check_finding *cf, void *arg)
{
	struct run		*r = arg;
	struct check_out	*o = r->out;
	struct check_item	*it;
	struct check_sess	*s;

	if (cf->f->severity >= 0 && cf->f->severity < 3)
		o->counts[cf->f->severity]++;
	/* The session being checked is the one past the last finished. */
	s = &o->sess[o->nsess];
	if (o->n - s->first >= CHECK_OUT_MAX || o->n >= CHECK_OUT_RUN_MAX) {
		o->dropped++;
		s->dropped++;
		return;
	}
	if (o->n == o->alloc) {
		o->alloc = o->alloc == 0 ? 64 : o->alloc * 2;
		o->items = xreallocarray(o->items, o->alloc, sizeof *o->items);
	}
	it = &o->items[o->n++];
	it->session = r->session;
	it->seq = cf->seq;
	it->dir = cf->dir;
	it->method = cf->method != NULL ? xstrdup(cf->method) : NULL;
	it->id = cf->id != NULL ? xstrdup(cf->id) : NULL;
	it->version = cf->version != PROTO_V_UNKNOWN ?
	    proto_version_name(cf->version) : NULL;
	it->rule = cf->f->rule;
	it->severity = cf->f->severity;
	it->path = xstrdup(cf->f->path);
	it->text = xstrdup(cf->f->text);
	it->spec = xstrdup(cf->f->spec);
	it->order = r->order++;
}

static int
check_xid_cb(int64_t id, void *arg)
{
	struct run	*r = arg;

	if (r->nxch == r->xalloc) {
		r->xalloc = r->xalloc == 0 ? 16 : r->xalloc * 2;
		r->xid = xreallocarray(r->xid, r->xalloc, sizeof *r->xid);
		r->used = xreallocarray(r->used, r->xalloc, 1);
	}
	r->xid[r->nxch] = id;
	r->used[r->nxch++] = 0;
	return 0;
}

static void
check_xch_clear(struct xch *x)
{
	free((char *)x->h.method);
	free((char *)x->h.path);
	free((char *)x->h.request_headers);
	free((char *)x->h.response_headers);
	memset(x, 0, sizeof *x);
}

static int
check_exchange_cb(const struct exchange_row *e, void *arg)
{
	struct xch	*x = arg;

	x->id = e->id;
	x->h.exchange = e->id;
	x->h.method = e->method != NULL ? xstrdup(e->method) : NULL;
	x->h.path = e->path != NULL ? xstrdup(e->path) : NULL;
	x->h.request_headers = e->request_headers != NULL ?
	    xstrdup(e->request_headers) : NULL;
	x->h.response_headers = e->response_headers != NULL ?
	    xstrdup(e->response_headers) : NULL;
	x->h.status = e->has_status ? e->status : 0;
	return 0;
}

static int
check_xid_cmp(const void *a, const void *b)
{
	const int64_t	*x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/*
 * The heads of exchange id of the session (marked used when used), from
 * the cache or read again; NULL when it is none of the session's, or
 * cannot be read (r->cause).
 */
static const struct check_http *
check_xch_find(struct run *r, int64_t id, int used)
{
	struct xch	*x;
	int64_t		*at;
	size_t		 i;

	if (id == 0 || r->nxch == 0 || r->cause != NULL)
		return NULL;
	at = bsearch(&id, r->xid, r->nxch, sizeof *r->xid, check_xid_cmp);
	if (at == NULL)
		return NULL;
	if (used)
		r->used[at - r->xid] = 1;
	for (i = 0; i < CHECK_XCH_CACHE; i++)
		if (r->cache[i].id == id)
			return &r->cache[i].h;
	x = &r->cache[r->cnext];
	r->cnext = (r->cnext + 1) % CHECK_XCH_CACHE;
	check_xch_clear(x);
	if (query_exchange_get(r->lookup, id, check_exchange_cb, x,
	    &r->cause) != 0 || x->id == 0)
		return NULL;
	x->h.legacy_sse = r->legacy_sse;
	return &x->h;
}

static int
check_export_cb(const struct export_row *e, void *arg)
{
	struct run		*r = arg;
	struct check_msg	 m;

	if (e->is_event)
		return 0;
	memset(&m, 0, sizeof m);
	m.seq = e->m.seq;
	m.dir = e->m.dir;
	m.ts_ns = e->m.ts_ns;
	m.raw = e->m.raw;
	m.len = e->m.len;
	m.truncated = e->truncated || e->m.truncated;
	m.method = e->m.method;
	m.rpc_id = e->m.rpc_id;
	m.kind = e->m.kind;
	m.http = check_xch_find(r, e->exchange, 1);
	if (r->cause != NULL)
		return 1;
	r->messages++;
	check_message(r->chk, &m);
	return 0;
}

struct sessinfo {
	char	*name;
	int	 ended;
	int	 sse;
};

static int
check_info_cb(const struct session_row *s, void *arg)
{
	struct sessinfo	*si = arg;

	si->name = s->name != NULL ? xstrdup(s->name) : NULL;
	si->ended = strcmp(fmt_session_state(s), "ended") == 0;
	si->sse = s->transport != NULL && strcmp(s->transport, "sse") == 0;
	return 0;
}

/* Check one session, keeping its findings in out. */
static int
check_session(struct store *st, int64_t id, int flags, struct check_out *out,
    char **cause)
{
	struct run		 r;
	struct sessinfo		 si = { NULL, 0, 0 };
	struct check_sess	*s;
	const struct check_http	*h;
	enum proto_version	 v;
	size_t			 i;
	int			 rc = -1;

	memset(&r, 0, sizeof r);
	r.out = out;
	r.session = id;
	r.flags = flags;
	r.chk = check_new(check_finding_keep_cb, &r);
	if (out->nsess == out->sessalloc) {
		out->sessalloc = out->sessalloc == 0 ? 4 : out->sessalloc * 2;
		out->sess = xreallocarray(out->sess, out->sessalloc,
		    sizeof *out->sess);
	}
	s = &out->sess[out->nsess];
	memset(s, 0, sizeof *s);
	s->id = id;
	s->first = out->n;
	if (query_sessions(st, id, check_info_cb, &si, cause) != 0)
		goto done;
	r.legacy_sse = si.sse;
	if (query_exchange_ids(st, id, check_xid_cb, &r, cause) != 0)
		goto done;
	if (r.nxch > 0 && (r.lookup = query_exchange_open(st, cause)) == NULL)
		goto done;
	if (query_export(st, id, r.flags, check_export_cb, &r, cause) != 0)
		goto done;
	/* Exchanges without a message (a GET refused, a DELETE). */
	for (i = 0; i < r.nxch && r.cause == NULL; i++) {
		if (r.used[i])
			continue;
		if ((h = check_xch_find(&r, r.xid[i], 0)) != NULL)
			check_exchange(r.chk, h);
	}
	if (r.cause != NULL) {
		*cause = r.cause;
		r.cause = NULL;
		goto done;
	}
	check_end(r.chk, si.ended ? CHECK_END_CLEAN : CHECK_END_OPEN);
	v = check_version(r.chk);
	s = &out->sess[out->nsess++];
	s->name = si.name;
	si.name = NULL;
	s->version = v != PROTO_V_UNKNOWN ? proto_version_name(v) : NULL;
	s->messages = r.messages;
	s->n = out->n - s->first;
	rc = 0;
done:
	free(si.name);
	for (i = 0; i < CHECK_XCH_CACHE; i++)
		check_xch_clear(&r.cache[i]);
	free(r.xid);
	free(r.used);
	free(r.cause);
	query_exchange_close(r.lookup);
	check_free(r.chk);
	return rc;
}

struct idlist {
	int64_t	*v;
	size_t	 n, alloc;
};

static int
check_all_cb(const struct session_row *s, void *arg)
{
	struct idlist	*l = arg;

	if (l->n == l->alloc) {
		l->alloc = l->alloc == 0 ? 16 : l->alloc * 2;
		l->v = xreallocarray(l->v, l->alloc, sizeof *l->v);
	}
	l->v[l->n++] = s->id;
	return 0;
}

/*
 * Check session id, or every session when id is 0, keeping the findings
 * in out, each session's in seq order.  For the other views (show,
 * stats, report) as for check.  flags: QUERY_UNFAULTED to leave out the
 * messages of injected faults (what mcpreel made, what the receiver did
 * not get as sent), as if absent; or 0.
 */
int
cmd_check_run(struct store *st, int64_t id, int flags, struct check_out *out,
    char **cause)
{
	struct idlist	ids = { NULL, 0, 0 };
	size_t		i;
	int		rc = -1;

	if (id == 0) {
		if (query_sessions(st, 0, check_all_cb, &ids, cause) != 0)
			goto done;
	} else
		check_all_cb(&(struct session_row){ .id = id }, &ids);
	for (i = 0; i < ids.n; i++)
		if (check_session(st, ids.v[i], flags, out, cause) != 0)
			goto done;
	check_out_sort(out);
	rc = 0;
done:
	free(ids.v);
	return rc;
}

/* Write the findings in the form asked for. */
static void
check_write(FILE *f, enum check_form form, struct check_out *out)
{
	check_out_sort(out);
	switch (form) {
	case FORM_JSON:
		check_out_json(f, out);
		break;
	case FORM_SARIF:
		check_out_sarif(f, out);
		break;
	case FORM_JUNIT:
		check_out_junit(f, out);
		break;
	case FORM_TEXT:
	case FORM_MAX:
		check_out_text(f, out);
		break;
	}
}

int
cmd_check(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "sarif", no_argument, NULL, 's' },
		{ "junit", no_argument, NULL, 'u' },
		{ "output", required_argument, NULL, 'o' },
		{ "all", no_argument, NULL, 'a' },
		CLI_INCLUDE_FAULTS_LONGOPT,
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct check_out		 out;
	struct session_arg		 sa;
	struct store			*st = NULL;
	enum check_form			 form = FORM_TEXT;
	const char			*db = NULL, *spec = "last", *ofile = NULL;
	char				*path = NULL, *cause = NULL;
	FILE				*f = stdout;
	int64_t				 id;
	int				 ch, all = 0, forms = 0, rc = EXIT_USAGE;
	int				 include_faults = 0;

	memset(&out, 0, sizeof out);
	memset(&sa, 0, sizeof sa);
	while ((ch = getopt_long(argc, argv, "hvqo:", longopts, NULL)) !=
	    -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'j':
			form = FORM_JSON;
			forms++;
			break;
		case 's':
			form = FORM_SARIF;
			forms++;
			break;
		case 'u':
			form = FORM_JUNIT;
			forms++;
			break;
		case 'o':
			ofile = optarg;
			break;
		case 'a':
			all = 1;
			break;
		case CLI_OPT_INCLUDE_FAULTS:
			include_faults = 1;
			break;
		case 'h':
			cmd_check_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("check", argc, argv, "hvqo:", longopts);
			return EXIT_USAGE;
		}
	}
	if (forms > 1) {
		fprintf(stderr, "mcpreel check: give one of --json, --sarif "
		    "and --junit\n");
		return EXIT_USAGE;
	}
	if (argc - optind > 1 || (all && argc - optind == 1)) {
		fprintf(stderr, "mcpreel check: give one SESSION, or --all "
		    "for every session\n");
		return EXIT_USAGE;
	}
	if (argc - optind == 1)
		spec = argv[optind];
	id = 0;
	if (all ? (path = dbpath_resolve(db, &cause)) == NULL ||
	    (st = store_open(path, 0, &cause)) == NULL :
	    session_arg_open(db, spec, 0, &sa, &cause) != 0)
		goto fail;
	if (!all) {
		st = sa.st;
		id = sa.id;
		sa.st = NULL;	/* closed below */
	}
	if ((!include_faults && cli_faults_note(st, id, "check",
	    &cause) != 0) ||
	    cmd_check_run(st, id, include_faults ? 0 : QUERY_UNFAULTED, &out,
	    &cause) != 0)
		goto fail;
	if (ofile != NULL && (f = fopen(ofile, "w")) == NULL) {
		xasprintf(&cause, "cannot write %s: %s (give -o a path in a "
		    "directory you can write)", ofile, strerror(errno));
		f = stdout;
		goto fail;
	}
	check_write(f, form, &out);
	if ((f != stdout && fclose(f) != 0) || (f == stdout &&
	    fflush(stdout) != 0)) {
		xasprintf(&cause, "cannot write %s: %s", ofile != NULL ? ofile :
		    "the output", strerror(errno));
		goto fail;
	}
	rc = out.counts[PROTO_ERROR] > 0 ? EXIT_FAIL : EXIT_OK;
	goto done;
fail:
	fprintf(stderr, "mcpreel check: %s\n", cause);
	free(cause);
	rc = EXIT_USAGE;
done:
	check_out_free(&out);
	if (st != NULL)
		store_close(st);
	session_arg_close(&sa);
	free(path);
	return rc;
}
