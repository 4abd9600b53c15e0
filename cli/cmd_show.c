/* mcpreel show: print one recorded session, or follow one being recorded. */

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "protocol.h"
#include "store.h"

/* Columns of raw shown in the timeline's preview. */
#define SHOW_PREVIEW_COLS 100

/*
 * How often --follow looks for new rows, ms: well under a second from a
 * message's commit to its line, and ~7 cheap reads a second when idle.
 */
#define SHOW_FOLLOW_POLL_MS 150

enum show_format {
	SHOW_TIMELINE,
	SHOW_JSON,
	SHOW_RAW,
	SHOW_PRETTY,
	SHOW_FORMAT_MAX
};

struct show {
	enum show_format	 format;
	int			 events;	/* --events: in --json */
	int			 follow;
	struct query_cursor	 cur;
	int			 out_closed;	/* a write to stdout failed */
	int			 marks;		/* findings read (not --follow) */
	int			 findings;	/* --findings */
	int64_t			 session;
	struct check_out	 chk;		/* the session's findings */
};

/* Set by SIGINT and SIGTERM while following. */
static volatile sig_atomic_t	show_stop;

void
cmd_show_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel show [--db PATH] [--json [--events] | --raw [--pretty]]\n"
	    "                    [--follow | --findings] [FILTERS] SESSION\n"
	    "\n"
	    "Print a recorded session.  SESSION is its id, its name (the newest\n"
	    "session of that name) or 'last'.\n" CLI_SESSION_WORDS
	    CLI_SESSION_CASSETTE
	    "A cassette is whole: --follow on one shows it and ends.\n"
	    "\n"
	    "Without --json, a timeline: seconds since the session began, the\n"
	    "direction (-> host to server, <- server to host), kind, method, id,\n"
	    "latency for responses, and the start of the message.  The server's\n"
	    "stderr lines and its exit are shown among them, marked '!'.\n"
	    "So is each fault --fault injected (record, mock: '! fault', its\n"
	    "number, rule and what it did), and a message that is a fault's is\n"
	    "tagged [fault #N original] (as its sender sent it; its receiver did\n"
	    "not get it so), [fault #N injected] (made by mcpreel) or\n"
	    "[fault #N delayed] (forwarded late).\n"
	    "\n"
	    "--json prints one JSON object a line for each message: seq,\n"
	    "direction, ts_ns, mono_ns, kind, method, id, latency_ns, size and\n"
	    "the message itself (\"message\", or \"raw\" / \"raw_base64\" for\n"
	    "bytes that are not JSON), and for a fault's message \"fault\" (its\n"
	    "number) and \"fault_role\".  Each fault is a line {\"event\": \"fault\",\n"
	    "ts_ns, mono_ns, text, \"fault\": {n, rule_index, rule, action,\n"
	    "direction, method, id, detail}}.  --events adds the stderr lines\n"
	    "and exit.\n"
	    "--raw prints each message's bytes as recorded, one a line (over\n"
	    "HTTP a body may hold newlines of its own); --pretty prints JSON\n"
	    "indented (it implies --raw), other bytes as they are.\n"
	    "\n"
	    "The session is checked as 'mcpreel check' does: in the timeline a\n"
	    "message with findings is marked just before its start, E (an\n"
	    "error), W (a warning) or n (a note), the most severe; with --json\n"
	    "it has a \"findings\" array (check --json's objects).\n"
	    "--findings shows only the messages with findings, each followed by\n"
	    "its findings' lines as check prints them, then the findings about\n"
	    "the session as a whole and the counts.  With --json these come as\n"
	    "a last line without \"seq\": {\"session\", \"findings\", \"counts\",\n"
	    "\"unlisted\"} (always with --findings, else when the session has\n"
	    "such findings and no filter is given).\n"
	    "\n"
	    "--follow: print the session and then what is recorded after, as it\n"
	    "is committed (tail -f), until the session ends, its recorder exits,\n"
	    "or SIGINT/SIGTERM.  'show --follow last' stays on the session that\n"
	    "was newest when it started.  It does not check (no marks; see\n"
	    "'mcpreel record --check' to see findings as they happen).\n"
	    "\n"
	    "filters (all given must hold; they apply to every format):\n"
	    "  --method GLOB   method matches a shell glob: * ? [abc] [!abc],\n"
	    "                  \\ quotes the next character.  A response takes\n"
	    "                  its request's method.  Quote it from the shell\n"
	    "  --dir DIR       c2s (host to server) or s2c (server to host)\n"
	    "  --kind KIND     request, response, error, notification, batch\n"
	    "                  or invalid\n"
	    "  --errors        error responses, and results with \"isError\":\n"
	    "                  true (tool calls that failed)\n"
	    "  --grep TEXT     the message's bytes hold TEXT (case matters)\n"
	    "  --since WHEN    from WHEN on\n"
	    "  --until WHEN    up to WHEN (both ends included)\n"
	    "WHEN is one of:\n"
	    "  2.5s, 150ms, 3m  time since the session began, as the timeline\n"
	    "                   shows it (units ns, us, ms, s, m, h)\n"
	    "  2026-01-05T10:00:00[.frac][Z|+01:00]\n"
	    "                   a time of day (local without a zone; the T may\n"
	    "                   be a space; seconds may be left out)\n"
	    "  '#12'            message seq 12 (the first column)\n"
	    "The server's stderr lines and exit (timeline, --json --events) are\n"
	    "kept within --since/--until and --grep, and left out when --method,\n"
	    "--dir, --kind or --errors is given; faults are kept within --method\n"
	    "and --dir too (those of the message they selected).\n");
}

static void
show_header(const struct session_row *r)
{
	char	when[32], dur[32], *target;

	printf("session %lld%s%s%s  %s  started %s", (long long)r->id,
	    r->name != NULL ? " \"" : "", r->name != NULL ? r->name : "",
	    r->name != NULL ? "\"" : "", r->transport,
	    fmt_time(r->started_ns, when, sizeof when));
	if (r->ended_ns != 0)
		printf("  ran %s", fmt_duration(clock_sub(r->ended_ns,
		    r->started_ns),
		    dur, sizeof dur));
	else if (strcmp(fmt_session_state(r), "recorder gone") == 0)
		printf("  (not ended: recorder gone)");
	else
		printf("  (not ended)");
	printf("  %lld messages\n", (long long)r->messages);
	target = fmt_target(r->target);
	printf("server: %s\n", target);
	free(target);
	if (r->end_reason != NULL)
		printf("ended: %s\n", r->end_reason);
	if (r->messages_lost != 0)
		printf("warning: %lld messages were forwarded but not "
		    "recorded\n", (long long)r->messages_lost);
	if (r->has_otlp_dropped && r->otlp_dropped != 0)
		printf("warning: %lld spans were not delivered to the "
		    "OpenTelemetry collector (--otlp)\n",
		    (long long)r->otlp_dropped);
	printf("\n");
}

static int
header_cb(const struct session_row *r, void *arg)
{
	show_header(r);
	return 0;
}

static json_t *
message_json(const struct show *sh, const struct message_row *m)
{
	json_t	*o = json_object(), *v, *fa;
	size_t	 i, first = 0, n = 0;

	json_object_set_new(o, "seq", json_integer(m->seq));
	json_object_set_new(o, "direction", json_string(dir_name(m->dir)));
	json_object_set_new(o, "ts_ns", json_integer(m->ts_ns));
	json_object_set_new(o, "mono_ns", json_integer(m->mono_ns));
	json_object_set_new(o, "kind", json_string(kind_name(m->kind)));
	json_object_set_new(o, "method", m->method != NULL ?
	    json_string(m->method) : json_null());
	v = (m->rpc_id != NULL) ? json_loads(m->rpc_id, JSON_DECODE_ANY,
	    NULL) : NULL;
	json_object_set_new(o, "id", v != NULL ? v : (m->rpc_id != NULL ?
	    json_string(m->rpc_id) : json_null()));
	json_object_set_new(o, "latency_ns", m->latency_ns >= 0 ?
	    json_integer(m->latency_ns) : json_null());
	json_object_set_new(o, "size", json_integer((json_int_t)m->len));
	if (fault_role_name(m->fault_role) != NULL) {
		json_object_set_new(o, "fault", json_integer(m->fault));
		json_object_set_new(o, "fault_role",
		    json_string(fault_role_name(m->fault_role)));
	}
	if (m->kind != KIND_INVALID &&
	    (v = fmt_json_value(m->raw, m->len)) != NULL)
		json_object_set_new(o, "message", v);
	else
		fmt_json_bytes(o, "raw", "raw_base64", m->raw, m->len);
	if (sh->marks)
		first = check_out_find(&sh->chk, sh->session, m->seq, &n);
	if (n > 0) {
		fa = json_array();
		for (i = first; i < first + n; i++)
			json_array_append_new(fa,
			    check_out_item_json(&sh->chk.items[i]));
		json_object_set_new(o, "findings", fa);
	}
	return o;
}

/* A fault (an event of kind "fault") as its own columns. */
static json_t *
fault_json(const struct fault_row *f)
{
	json_t	*o = json_object(), *v;

	json_object_set_new(o, "n", json_integer(f->n));
	json_object_set_new(o, "rule_index", json_integer(f->rule_index));
	fmt_json_text(o, "rule", "rule_base64", f->rule);
	fmt_json_text(o, "action", "action_base64", f->action);
	json_object_set_new(o, "direction", f->has_dir ?
	    json_string(dir_name(f->dir)) : json_null());
	fmt_json_text(o, "method", "method_base64", f->method);
	v = (f->rpc_id != NULL) ? json_loads(f->rpc_id, JSON_DECODE_ANY,
	    NULL) : NULL;
	json_object_set_new(o, "id", v != NULL ? v : (f->rpc_id != NULL ?
	    json_string(f->rpc_id) : json_null()));
	fmt_json_text(o, "detail", "detail_base64", f->detail);
	return o;
}

static json_t *
event_json(const struct event_row *e)
{
	json_t	*o = json_object();

	json_object_set_new(o, "event", json_string(e->kind));
	json_object_set_new(o, "ts_ns", json_integer(e->ts_ns));
	json_object_set_new(o, "mono_ns", json_integer(e->mono_ns));
	fmt_json_bytes(o, "text", "text_base64", e->text, e->len);
	if (e->fault != NULL)
		json_object_set_new(o, "fault", fault_json(e->fault));
	return o;
}

/* A message as its bytes (--raw), or indented when JSON (--pretty). */
static void
show_raw(const struct show *sh, const struct message_row *m)
{
	json_t	*v;

	if (sh->format == SHOW_PRETTY && m->kind != KIND_INVALID &&
	    (v = fmt_json_value(m->raw, m->len)) != NULL) {
		json_dumpf(v, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY |
		    JSON_PRESERVE_ORDER);
		json_decref(v);
	} else if (m->len != 0)
		fwrite(m->raw, 1, m->len, stdout);
	fputc('\n', stdout);
}

/*
 * One timeline line; then, with --findings, the message's findings (first,
 * n in sh->chk).
 */
static void
show_line(const struct show *sh, const struct timeline_row *r, size_t first,
    size_t n)
{
	int64_t	 mono = r->is_event ? r->e.mono_ns : r->m.mono_ns;
	char	 lat[32];
	size_t	 i;

	if (r->is_event) {
		printf("%5s %+10.6f  !  %-12s ", "", (double)clock_sub(mono,
		    sh->cur.start_mono) / 1e9, r->e.kind);
		fmt_preview(stdout, r->e.text, r->e.len, SHOW_PREVIEW_COLS + 28);
		printf("\n");
		return;
	}
	if (r->m.kind == KIND_RESPONSE || r->m.kind == KIND_ERROR)
		fmt_duration(r->m.latency_ns, lat, sizeof lat);
	else
		lat[0] = '\0';
	printf("%5lld %+10.6f  %s %-12s %-30s %-6s %8s %c ", (long long)r->m.seq,
	    (double)clock_sub(mono, sh->cur.start_mono) / 1e9,
	    r->m.dir == DIR_C2S ? "->" : "<-", kind_name(r->m.kind),
	    r->m.method != NULL ? r->m.method : "",
	    r->m.rpc_id != NULL ? r->m.rpc_id : "", lat,
	    check_out_mark(&sh->chk, first, n));
	if (fault_role_name(r->m.fault_role) != NULL)
		printf("[fault #%lld %s] ", (long long)r->m.fault,
		    fault_role_name(r->m.fault_role));
	fmt_preview(stdout, r->m.raw, r->m.len, SHOW_PREVIEW_COLS);
	printf("\n");
	if (sh->findings)
		for (i = first; i < first + n; i++)
			check_out_item_text(stdout, &sh->chk.items[i]);
}

static int
show_row_cb(const struct timeline_row *r, void *arg)
{
	struct show	*sh = arg;
	json_t		*o;
	size_t		 first = 0, n = 0;

	if (sh->marks && !r->is_event)
		first = check_out_find(&sh->chk, sh->session, r->m.seq, &n);
	if (sh->findings && n == 0)
		return 0;
	switch (sh->format) {
	case SHOW_JSON:
		o = r->is_event ? event_json(&r->e) : message_json(sh, &r->m);
		fmt_json_line(o);
		json_decref(o);
		break;
	case SHOW_RAW:
	case SHOW_PRETTY:
		if (!r->is_event)
			show_raw(sh, &r->m);
		break;
	default:
		show_line(sh, r, first, n);
		break;
	}
	/* Stop at once when whoever reads us has gone. */
	if (ferror(stdout)) {
		sh->out_closed = 1;
		return 1;
	}
	return 0;
}

/* Whether a filter narrows the messages shown. */
static int
show_filtered(const struct query_filter *f)
{
	return (f->method != NULL || f->dir != NULL || f->kind != NULL ||
	    f->grep != NULL || f->errors || f->seq_min != INT64_MIN ||
	    f->seq_max != INT64_MAX || f->rel_min != INT64_MIN ||
	    f->rel_max != INT64_MAX || f->wall_min != INT64_MIN ||
	    f->wall_max != INT64_MAX);
}

/*
 * --json's last line: the findings about the session as a whole (seq 0,
 * no message to carry them), the counts and how many were only counted.
 * Always after --findings; after the messages only when there are such
 * findings (a line without "seq" is then the session's).
 */
static void
show_findings_json(struct show *sh, int always)
{
	struct check_out	*o = &sh->chk;
	json_t			*root, *fa, *counts;
	size_t			 i, first, n;

	first = check_out_find(o, sh->session, 0, &n);
	if (n == 0 && !always)
		return;
	root = json_object();
	json_object_set_new(root, "session", json_integer(sh->session));
	fa = json_array();
	for (i = first; i < first + n; i++)
		json_array_append_new(fa, check_out_item_json(&o->items[i]));
	json_object_set_new(root, "findings", fa);
	counts = json_object();
	json_object_set_new(counts, "error",
	    json_integer((json_int_t)o->counts[PROTO_ERROR]));
	json_object_set_new(counts, "warning",
	    json_integer((json_int_t)o->counts[PROTO_WARNING]));
	json_object_set_new(counts, "note",
	    json_integer((json_int_t)o->counts[PROTO_NOTE]));
	json_object_set_new(root, "counts", counts);
	json_object_set_new(root, "unlisted",
	    json_integer((json_int_t)o->dropped));
	fmt_json_line(root);
	json_decref(root);
	fflush(stdout);
}

/*
 * After --findings' messages: the findings about the session as a whole
 * (seq 0), the line of counts, and how many were only counted.
 */
static void
show_findings_end(struct show *sh)
{
	struct check_out	*o = &sh->chk;
	size_t			 i, first, n;

	if (sh->format == SHOW_JSON) {
		show_findings_json(sh, 1);
		return;
	}
	first = check_out_find(o, sh->session, 0, &n);
	if (n > 0)
		printf("session\n");
	for (i = first; i < first + n; i++)
		check_out_item_text(stdout, &o->items[i]);
	printf("findings: %zu error%s, %zu warning%s, %zu note%s\n",
	    o->counts[PROTO_ERROR], o->counts[PROTO_ERROR] == 1 ? "" : "s",
	    o->counts[PROTO_WARNING], o->counts[PROTO_WARNING] == 1 ? "" : "s",
	    o->counts[PROTO_NOTE], o->counts[PROTO_NOTE] == 1 ? "" : "s");
	if (o->dropped > 0)
		printf("(%zu findings past the first %d were counted, not "
		    "listed)\n", o->dropped, CHECK_OUT_MAX);
	fflush(stdout);
}

static void
show_stop_cb(int sig)
{
	show_stop = 1;
}

/*
 * Wait timeout_ms, or less if stdout is a pipe or socket whose reader
 * goes away meanwhile: then return 1.
 */
static int
show_wait(int timeout_ms)
{
	struct pollfd	pfd = { .fd = STDOUT_FILENO, .events = 0 };
	struct stat	sb;

	/*
	 * Asked for no events, poll only reports POLLERR or POLLHUP (a pipe
	 * without a reader).  A regular file or a terminal would be "ready"
	 * at once, so it is not watched.
	 */
	if (fstat(STDOUT_FILENO, &sb) != 0 || (!S_ISFIFO(sb.st_mode) &&
	    !S_ISSOCK(sb.st_mode))) {
		poll(NULL, 0, timeout_ms);
		return 0;
	}
	if (poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & (POLLERR |
	    POLLHUP)) != 0)
		return 1;
	return 0;
}

/*
 * Print the session; with --follow, then poll for what is recorded after
 * it until it has ended (its rows all printed), its recorder has exited
 * without ending it, a signal, or stdout's reader has gone.
 */
static int
show_follow(struct show *sh, struct store *st, int64_t id,
    const struct query_filter *f, char **cause)
{
	struct sigaction	 sa;
	int			 last = 0, final = 0;

	if (sh->follow) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = show_stop_cb;	/* no SA_RESTART: poll returns */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	for (;;) {
		if (query_timeline_next(st, id, f, &sh->cur, show_row_cb, sh,
		    cause) != 0)
			return -1;
		if (fflush(stdout) != 0 || sh->out_closed)
			break;
		if (!sh->follow || show_stop)
			break;
		if (sh->cur.ended) {
			/*
			 * A stdio recorder writes the session's end as soon as
			 * it is told to stop, then reads what the server still
			 * says: follow until it has exited, and read once more.
			 */
			if (!sh->cur.stdio || sh->cur.recorder_pid <= 0 || final)
				break;
			if (!prune_recorder_alive(sh->cur.recorder_pid,
			    sh->cur.started_ns))
				final = 1;
			else if (show_wait(SHOW_FOLLOW_POLL_MS) || show_stop)
				break;
			continue;
		}
		if (last) {
			log_warnx("the recorder of session %lld (pid %lld) has "
			    "exited without ending it: nothing more will come",
			    (long long)id, (long long)sh->cur.recorder_pid);
			break;
		}
		/*
		 * Read once more after it has gone: it may have just ended.
		 * An imported session (pid -1) has no recorder here at all.
		 */
		if (sh->cur.recorder_pid < 0) {
			log_warnx("session %lld was imported and not ended: "
			    "nothing more will come", (long long)id);
			break;
		}
		if (sh->cur.recorder_pid > 0 &&
		    !prune_recorder_alive(sh->cur.recorder_pid,
		    sh->cur.started_ns))
			last = 1;
		if (show_wait(SHOW_FOLLOW_POLL_MS) || show_stop)
			break;
	}
	return 0;
}

/* A glob as people write it (fnmatch) as SQLite's GLOB takes it. */
static char *
show_glob(const char *in)
{
	char	*out = xmalloc(strlen(in) * 3 + 1), *o = out;

	for (; *in != '\0'; in++) {
		if (*in == '\\' && in[1] != '\0') {
			/* SQLite's GLOB has no escape: a class of one. */
			in++;
			*o++ = '[';
			*o++ = *in;
			*o++ = ']';
		} else if (*in == '[' && in[1] == '!') {
			*o++ = '[';
			*o++ = '^';
			in++;
		} else
			*o++ = *in;
	}
	*o = '\0';
	return out;
}

/*
 * Parse a --since/--until WHEN into f: '#SEQ', a span since the start, or
 * an ISO time.
 */
static int
show_when(struct query_filter *f, int until, const char *arg, char **cause)
{
	char		*end;
	long long	 n;
	int64_t		 v;

	if (arg[0] == '#') {
		errno = 0;
		n = strtoll(arg + 1, &end, 10);
		if (arg[1] < '0' || arg[1] > '9' || *end != '\0' ||
		    errno != 0 || n < 1)
			goto bad;
		if (until)
			f->seq_max = n;
		else
			f->seq_min = n;
		return 0;
	}
	if (clock_parse_span(arg, &v) == 0) {
		if (until)
			f->rel_max = v;
		else
			f->rel_min = v;
		return 0;
	}
	switch (clock_parse_iso(arg, &v)) {
	case 0:
		if (until)
			f->wall_max = v;
		else
			f->wall_min = v;
		return 0;
	case CLOCK_ERANGE:
		xasprintf(cause, "--%s '%s': " CLOCK_RANGE_TEXT ": give a time "
		    "between 1678 and 2262", until ? "until" : "since", arg);
		return -1;
	}
bad:
	xasprintf(cause, "--%s '%s': give seconds since the session began "
	    "with a unit (2.5s, 150ms), a time (2026-01-05T10:00:00, Z or "
	    "+01:00 for a zone), or a message seq as '#12'",
	    until ? "until" : "since", arg);
	return -1;
}

/* Check and take one filter option; 1 if ch was one, -1 if bad. */
static int
show_filter_option(struct query_filter *f, int ch, const char *arg,
    char **glob, char **cause)
{
	switch (ch) {
	case 'M':
		free(*glob);
		*glob = show_glob(arg);
		f->method = *glob;
		return 1;
	case 'D':
		if (strcmp(arg, "c2s") != 0 && strcmp(arg, "s2c") != 0) {
			xasprintf(cause, "--dir '%s': give c2s (host to "
			    "server) or s2c (server to host)", arg);
			return -1;
		}
		f->dir = arg;
		return 1;
	case 'K':
		if (kind_from_name(arg) < 0) {
			xasprintf(cause, "--kind '%s': give request, response, "
			    "error, notification, batch or invalid", arg);
			return -1;
		}
		f->kind = arg;
		return 1;
	case 'G':
		f->grep = arg;
		return 1;
	case 'E':
		f->errors = 1;
		return 1;
	case 'S':
	case 'U':
		return show_when(f, ch == 'U', arg, cause) == 0 ? 1 : -1;
	}
	return 0;
}

int
cmd_show(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "events", no_argument, NULL, 'e' },
		{ "raw", no_argument, NULL, 'r' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "follow", no_argument, NULL, 'f' },
		{ "findings", no_argument, NULL, 'F' },
		{ "method", required_argument, NULL, 'M' },
		{ "dir", required_argument, NULL, 'D' },
		{ "kind", required_argument, NULL, 'K' },
		{ "grep", required_argument, NULL, 'G' },
		{ "errors", no_argument, NULL, 'E' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct show			 sh;
	struct query_filter		 f;
	struct session_arg		 sa;
	struct store			*st;
	const char			*db = NULL;
	char				*cause = NULL, *glob = NULL;
	int64_t				 id;
	int				 ch, rc = EXIT_OK, json = 0, raw = 0;
	int				 pretty = 0;

	memset(&sh, 0, sizeof sh);
	query_filter_init(&f);
	query_cursor_init(&sh.cur);
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (show_filter_option(&f, ch, optarg, &glob, &cause)) {
		case 1:
			continue;
		case -1:
			fprintf(stderr, "mcpreel show: %s\n", cause);
			free(cause);
			free(glob);
			return EXIT_USAGE;
		}
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'e':
			sh.events = 1;
			break;
		case 'r':
			raw = 1;
			break;
		case 'p':
			pretty = 1;
			break;
		case 'f':
			sh.follow = 1;
			break;
		case 'F':
			sh.findings = 1;
			break;
		case 'h':
			cmd_show_usage(stdout);
			free(glob);
			return EXIT_OK;
		default:
			opterr_report("show", argc, argv, "hvq",
			    longopts);
			free(glob);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1 || (json && (raw || pretty)) ||
	    (sh.findings && (sh.follow || raw || pretty))) {
		fprintf(stderr, "mcpreel show: %s\n", argc - optind != 1 ?
		    "give one SESSION (an id, a name or 'last'; see 'mcpreel "
		    "sessions')" : sh.findings ? "--findings checks a "
		    "recorded session for the timeline or --json: not with "
		    "--follow, --raw or --pretty" : "--json and --raw/--pretty "
		    "are different formats: give one");
		free(glob);
		return EXIT_USAGE;
	}
	if (json)
		sh.format = SHOW_JSON;
	else if (pretty)
		sh.format = SHOW_PRETTY;
	else if (raw)
		sh.format = SHOW_RAW;
	else
		sh.format = SHOW_TIMELINE;
	f.events = (sh.format == SHOW_TIMELINE || (json && sh.events)) &&
	    f.method == NULL && f.dir == NULL && f.kind == NULL &&
	    !f.errors && !sh.findings;
	/* Faults name a method and a direction: those filters keep them. */
	f.faults = (sh.format == SHOW_TIMELINE || json) && f.kind == NULL &&
	    !f.errors && !sh.findings;
	sh.marks = !sh.follow && (sh.format == SHOW_TIMELINE ||
	    sh.format == SHOW_JSON);
	if (session_arg_open(db, argv[optind], 0, &sa, &cause) != 0) {
		fprintf(stderr, "mcpreel show: %s\n", cause);
		free(cause);
		free(glob);
		return EXIT_USAGE;
	}
	st = sa.st;
	id = sa.id;
	/* A cassette is whole: nothing more will come to follow. */
	if (sa.cassette != NULL && sh.follow) {
		sh.follow = 0;
		sh.marks = sh.format == SHOW_TIMELINE ||
		    sh.format == SHOW_JSON;
	}
	/*
	 * The findings are read first, in a pass of their own: one about a
	 * message may come only later (a request never answered), and the
	 * ones kept are bounded (CHECK_OUT_MAX), so show still streams.
	 */
	if ((sh.marks && cmd_check_run(st, id, QUERY_UNFAULTED, &sh.chk,
	    &cause) != 0) ||
	    (sh.format == SHOW_TIMELINE && query_sessions(st, id, header_cb,
	    NULL, &cause) != 0) ||
	    (sh.session = id, show_follow(&sh, st, id, &f, &cause)) != 0) {
		fprintf(stderr, "mcpreel show: %s\n", cause);
		free(cause);
		rc = EXIT_USAGE;
	} else if (sh.findings && !sh.out_closed)
		show_findings_end(&sh);
	else if (sh.marks && sh.format == SHOW_JSON && !sh.out_closed &&
	    !show_filtered(&f))
		show_findings_json(&sh, 0);	/* not a message: no filter
						   keeps it */
	check_out_free(&sh.chk);
	session_arg_close(&sa);
	free(glob);
	return rc;
}
