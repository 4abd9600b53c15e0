/* The client side of an MCP transport: what both kinds share. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transport.h"

/*
 * Headers a caller may not set: the transports write them themselves, or
 * they change how a message is framed or a connection kept, so a second
 * copy would break the request or smuggle another one in.
 */
static const char *const xport_owned_headers[] = {
	"Host", "Content-Length", "Transfer-Encoding", "Connection",
	"Keep-Alive", "Proxy-Connection", "TE", "Trailer", "Upgrade",
	"Expect", "Content-Type", "Accept", "Mcp-Session-Id",
	"MCP-Protocol-Version", "Last-Event-ID"
};

/* Say something around the messages: logged, and a "note" to the caller. */
void
xport_note(struct xport *x, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	log_debug("%s", s);
	if (x->cbs.event != NULL)
		x->cbs.event("note", s, strlen(s), x->arg);
	free(s);
}

/* Fill the common part of a transport. */
void
xport_init(struct xport *x, const struct xport_ops *ops,
    struct event_base *base, const struct xport_cbs *cbs, void *arg)
{
	x->ops = ops;
	x->base = base;
	x->cbs = *cbs;
	x->arg = arg;
	x->exit_code = -1;
}

/*
 * Check one "Name: value" line for xport_set_headers and return it as it
 * will be sent (white space around the value dropped), or NULL with
 * *cause.  The cause names the header, never its value (a credential).
 */
char *
xport_header_parse(const char *line, char **cause)
{
	const char	*colon, *v, *end;
	char		*out;
	size_t		 nlen, i;

	if ((colon = strchr(line, ':')) == NULL) {
		xasprintf(cause, "bad header: expected 'Name: value', with a "
		    "colon");
		return NULL;
	}
	nlen = (size_t)(colon - line);
	if (nlen == 0) {
		xasprintf(cause, "bad header: its name is empty");
		return NULL;
	}
	if (!http_is_token(line, nlen)) {
		xasprintf(cause, "bad header name '%.*s': only letters, "
		    "digits and !#$%%&'*+-.^_`|~ may make one (no spaces)",
		    (int)(nlen > 64 ? 64 : nlen), line);
		return NULL;
	}
	for (i = 0; i < sizeof xport_owned_headers /
	    sizeof xport_owned_headers[0]; i++) {
		if (strlen(xport_owned_headers[i]) == nlen &&
		    strncasecmp(line, xport_owned_headers[i], nlen) == 0) {
			xasprintf(cause, "header %s cannot be given: mcpreel "
			    "sets it itself", xport_owned_headers[i]);
			return NULL;
		}
	}
	/* A value is visible bytes, spaces and tabs (RFC 9110 5.5). */
	for (v = colon + 1; *v != '\0'; v++) {
		unsigned char c = (unsigned char)*v;

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			xasprintf(cause, "bad header %.*s: its value holds a "
			    "control character (%s)", (int)nlen, line,
			    c == '\r' || c == '\n' ? "a line break" :
			    "not a space or tab");
			return NULL;
		}
	}
	v = colon + 1;
	v += strspn(v, " \t");
	end = v + strlen(v);
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	xasprintf(&out, "%.*s: %.*s", (int)nlen, line, (int)(end - v), v);
	return out;
}

/* Free a NULL-ended list of strings. */
static void
xport_headers_free(char **list)
{
	char	**p;

	for (p = list; p != NULL && *p != NULL; p++)
		free(*p);
	free(list);
}

/*
 * The "Name: value" lines as xport_set_headers takes them (a NULL-ended
 * list), or NULL with *cause.
 */
static char **
xport_headers_list(const char *const *lines, size_t n, char **cause)
{
	char	**list;
	size_t	  i, total = 0;

	if (n > XPORT_HEADERS_MAX) {
		xasprintf(cause, "too many headers (%zu): at most %d", n,
		    XPORT_HEADERS_MAX);
		return NULL;
	}
	list = xcalloc(n + 1, sizeof *list);
	for (i = 0; i < n; i++) {
		if ((list[i] = xport_header_parse(lines[i], cause)) == NULL)
			goto fail;
		total += strlen(list[i]) + 2;
		if (total > XPORT_HEADERS_BYTES) {
			xasprintf(cause, "the headers are too long: over %d "
			    "bytes in all", XPORT_HEADERS_BYTES);
			goto fail;
		}
	}
	return list;
fail:
	xport_headers_free(list);
	return NULL;
}

/*
 * Whether xport_set_headers would take the lines: 0, or -1 with *cause
 * (checked before anything starts).
 */
int
xport_headers_check(const char *const *lines, size_t n, char **cause)
{
	char	**list;

	if ((list = xport_headers_list(lines, n, cause)) == NULL)
		return -1;
	xport_headers_free(list);
	return 0;
}

/*
 * Set the headers every HTTP request carries from now on (see
 * transport.h); all or nothing.
 */
int
xport_set_headers(struct xport *x, const char *const *lines, size_t n,
    char **cause)
{
	char	**list;

	if ((list = xport_headers_list(lines, n, cause)) == NULL)
		return -1;
	xport_headers_free(x->headers);
	x->headers = n > 0 ? list : NULL;
	if (n == 0)
		free(list);
	if (x->ops->headers != NULL)
		x->ops->headers(x);
	return 0;
}

/*
 * Send one message (without framing: the transport adds it).  headers,
 * NULL or a NULL-terminated list of "Name: value" lines, go with it over
 * HTTP.
 */
void
xport_send(struct xport *x, const char *bytes, size_t len,
    const char *const *headers)
{
	x->ops->send(x, bytes, len, headers);
}

/* The protocol version to name in HTTP requests from now on. */
void
xport_set_protocol_version(struct xport *x, const char *version)
{
	free(x->protocol_version);
	x->protocol_version = (version != NULL) ? xstrdup(version) : NULL;
}

/*
 * Stop (on) or resume reading from the server: what the caller cannot
 * pass on yet then waits in the server's socket or pipe, not in memory.
 * What one read already brought is still delivered.
 */
void
xport_pause(struct xport *x, int on)
{
	if (x->paused == on)
		return;
	x->paused = on;
	x->ops->pause(x, on);
}

/* End politely: the closed callback says when it is over. */
void
xport_finish(struct xport *x)
{
	x->ops->finish(x);
}

void
xport_free(struct xport *x)
{
	if (x == NULL)
		return;
	free(x->target);
	free(x->protocol_version);
	xport_headers_free(x->headers);
	x->ops->free(x);
}
