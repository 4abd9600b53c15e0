/* mcpreel replay: re-send a recorded session to a server and diff. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "proxy.h"
#include "replay.h"
#include "store.h"

/* Seconds replay waits for each response, unless --timeout. */
#define REPLAY_DEFAULT_TIMEOUT	30

/*
 * Where a database session's plan is read from, a window at a time: the
 * session's messages in order, on a read connection of its own (the
 * replay's own run is recorded meanwhile through another).
 */
struct replay_src {
	struct store		*st;
	struct query_stream	*qs;
};

/* The next recorded message into p (plan_source_fn). */
static int
replay_src_cb(struct plan *p, void *arg, char **cause)
{
	struct replay_src		*rs = arg;
	const struct timeline_row	*r;
	int				 rc;

	if ((rc = query_stream_next(rs->qs, &r, cause)) != 1)
		return rc;
	cli_plan_add(p, r);
	return 1;
}

/* Close what replay_plan() opened to read the session. */
static void
replay_src_close(struct replay_src *rs)
{
	query_stream_close(rs->qs);
	store_close(rs->st);
	memset(rs, 0, sizeof *rs);
}

/*
 * The plan of SESSION arg, as session_arg_plan() gives it, but a
 * database session streamed through rs so a replay holds only a window
 * of it; a cassette is read whole (it is a file read into memory
 * anyway).
 */
static int
replay_plan(const char *db, const char *arg, int include_faults,
    struct plan *p, int64_t *id, char **name, struct store **rec,
    struct replay_src *rs, char **cause)
{
	struct session_arg	sa;
	int			rc = -1;

	memset(rs, 0, sizeof *rs);
	if (cassette_is(arg))
		return session_arg_plan(db, arg, include_faults, "replay", p,
		    id, name, rec, cause);
	if (session_arg_open(db, arg, rec != NULL ? STORE_PRIVATE : 0, &sa,
	    cause) != 0)
		return -1;
	if (sa.cassette != NULL) {
		/* A word that is no session but a file's name. */
		session_arg_close(&sa);
		return session_arg_plan(db, arg, include_faults, "replay", p,
		    id, name, rec, cause);
	}
	*id = sa.id;
	if (query_sessions(sa.st, sa.id, session_arg_name_cb, name,
	    cause) != 0 ||
	    (!include_faults && cli_faults_note(sa.st, sa.id, "replay",
	    cause) != 0) ||
	    (rs->st = store_open(sa.db, 0, cause)) == NULL ||
	    (rs->qs = query_stream_open(rs->st, sa.id, include_faults ? 0 :
	    QUERY_UNFAULTED, cause)) == NULL)
		goto out;
	if (rec != NULL) {
		*rec = NULL;
		if (session_arg_recorder(db, &sa, rec, cause) != 0)
			goto out;
	}
	plan_stream(p, replay_src_cb, rs);
	rc = 0;
out:
	if (rc != 0) {
		replay_src_close(rs);
		free(*name);
		*name = NULL;
	}
	session_arg_close(&sa);
	return rc;
}

void
cmd_replay_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel replay [--db PATH] SESSION [OPTIONS] -- CMD [ARGS...]\n"
	    "       mcpreel replay [--db PATH] SESSION [OPTIONS] --upstream URL\n"
	    "\n"
	    "Re-send a recorded session's client messages to a live server (CMD\n"
	    "over stdio, or a Streamable HTTP endpoint URL) and compare every\n"
	    "response with the recorded one.  A session recorded over either\n"
	    "transport replays over either.  SESSION is an id, a name or 'last'.\n"
	    CLI_SESSION_WORDS CLI_SESSION_CASSETTE
	    "The replay of a cassette is recorded only with --db (in that\n"
	    "database): without it, nothing is written.\n"
	    "\n"
	    "Messages go in causal order: each is sent once every response the\n"
	    "recorded client had received before sending it has arrived (or timed\n"
	    "out).  The server's own requests (sampling, elicitation, roots, ping)\n"
	    "are answered from the recording.  Ids, progress tokens and opaque\n"
	    "values the server issues are remapped, not compared.\n"
	    "\n"
	    "Values that were redacted when recorded are not in the database: a\n"
	    "message holding \"[REDACTED]\" is sent so, with a warning naming the\n"
	    "places.  In answers, a recorded \"[REDACTED]\" stands for any value\n"
	    "and a string with [REDACTED] in it for the same text with anything\n"
	    "in the gaps: places that fit are not compared (a note lists them),\n"
	    "and a difference there is marked (redacted when recorded).\n"
	    "\n"
	    "options:\n"
	    "  --timeout SEC          wait this long for each response (default 30)\n"
	    "  --pace recorded        also keep the recorded gaps between messages\n"
	    "  --ignore PATH          do not compare PATH (repeatable); a JSONPath\n"
	    "                         subset: $.a.b, [n], [*], .*, ..key (at any\n"
	    "                         depth), {json} (into a string holding\n"
	    "                         JSON); the leading $ may be left out\n"
	    "  --for KEY=GLOB         after --ignore: only in the answers of a\n"
	    "                         tool, prompt, resource (URI) or method:\n"
	    "                         --ignore $.result --for tool=get_weather\n"
	    "                         (repeatable: method=, and one of tool=,\n"
	    "                         prompt=, resource=; * ? [ ] globs)\n"
	    "  --ignore-method M      do not compare the answers to method M\n"
	    "  --ignore-tool NAME     ... to tools/call of tool NAME\n"
	    "  --ignore-prompt NAME   ... to prompts/get of prompt NAME\n"
	    "  --ignore-resource URI  ... to resources/read of URI (all globs)\n"
	    "  --rules FILE           the same in a JSON file: {\"ignore\": [PATH or\n"
	    "                         {\"path\": PATH, \"tool\": NAME}],\n"
	    "                         \"ignore_methods\": [M], \"ignore_tools\",\n"
	    "                         \"ignore_prompts\", \"ignore_resources\",\n"
	    "                         \"normalize\": [{\"regex\": RE, \"replace\": S}]};\n"
	    "                         an ignore or normalize object may carry a\n"
	    "                         scope: \"method\", \"tool\", \"prompt\", \"resource\"\n"
	    "  --before CMD           run CMD with /bin/sh -c before the replay (and\n"
	    "                         before the server starts), e.g. to restore a\n"
	    "                         stateful server's files; repeatable, in order;\n"
	    "                         its output goes to stderr; a failure stops the\n"
	    "                         replay (exit status 2); no timeout: interrupt\n"
	    "                         mcpreel to stop a command that hangs\n"
	    "  --notifications strict  also compare notification counts per method\n"
	    "  --report text|json|junit   the report's form (default text)\n"
	    "  -o FILE                write the report to FILE, not stdout\n"
	    "  --no-record            do not record the replay as a new session\n"
	    "  --name NAME            name the recorded replay (default: replay of N)\n"
	    "  --cacert FILE, --insecure   for an https:// upstream\n"
	    "  --max-record-size SIZE the most of one answer held: an HTTP body,\n"
	    "                         one SSE event, one line of a stdio server\n"
	    "                         (default 128M; K, M, G suffixes; 0: no cap).\n"
	    "                         A longer one is given up (over HTTP its\n"
	    "                         connection closed) and the report says so;\n"
	    "                         its request counts as unanswered\n"
	    "  --include-faults       send the messages of faults injected when\n"
	    "                         recording (record --fault) too: by default\n"
	    "                         what did not pass between mcpreel and the\n"
	    "                         server (a client's message as the client\n"
	    "                         sent it, what mcpreel sent the client) is\n"
	    "                         left out, as if absent (stderr says how\n"
	    "                         many); a mutated request is sent as the\n"
	    "                         server got it\n"
	    "\n"
	    "A normalize regex runs on every string value, and on the strings\n"
	    "inside a string that holds JSON, decoded, never on that JSON text:\n"
	    "for {\"id\":\"a1\"} in a tool's text, write \"^a[0-9]+$\", not\n"
	    "\"\\\"id\\\":\\\"a[0-9]+\\\"\" (or --ignore '$..text{json}.id').  A rule\n"
	    "that matched nothing in the whole run is reported (rule ... matched\n"
	    "nothing); it does not change the exit status.\n"
	    "\n"
	    "Exit status: 0 all the same, 1 differences or missing responses, 2 could\n"
	    "not run, or stopped early: the server could not be reached, or went\n"
	    "away (exited, refused or dropped a connection) before the replay\n"
	    "ended.  A request is never sent twice.\n");
}

int
cmd_replay(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' },
		{ "pace", required_argument, NULL, 'p' },
		{ "ignore", required_argument, NULL, 'i' },
		{ "ignore-method", required_argument, NULL, 'm' },
		{ "for", required_argument, NULL, 'f' },
		{ "ignore-tool", required_argument, NULL, 'T' },
		{ "ignore-prompt", required_argument, NULL, 'P' },
		{ "ignore-resource", required_argument, NULL, 'U' },
		{ "before", required_argument, NULL, 'b' },
		{ "rules", required_argument, NULL, 'R' },
		{ "notifications", required_argument, NULL, 'N' },
		{ "report", required_argument, NULL, 'r' },
		{ "no-record", no_argument, NULL, 'n' },
		{ "name", required_argument, NULL, 'a' },
		{ "upstream", required_argument, NULL, 'u' },
		{ "cacert", required_argument, NULL, 'c' },
		{ "insecure", no_argument, NULL, 'k' },
		{ "max-record-size", required_argument, NULL, 'M' },
		CLI_INCLUDE_FAULTS_LONGOPT,
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct replay_options		 opt;
	struct replay_report		 rep;
	struct diff_rules		 rules;
	struct plan			 plan;
	struct replay_src		 rs;
	char				*sname = NULL;
	struct cli_target		 target;
	struct store			*st = NULL;
	struct writer			*w = NULL;
	const char			*db = NULL, *report = "text";
	const char			*out_path = NULL, *name = NULL;
	char				*cause = NULL, *end;
	char				*label = NULL, *tlabel;
	const char			**before = NULL;
	size_t				 nbefore = 0, i;
	int64_t				 id;
	long				 n;
	int				 ch, record = 1, rc = EXIT_USAGE;
	int				 scopable = 0, include_faults = 0;
	FILE				*out = stdout;

	memset(&opt, 0, sizeof opt);
	memset(&rep, 0, sizeof rep);
	memset(&plan, 0, sizeof plan);
	memset(&rs, 0, sizeof rs);
	memset(&target, 0, sizeof target);
	target.max_body = RECORD_MAX_RECORD;
	rules_init(&rules);
	opt.timeout_ms = REPLAY_DEFAULT_TIMEOUT * 1000;
	opt.rules = &rules;

	while ((ch = getopt_long(argc, argv, "hvqo:", longopts, NULL)) !=
	    -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (rules_opts_take(&rules, &scopable, ch, optarg,
		    &cause)) {
		case 0:
			continue;
		case -1:
			goto bad;
		}
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 't':
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || n < 1 ||
			    n > 86400) {
				fprintf(stderr, "mcpreel replay: --timeout "
				    "takes whole seconds, 1 to 86400\n");
				goto out;
			}
			opt.timeout_ms = (int)n * 1000;
			break;
		case 'p':
			if (strcmp(optarg, "recorded") != 0) {
				fprintf(stderr, "mcpreel replay: --pace takes "
				    "'recorded'\n");
				goto out;
			}
			opt.pace = 1;
			break;
		case 'b':
			before = xreallocarray(before, nbefore + 1,
			    sizeof *before);
			before[nbefore++] = optarg;
			break;
		case 'N':
			if (strcmp(optarg, "strict") != 0) {
				fprintf(stderr, "mcpreel replay: "
				    "--notifications takes 'strict'\n");
				goto out;
			}
			opt.notifications_strict = 1;
			break;
		case 'r':
			if (strcmp(optarg, "text") != 0 &&
			    strcmp(optarg, "json") != 0 &&
			    strcmp(optarg, "junit") != 0) {
				fprintf(stderr, "mcpreel replay: --report "
				    "takes text, json or junit\n");
				goto out;
			}
			report = optarg;
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'n':
			record = 0;
			break;
		case 'a':
			name = optarg;
			break;
		case 'u':
			target.url = optarg;
			break;
		case 'c':
			target.cacert = optarg;
			break;
		case 'M':
			if (limits_parse_size(optarg, &target.max_body) != 0) {
				fprintf(stderr, "mcpreel replay: "
				    "--max-record-size takes bytes, with K, M "
				    "or G for KiB, MiB, GiB (0: no cap): %s\n",
				    optarg);
				goto out;
			}
			break;
		case 'k':
			target.insecure = 1;
			break;
		case CLI_OPT_INCLUDE_FAULTS:
			include_faults = 1;
			break;
		case 'h':
			cmd_replay_usage(stdout);
			rc = EXIT_OK;
			goto out;
		default:
			opterr_report("replay", argc, argv, "hvqo:",
			    longopts);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		fprintf(stderr, "mcpreel replay: give the SESSION to replay "
		    "(an id, a name or 'last')\n");
		goto out;
	}
	if ((target.url == NULL) == (argc < 2)) {
		fprintf(stderr, "mcpreel replay: give the server to replay "
		    "against: -- CMD [ARGS...] or --upstream URL (one of "
		    "them)\n");
		goto out;
	}

	/* A replay of a cassette is recorded only in a --db given. */
	if (replay_plan(db, argv[0], include_faults, &plan, &id, &sname,
	    record ? &st : NULL, &rs, &cause) != 0)
		goto bad;
	record = st != NULL;
	rep.session = id;
	rep.session_name = sname;

	/* The server is not started yet: --before may reset its state. */
	for (i = 0; i < nbefore; i++) {
		if (before_run(before[i], &cause) != 0)
			goto bad;
	}

	if (record) {
		if ((w = writer_start(st, &cause)) == NULL)
			goto bad;
		st = NULL;
		if (name == NULL)
			xasprintf(&label, "replay of %lld", (long long)id);
		opt.w = w;
		target.argv = argv + 1;
		tlabel = cli_target_label(&target);
		opt.ws = writer_session_as(w, name != NULL ? name : label,
		    target.url != NULL ? "http" : "stdio", tlabel,
		    ORIGIN_REPLAY);
		free(tlabel);
	} else {
		store_close(st);
		st = NULL;
	}

	target.argv = argv + 1;
	rc = replay_run(&plan, cli_target_open, &target, &opt, &rep, &cause);
	if (w != NULL) {
		writer_session_end(w, opt.ws, -1, 0, rc != 0 ? "replay could "
		    "not run" : rep.lost != NULL ? "replay stopped early: the "
		    "server went away" : "replay finished");
		writer_stop(w);
		rep.replay_session = writer_session_id(opt.ws);
		writer_session_free(opt.ws);
		w = NULL;
	}
	if (rc != 0) {
		fprintf(stderr, "mcpreel replay: %s\n", cause);
		rc = EXIT_USAGE;
		goto out;
	}

	if (out_path != NULL && (out = fopen(out_path, "we")) == NULL) {
		fprintf(stderr, "mcpreel replay: cannot write %s: %m\n",
		    out_path);
		out = stdout;
		rc = EXIT_USAGE;
		goto out;
	}
	if (strcmp(report, "json") == 0)
		report_json(out, &rep);
	else if (strcmp(report, "junit") == 0)
		report_junit(out, &rep);
	else
		report_text(out, &rep, out == stdout && isatty(STDOUT_FILENO));
	if (out != stdout && out_path != NULL && strcmp(report, "text") != 0)
		report_text(stdout, &rep, isatty(STDOUT_FILENO));
	if (rep.lost != NULL)
		fprintf(stderr, "mcpreel replay: the replay stopped early: %s.  "
		    "Requests not answered by then are counted missing and "
		    "later ones were not sent; replay again once the server "
		    "is up\n", rep.lost);
	rc = replay_exit_status(&rep);
	goto out;

bad:
	fprintf(stderr, "mcpreel replay: %s\n", cause);
	rc = EXIT_USAGE;
out:
	if (out != stdout)
		fclose(out);
	if (w != NULL)
		writer_stop(w);
	store_close(st);
	replay_report_clear(&rep);
	plan_clear(&plan);
	replay_src_close(&rs);
	rules_clear(&rules);
	free(label);
	free(before);
	free(cause);
	return rc;
}
