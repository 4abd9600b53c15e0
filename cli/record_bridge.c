/*
 * record --connect URL and record --listen ADDR -- CMD: which of record's
 * modes the options ask for, and the session row around the bridge.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "proxy.h"
#include "store.h"

/* The section of record's --help on the bridge modes. */
void
record_bridge_usage(FILE *f)
{
	fprintf(f,
	    "Across transports (docs/bridge.md):\n"
	    "  --connect URL     be a stdio server to the host (as with -- CMD) and\n"
	    "                    a client of the remote MCP server at URL: Streamable\n"
	    "                    HTTP, or the legacy HTTP+SSE transport.  A host\n"
	    "                    that only starts commands can use a remote server\n"
	    "                    this way.  Recorded as one session of transport\n"
	    "                    http (the URL, redacted, as its target).  A request\n"
	    "                    the server cannot answer (refused, 401, 5xx, a cut\n"
	    "                    stream) gets a JSON-RPC error from mcpreel (code\n"
	    "                    -32000, naming the URL), recorded as a note, not\n"
	    "                    as the server's.  The host closing stdin ends the\n"
	    "                    server's session (DELETE); exit 0, or 1 if the\n"
	    "                    server could never be reached\n"
	    "  --header 'Name: value'\n"
	    "                    with --connect: a header for every request to\n"
	    "                    URL (repeatable), such as Authorization: Bearer\n"
	    "                    TOKEN; never stored or logged.  Also read from\n"
	    "                    $MCPREEL_HEADERS, one 'Name: value' a line: a\n"
	    "                    token there is not on the command line, which\n"
	    "                    every user of the machine can see (mcpreel wrap\n"
	    "                    puts a remote entry's headers there)\n"
	    "  --transport auto|http|sse\n"
	    "                    with --connect: Streamable HTTP (http), the legacy\n"
	    "                    HTTP+SSE transport (sse), or (auto, the default)\n"
	    "                    Streamable HTTP falling back to legacy HTTP+SSE\n"
	    "                    when the first POST is answered 400, 404 or 405\n"
	    "  --listen ADDR -- CMD\n"
	    "                    run CMD as a stdio server and serve it over\n"
	    "                    Streamable HTTP at ADDR (every path), for HTTP\n"
	    "                    clients; loopback only unless --allow-remote.  On\n"
	    "                    a loopback address a request whose Origin header\n"
	    "                    names a page of another machine gets 403 (DNS\n"
	    "                    rebinding).  One MCP session: one CMD\n"
	    "                    for every client (no Mcp-Session-Id is issued).\n"
	    "                    Recorded as one stdio session.  It runs until CMD\n"
	    "                    exits (then exits with its status) or SIGINT,\n"
	    "                    SIGTERM or SIGHUP (CMD is stopped as record -- CMD\n"
	    "                    stops it).\n"
	    "                    --max-connections and the --head-timeout and\n"
	    "                    --idle-timeout options below apply\n"
	    "--fault, --faults and --durable are not available in these two modes.\n"
	    "\n");
}

/* Say what is wrong with a combination of modes: one line, then -1. */
static int
record_modes_refuse(const char *text)
{
	fprintf(stderr, "mcpreel record: %s\n", text);
	return -1;
}

/*
 * Whether the options given make one of record's modes: -- CMD (stdio),
 * --upstream URL (HTTP proxy), --connect URL (stdio host, HTTP server),
 * --listen ADDR -- CMD (HTTP clients, stdio server).  Says what to give
 * instead on stderr and returns -1 when they do not.
 */
int
record_modes_check(const struct record_given *g)
{
	int	modes = (g->upstream != 0) + (g->connect != 0);

	if (modes > 1)
		return record_modes_refuse("give one of --upstream URL and "
		    "--connect URL, not both");
	if (g->upstream && g->cmd)
		return record_modes_refuse("give either --upstream URL or -- "
		    "CMD, not both (--listen ADDR -- CMD serves CMD over "
		    "HTTP)");
	if (g->connect && g->cmd)
		return record_modes_refuse("give either --connect URL or -- "
		    "CMD, not both: --connect records a remote server for a "
		    "host on stdio");
	if (g->connect && g->listen)
		return record_modes_refuse("--connect URL talks to the host "
		    "over stdio: it takes no --listen (--listen ADDR -- CMD "
		    "serves a stdio server over HTTP)");
	if (!g->upstream && !g->connect && !g->cmd) {
		if (g->listen)
			return record_modes_refuse("--listen needs --upstream "
			    "URL (an HTTP server) or -- CMD (a stdio server to "
			    "serve over HTTP)");
		return record_modes_refuse("no server command given (mcpreel "
		    "record [OPTIONS] -- CMD [ARGS...], --upstream URL for an "
		    "HTTP server, or --connect URL for a remote server and a "
		    "host on stdio)");
	}
	if (g->bridge_only && !g->connect)
		return record_modes_refuse("--header and --transport are for "
		    "--connect URL");
	if (g->tls && !g->upstream && !g->connect)
		return record_modes_refuse("--cacert and --insecure are for "
		    "--upstream URL or --connect URL");
	if (g->upstream_only && !g->upstream)
		return record_modes_refuse("--rewrite-host, --keep-host, "
		    "--upstream-timeout, --redact-header and --max-sessions are "
		    "for --upstream URL");
	if (g->listen_only && !g->listen && !g->upstream)
		return record_modes_refuse("--allow-remote, --max-connections, "
		    "--head-timeout and --idle-timeout are for --listen");
	if ((g->connect || (g->listen && g->cmd)) && g->faults)
		return record_modes_refuse("--fault and --faults are not "
		    "available with --connect or --listen -- CMD: inject "
		    "faults with record -- CMD, record --upstream URL or "
		    "mock");
	if ((g->connect || (g->listen && g->cmd)) && g->durable)
		return record_modes_refuse("--durable is not available with "
		    "--connect or --listen -- CMD (record -- CMD and record "
		    "--upstream URL take it)");
	return 0;
}

/* --transport auto|http|sse: 0, or -1 for another word. */
int
record_bridge_transport(const char *word, enum xport_remote_kind *kind)
{
	if (strcmp(word, "auto") == 0)
		*kind = XPORT_REMOTE_AUTO;
	else if (strcmp(word, "http") == 0)
		*kind = XPORT_REMOTE_HTTP;
	else if (strcmp(word, "sse") == 0)
		*kind = XPORT_REMOTE_SSE;
	else {
		fprintf(stderr, "mcpreel record: --transport takes auto, http "
		    "or sse: %s\n", word);
		return -1;
	}
	return 0;
}

/*
 * --header 'Name: value': a name of token characters, a colon, no CR or
 * LF (the transport refuses the headers it sets itself).  Never says the
 * value: it may be a token.
 */
int
record_bridge_header(const char *h)
{
	size_t	n = strcspn(h, ":");

	if (h[n] != ':' || n == 0 || strcspn(h, " \t()<>@,;\\\"/[]?={}") < n ||
	    strpbrk(h, "\r\n") != NULL) {
		fprintf(stderr, "mcpreel record: --header takes 'Name: value' "
		    "(a header name, a colon, the value on one line)\n");
		return -1;
	}
	return 0;
}

/*
 * --connect's headers from $MCPREEL_HEADERS too, one "Name: value" a line
 * (blank lines skipped, a CR before the LF taken off): a host's config
 * can put a token there (mcpreel wrap does) rather than on the command
 * line, which every user of the machine can read (ps).  *keep gets the
 * copy the headers point into, the caller's to free (NULL without the
 * variable).  Never says a value.
 */
int
record_bridge_env_headers(struct bridge_options *bo, char **keep)
{
	const char	*env = getenv("MCPREEL_HEADERS");
	char		*copy, *line, *next, *end;

	*keep = NULL;
	if (env == NULL || *env == '\0')
		return 0;
	copy = xstrdup(env);
	for (line = copy; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		end = line + strlen(line);
		if (end > line && end[-1] == '\r')
			*--end = '\0';
		if (*line == '\0')
			continue;
		if (record_bridge_header(line) != 0) {
			fprintf(stderr, "mcpreel record: (the line came from "
			    "MCPREEL_HEADERS)\n");
			free(copy);
			return -1;
		}
		bo->headers = xreallocarray((void *)bo->headers,
		    bo->nheaders + 1, sizeof *bo->headers);
		((const char **)bo->headers)[bo->nheaders++] = line;
	}
	*keep = copy;
	return 0;
}

/*
 * Say what is wrong with --connect's URL and --header lines, or --listen's
 * address.
 */
int
record_bridge_check(const struct bridge_options *bo, int allow_remote)
{
	struct url	 u;
	char		*cause = NULL;

	if (bo->connect == NULL)
		return cli_listen_check("record", bo->listen, allow_remote);
	if (net_parse_url(bo->connect, &u, &cause) != 0) {
		/* It names the URL, which may hold a password or a key. */
		cause = tap_redact_text(cause);
		fprintf(stderr, "mcpreel record: %s\n", cause);
		free(cause);
		return -1;
	}
	net_url_clear(&u);
	/* A header the transport refuses is found before a session begins. */
	if (xport_headers_check(bo->headers, bo->nheaders, &cause) != 0) {
		fprintf(stderr, "mcpreel record: --header: %s\n", cause);
		free(cause);
		return -1;
	}
	return 0;
}

/*
 * Begin the session (*sp, the caller's to free) and run the bridge bo
 * asks for until it ends; res as record_stdio() fills it.  Returns -1
 * when it could not start.  argv is -- CMD's with --listen.
 */
int
record_bridge(struct writer *w, const char *name, struct bridge_options *bo,
    char **argv, struct wsession **sp, struct record_result *res)
{
	struct otlp_sess_info	 oinfo;
	struct wsession		*s;
	const char		*transport;
	char			*target, *note, **shown;
	int64_t			 started_ns;
	int			 rc;

	if (bo->connect != NULL) {
		cli_stdio_notice("record");
		transport = bo->transport == XPORT_REMOTE_SSE ? "sse" : "http";
		target = tap_redact_url(bo->connect);
		xasprintf(&note, "bridge: stdio host, %s server %s",
		    bo->transport == XPORT_REMOTE_SSE ? "legacy HTTP+SSE" :
		    bo->transport == XPORT_REMOTE_HTTP ? "Streamable HTTP" :
		    "Streamable HTTP (or legacy HTTP+SSE)", target);
		bo->server = target;
	} else {
		transport = "stdio";
		/* The argv may hold a key (--api-key sk-...): stored redacted. */
		shown = tap_redact_argv(argv);
		target = tap_redact_string(cli_target_json(shown));
		bo->server = note = NULL;
		{
			size_t	i, len = 0;
			char	*label;

			for (i = 0; shown[i] != NULL; i++)
				len += strlen(shown[i]) + 1;
			label = xcalloc(1, len + 1);
			for (i = 0; shown[i] != NULL; i++) {
				if (i > 0)
					strcat(label, " ");
				strcat(label, shown[i]);
			}
			bo->server = label;
		}
		redact_argv_free(shown);
		/* The bridge notes the address it listens on. */
		bo->argv = argv;
	}
	bo->note = note;
	started_ns = clock_wall_ns();
	s = writer_session_begin_at(w, name, transport, target, started_ns);
	if (tap_exporting()) {
		memset(&oinfo, 0, sizeof oinfo);
		oinfo.transport = transport;
		oinfo.started_ns = started_ns;
		oinfo.target = target;
		tap_otlp_begin(s, &oinfo);
	}
	rc = bridge_run(w, s, bo, res);
	if (res->reason != NULL)
		res->reason = tap_redact_text(res->reason);
	if (rc != 0)
		fprintf(stderr, "mcpreel record: %s\n", res->reason);
	*sp = s;
	if (bo->server != target)
		free((char *)bo->server);
	bo->server = NULL;
	bo->note = NULL;
	free(note);
	free(target);
	return rc;
}
