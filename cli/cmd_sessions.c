/* mcpreel sessions: list the recorded sessions. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "store.h"

void
cmd_sessions_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel sessions [--db PATH] [--json]\n"
	    "\n"
	    "List the recorded sessions, oldest first: id, name, transport, when\n"
	    "it started, how long it ran, messages, bytes, how the server ended,\n"
	    "and the server command (the one replay or mock ran against, for\n"
	    "their own sessions).  A session that never ended is \"open\" while\n"
	    "its recorder runs, \"recorder gone\" once that process is gone (it\n"
	    "was killed: the record stops there).  --json prints one JSON object\n"
	    "a line, with \"origin\": what made the session (record, import,\n"
	    "replay or mock) and \"state\": ended, open or recorder gone.  A\n"
	    "name longer than 40 characters is cut, with \"...\".\n");
}

static json_t *
session_json(const struct session_row *r)
{
	json_t	*o = json_object(), *target;

	json_object_set_new(o, "id", json_integer(r->id));
	json_object_set_new(o, "name", r->name != NULL ?
	    json_string(r->name) : json_null());
	json_object_set_new(o, "transport", json_string(r->transport));
	target = json_loads(r->target, 0, NULL);
	json_object_set_new(o, "target", target != NULL ? target :
	    json_string(r->target));
	json_object_set_new(o, "started_ns", json_integer(r->started_ns));
	json_object_set_new(o, "ended_ns", r->ended_ns != 0 ?
	    json_integer(r->ended_ns) : json_null());
	json_object_set_new(o, "exit_status", r->has_exit ?
	    json_integer(r->exit_status) : json_null());
	json_object_set_new(o, "exit_signal", r->exit_signal != 0 ?
	    json_integer(r->exit_signal) : json_null());
	json_object_set_new(o, "end_reason", r->end_reason != NULL ?
	    json_string(r->end_reason) : json_null());
	json_object_set_new(o, "state", json_string(fmt_session_state(r)));
	json_object_set_new(o, "messages", json_integer(r->messages));
	json_object_set_new(o, "bytes", json_integer(r->bytes));
	json_object_set_new(o, "messages_lost",
	    json_integer(r->messages_lost));
	json_object_set_new(o, "origin", json_string(r->origin));
	/* --otlp: spans the collector did not get; null: not exported. */
	json_object_set_new(o, "otlp_dropped", r->has_otlp_dropped ?
	    json_integer(r->otlp_dropped) : json_null());
	return o;
}

/*
 * The widest a name is shown (longer ones end in "..."): the columns
 * after it stay on one screen line.
 */
#define SESSIONS_NAME_MAX	40

/* The width of each text column, from the widest value in it. */
struct sessions_list {
	int	json;
	int	id, name, dur, msgs, bytes, status;
};

/* The characters (UTF-8 code points) of s: the columns it takes. */
static int
sessions_width(const char *s)
{
	int	n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return n;
}

/*
 * Print name in a cell of width columns: padded, or cut to fit with
 * "..."; a control character (a newline in a name) shows as '?'.
 */
static void
sessions_name_cell(const char *name, int width)
{
	int		 n = sessions_width(name), keep, col = 0;
	const char	*p;

	keep = (n > width) ? width - 3 : n;
	for (p = name; *p != '\0'; p++) {
		if (((unsigned char)*p & 0xc0) != 0x80 && col++ == keep)
			break;
		putchar((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
	}
	if (n > width)
		fputs("...", stdout);
	printf("%*s", width - (n > width ? width : n), "");
}

/* The status and duration columns of r. */
static void
sessions_status(const struct session_row *r, char *status, size_t slen,
    char *dur, size_t dlen)
{
	if (r->has_exit && r->exit_signal != 0)
		snprintf(status, slen, "signal %d", r->exit_signal);
	else if (r->has_exit)
		snprintf(status, slen, "exit %d", r->exit_status);
	else if (r->ended_ns != 0)
		snprintf(status, slen, "ended");
	else
		snprintf(status, slen, "%s", fmt_session_state(r));
	if (r->ended_ns != 0)
		fmt_duration(clock_sub(r->ended_ns, r->started_ns), dur, dlen);
	else
		snprintf(dur, dlen, "-");
}

static int
sessions_max(int a, int b)
{
	return a > b ? a : b;
}

/* First pass: widen the columns to fit r. */
static int
measure_session_cb(const struct session_row *r, void *arg)
{
	struct sessions_list	*l = arg;
	char			 status[32], dur[32];

	sessions_status(r, status, sizeof status, dur, sizeof dur);
	l->id = sessions_max(l->id, snprintf(NULL, 0, "%lld",
	    (long long)r->id));
	l->name = sessions_max(l->name, r->name != NULL ?
	    sessions_width(r->name) : 1);
	if (l->name > SESSIONS_NAME_MAX)
		l->name = SESSIONS_NAME_MAX;
	l->dur = sessions_max(l->dur, (int)strlen(dur));
	l->msgs = sessions_max(l->msgs, snprintf(NULL, 0, "%lld",
	    (long long)r->messages));
	l->bytes = sessions_max(l->bytes, snprintf(NULL, 0, "%lld",
	    (long long)r->bytes));
	l->status = sessions_max(l->status, (int)strlen(status));
	return 0;
}

static int
print_session_cb(const struct session_row *r, void *arg)
{
	struct sessions_list	*l = arg;
	char			 when[32], dur[32], status[32], *target, *p;

	if (l->json) {
		json_t	*o = session_json(r);

		fmt_json_line(o);
		json_decref(o);
		return 0;
	}
	sessions_status(r, status, sizeof status, dur, sizeof dur);
	target = fmt_target(r->target);
	/* One row a line: an argv may hold a newline. */
	for (p = target; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
	printf("%*lld  ", l->id, (long long)r->id);
	sessions_name_cell(r->name != NULL ? r->name : "-", l->name);
	printf(" %-6s %s %*s %*lld %*lld  %-*s %s\n", r->transport,
	    fmt_time(r->started_ns, when, sizeof when), l->dur, dur,
	    l->msgs, (long long)r->messages, l->bytes, (long long)r->bytes,
	    l->status, status, target);
	free(target);
	return 0;
}

int
cmd_sessions(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct sessions_list		 l;
	struct store			*st;
	const char			*db = NULL;
	char				*path, *cause = NULL;
	int				 ch, json = 0, rc = EXIT_OK;

	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			cmd_sessions_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("sessions", argc, argv, "hvq",
			    longopts);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "mcpreel sessions: unexpected argument '%s'\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if ((path = dbpath_resolve(db, &cause)) == NULL ||
	    (st = store_open(path, 0, &cause)) == NULL) {
		fprintf(stderr, "mcpreel sessions: %s\n", cause);
		free(cause);
		free(path);
		return EXIT_USAGE;
	}
	/* The headings' widths are the least; the values widen them. */
	memset(&l, 0, sizeof l);
	l.json = json;
	l.id = 5;
	l.name = 16;
	l.dur = 9;
	l.msgs = 7;
	l.bytes = 10;
	l.status = 9;
	if (!json && query_sessions(st, 0, measure_session_cb, &l,
	    &cause) != 0) {
		fprintf(stderr, "mcpreel sessions: %s\n", cause);
		free(cause);
		store_close(st);
		free(path);
		return EXIT_USAGE;
	}
	if (!json) {
		printf("%*s  %-*s %-6s %-19s %*s %*s %*s  %-*s %s\n", l.id,
		    "ID", l.name, "NAME", "TRANS", "STARTED", l.dur,
		    "DURATION", l.msgs, "MSGS", l.bytes, "BYTES", l.status,
		    "STATUS", "SERVER");
	}
	if (query_sessions(st, 0, print_session_cb, &l, &cause) != 0) {
		fprintf(stderr, "mcpreel sessions: %s\n", cause);
		free(cause);
		rc = EXIT_USAGE;
	}
	store_close(st);
	free(path);
	return rc;
}
