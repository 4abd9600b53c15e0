/*
 * mcp_server: the smallest stdio MCP server the proxies of the peers
 * comparison (bench/scen_peers.sh) can front.  Unlike echo_server, which
 * echoes any line, it does the handshake an MCP client insists on: it
 * answers initialize (with the protocol version the client asked for),
 * tools/list (one tool, "echo"), tools/call of echo (the "message"
 * argument back as text content) and ping; notifications get no answer,
 * and any other request a JSON-RPC error.
 *
 * It parses no JSON: the id and the few strings it needs are found by a
 * scan, which is enough for the requests the bench clients and the
 * proxies send, and keeps the server's cost to a few microseconds so the
 * table measures the proxies in front of it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The longest request line we answer: the bench sends a few hundred bytes. */
#define MSRV_LINE_MAX		(1024 * 1024)
/* The longest string copied out of a request: a message may be a whole line. */
#define MSRV_STR_MAX		MSRV_LINE_MAX
/* What we answer when the client names no version. */
#define MSRV_VERSION		"2025-06-18"

static __dead void	usage(void);
static int		msrv_string(const char *, const char *, char *, size_t);
static void		msrv_answer(const char *, size_t);

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr, "usage: mcp_server\n"
	    "A stdio MCP server with one tool, echo, for the peers "
	    "benchmark.\n");
	exit(2);
}

/*
 * Copy the string value of "key" in line into out (at most cap - 1
 * bytes, escapes kept as written); returns 0, or -1 when it is absent.
 */
static int
msrv_string(const char *line, const char *key, char *out, size_t cap)
{
	char		 pat[64];
	const char	*p, *q;
	size_t		 n;

	snprintf(pat, sizeof pat, "\"%s\":", key);
	if ((p = strstr(line, pat)) == NULL)
		return -1;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p++ != '"')
		return -1;
	for (q = p; *q != '\0' && *q != '"'; q++) {
		if (*q == '\\' && q[1] != '\0')
			q++;
	}
	if (*q != '"' || (n = (size_t)(q - p)) >= cap)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

/* Answer one request line (len bytes, no newline) on stdout. */
static void
msrv_answer(const char *line, size_t len)
{
	static char	 method[256], str[MSRV_STR_MAX];
	size_t		 off, idlen;
	int		 idn;

	if (util_find_id(line, len, &off, &idlen) != 0 ||
	    msrv_string(line, "method", method, sizeof method) != 0)
		return;		/* a notification, or an answer of the client's */
	idn = (int)idlen;
	printf("{\"jsonrpc\":\"2.0\",\"id\":%.*s,", idn, line + off);
	if (strcmp(method, "initialize") == 0) {
		if (msrv_string(line, "protocolVersion", str, sizeof str) != 0)
			snprintf(str, sizeof str, "%s", MSRV_VERSION);
		printf("\"result\":{\"protocolVersion\":\"%s\",\"capabilities\":"
		    "{\"tools\":{}},\"serverInfo\":{\"name\":\"mcp_server\","
		    "\"version\":\"1.0.0\"}}}\n", str);
	} else if (strcmp(method, "ping") == 0)
		printf("\"result\":{}}\n");
	else if (strcmp(method, "tools/list") == 0)
		printf("\"result\":{\"tools\":[{\"name\":\"echo\",\"description\":"
		    "\"Echoes back the input\",\"inputSchema\":{\"type\":"
		    "\"object\",\"properties\":{\"message\":{\"type\":"
		    "\"string\"}},\"required\":[\"message\"]}}]}}\n");
	else if (strcmp(method, "tools/call") == 0 &&
	    msrv_string(line, "message", str, sizeof str) == 0)
		printf("\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
		    "\"%s\"}]}}\n", str);
	else
		printf("\"error\":{\"code\":-32601,\"message\":\"mcp_server: "
		    "no method %s\"}}\n", method);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	char	*line = NULL;
	size_t	 cap = 0;
	ssize_t	 n;

	util_setprogname(argv[0]);
	if (argc != 1)
		usage();
	while ((n = getline(&line, &cap, stdin)) != -1) {
		if (n > MSRV_LINE_MAX)
			util_fatalx("a request line of %zd bytes", n);
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n > 0)
			msrv_answer(line, (size_t)n);
	}
	free(line);
	return 0;
}
