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
	    "and the server command.  A session that never ended is \"open\" while\n"
	    "its recorder runs, \"recorder gone\" once that process is gone (it\n"
	    "was killed: the record stops there).  --json prints one JSON object\n"
	    "a line, its \"state\" one of ended, open, recorder gone.\n");
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
	return o;
}

static int
print_session_cb(const struct session_row *r, void *arg)
{
	int	*json = arg;
	char	 when[32], dur[32], status[32], *target;

	if (*json) {
		json_t	*o = session_json(r);

		fmt_json_line(o);
		json_decref(o);
		return 0;
	}
	if (r->has_exit && r->exit_signal != 0)
		snprintf(status, sizeof status, "signal %d", r->exit_signal);
	else if (r->has_exit)
		snprintf(status, sizeof status, "exit %d", r->exit_status);
	else if (r->ended_ns != 0)
		snprintf(status, sizeof status, "ended");
	else
		snprintf(status, sizeof status, "%s", fmt_session_state(r));
	if (r->ended_ns != 0)
		fmt_duration(clock_sub(r->ended_ns, r->started_ns), dur,
		    sizeof dur);
	else
		snprintf(dur, sizeof dur, "-");
	target = fmt_target(r->target);
	printf("%5lld  %-16s %-6s %s %9s %7lld %10lld  %-13s %s\n",
	    (long long)r->id, r->name != NULL ? r->name : "-", r->transport,
	    fmt_time(r->started_ns, when, sizeof when), dur,
	    (long long)r->messages, (long long)r->bytes, status, target);
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
			cmd_sessions_usage(stderr);
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
	if (!json)
		printf("%5s  %-16s %-6s %-19s %9s %7s %10s  %-13s %s\n", "ID",
		    "NAME", "TRANS", "STARTED", "DURATION", "MSGS", "BYTES",
		    "STATUS", "SERVER");
	if (query_sessions(st, 0, print_session_cb, &json, &cause) != 0) {
		fprintf(stderr, "mcpreel sessions: %s\n", cause);
		free(cause);
		rc = EXIT_USAGE;
	}
	store_close(st);
	free(path);
	return rc;
}
