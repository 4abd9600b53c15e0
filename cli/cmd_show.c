/* mcpreel show: print one recorded session. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "store.h"

/* Columns of raw shown in the timeline's preview. */
#define SHOW_PREVIEW_COLS 100

struct show {
	int	 json;
	int	 events;	/* --events: include them in --json */
	int64_t	 start_mono;	/* first row's monotonic time */
	int	 started;
};

void
cmd_show_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel show [--db PATH] [--json [--events]] SESSION\n"
	    "\n"
	    "Print a recorded session.  SESSION is its id, its name (the newest\n"
	    "session of that name) or 'last'.\n"
	    "\n"
	    "Without --json, a timeline: seconds since the session began, the\n"
	    "direction (-> host to server, <- server to host), kind, method, id,\n"
	    "latency for responses, and the start of the message.  The server's\n"
	    "stderr lines and its exit are shown among them, marked '!'.\n"
	    "\n"
	    "--json prints one JSON object a line for each message: seq,\n"
	    "direction, ts_ns, mono_ns, kind, method, id, latency_ns, size and\n"
	    "the message itself (\"message\", or \"raw\" / \"raw_base64\" for\n"
	    "bytes that are not JSON).  --events adds the stderr lines and exit.\n");
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
		printf("  ran %s", fmt_duration(r->ended_ns - r->started_ns,
		    dur, sizeof dur));
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
	printf("\n");
}

static int
header_cb(const struct session_row *r, void *arg)
{
	show_header(r);
	return 0;
}

static json_t *
message_json(const struct message_row *m)
{
	json_t	*o = json_object(), *v;

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
	if (m->kind != KIND_INVALID &&
	    (v = fmt_json_value(m->raw, m->len)) != NULL)
		json_object_set_new(o, "message", v);
	else
		fmt_json_bytes(o, "raw", "raw_base64", m->raw, m->len);
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
	return o;
}

static int
show_row_cb(const struct timeline_row *r, void *arg)
{
	struct show	*sh = arg;
	int64_t		 mono = r->is_event ? r->e.mono_ns : r->m.mono_ns;
	char		 lat[32];
	json_t		*o;

	if (sh->json) {
		if (r->is_event && !sh->events)
			return 0;
		o = r->is_event ? event_json(&r->e) : message_json(&r->m);
		fmt_json_line(o);
		json_decref(o);
		return 0;
	}
	if (!sh->started) {
		sh->start_mono = mono;
		sh->started = 1;
	}
	if (r->is_event) {
		printf("%5s %+10.6f  !  %-12s ", "", (double)(mono -
		    sh->start_mono) / 1e9, r->e.kind);
		fmt_preview(stdout, r->e.text, r->e.len, SHOW_PREVIEW_COLS + 28);
		printf("\n");
		return 0;
	}
	if (r->m.kind == KIND_RESPONSE || r->m.kind == KIND_ERROR)
		fmt_duration(r->m.latency_ns, lat, sizeof lat);
	else
		lat[0] = '\0';
	printf("%5lld %+10.6f  %s %-12s %-30s %-6s %8s  ", (long long)r->m.seq,
	    (double)(mono - sh->start_mono) / 1e9,
	    r->m.dir == DIR_C2S ? "->" : "<-", kind_name(r->m.kind),
	    r->m.method != NULL ? r->m.method : "",
	    r->m.rpc_id != NULL ? r->m.rpc_id : "", lat);
	fmt_preview(stdout, r->m.raw, r->m.len, SHOW_PREVIEW_COLS);
	printf("\n");
	return 0;
}

int
cmd_show(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "events", no_argument, NULL, 'e' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct show			 sh;
	struct store			*st;
	const char			*db = NULL;
	char				*path, *cause = NULL;
	int64_t				 id;
	int				 ch, rc = EXIT_OK;

	memset(&sh, 0, sizeof sh);
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'j':
			sh.json = 1;
			break;
		case 'e':
			sh.events = 1;
			break;
		case 'h':
			cmd_show_usage(stdout);
			return EXIT_OK;
		default:
			cmd_show_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "mcpreel show: give one SESSION (an id, a name "
		    "or 'last'; see 'mcpreel sessions')\n");
		return EXIT_USAGE;
	}
	if ((path = dbpath_resolve(db, &cause)) == NULL ||
	    (st = store_open(path, 0, &cause)) == NULL) {
		fprintf(stderr, "mcpreel show: %s\n", cause);
		free(cause);
		free(path);
		return EXIT_USAGE;
	}
	if (query_find_session(st, argv[optind], &id, &cause) != 0 ||
	    (!sh.json && query_sessions(st, id, header_cb, NULL,
	    &cause) != 0) ||
	    query_timeline(st, id, !sh.json || sh.events, show_row_cb, &sh,
	    &cause) != 0) {
		fprintf(stderr, "mcpreel show: %s\n", cause);
		free(cause);
		rc = EXIT_USAGE;
	}
	store_close(st);
	free(path);
	return rc;
}
