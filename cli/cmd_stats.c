/* mcpreel stats: how a session went, per method, and what hung. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "protocol.h"
#include "store.h"

/*
 * Hung requests listed, at most: a server that answers nothing leaves one
 * per request, and a list of thousands says no more than its count.
 */
#define STATS_HUNG_TEXT	20
#define STATS_HUNG_JSON	1000

struct stats {
	int		 json;
	int64_t		 now;		/* wall clock: ages of what is open */
	int64_t		 rows;		/* rows in this table so far */
	json_t		*out;		/* --json: the object built */
	int64_t		 faults;	/* faults injected in what is shown */
	int		 faulted;	/* a FAULTED column */
	int64_t		 actions;	/* actions listed so far */
};

void
cmd_stats_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel stats [--db PATH] [--json] [SESSION | --all]\n"
	    "\n"
	    "Sum up a recorded session (SESSION: an id, a name or 'last', the\n"
	    "default), or every session with --all.\n" CLI_SESSION_WORDS
	    CLI_SESSION_CASSETTE
	    "It shows:\n"
	    "\n"
	    "  sessions: how long each ran (so far, if not ended), its messages\n"
	    "            and their bytes;\n"
	    "  methods:  for each method requested, by direction (-> the host's\n"
	    "            requests, <- the server's), the requests, how many were\n"
	    "            answered, errors (error responses, and results with\n"
	    "            \"isError\": true), and the latency from request to\n"
	    "            answer as the proxy saw it: p50, p95, p99 (nearest rank)\n"
	    "            and max over the answered requests.  A request that\n"
	    "            met a fault injected by --fault (mcpreel answered it, or\n"
	    "            kept it or its answer from their receiver) is counted\n"
	    "            apart, as FAULTED, and in none of the others: an\n"
	    "            injected error is not the server's;\n"
	    "  faults:   how many faults were injected, by action (when any);\n"
	    "  hung:     requests no response answers, with their seq, method,\n"
	    "            id and age (how long they waited: until the session\n"
	    "            ended, or until now if it has not); the first %d, and\n"
	    "            how many more;\n"
	    "  findings: what 'mcpreel check' finds against the specification,\n"
	    "            counted by severity (check lists them).\n"
	    "\n"
	    "--json prints one JSON object: {\"sessions\": [...], \"methods\":\n"
	    "[...], \"faults\": {\"injected\": N, \"by_action\": {ACTION: N}},\n"
	    "\"hung\": [the first %d], \"hung_count\": N, \"findings\":\n"
	    "{\"error\": N, \"warning\": N, \"note\": N}}, times in ns (null\n"
	    "where there is none).\n", STATS_HUNG_TEXT, STATS_HUNG_JSON);
}

/* A duration in ns or "-" when none, as a table cell. */
static const char *
stats_dur(int64_t ns, char *buf, size_t len)
{
	if (ns < 0)
		return "-";
	return fmt_duration(ns, buf, len);
}

static json_t *
stats_ns_json(int64_t ns)
{
	return ns >= 0 ? json_integer(ns) : json_null();
}

static int
stats_session_cb(const struct session_row *r, void *arg)
{
	struct stats	*sx = arg;
	json_t		*o;
	char		 when[32], dur[32];
	int64_t		 ran;

	ran = clock_sub(r->ended_ns != 0 ? r->ended_ns : sx->now,
	    r->started_ns);
	if (sx->json) {
		o = json_object();
		json_object_set_new(o, "id", json_integer(r->id));
		json_object_set_new(o, "name", r->name != NULL ?
		    json_string(r->name) : json_null());
		json_object_set_new(o, "transport", json_string(r->transport));
		json_object_set_new(o, "started_ns",
		    json_integer(r->started_ns));
		json_object_set_new(o, "ended_ns", r->ended_ns != 0 ?
		    json_integer(r->ended_ns) : json_null());
		json_object_set_new(o, "duration_ns", json_integer(ran));
		json_object_set_new(o, "state",
		    json_string(fmt_session_state(r)));
		json_object_set_new(o, "messages", json_integer(r->messages));
		json_object_set_new(o, "bytes", json_integer(r->bytes));
		json_array_append_new(json_object_get(sx->out, "sessions"), o);
		return 0;
	}
	if (sx->rows++ == 0)
		printf("%5s  %-16s %-6s %-19s %10s %8s %12s\n", "ID", "NAME",
		    "TRANS", "STARTED", "DURATION", "MSGS", "BYTES");
	fmt_duration(ran, dur, sizeof dur);
	printf("%5lld  %-16s %-6s %s %10s%s %7lld %12lld%s\n", (long long)r->id,
	    r->name != NULL ? r->name : "-", r->transport,
	    fmt_time(r->started_ns, when, sizeof when), dur,
	    r->ended_ns != 0 ? " " : "+", (long long)r->messages,
	    (long long)r->bytes, strcmp(fmt_session_state(r),
	    "recorder gone") == 0 ? "  (recorder gone)" : "");
	return 0;
}

static int
stats_method_cb(const struct method_stats *m, void *arg)
{
	struct stats	*sx = arg;
	json_t		*o;
	char		 p50[32], p95[32], p99[32], max[32];

	if (sx->json) {
		o = json_object();
		json_object_set_new(o, "direction",
		    json_string(dir_name(m->dir)));
		json_object_set_new(o, "method", json_string(m->method));
		json_object_set_new(o, "requests", json_integer(m->requests));
		json_object_set_new(o, "answered", json_integer(m->answered));
		json_object_set_new(o, "errors", json_integer(m->errors));
		json_object_set_new(o, "p50_ns", stats_ns_json(m->p50_ns));
		json_object_set_new(o, "p95_ns", stats_ns_json(m->p95_ns));
		json_object_set_new(o, "p99_ns", stats_ns_json(m->p99_ns));
		json_object_set_new(o, "max_ns", stats_ns_json(m->max_ns));
		json_object_set_new(o, "faulted", json_integer(m->faulted));
		json_array_append_new(json_object_get(sx->out, "methods"), o);
		return 0;
	}
	if (sx->rows++ == 0)
		printf("\n%-3s %-32s %8s %8s %7s %9s %9s %9s %9s%s\n", "DIR",
		    "METHOD", "REQUESTS", "ANSWERED", "ERRORS", "P50", "P95",
		    "P99", "MAX", sx->faulted ? "  FAULTED" : "");
	printf("%-3s %-32s %8lld %8lld %7lld %9s %9s %9s %9s",
	    m->dir == DIR_C2S ? "->" : "<-", m->method,
	    (long long)m->requests, (long long)m->answered,
	    (long long)m->errors, stats_dur(m->p50_ns, p50, sizeof p50),
	    stats_dur(m->p95_ns, p95, sizeof p95),
	    stats_dur(m->p99_ns, p99, sizeof p99),
	    stats_dur(m->max_ns, max, sizeof max));
	if (sx->faulted)
		printf("  %7lld", (long long)m->faulted);
	printf("\n");
	return 0;
}

/* One action of the faults injected, and how many. */
static int
stats_action_cb(const char *action, int64_t n, void *arg)
{
	struct stats	*sx = arg;

	if (sx->json) {
		json_object_set_new(json_object_get(json_object_get(sx->out,
		    "faults"), "by_action"), action, json_integer(n));
		return 0;
	}
	printf("%s%s %lld", sx->actions++ == 0 ? " (" : ", ", action,
	    (long long)n);
	return 0;
}

/*
 * The faults injected in session id (every one if 0): how many, by
 * action ("faults injected: 3 (error 2, drop 1)"); nothing in text when
 * there were none.
 */
static int
stats_faults(struct stats *sx, struct store *st, int64_t id, char **cause)
{
	if (sx->json)
		json_object_set_new(sx->out, "faults", json_pack("{s:I, s:{}}",
		    "injected", (json_int_t)sx->faults, "by_action"));
	else if (sx->faults == 0)
		return 0;
	else
		printf("\nfaults injected: %lld", (long long)sx->faults);
	sx->actions = 0;
	if (faults_by_action(st, id, stats_action_cb, sx, cause) != 0)
		return -1;
	if (!sx->json)
		printf("%s\n", sx->actions > 0 ? ")" : "");
	return 0;
}

static int
stats_hung_cb(const struct hung_row *h, void *arg)
{
	struct stats	*sx = arg;
	json_t		*o, *id;
	char		 age[32];
	int64_t		 waited;

	waited = clock_sub(h->ended_ns != 0 ? h->ended_ns : sx->now,
	    h->ts_ns);
	if (sx->rows++ >= (sx->json ? STATS_HUNG_JSON : STATS_HUNG_TEXT))
		return 0;	/* counted, not listed */
	if (sx->json) {
		o = json_object();
		json_object_set_new(o, "session", json_integer(h->session_id));
		json_object_set_new(o, "seq", json_integer(h->seq));
		json_object_set_new(o, "direction",
		    json_string(dir_name(h->dir)));
		json_object_set_new(o, "method", json_string(h->method));
		id = h->rpc_id != NULL ? json_loads(h->rpc_id,
		    JSON_DECODE_ANY, NULL) : NULL;
		json_object_set_new(o, "id", id != NULL ? id :
		    json_string(h->rpc_id != NULL ? h->rpc_id : ""));
		json_object_set_new(o, "ts_ns", json_integer(h->ts_ns));
		json_object_set_new(o, "age_ns", json_integer(waited));
		json_object_set_new(o, "session_ended", json_boolean(
		    h->ended_ns != 0));
		json_array_append_new(json_object_get(sx->out, "hung"), o);
		return 0;
	}
	if (sx->rows == 1)
		printf("\nhung requests (no response):\n%7s %7s %-3s %-32s "
		    "%-10s %s\n", "SESSION", "SEQ", "DIR", "METHOD", "ID",
		    "AGE");
	printf("%7lld %7lld %-3s %-32s %-10s %s%s\n",
	    (long long)h->session_id, (long long)h->seq,
	    h->dir == DIR_C2S ? "->" : "<-", h->method,
	    h->rpc_id != NULL ? h->rpc_id : "", fmt_duration(waited, age,
	    sizeof age), h->ended_ns != 0 ? " (until the session ended)" :
	    "");
	return 0;
}

/* The findings of session id (every one if 0), counted by severity. */
static int
stats_findings(struct stats *sx, struct store *st, int64_t id, char **cause)
{
	struct check_out	o;
	int			rc;

	memset(&o, 0, sizeof o);
	if ((rc = cmd_check_run(st, id, QUERY_UNFAULTED, &o, cause)) != 0)
		goto done;
	if (sx->json)
		json_object_set_new(sx->out, "findings", json_pack("{s:I, s:I, "
		    "s:I}", "error", (json_int_t)o.counts[PROTO_ERROR],
		    "warning", (json_int_t)o.counts[PROTO_WARNING], "note",
		    (json_int_t)o.counts[PROTO_NOTE]));
	else
		printf("\nfindings: %zu error%s, %zu warning%s, %zu note%s%s\n",
		    o.counts[PROTO_ERROR], o.counts[PROTO_ERROR] == 1 ? "" :
		    "s", o.counts[PROTO_WARNING], o.counts[PROTO_WARNING] == 1 ?
		    "" : "s", o.counts[PROTO_NOTE], o.counts[PROTO_NOTE] == 1 ?
		    "" : "s", o.n > 0 ? " ('mcpreel check' lists them)" : "");
done:
	check_out_free(&o);
	return rc;
}

/* Print the four parts for session id (every one if 0). */
static int
stats_print(struct stats *sx, struct store *st, int64_t id, char **cause)
{
	int64_t	left_out;

	if (sx->json) {
		sx->out = json_object();
		json_object_set_new(sx->out, "sessions", json_array());
		json_object_set_new(sx->out, "methods", json_array());
		json_object_set_new(sx->out, "hung", json_array());
	}
	sx->rows = 0;
	if (query_sessions(st, id, stats_session_cb, sx, cause) != 0)
		return -1;
	if (faults_count(st, id, &sx->faults, cause) != 0 ||
	    faults_left_out(st, id, &left_out, cause) != 0)
		return -1;
	sx->faulted = sx->faults > 0 || left_out > 0;
	sx->rows = 0;
	if (query_method_stats(st, id, stats_method_cb, sx, cause) != 0)
		return -1;
	if (!sx->json && sx->rows == 0)
		printf("\nno requests\n");
	if (stats_faults(sx, st, id, cause) != 0)
		return -1;
	sx->rows = 0;
	if (query_hung(st, id, stats_hung_cb, sx, cause) != 0)
		return -1;
	if (sx->json)
		json_object_set_new(sx->out, "hung_count",
		    json_integer(sx->rows));
	else if (sx->rows == 0)
		printf("\nno hung requests: every request was answered\n");
	else if (sx->rows > STATS_HUNG_TEXT)
		printf("... and %lld more (--json lists %d)\n",
		    (long long)(sx->rows - STATS_HUNG_TEXT), STATS_HUNG_JSON);
	if (stats_findings(sx, st, id, cause) != 0)
		return -1;
	if (sx->json)
		fmt_json_line(sx->out);
	return 0;
}

int
cmd_stats(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct stats			 sx;
	struct session_arg		 sa;
	struct store			*st;
	const char			*db = NULL, *spec = "last";
	char				*path = NULL, *cause = NULL;
	int64_t				 id = 0;
	int				 ch, all = 0, rc = EXIT_OK;

	memset(&sx, 0, sizeof sx);
	memset(&sa, 0, sizeof sa);
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'j':
			sx.json = 1;
			break;
		case 'a':
			all = 1;
			break;
		case 'h':
			cmd_stats_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("stats", argc, argv, "hvq",
			    longopts);
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1 || (all && argc - optind == 1)) {
		fprintf(stderr, "mcpreel stats: give one SESSION, or --all for "
		    "every session\n");
		return EXIT_USAGE;
	}
	if (argc - optind == 1)
		spec = argv[optind];
	if (all ? (path = dbpath_resolve(db, &cause)) == NULL ||
	    (st = store_open(path, 0, &cause)) == NULL :
	    session_arg_open(db, spec, 0, &sa, &cause) != 0) {
		fprintf(stderr, "mcpreel stats: %s\n", cause);
		free(cause);
		free(path);
		return EXIT_USAGE;
	}
	if (!all) {
		st = sa.st;
		id = sa.id;
	}
	sx.now = clock_wall_ns();
	if (stats_print(&sx, st, id, &cause) != 0) {
		fprintf(stderr, "mcpreel stats: %s\n", cause);
		free(cause);
		rc = EXIT_USAGE;
	}
	json_decref(sx.out);
	if (all)
		store_close(st);
	session_arg_close(&sa);
	free(path);
	return rc;
}
