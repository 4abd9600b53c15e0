/* mcpreel record: run an MCP server over stdio and record its traffic. */

#include <sys/socket.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "fault.h"
#include "proxy.h"
#include "store.h"

/* The getopt codes of --fault, --faults and --seed. */
#define RECORD_OPT_FAULT	0x110
#define RECORD_OPT_FAULTS	0x111
#define RECORD_OPT_SEED		0x112
/* The getopt codes of --cassette and --no-db. */
#define RECORD_OPT_CASSETTE	0x113
#define RECORD_OPT_NO_DB	0x114
/* The getopt codes of --connect, --header and --transport. */
#define RECORD_OPT_CONNECT	0x115
#define RECORD_OPT_HEADER	0x116
#define RECORD_OPT_TRANSPORT	0x117
#define RECORD_OPT_MAX_SESSIONS	0x118

/* record --cassette FILE [--no-db]: where the recording goes at the end. */
struct record_out {
	const char	*cassette;	/* --cassette FILE, or NULL */
	struct cassette	*temp;		/* --no-db: the temporary store */
};

/* Where --upstream listens without --listen. */
#define RECORD_DEFAULT_LISTEN "127.0.0.1:8808"

/* The help's section on redaction, with the built-in names listed. */
static void
record_usage_redaction(FILE *f)
{
	size_t	i, col;

	fprintf(f,
	    "Redaction: the database gets a redacted copy of each message; the\n"
	    "bytes forwarded are never changed.  A message with anything replaced\n"
	    "is stored with redacted = 1, wire_size = the bytes forwarded, and no\n"
	    "sha256 (unless cut at --max-record-size).  Built in (unless\n"
	    "--no-default-redaction):\n"
	    "  the value of members named (case, '_' and '-' aside: api_key,\n"
	    "  API-KEY and apiKey are apikey; whole names only, so progressToken\n"
	    "  stays):\n"
	    "   ");
	for (i = 0, col = 3; redact_default_keys[i] != NULL; i++) {
		if (col + 1 + strlen(redact_default_keys[i]) > 76) {
			fprintf(f, "\n   ");
			col = 3;
		}
		col += fprintf(f, " %s", redact_default_keys[i]);
	}
	fprintf(f,
	    "\n"
	    "  (a null or \"\" value stays; so does an object that is a JSON\n"
	    "  Schema's property, as in {\"properties\": {\"password\": {...}}});\n"
	    "  and inside strings, where the token does not continue a word:\n"
	    "    sk-... (20+ more of [A-Za-z0-9_-]), sk_live_, sk_test_, rk_live_,\n"
	    "    rk_test_ (16+); ghp_ gho_ ghu_ ghs_ ghr_ github_pat_ (20+);\n"
	    "    xoxa- xoxb- xoxp- xoxr- (10+); AIza (35+); AKIA or ASIA and\n"
	    "    exactly 16 of [A-Z0-9]; a JWT (eyJ... three base64url parts);\n"
	    "    the token after \"Bearer \" (16+ of [A-Za-z0-9._~+/=-], or 8+ with\n"
	    "    a digit); the credentials after \"Basic \" (base64 of user:pass);\n"
	    "    the body of a PEM PRIVATE KEY; the password in\n"
	    "    scheme://user:password@host; JSON held in a string, as JSON.\n"
	    "  Outside JSON members, names by shape: a header, query or form\n"
	    "  field, flag (--token X, --api-key=X), assignment (API_KEY=X) or\n"
	    "  name in text (password=X, token: X) whose name holds token, secret,\n"
	    "  password, passwd, passphrase, key, auth, cookie, session,\n"
	    "  credential, signature, assertion, bearer or jwt, or is code,\n"
	    "  code_verifier, device_code, user_code, pass, pwd, pin, otp, sig or\n"
	    "  sid, has its value redacted (WWW-Authenticate and progressToken\n"
	    "  stay).  Form-encoded bodies are redacted by field.\n"
	    "The server's stderr lines, its command line, stored HTTP headers,\n"
	    "paths and URLs, kept error bodies, events and mcpreel's own log\n"
	    "lines get the same rules (docs/redaction.md has them all).\n");
}

void
cmd_record_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel record [--db PATH | --no-db] [--cassette FILE] [--name NAME]\n"
	    "                      [-v] -- CMD [ARGS...]\n"
	    "       mcpreel record [--db PATH | --no-db] [--cassette FILE] [--name NAME]\n"
	    "                      [-v] [--listen ADDR] --upstream URL [HTTP OPTIONS]\n"
	    "       mcpreel record [--db PATH | --no-db] [--cassette FILE] [--name NAME]\n"
	    "                      [-v] --connect URL [--header 'Name: value']...\n"
	    "                      [--transport auto|http|sse] [--cacert FILE] [--insecure]\n"
	    "       mcpreel record [--db PATH | --no-db] [--cassette FILE] [--name NAME]\n"
	    "                      [-v] --listen ADDR [--allow-remote] -- CMD [ARGS...]\n"
	    "\n"
	    "Run CMD as an MCP server over stdio, in place of the server: the host\n"
	    "talks to mcpreel's stdin and stdout exactly as it would to CMD's.\n"
	    "Every line is forwarded unchanged as soon as it is complete and\n"
	    "recorded (direction, time, kind, method, id, exact bytes), and so is\n"
	    "CMD's stderr, which is also passed on to mcpreel's stderr.  mcpreel\n"
	    "exits with CMD's exit status (128+N if signal N killed it; 127 if CMD\n"
	    "was not found).  SIGINT, SIGTERM and SIGHUP are passed on to CMD.\n"
	    "\n"
	    "options:\n"
	    "  --db PATH     the database (default: $MCPREEL_DB, else\n"
	    "                ~/.local/share/mcpreel/mcpreel.db); created mode 0600\n"
	    "  --name NAME   a name for the session, to find it by later\n"
	    "  --cassette FILE\n"
	    "                when the session ends (whatever ends it: the host,\n"
	    "                the server, a signal), write it to FILE as a\n"
	    "                cassette: what 'mcpreel export' writes, mode 0600,\n"
	    "                whole or not at all (a file beside FILE renamed\n"
	    "                over it).  Over HTTP, when the recording stops:\n"
	    "                the first MCP session to FILE, the next to FILE-2\n"
	    "                (before the extension: a-2.jsonl), ...  A session\n"
	    "                without a message gets none (FILE is left as it\n"
	    "                was).  A FILE that cannot be made (-, a directory,\n"
	    "                a pipe, the database) stops record before it\n"
	    "                starts; one that cannot be written at the end, or\n"
	    "                a session with messages that could not be recorded\n"
	    "                (written, its header says messages_lost), exits 1\n"
	    "                (or the server's non-zero status)\n"
	    "  --no-db       record into a temporary store, removed at exit,\n"
	    "                not the database: no database is made or opened,\n"
	    "                and FILE is all that is kept (needs --cassette)\n"
	    "  -v, -q        more or less on stderr\n"
	    "  --spin-us N   after bytes move, poll for N microseconds more\n"
	    "                before sleeping (default %d; 0: sleep at once).\n"
	    "                The next message of a back-and-forth usually comes\n"
	    "                within it and finds mcpreel awake: ~15 us less per\n"
	    "                round trip, for a little CPU while traffic flows\n"
	    "  --check       check the traffic against the MCP specification as\n"
	    "                it is recorded (the rules of 'mcpreel check', but\n"
	    "                over HTTP those of the status a client's POST got\n"
	    "                and of exchanges without a message only afterwards,\n"
	    "                in 'mcpreel check') and print each error to stderr\n"
	    "                as it happens (warnings too with -v): 'mcpreel:\n"
	    "                check: seq 12 c2s tools/call: error RULE: what is\n"
	    "                wrong' ('session 3 seq 12 ...' with --listen).  It\n"
	    "                never delays forwarding: a session whose messages\n"
	    "                the checker cannot keep up with, or past 256 checked\n"
	    "                at once (the least recently active one), is checked\n"
	    "                no further, and a line says so ('mcpreel check'\n"
	    "                reads it all afterwards).  A message over 4 MiB or\n"
	    "                65536 values is checked by its method and id only.\n"
	    "                Memory: up to 16 MiB of queued copies and one parse\n"
	    "                of ~5 MiB, plus each checked session's state\n"
	    "  --durable     commit each message to the database (and sync it\n"
	    "                to disk) before forwarding it: for bug captures\n"
	    "                where the machine itself may die.  Slower: a disk\n"
	    "                sync per read (stdio), per body or per batch of SSE\n"
	    "                events (HTTP), during which all traffic waits (up\n"
	    "                to 5 s while another process holds the database\n"
	    "                locked).  Without it a message is committed within\n"
	    "                ~10 ms of being forwarded (see docs/reliability.md)\n"
	    "  --max-record-size SIZE\n"
	    "                record at most SIZE bytes of one message (default\n"
	    "                128M; K, M, G suffixes; 0: no cap but SQLite's,\n"
	    "                1 GB less 64K by default).  A longer one\n"
	    "                is still forwarded whole, and streamed (memory\n"
	    "                stays under SIZE, twice that with --durable, which\n"
	    "                holds a message until it is committed); it is\n"
	    "                recorded as its first SIZE bytes with its full size\n"
	    "                and SHA-256, and a warning.\n"
	    "                Over HTTP: request bodies and JSON response bodies;\n"
	    "                an SSE event is recorded whole up to 256 MiB\n"
	    "  --redact-key NAME\n"
	    "                store the value of every JSON member named NAME, at\n"
	    "                any depth and of any type, as \"[REDACTED]\"; names\n"
	    "                compare without case, '_' and '-' (repeatable).\n"
	    "                Headers, query and form fields, flags and names in\n"
	    "                text so named are redacted too\n"
	    "  --redact-regex RE\n"
	    "                store what the POSIX extended regular expression RE\n"
	    "                matches as [REDACTED]: inside each JSON string, keys\n"
	    "                included, or anywhere in a line that is not JSON;\n"
	    "                bytes, the C locale (repeatable)\n"
	    "  --no-default-redaction\n"
	    "                leave out the built-in rules (below)\n"
	    OTLP_OPTS_HELP
	    FAULT_OPTS_HELP
	    "                     Over stdio a rule acts on each complete line\n"
	    "                     (delay, error, tool-error, drop, timeout,\n"
	    "                     corrupt, close, mutate), which then waits for\n"
	    "                     its newline; SIGHUP re-reads --faults instead\n"
	    "                     of reaching the server.  Over HTTP a rule acts\n"
	    "                     on a POST's body, a JSON response or one SSE\n"
	    "                     event, and http-status and close\n"
	    "                     mode=reset|end-stream apply (not with\n"
	    "                     --durable).  What was injected is recorded as\n"
	    "                     such, with the rule (docs/faults.md)\n"
	    "\n"
	    "With --upstream, record an MCP server over HTTP instead: mcpreel is a\n"
	    "reverse proxy listening on ADDR, forwarding every path to the same\n"
	    "path under URL (Streamable HTTP, and the legacy HTTP+SSE transport).\n"
	    "Point the client at mcpreel's address instead of the server's.  Each\n"
	    "MCP session (Mcp-Session-Id, or the legacy endpoint URL's session) is\n"
	    "recorded as a session of its own, up to --max-sessions held at once\n"
	    "(an ended one is let go %d s after its last request).  It runs until\n"
	    "SIGINT, SIGTERM or SIGHUP (SIGHUP re-reads --faults instead, when\n"
	    "given), then exits 0.\n"
	    "\n", RECORD_SPIN_US, HSESSION_GRACE_MS / 1000);
	record_bridge_usage(f);
	fprintf(f,
	    "HTTP options:\n"
	    "  --listen ADDR          where to listen: PORT, HOST:PORT or [V6]:PORT\n"
	    "                         (default 127.0.0.1:8808; port 0 picks one),\n"
	    "                         a loopback address unless --allow-remote.\n"
	    "                         The address is printed on stderr when ready.\n"
	    "  --allow-remote         let --listen take an address other machines\n"
	    "                         reach: anyone there can then use the server\n"
	    "                         through mcpreel\n"
	    "  --upstream URL         the server: http[s]://HOST[:PORT][/PATH][?QUERY];\n"
	    "                         PATH is a prefix to every client path, QUERY\n"
	    "                         goes with every request, in front of the\n"
	    "                         client's own query\n"
	    "  --cacert FILE          trust the CA certificates in FILE (https; also\n"
	    "                         with --connect)\n"
	    "  --insecure             do not verify the upstream's certificate (also\n"
	    "                         with --connect)\n"
	    "  --rewrite-host         send a Host header naming the upstream, for an\n"
	    "                         upstream that needs its own name (a virtual\n"
	    "                         host).  Without it Host, like Origin and every\n"
	    "                         other header, reaches the upstream as the\n"
	    "                         client sent it, so the upstream's own checks\n"
	    "                         (against DNS rebinding) still work\n"
	    "  --keep-host            ignored: Host is passed on unchanged unless\n"
	    "                         --rewrite-host\n"
	    "  --upstream-timeout S   answer 504 when the upstream has not started\n"
	    "                         its response S seconds after the request\n"
	    "                         (default %d; 0: wait for ever); a response\n"
	    "                         that has started, an SSE stream, has no limit\n"
	    "  --head-timeout S       answer 408 to a client that has not sent a\n"
	    "                         whole request head S seconds after its first\n"
	    "                         byte (default %d; 0: no limit)\n"
	    "  --idle-timeout S       close a client connection silent for S\n"
	    "                         seconds between requests (in the middle of a\n"
	    "                         request body: 408) (default %d; 0: no limit)\n"
	    "  --max-connections N    serve at most N clients at once; the next\n"
	    "                         waits to be accepted until one closes\n"
	    "                         (default: what ulimit -n allows at two\n"
	    "                         descriptors a client, less %d, at most %d)\n"
	    "  --max-sessions N       hold at most N MCP sessions at once (default\n"
	    "                         %d, at most %d); past them, new sessions\n"
	    "                         are recorded in the run's default session\n"
	    "  --redact-header NAME   store NAME's value as [REDACTED] (repeatable;\n"
	    "                         Authorization, Cookie, Set-Cookie,\n"
	    "                         Proxy-Authorization, Mcp-Session-Id and\n"
	    "                         Mcp-Param-* always are, and by default\n"
	    "                         every header named like a secret: below)\n"
	    "\n", HTTP_UPSTREAM_TIMEOUT, HTTP_HEAD_TIMEOUT,
	    HTTP_IDLE_TIMEOUT, LISTENER_FD_RESERVE, LISTENER_MAX_DEFAULT,
	    HTTP_SESSIONS_MAX, HTTP_SESSIONS_LIMIT);
	record_usage_redaction(f);
	fprintf(f,
	    "\n"
	    "examples:\n"
	    "  mcpreel record --name everything -- npx -y "
	    "@modelcontextprotocol/server-everything\n"
	    "  mcpreel record --listen 127.0.0.1:8808 --upstream "
	    "http://127.0.0.1:3001\n"
	    "  mcpreel record --name remote --connect https://mcp.example.com/mcp "
	    "--header 'Authorization: Bearer TOKEN'\n"
	    "  mcpreel record --name served --listen 127.0.0.1:8808 -- npx -y "
	    "@modelcontextprotocol/server-everything\n"
	    "  mcpreel record --no-db --cassette tests/fixtures/everything.jsonl -- "
	    "npx -y @modelcontextprotocol/server-everything\n"
	    "  mcpreel record --redact-key ssn --redact-regex "
	    "'[0-9]{4}-[0-9]{4}-[0-9]{4}' -- ./server\n");
}

/*
 * Write the sessions ids[0..n) of the store at db as ro's cassettes once
 * the writer has stopped; a session without a message gets none.  Returns
 * the exit code: code, or 1 in its place when it was 0 and no cassette
 * was written, or one lacks messages (written all the same: it is what
 * was recorded), or one could not be written, which leaves the recording
 * where it is (the temporary store of --no-db kept) and says where.
 */
static int
record_out_write(struct record_out *ro, const char *db, int64_t *ids,
    size_t n, int code)
{
	char	*cause = NULL;
	int64_t	 lost;
	int	 written;

	written = record_cassette_write(db, ids, n, ro->cassette, &lost,
	    &cause);
	if (written > 0 && lost == 0)
		return code;
	if (written > 0) {
		fprintf(stderr, "mcpreel record: the cassette %s is "
		    "incomplete: %lld messages were forwarded but could not "
		    "be recorded (its header says messages_lost)\n",
		    ro->cassette, (long long)lost);
		return code != 0 ? code : EXIT_FAIL;
	}
	if (written == 0) {
		fprintf(stderr, "mcpreel record: no MCP message was recorded: "
		    "the cassette %s was not written (a file there is left "
		    "as it was)\n", ro->cassette);
		return code != 0 ? code : EXIT_FAIL;
	}
	fprintf(stderr, "mcpreel record: %s\n", cause);
	free(cause);
	if (ro->temp != NULL) {
		cassette_keep(ro->temp);
		ro->temp = NULL;
	}
	fprintf(stderr, "mcpreel record: the recording is kept in %s ('mcpreel "
	    "sessions --db %s'; 'mcpreel export --db %s SESSION -o FILE' "
	    "writes a cassette)\n", db, db, db);
	return code != 0 ? code : EXIT_FAIL;
}

/* Say what is wrong with --listen or --upstream before anything starts. */
static int
record_check_http(const struct http_options *http)
{
	struct url		 u;
	char			*cause = NULL;

	if (net_parse_url(http->upstream, &u, &cause) != 0) {
		/* It names the URL, which may hold a password or a key. */
		cause = tap_redact_text(cause);
		fprintf(stderr, "mcpreel record: %s\n", cause);
		free(cause);
		return -1;
	}
	net_url_clear(&u);
	return cli_listen_check("record", http->listen, http->allow_remote);
}

/*
 * Record an HTTP server until a signal; its sessions were many or none.
 * lc (may be NULL) is stopped here: after the writer (its backlog must
 * not hold the recording back, and the sessions' row ids are then
 * final) and before the sessions it names are freed; otlp (--otlp, may
 * be NULL) before the writer, which then records its counts.
 */
static int
record_over_http(struct writer *w, struct http_options *http,
    struct livecheck *lc, char *path, struct record_out *ro,
    struct otlp *otlp)
{
	struct record_result	res;
	int			rc, code;
	int64_t			*ids;
	size_t			 n;

	rc = record_http(w, http, &res);
	/*
	 * Stopped: a second signal waits for the cassette or the collector
	 * (bounded), or ends us.
	 */
	if (ro->cassette != NULL || otlp != NULL)
		record_cassette_hold();
	else
		record_stop_mask(SIG_UNBLOCK);
	/* The sessions' rows get what the collector did not. */
	tap_otlp_finish(w, TAP_OTLP_STOP_MS);
	writer_stop(w);
	otlp_free(otlp);
	tap_set_check(NULL);
	livecheck_stop(lc);
	if (rc != 0) {
		/* It may name the upstream: redacted as every log line is. */
		if (res.reason != NULL)
			res.reason = tap_redact_text(res.reason);
		fprintf(stderr, "mcpreel record: %s\n", res.reason != NULL ?
		    res.reason : "recording failed");
	} else if (ro->temp == NULL)
		log_info("recorded to %s", path);
	code = res.exit_code;
	if (rc == 0 && ro->cassette != NULL) {
		ids = record_http_ids(&res, &n);
		code = record_out_write(ro, path, ids, n, code);
		free(ids);
	}
	record_http_free(&res);
	free(res.reason);
	free(http->redact);
	free(path);
	return code;
}

/* SIGHUP with --faults: the rules again, into the set in force. */
static int
record_fault_reload(struct fault_set *set, void *arg, char **cause)
{
	return fault_opts_reload(arg, set, 0, cause);
}

/* The same over HTTP, where http-status and reset rules may be. */
static int
record_fault_reload_http(struct fault_set *set, void *arg, char **cause)
{
	return fault_opts_reload(arg, set, 1, cause);
}

int
cmd_record(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "name", required_argument, NULL, 'n' },
		{ "listen", required_argument, NULL, 'l' },
		{ "upstream", required_argument, NULL, 'u' },
		{ "cacert", required_argument, NULL, 'c' },
		{ "insecure", no_argument, NULL, 'k' },
		{ "keep-host", no_argument, NULL, 'K' },
		{ "rewrite-host", no_argument, NULL, 'R' },
		{ "allow-remote", no_argument, NULL, 'A' },
		{ "upstream-timeout", required_argument, NULL, 'T' },
		{ "redact-header", required_argument, NULL, 'r' },
		{ "spin-us", required_argument, NULL, 'S' },
		{ "durable", no_argument, NULL, 'D' },
		{ "check", no_argument, NULL, 'C' },
		{ "max-record-size", required_argument, NULL, 'M' },
		{ "redact-key", required_argument, NULL, 'y' },
		{ "redact-regex", required_argument, NULL, 'e' },
		{ "no-default-redaction", no_argument, NULL, 'N' },
		{ "fault", required_argument, NULL, RECORD_OPT_FAULT },
		{ "faults", required_argument, NULL, RECORD_OPT_FAULTS },
		{ "seed", required_argument, NULL, RECORD_OPT_SEED },
		{ "cassette", required_argument, NULL, RECORD_OPT_CASSETTE },
		{ "no-db", no_argument, NULL, RECORD_OPT_NO_DB },
		{ "connect", required_argument, NULL, RECORD_OPT_CONNECT },
		{ "header", required_argument, NULL, RECORD_OPT_HEADER },
		{ "transport", required_argument, NULL, RECORD_OPT_TRANSPORT },
		{ "max-sessions", required_argument, NULL,
		    RECORD_OPT_MAX_SESSIONS },
		LIMITS_LONGOPTS,
		OTLP_OPTS_LONGOPTS,
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct record_result		 res;
	struct http_options		 http;
	char				*env_headers = NULL;
	struct store			*st;
	struct writer			*w;
	struct wsession			*s;
	const char			*db = NULL, *name = NULL;
	char				*path, *cause = NULL, *target, *end, **shown;
	struct redact			*rules = NULL;
	int				 ch, rc, durable = 0;
	struct record_given		 given;
	struct bridge_options		 bridge;
	int				 no_default_redaction = 0, check = 0;
	struct livecheck		*lc = NULL;
	struct otlp_sess_info		 oinfo;
	int64_t				 started_ns;
	long				 spin, count;
	size_t				 max_record;
	uint64_t			 lost;
	struct fault_opts		 fopts;
	struct fault_set		*faults = NULL;
	struct record_faults		 rf;
	char				*fnote = NULL;
	struct record_out		 ro;
	int				 no_db = 0, started;
	struct otlp_opts		 oopts;
	struct otlp			*otlp = NULL;

	max_record = RECORD_MAX_RECORD;
	memset(&http, 0, sizeof http);
	memset(&given, 0, sizeof given);
	memset(&bridge, 0, sizeof bridge);
	memset(&oopts, 0, sizeof oopts);
	memset(&fopts, 0, sizeof fopts);
	memset(&rf, 0, sizeof rf);
	memset(&ro, 0, sizeof ro);
	/* The rules are built as options come; the defaults go in last. */
	rules = redact_new(0);
	limits_listen_defaults(&http.lim);
	http.upstream_timeout = HTTP_UPSTREAM_TIMEOUT;
	while ((ch = getopt_long(argc, argv, "+hvq", longopts, NULL)) != -1) {
		if (cli_common_option(ch, optarg))
			continue;
		switch (limits_listen_option("record", ch, optarg, &http.lim)) {
		case 1:
			given.listen_only = 1;
			continue;
		case -1:
			goto usage;
		}
		switch (otlp_opts_option(&oopts, ch, optarg, &cause)) {
		case 0:
			continue;
		case -1:
			fprintf(stderr, "mcpreel record: %s\n", cause);
			free(cause);
			goto usage;
		}
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'l':
			http.listen = optarg;
			given.listen = 1;
			break;
		case 'u':
			http.upstream = optarg;
			break;
		case 'c':
			http.cacert = optarg;
			given.tls = 1;
			break;
		case 'k':
			http.insecure = 1;
			given.tls = 1;
			break;
		case 'K':
			given.upstream_only = 1;
			break;
		case 'R':
			http.rewrite_host = 1;
			given.upstream_only = 1;
			break;
		case 'A':
			http.allow_remote = 1;
			given.listen_only = 1;
			break;
		case 'T':
			if (limits_seconds("record", "upstream-timeout",
			    optarg, &http.upstream_timeout) != 0)
				goto usage;
			given.upstream_only = 1;
			break;
		case 'r':
			http.redact = xreallocarray(http.redact,
			    http.nredact + 1, sizeof *http.redact);
			http.redact[http.nredact++] = optarg;
			given.upstream_only = 1;
			break;
		case 'S':
			errno = 0;
			spin = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    spin < 0 || spin > RECORD_SPIN_US_MAX) {
				fprintf(stderr, "mcpreel record: --spin-us "
				    "takes microseconds, 0 to %d: %s\n",
				    RECORD_SPIN_US_MAX, optarg);
				goto usage;
			}
			record_set_spin((unsigned)spin);
			break;
		case 'D':
			durable = 1;
			break;
		case 'C':
			check = 1;
			break;
		case 'M':
			if (limits_parse_size(optarg, &max_record) != 0) {
				fprintf(stderr, "mcpreel record: "
				    "--max-record-size takes bytes, with K, M "
				    "or G for KiB, MiB, GiB (0: no cap): %s\n",
				    optarg);
				goto usage;
			}
			record_set_max_record(max_record);
			break;
		case 'y':
		case 'e':
			if ((ch == 'y' ? redact_add_key(rules, optarg,
			    &cause) : redact_add_regex(rules, optarg,
			    &cause)) != 0) {
				fprintf(stderr, "mcpreel record: %s\n", cause);
				free(cause);
				goto usage;
			}
			break;
		case 'N':
			no_default_redaction = 1;
			break;
		case RECORD_OPT_FAULT:
		case RECORD_OPT_FAULTS:
		case RECORD_OPT_SEED:
			if (fault_opts_set(&fopts, ch == RECORD_OPT_FAULT ?
			    "fault" : ch == RECORD_OPT_FAULTS ? "faults" :
			    "seed", optarg, &cause) != 0) {
				fprintf(stderr, "mcpreel record: %s\n", cause);
				free(cause);
				goto usage;
			}
			break;
		case RECORD_OPT_MAX_SESSIONS:
			if (limits_number("record", "max-sessions", optarg, 1,
			    HTTP_SESSIONS_LIMIT, "a count of sessions, 1",
			    &count) != 0)
				goto usage;
			http.max_sessions = (int)count;
			given.upstream_only = 1;
			break;
		case RECORD_OPT_CASSETTE:
			ro.cassette = optarg;
			break;
		case RECORD_OPT_NO_DB:
			no_db = 1;
			break;
		case RECORD_OPT_CONNECT:
			bridge.connect = optarg;
			break;
		case RECORD_OPT_HEADER:
			if (record_bridge_header(optarg) != 0)
				goto usage;
			bridge.headers = xreallocarray((void *)bridge.headers,
			    bridge.nheaders + 1, sizeof *bridge.headers);
			((const char **)bridge.headers)[bridge.nheaders++] =
			    optarg;
			given.bridge_only = 1;
			break;
		case RECORD_OPT_TRANSPORT:
			if (record_bridge_transport(optarg,
			    &bridge.transport) != 0)
				goto usage;
			given.bridge_only = 1;
			break;
		case 'h':
			cmd_record_usage(stdout);
			free((void *)bridge.headers);
			free(env_headers);
			redact_free(rules);
			free(http.redact);
			fault_opts_clear(&fopts);
			otlp_opts_clear(&oopts);
			return EXIT_OK;
		default:
			opterr_report("record", argc, argv, "+hvq",
			    longopts);
			goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	given.upstream = http.upstream != NULL;
	given.connect = bridge.connect != NULL;
	given.cmd = argc > 0;
	given.faults = fault_opts_any(&fopts);
	given.durable = durable;
	if (record_modes_check(&given) != 0)
		goto usage;
	/* What a host's config put in the environment, not on argv. */
	if (bridge.connect != NULL &&
	    record_bridge_env_headers(&bridge, &env_headers) != 0)
		goto usage;
	if (no_db && ro.cassette == NULL) {
		fprintf(stderr, "mcpreel record: --no-db needs --cassette FILE "
		    "(without a database the recording must go somewhere)\n");
		goto usage;
	}
	if (no_db && db != NULL) {
		fprintf(stderr, "mcpreel record: give either --db PATH or "
		    "--no-db, not both\n");
		goto usage;
	}
	/* A cassette that could not be written is found out now. */
	if (ro.cassette != NULL && record_cassette_check(ro.cassette,
	    &cause) != 0) {
		fprintf(stderr, "mcpreel record: %s\n", cause);
		free(cause);
		goto usage;
	}
	/* A bad --otlp URL or OTEL_* variable stops us before anything. */
	if (otlp_opts_check(&oopts, 0, &cause) != 0) {
		fprintf(stderr, "mcpreel record: %s\n", cause);
		free(cause);
		goto usage;
	}
	if (http.upstream != NULL && http.listen == NULL)
		http.listen = RECORD_DEFAULT_LISTEN;
	http.name = name;
	if (!no_default_redaction)
		redact_add_defaults(rules);
	tap_set_redact(rules);
	if (http.upstream != NULL && record_check_http(&http) != 0)
		goto usage;
	if (bridge.connect != NULL || given.listen) {
		bridge.cacert = http.cacert;
		bridge.insecure = http.insecure;
		bridge.listen = http.listen;
		bridge.lim = http.lim;
		/* A request body is held whole: capped as mock caps it. */
		bridge.lim.max_body = max_record;
	}
	if ((bridge.connect != NULL || (given.listen && given.cmd)) &&
	    record_bridge_check(&bridge, http.allow_remote) != 0)
		goto usage;
	/* A bad rule stops us here: nothing is spawned, nothing recorded. */
	if (fault_opts_any(&fopts)) {
		faults = fault_opts_load(&fopts, http.upstream != NULL, &cause);
		if (faults == NULL) {
			fprintf(stderr, "mcpreel record: %s\n", cause);
			free(cause);
			goto usage;
		}
		fnote = fault_opts_note(&fopts, faults);
		rf.set = faults;
		rf.reload = fopts.file != NULL ? record_fault_reload : NULL;
		rf.arg = &fopts;
		rf.note = fnote;
	} else if (fopts.has_seed) {
		fprintf(stderr, "mcpreel record: --seed is for --fault or "
		    "--faults rules, and none was given\n");
		goto usage;
	}

	/* --no-db: a private store of our own, removed at exit. */
	if (no_db) {
		if ((ro.temp = cassette_temp(&cause)) != NULL)
			path = xstrdup(cassette_db(ro.temp));
		else
			path = NULL;
	} else
		path = dbpath_resolve(db, &cause);
	/* The cassette is not the database: asked before and once open. */
	if (path != NULL && ro.cassette != NULL &&
	    record_cassette_check_db(ro.cassette, path, &cause) != 0) {
		free(path);
		path = NULL;
	}
	if (path == NULL || (st = store_open(path, STORE_CREATE |
	    STORE_PRIVATE, &cause)) == NULL) {
		fprintf(stderr, "mcpreel record: %s\n", cause);
		free(cause);
		free(path);
		goto usage;
	}
	record_set_store_max(store_max_message(st));
	if (durable) {
		record_set_durable(1);
		http.durable = 1;
		if (store_exec(st, "PRAGMA synchronous = FULL", &cause) != 0) {
			fprintf(stderr, "mcpreel record: %s\n", cause);
			store_close(st);
			free(cause);
			free(path);
			goto usage;
		}
	}
	if (ro.cassette != NULL && record_cassette_check_db(ro.cassette, path,
	    &cause) != 0) {
		fprintf(stderr, "mcpreel record: %s\n", cause);
		store_close(st);
		free(cause);
		free(path);
		goto usage;
	}
	/* Its threads never take a stop signal: the event loop does. */
	record_stop_mask(SIG_BLOCK);
	w = writer_start(st, &cause);
	/* The exporter's thread takes no stop signal either. */
	if (w != NULL && otlp_opts_start(&oopts, 0, &otlp, &cause) != 0) {
		writer_stop(w);	/* closes st */
		w = NULL;
		st = NULL;
	}
	if (w != NULL && check) {
		/* Over HTTP, sessions are many: lines name theirs. */
		if ((lc = livecheck_start(http.upstream != NULL, &cause)) ==
		    NULL) {
			writer_stop(w);	/* closes st */
			w = NULL;
			st = NULL;
			otlp_free(otlp);
			otlp = NULL;
		}
	}
	record_stop_mask(SIG_UNBLOCK);
	if (w == NULL) {
		fprintf(stderr, "mcpreel record: %s\n", cause);
		store_close(st);
		free(cause);
		free(path);
		goto usage;
	}
	if (lc != NULL)
		tap_set_check(lc);
	tap_set_otlp(otlp);
	if (http.upstream != NULL) {
		if (faults != NULL) {
			if (rf.reload != NULL)
				rf.reload = record_fault_reload_http;
			http.faults = &rf;
		}
		free((void *)bridge.headers);
		free(env_headers);
		/* Each session's cassette: the retired ones' ids too. */
		http.keep_ids = ro.cassette != NULL;
		rc = record_over_http(w, &http, lc, path, &ro, otlp);
		cassette_free(ro.temp);
		otlp_opts_clear(&oopts);
		tap_set_redact(NULL);
		redact_free(rules);
		if (faults != NULL)
			fault_set_free(faults);
		fault_opts_clear(&fopts);
		free(fnote);
		return rc;
	}

	if (bridge.connect != NULL || given.listen)
		started = record_bridge(w, name, &bridge, argv, &s, &res) == 0;
	else {
		cli_stdio_notice("record");
		/* The argv may hold a key (--api-key sk-...): stored redacted. */
		shown = tap_redact_argv(argv);
		target = tap_redact_string(cli_target_json(shown));
		redact_argv_free(shown);
		started_ns = clock_wall_ns();
		s = writer_session_begin_at(w, name, "stdio", target,
		    started_ns);
		if (otlp != NULL) {
			memset(&oinfo, 0, sizeof oinfo);
			oinfo.transport = "stdio";
			oinfo.started_ns = started_ns;
			oinfo.target = target;
			tap_otlp_begin(s, &oinfo);
		}
		free(target);
		record_set_faults(&rf);
		started = record_stdio(w, s, argv, &res) == 0;
		record_set_faults(NULL);
	}
	if (ro.cassette != NULL || otlp != NULL)
		record_cassette_hold();
	else
		record_stop_mask(SIG_UNBLOCK);

	/* A reason may name the command ("cannot run 'TOKEN=X'"). */
	if (res.reason != NULL)
		res.reason = tap_redact_text(res.reason);
	writer_session_end(w, s, res.exit_status, res.exit_signal,
	    res.reason);
	tap_check_end(s);
	tap_set_check(NULL);
	/* Its row gets what the collector did not, before the writer stops. */
	tap_otlp_finish(w, TAP_OTLP_STOP_STDIO_MS);
	/*
	 * The record first, as over HTTP: the checker's backlog must not
	 * hold the recording (and the exit) back.  The checker only
	 * compares session pointers, and s is freed below.
	 */
	writer_stop(w);
	livecheck_stop(lc);
	otlp_free(otlp);
	lost = writer_session_lost(s);
	if (lost != 0)
		log_warnx("session %lld in %s: %llu messages were forwarded "
		    "but could not be recorded",
		    (long long)writer_session_id(s), path,
		    (unsigned long long)lost);
	else if (ro.temp == NULL)
		log_info("recorded session %lld in %s",
		    (long long)writer_session_id(s), path);
	rc = res.exit_code;
	if (ro.cassette != NULL) {
		int64_t	id = writer_session_id(s);

		/* A typo in CMD does not replace a cassette with nothing. */
		if (!started)
			log_warnx("the server did not start: the cassette %s "
			    "is left as it was", ro.cassette);
		else
			rc = record_out_write(&ro, path, &id, 1, rc);
	}
	cassette_free(ro.temp);
	writer_session_free(s);
	free(res.reason);
	free(path);
	free((void *)bridge.headers);
	free(env_headers);
	tap_set_redact(NULL);
	redact_free(rules);
	if (faults != NULL)
		fault_set_free(faults);
	fault_opts_clear(&fopts);
	otlp_opts_clear(&oopts);
	free(fnote);
	return rc;
usage:
	free((void *)bridge.headers);
	free(env_headers);
	otlp_opts_clear(&oopts);
	cassette_free(ro.temp);
	tap_set_redact(NULL);
	redact_free(rules);
	free(http.redact);
	if (faults != NULL)
		fault_set_free(faults);
	fault_opts_clear(&fopts);
	free(fnote);
	return EXIT_USAGE;
}
