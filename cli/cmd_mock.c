/* mcpreel mock: serve a recorded session as the server, offline. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fault.h"
#include "proxy.h"
#include "replay.h"
#include "store.h"

void
cmd_mock_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel mock [--db PATH] SESSION [--listen ADDR] [OPTIONS]\n"
	    "       mcpreel mock ... --on-miss forward {--fallback URL | -- CMD [ARGS...]}\n"
	    "       mcpreel mock --cassette FILE [--record-mode MODE] [--listen ADDR]\n"
	    "                    [OPTIONS] [--fallback URL | -- CMD [ARGS...]]\n"
	    "\n"
	    "Play the server of a recorded session, so a client can be tested\n"
	    "with no real server: over stdio (a host launches mcpreel mock in\n"
	    "place of the server), or with --listen as a Streamable HTTP server\n"
	    "(every path is the endpoint; /mcp by convention).  A session recorded\n"
	    "over either transport can be served over either.  Nothing\n"
	    "contacts a real server unless --on-miss forward.  SESSION is an\n"
	    "id, a name or 'last'.\n"
	    CLI_SESSION_WORDS CLI_SESSION_CASSETTE
	    "With a cassette, --on-miss forward records the forwarded\n"
	    "exchanges only with --db (in that database); without it, nothing\n"
	    "is written.\n"
	    "\n"
	    "Each request gets the recorded answer to the matching recorded\n"
	    "request (same method and params; _meta and progress tokens aside;\n"
	    "initialize and server/discover by method alone), with the live id.\n"
	    "A request recorded several times gets the recordings in order, the\n"
	    "last repeating.  What the server did around that answer is played\n"
	    "too: progress (with the live token) and log notifications, and its\n"
	    "own requests to the client, whose answers are awaited.  An unmatched\n"
	    "request gets a JSON-RPC error naming the nearest recorded request\n"
	    "and where it differs.  Where record redacted a recorded request,\n"
	    "it matches any value there (\"[REDACTED]\"), or the same text\n"
	    "around the gaps (a string with [REDACTED] in it), when no request\n"
	    "matches exactly; the log says so.\n"
	    "\n"
	    "With --cassette FILE, mock serves a cassette (a session as the\n"
	    "JSON lines of export) and records it from a live server as\n"
	    "--record-mode says (see docs/cassettes.md):\n"
	    "  none          answer from FILE only; a miss gets the explained\n"
	    "                error; a server given is not started\n"
	    "  once          none if FILE is there, else all (the default)\n"
	    "  new_episodes  answer from FILE; a miss goes to the server and\n"
	    "                the new exchange is appended to FILE (its bytes\n"
	    "                kept; nothing written when nothing missed; no\n"
	    "                FILE yet: as all)\n"
	    "  all           every request goes to the server; FILE is\n"
	    "                rewritten, a line that changed only in its times\n"
	    "                kept as it was, so an unchanged session gives the\n"
	    "                same bytes\n"
	    "The server is --fallback URL or -- CMD [ARGS...] (needed unless\n"
	    "none); --on-miss, --db and, when recording, --fault are refused.\n"
	    "FILE gets what the client sent and got (its own ids), written\n"
	    "when mock ends (the client closed, or a signal), whole or not at\n"
	    "all; an exchange once answered.  A forwarded request gets 30 s;\n"
	    "one the server did not answer is left out, and mock exits 1.\n"
	    "\n"
	    "options:\n"
	    "  --cassette FILE    serve and record the cassette FILE\n"
	    "  --record-mode none|once|new_episodes|all\n"
	    "                     with --cassette: what is recorded (above)\n"
	    "  --listen ADDR      serve Streamable HTTP on ADDR (PORT, HOST:PORT;\n"
	    "                     port 0 picks one; printed on stderr when ready).\n"
	    "                     A loopback address unless --allow-remote\n"
	    "  --allow-remote     let --listen take an address other machines\n"
	    "                     can reach\n"
	    "  --match strict     demand the recorded order of requests exactly\n"
	    "  --ignore PATH      leave PATH of requests out of matching\n"
	    "                     (repeatable; e.g. $.params.arguments.when)\n"
	    "  --for KEY=GLOB     after --ignore: only for the requests of a\n"
	    "                     tool, prompt, resource (URI) or method, e.g.\n"
	    "                     --ignore $.params.arguments.when --for\n"
	    "                     tool=get_weather (repeatable: method=, and one\n"
	    "                     of tool=, prompt=, resource=)\n"
	    "  --latency capped|none|recorded|scale:X\n"
	    "                     the time between the messages of one exchange (the\n"
	    "                     request, the progress and other messages the server\n"
	    "                     sent while working on it, its answer, what it sent\n"
	    "                     after): capped (default) keeps each recorded gap but\n"
	    "                     1 s at most; none sends them all at once; recorded\n"
	    "                     keeps the recorded gaps whole, however long;\n"
	    "                     scale:X multiplies them by X (0.1: ten times\n"
	    "                     faster), each 10 s at most.  But for none, what\n"
	    "                     follows a notification is 5 ms after it at least:\n"
	    "                     some clients (the official TypeScript SDK) lose\n"
	    "                     progress callbacks that arrive in one read with\n"
	    "                     the answer\n"
	    "  --on-miss error|forward\n"
	    "                     what an unmatched request gets: the explained\n"
	    "                     error (default), or an answer from a live server,\n"
	    "                     --fallback URL (Streamable HTTP) or -- CMD (stdio),\n"
	    "                     the new exchange recorded as a session of its own\n"
	    OTLP_OPTS_HELP
	    "                     The mock reports as the server of one session\n"
	    "                     (its client's), each message as the client sent\n"
	    "                     it or the mock answered (before --fault rules).\n"
	    "                     With --listen, every client's spans go into\n"
	    "                     that one session and trace (one mcp.session.id,\n"
	    "                     not one per Mcp-Session-Id).\n"
	    "                     With --on-miss forward, the fallback's row gets\n"
	    "                     as otlp_dropped the spans of the whole mock run\n"
	    "                     not delivered, those the recording answered too\n"
	    FAULT_OPTS_HELP
	    "                     Rules apply at the mock's edge: c2s is what the\n"
	    "                     client sends, s2c what the mock answers or sends;\n"
	    "                     each fault is logged on stderr (and recorded with\n"
	    "                     --on-miss forward).  close over stdio ends the\n"
	    "                     mock's output and stops it, as a dying server;\n"
	    "                     http-status, close mode=reset|end-stream need\n"
	    "                     --listen\n"
	    "  --include-faults   answer from the messages of faults injected when\n"
	    "                     recording too: by default what did not pass\n"
	    "                     between mcpreel and the server (a client's\n"
	    "                     message as the client sent it, what mcpreel sent\n"
	    "                     the client) is left out, as if absent (stderr\n"
	    "                     says how many)\n"
	    "\n"
	    "limits of --listen (as record --listen has them; the first three\n"
	    "are refused without --listen):\n"
	    "  --max-connections N  serve at most N clients at once; the next\n"
	    "                     waits to be accepted until one closes (default:\n"
	    "                     what ulimit -n allows, less %d, at most %d)\n"
	    "  --head-timeout S   answer 408 to a client that has not sent a whole\n"
	    "                     request head S seconds after its first byte\n"
	    "                     (default %d; 0: no limit)\n"
	    "  --idle-timeout S   close a connection silent for S seconds between\n"
	    "                     requests (in the middle of a body: 408), or\n"
	    "                     whose client reads nothing of what waits for\n"
	    "                     it for S seconds (default %d; 0: no limit)\n"
	    "  --max-record-size SIZE\n"
	    "                     refuse a request body over SIZE bytes with 413\n"
	    "                     and close; a fallback's answer or line over it\n"
	    "                     is given up (default 128M; K, M, G suffixes;\n"
	    "                     0: no cap)\n", LISTENER_FD_RESERVE,
	    LISTENER_MAX_DEFAULT, HTTP_HEAD_TIMEOUT, HTTP_IDLE_TIMEOUT);
}

/* --fault, --faults, --seed, and the transport their rules are for. */
struct cmd_mock_fo {
	struct fault_opts	 o;
	int			 http;
};

/* SIGHUP: --fault and --faults read again into set. */
static int
cmd_mock_reload(struct fault_set *set, void *arg, char **cause)
{
	struct cmd_mock_fo	*fo = arg;

	return fault_opts_reload(&fo->o, set, fo->http, cause);
}

/*
 * The rules of --fault and --faults for this transport; a rule that needs
 * --listen is refused saying so.  NULL with *cause.
 */
static struct fault_set *
cmd_mock_faults(struct fault_opts *fo, int http, char **cause)
{
	struct fault_set	*set;
	char			*why = NULL;

	if ((set = fault_opts_load(fo, http, cause)) != NULL)
		return set;
	if (http || (set = fault_opts_load(fo, 1, &why)) == NULL)
		return NULL;
	fault_set_free(set);
	free(why);
	why = *cause;
	xasprintf(cause, "%s: mock serves stdio here; that rule needs "
	    "Streamable HTTP: add --listen ADDR", why);
	free(why);
	return NULL;
}

/* --record-mode and --cassette, and what they need of the command. */
struct cmd_mock_rec {
	const char		*path;		/* --cassette FILE, or NULL */
	int			 mode_given;
	enum recmode_mode	 mode;
	int			 on_miss_given;
	struct recmode		 rm;		/* the cassette recorded */
};

/* One recorded message into the mock's index on disk. */
static int
cmd_mock_load_cb(const struct timeline_row *r, void *arg)
{
	if (r->is_event)
		return 0;
	mdisk_add(arg, r->m.seq, r->m.dir, r->m.mono_ns, r->m.raw, r->m.len,
	    r->m.truncated, r->m.kind, r->m.method, r->m.rpc_id);
	return 0;
}

/*
 * Read session id's messages into md, one row at a time (what
 * cli_load_plan() would load, without holding them): the messages of
 * injected faults left out unless include_faults, as replay does.
 */
static int
cmd_mock_load(struct store *st, int64_t id, int include_faults,
    struct mdisk *md, char **cause)
{
	if (!include_faults && cli_faults_note(st, id, "mock", cause) != 0)
		return -1;
	return query_timeline(st, id, include_faults ? 0 : QUERY_UNFAULTED,
	    cmd_mock_load_cb, md, cause);
}

/*
 * Read the cassette at path into md: straight from the file when its
 * messages come in the store's order (as mcpreel writes them), else
 * through a temporary store, which orders them.  *id (may be NULL) gets
 * its session's id.
 */
static int
cmd_mock_cassette(const char *path, int include_faults, struct mdisk *md,
    int64_t *id, char **cause)
{
	struct cassette	*cas;
	struct store	*st;
	int		 sorted, rc;

	if (cassette_mdisk(path, include_faults, "mock", md, id, &sorted,
	    cause) != 0)
		return -1;
	if (sorted)
		return 0;
	if (mdisk_reset(md, cause) != 0 ||
	    (cas = cassette_load(path, cause)) == NULL)
		return -1;
	if ((st = store_open(cassette_db(cas), STORE_PRIVATE | STORE_SCRATCH,
	    cause)) == NULL) {
		cassette_free(cas);
		return -1;
	}
	rc = cmd_mock_load(st, cassette_session(cas), include_faults, md,
	    cause);
	store_close(st);
	cassette_free(cas);
	return rc;
}

/*
 * mock --cassette FILE: check the options go together, read the cassette
 * (none, new_episodes on a file there) or start from nothing (all), and
 * for a mode that records, set the fallback up and begin the recording.
 * args are the server command after --, if any.
 */
static int
cmd_mock_recmode(struct cmd_mock_rec *rec, const char *db, int argc,
    char **args, const char *fallback_url, const struct fault_opts *fo,
    int include_faults, struct mock_options *opt, struct cli_target *target,
    struct mdisk *md, char **cause)
{
	char		*tlabel;
	int		 exists;

	if (rec->on_miss_given) {
		xasprintf(cause, "--record-mode says what a miss gets (none: "
		    "the explained error; once, new_episodes, all: an answer "
		    "from the server, recorded): leave out --on-miss");
		return -1;
	}
	if (db != NULL) {
		xasprintf(cause, "--db: with --cassette mock reads and "
		    "writes the cassette only; leave out --db");
		return -1;
	}
	if (fallback_url != NULL && argc > 0) {
		xasprintf(cause, "give one server: --fallback URL or -- CMD "
		    "[ARGS...], not both");
		return -1;
	}
	if (rec->mode != RECMODE_NONE && fallback_url == NULL && argc == 0) {
		xasprintf(cause, "--record-mode %s records from a live server: "
		    "give it with --fallback URL or -- CMD [ARGS...] (or use "
		    "--record-mode none)", recmode_name(rec->mode));
		return -1;
	}
	if (rec->mode != RECMODE_NONE && fault_opts_any(fo)) {
		xasprintf(cause, "--record-mode %s records the server as it is, "
		    "and --fault would put the injected faults in the cassette: "
		    "record it first, then mock it with --record-mode none and "
		    "--fault", recmode_name(rec->mode));
		return -1;
	}
	exists = access(rec->path, F_OK) == 0;
	if (rec->mode == RECMODE_ONCE)
		rec->mode = exists ? RECMODE_NONE : RECMODE_ALL;
	if (rec->mode == RECMODE_NONE && !exists) {
		xasprintf(cause, "the cassette %s is not there: record it with "
		    "--record-mode once and a server", rec->path);
		return -1;
	}
	rec->rm.path = rec->path;
	rec->rm.appending = rec->mode == RECMODE_NEW_EPISODES && exists;
	if ((rec->mode == RECMODE_NONE || rec->rm.appending) &&
	    cmd_mock_cassette(rec->path, include_faults, md, NULL, cause) != 0)
		return -1;
	/* else nothing: every request a miss */
	if (rec->mode == RECMODE_NONE)
		return 0;	/* no server is started */
	if (recmode_check(&rec->rm, cause) != 0)
		return -1;
	target->url = fallback_url;
	target->max_body = opt->lim.max_body;
	target->argv = args;
	tlabel = cli_target_label(target);
	if (recmode_begin(&rec->rm, opt->listen != NULL ? "http" : "stdio",
	    tlabel, cause) != 0) {
		free(tlabel);
		return -1;
	}
	free(tlabel);
	opt->fallback = cli_target_open;
	opt->fallback_arg = target;
	opt->cw = rec->rm.w;
	opt->cws = rec->rm.ws;
	opt->cw_all = !rec->rm.appending;
	return 0;
}

int
cmd_mock(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' },
		{ "match", required_argument, NULL, 'M' },
		{ "ignore", required_argument, NULL, 'i' },
		{ "for", required_argument, NULL, 'f' },
		{ "latency", required_argument, NULL, 'T' },
		{ "on-miss", required_argument, NULL, 'O' },
		{ "fallback", required_argument, NULL, 'F' },
		{ "allow-remote", no_argument, NULL, 'A' },
		{ "max-record-size", required_argument, NULL, 'S' },
		{ "fault", required_argument, NULL, 'X' },
		{ "faults", required_argument, NULL, 'Y' },
		{ "seed", required_argument, NULL, 'Z' },
		{ "record-mode", required_argument, NULL, 'R' },
		{ "cassette", required_argument, NULL, 'C' },
		CLI_INCLUDE_FAULTS_LONGOPT,
		LIMITS_LONGOPTS,
		OTLP_OPTS_LONGOPTS,
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct mock_options		 opt;
	struct mock_stats		 stats;
	struct mdisk			*md = NULL;
	struct session_arg		 sa;
	struct store			*st = NULL;
	struct writer			*w = NULL;
	struct cli_target		 target;
	struct diff_rules		 ignore;
	struct cmd_mock_fo		 fo;
	struct cmd_mock_rec		 rec;
	size_t				 added;
	const char			*db = NULL;
	const char			*fallback_url = NULL;
	char				*label = NULL, *tlabel;
	int				 forward = 0;
	char				*cause = NULL;
	char				*why, *note;
	int64_t				 id;
	int				 ch, strict = 0, rc = EXIT_USAGE;
	int				 allow_remote = 0;
	int				 scopable = 0, include_faults = 0;
	const char			*listen_only = NULL;
	struct otlp_opts		 oo;
	struct otlp			*otlp = NULL;
	struct otlp_sess_info		 oinfo;
	char				*olabel = NULL;

	memset(&oo, 0, sizeof oo);
	mock_options_init(&opt);
	memset(&fo, 0, sizeof fo);
	memset(&rec, 0, sizeof rec);
	rec.mode = RECMODE_ONCE;
	limits_listen_defaults(&opt.lim);
	opt.lim.max_body = RECORD_MAX_RECORD;
	memset(&target, 0, sizeof target);
	memset(&sa, 0, sizeof sa);
	rules_init(&ignore);
	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (otlp_opts_option(&oo, ch, optarg, &cause)) {
		case 0:
			continue;
		case -1:
			goto bad;
		}
		switch (limits_listen_option("mock", ch, optarg, &opt.lim)) {
		case 1:
			listen_only = ch == LIMITS_OPT_HEAD ? "--head-timeout" :
			    ch == LIMITS_OPT_IDLE ? "--idle-timeout" :
			    "--max-connections";
			continue;
		case -1:
			goto out;
		}
		/* --for narrows the --ignore (and --for) just before it. */
		if (ch != 'f')
			scopable = ch == 'i';
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'l':
			opt.listen = optarg;
			break;
		case 'M':
			if (strcmp(optarg, "strict") != 0) {
				fprintf(stderr, "mcpreel mock: --match takes "
				    "'strict'\n");
				goto out;
			}
			strict = 1;
			break;
		case 'i':
			if (rules_add_ignore(&ignore, optarg, &why) != 0) {
				xasprintf(&cause, "--ignore: %s (write a place "
				    "in the request, as "
				    "$.params.arguments.when)", why);
				free(why);
				goto bad;
			}
			break;
		case 'f':
			if (rules_opts_for(&ignore, scopable, optarg, &cause) !=
			    0)
				goto bad;
			break;
		case 'T':
			if (mock_parse_latency(&opt, optarg) != 0) {
				fprintf(stderr, "mcpreel mock: --latency takes "
				    "capped, none, recorded or scale:X (X from 0 "
				    "to 1000), not '%s'\n", optarg);
				goto out;
			}
			break;
		case 'R':
			if (recmode_parse(optarg, &rec.mode) != 0) {
				fprintf(stderr, "mcpreel mock: --record-mode "
				    "takes none, once, new_episodes or all, not "
				    "'%s'\n", optarg);
				goto out;
			}
			rec.mode_given = 1;
			break;
		case 'C':
			rec.path = optarg;
			break;
		case 'O':
			rec.on_miss_given = 1;
			if (strcmp(optarg, "forward") == 0)
				forward = 1;
			else if (strcmp(optarg, "error") != 0) {
				fprintf(stderr, "mcpreel mock: --on-miss takes "
				    "error or forward\n");
				goto out;
			}
			break;
		case 'F':
			fallback_url = optarg;
			break;
		case 'A':
			allow_remote = 1;
			break;
		case 'X':
		case 'Y':
		case 'Z':
			if (fault_opts_set(&fo.o, ch == 'X' ? "fault" : ch ==
			    'Y' ? "faults" : "seed", optarg, &cause) != 0)
				goto bad;
			break;
		case CLI_OPT_INCLUDE_FAULTS:
			include_faults = 1;
			break;
		case 'S':
			if (limits_parse_size(optarg, &opt.lim.max_body) != 0) {
				fprintf(stderr, "mcpreel mock: --max-record-size "
				    "takes bytes, with K, M or G for KiB, MiB, "
				    "GiB (0: no cap): %s\n", optarg);
				goto out;
			}
			break;
		case 'h':
			cmd_mock_usage(stdout);
			rc = EXIT_OK;
			goto out;
		default:
			opterr_report("mock", argc, argv, "hvq",
			    longopts);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;
	if (opt.listen == NULL && listen_only != NULL) {
		fprintf(stderr, "mcpreel mock: %s limits a --listen server; "
		    "over stdio there is no connection to limit: add --listen "
		    "ADDR or leave it out\n", listen_only);
		goto out;
	}
	if (opt.listen != NULL &&
	    cli_listen_check("mock", opt.listen, allow_remote) != 0)
		goto out;
	if (opt.listen == NULL && (cli_fd_was_closed(STDIN_FILENO) ||
	    cli_fd_was_closed(STDOUT_FILENO))) {
		fprintf(stderr, "mcpreel mock: %s is closed, so %s; over "
		    "stdio mock needs both open (a pipe, a file or /dev/null), "
		    "or serve HTTP with --listen\n",
		    cli_fd_was_closed(STDIN_FILENO) ? "stdin" : "stdout",
		    cli_fd_was_closed(STDIN_FILENO) ? "no request could come" :
		    "no answer could reach the client");
		goto out;
	}
	/* A bad --otlp URL or OTEL_* variable stops us before anything. */
	if (otlp_opts_check(&oo, 0, &cause) != 0)
		goto bad;
	if (fault_opts_any(&fo.o)) {
		fo.http = opt.listen != NULL;
		if ((opt.faults = cmd_mock_faults(&fo.o, fo.http, &cause)) ==
		    NULL)
			goto bad;
		opt.faults_reload = cmd_mock_reload;
		opt.faults_arg = &fo;
	} else if (fo.o.has_seed) {
		fprintf(stderr, "mcpreel mock: --seed is for --fault or "
		    "--faults rules, and none was given\n");
		goto out;
	}
	if (rec.mode_given && rec.path == NULL) {
		fprintf(stderr, "mcpreel mock: --record-mode goes with "
		    "--cassette FILE, the cassette it reads or records\n");
		goto out;
	}
	/* The index on disk takes the ignores over. */
	if ((md = mdisk_new(strict, &ignore, &cause)) == NULL)
		goto bad;
	if (rec.path != NULL) {
		/* No SESSION: the cassette; what follows is the server. */
		if (cmd_mock_recmode(&rec, db, argc, argv, fallback_url, &fo.o,
		    include_faults, &opt, &target, md, &cause) != 0)
			goto bad;
		id = 0;
		goto serve;
	}
	if (argc < 1) {
		fprintf(stderr, "mcpreel mock: give one SESSION to serve (an "
		    "id, a name or 'last')\n");
		goto out;
	}
	if (forward != (fallback_url != NULL || argc > 1) ||
	    (fallback_url != NULL && argc > 1)) {
		fprintf(stderr, "mcpreel mock: --on-miss forward goes with "
		    "one fallback server: --fallback URL or -- CMD [ARGS...]"
		    "\n");
		goto out;
	}
	/*
	 * Read into the index on disk a row at a time; forwarded exchanges
	 * are recorded (of a cassette, with --db).  A cassette is read
	 * straight from its file.
	 */
	if (cassette_is(argv[0])) {
		if (cmd_mock_cassette(argv[0], include_faults, md, &id,
		    &cause) != 0 ||
		    (forward && cassette_recorder(db, &st, &cause) != 0))
			goto bad;
	} else {
		if (session_arg_open(db, argv[0], forward ? STORE_PRIVATE : 0,
		    &sa, &cause) != 0)
			goto bad;
		id = sa.id;
		if (cmd_mock_load(sa.st, sa.id, include_faults, md,
		    &cause) != 0 ||
		    (forward && session_arg_recorder(db, &sa, &st,
		    &cause) != 0))
			goto bad;
		session_arg_close(&sa);
	}
	if (forward) {
		/* Forwarded exchanges are recorded: the store goes on. */
		if (st != NULL && (w = writer_start(st, &cause)) == NULL)
			goto bad;
		st = NULL;
		xasprintf(&label, "mock fallback of %lld", (long long)id);
		opt.w = w;
		target.url = fallback_url;
		/* --max-record-size bounds the fallback's answers too. */
		target.max_body = opt.lim.max_body;
		target.argv = argv + 1;
		tlabel = cli_target_label(&target);
		if (w != NULL)
			opt.ws = writer_session_as(w, label, fallback_url !=
			    NULL ? "http" : "stdio", tlabel, ORIGIN_MOCK);
		free(tlabel);
		opt.fallback = cli_target_open;
		opt.fallback_arg = &target;
		if (w != NULL && opt.faults != NULL) {
			note = fault_opts_note(&fo.o, opt.faults);
			writer_event(w, opt.ws, "note", note, strlen(note));
			free(note);
		}
	} else {
		store_close(st);
		st = NULL;
	}
serve:
	if (mdisk_finish(md, &cause) != 0)
		goto bad;
	if (opt.listen == NULL)
		cli_stdio_notice("mock");
	/* --otlp: the mock is the server of one session, its client's. */
	if (otlp_opts_start(&oo, 0, &otlp, &cause) != 0)
		goto bad;
	if (otlp != NULL) {
		if (rec.path != NULL)
			xasprintf(&olabel, "mock of %s", rec.path);
		else
			xasprintf(&olabel, "mock of session %lld",
			    (long long)id);
		memset(&oinfo, 0, sizeof oinfo);
		oinfo.transport = opt.listen != NULL ? "http" : "stdio";
		oinfo.started_ns = clock_wall_ns();
		oinfo.target = olabel;
		opt.otlp = otlp;
		opt.otlp_sess = otlp_session(otlp, &oinfo);
	}
	rc = mock_run(md, &opt, &stats, &cause);
	if (otlp != NULL) {
		otlp_session_end(otlp, opt.otlp_sess, clock_wall_ns());
		otlp_stop(otlp, opt.listen != NULL ? TAP_OTLP_STOP_MS :
		    TAP_OTLP_STOP_STDIO_MS);
		/* The forwarded traffic's row, when there is one. */
		if (w != NULL)
			writer_session_otlp_dropped(w, opt.ws, (int64_t)
			    otlp_session_dropped(opt.otlp_sess));
	}
	if (rc != 0) {
		rc = EXIT_USAGE;
		goto bad;
	}
	if (rec.path != NULL)
		log_info("mock: answered %llu requests from the cassette, %llu "
		    "unmatched, %llu forwarded", (unsigned long long)
		    stats.answered, (unsigned long long)stats.missed,
		    (unsigned long long)stats.forwarded);
	else
		log_info("mock: answered %llu requests from session %lld, %llu "
		    "unmatched, %llu forwarded", (unsigned long long)
		    stats.answered, (long long)id, (unsigned long long)
		    stats.missed, (unsigned long long)stats.forwarded);
	rc = EXIT_OK;
	if (stats.out_error != NULL) {
		fprintf(stderr, "mcpreel mock: %s: %llu answer%s could not be "
		    "written; the client did not get %s\n", stats.out_error,
		    (unsigned long long)stats.unwritten, stats.unwritten == 1 ?
		    "" : "s", stats.unwritten == 1 ? "it" : "them");
		rc = EXIT_FAIL;
	}
	if (stats.dropped > 0) {
		fprintf(stderr, "mcpreel mock: stopped with %llu request%s "
		    "not answered yet; the client did not get %s\n",
		    (unsigned long long)stats.dropped, stats.dropped == 1 ?
		    "" : "s", stats.dropped == 1 ? "its answer" : "their "
		    "answers");
		rc = EXIT_FAIL;
	}
	free(stats.out_error);
	/* Recording: the cassette lacks those exchanges, so say it failed. */
	if (rec.rm.w != NULL && stats.fb_failed > 0) {
		fprintf(stderr, "mcpreel mock: %llu forwarded request%s got no "
		    "answer from the server%s\n", (unsigned long long)
		    stats.fb_failed, stats.fb_failed == 1 ? "" : "s",
		    rec.rm.appending ? " (left out of the cassette)" : "");
		rc = EXIT_FAIL;
	}
	if (rec.rm.w != NULL && stats.cw_lost > 0) {
		fprintf(stderr, "mcpreel mock: %llu message%s could not be "
		    "kept for the cassette, so %s was left as it was\n",
		    (unsigned long long)stats.cw_lost, stats.cw_lost == 1 ?
		    "" : "s", rec.path);
		rc = EXIT_FAIL;
	} else if (rec.rm.w != NULL && !rec.rm.appending && (stats.fb_lost ||
	    stats.fb_failed > 0 || stats.missed > 0)) {
		/* A broken server must not wipe a good cassette. */
		fprintf(stderr, "mcpreel mock: the server %s, so %s was left "
		    "as it was (--record-mode %s rewrites it only from a whole "
		    "session)\n", stats.fb_lost ? "went away" :
		    stats.fb_failed > 0 ? "did not answer every request" :
		    "could not be reached", rec.path, recmode_name(rec.mode));
		rc = EXIT_FAIL;
	} else if (rec.rm.w != NULL) {
		if (recmode_end(&rec.rm, &added, &cause) != 0) {
			fprintf(stderr, "mcpreel mock: the cassette was not "
			    "written: %s\n", cause);
			rc = EXIT_FAIL;
		} else
			log_info("mock: %s: %zu message%s recorded (%s)",
			    rec.path, added, added == 1 ? "" : "s",
			    rec.rm.appending ? (added == 0 ? "nothing was "
			    "missing: unchanged" : "appended") : added == 0 &&
			    access(rec.path, F_OK) == 0 ? "unchanged" :
			    "rewritten");
	}
	goto out;
bad:
	fprintf(stderr, "mcpreel mock: %s\n", cause);
out:
	if (w != NULL) {
		writer_session_end(w, opt.ws, -1, 0, "mock stopped");
		writer_stop(w);
		writer_session_free(opt.ws);
	}
	otlp_free(otlp);
	free(olabel);
	otlp_opts_clear(&oo);
	store_close(st);
	recmode_clear(&rec.rm);
	free(label);
	session_arg_close(&sa);
	mdisk_free(md);
	rules_clear(&ignore);
	if (opt.faults != NULL)
		fault_set_free(opt.faults);
	fault_opts_clear(&fo.o);
	free(cause);
	return rc;
}
