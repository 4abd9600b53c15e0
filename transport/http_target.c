/*
 * Request targets (RFC 9112 3.2) for a reverse proxy in front of one path
 * prefix: every form a client may send reduced to a path and a query that
 * cannot leave the prefix once put under it, and the target the upstream
 * gets.  Dot segments are removed as RFC 3986 5.2.4 says, percent-encoded
 * ones too (RFC 3986 6.2.2.2: "%2E" is ".").  No I/O.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_int.h"

/* Whether the len bytes at s are one '.' or "%2e" (any case). */
static size_t
http_target_dot(const char *s, size_t len)
{
	if (len >= 1 && s[0] == '.')
		return 1;
	if (len >= 3 && s[0] == '%' && s[1] == '2' && (s[2] == 'e' ||
	    s[2] == 'E'))
		return 3;
	return 0;
}

/*
 * How many dots a path segment is (1 for ".", 2 for ".."), counting
 * percent-encoded ones; 0 for any other segment.  What follows a ';' is
 * left out: some servers drop such path parameters, so "..;x" is "..".
 */
static int
http_target_dots(const char *seg, size_t len)
{
	const char	*semi = memchr(seg, ';', len);
	size_t		 n, off = 0;
	int		 dots = 0;

	if (semi != NULL)
		len = semi - seg;
	while (off < len && dots < 3) {
		if ((n = http_target_dot(seg + off, len - off)) == 0)
			return 0;
		off += n;
		dots++;
	}
	return (dots <= 2 && off == len) ? dots : 0;
}

/*
 * Whether a segment holds something an upstream may take for a path
 * separator: a backslash, or '/' or '\' percent-encoded.
 */
static int
http_target_has_separator(const char *seg, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (seg[i] == '\\')
			return 1;
		if (seg[i] == '%' && i + 2 < len && ((seg[i + 1] == '2' &&
		    (seg[i + 2] == 'f' || seg[i + 2] == 'F')) ||
		    (seg[i + 1] == '5' && (seg[i + 2] == 'c' ||
		    seg[i + 2] == 'C'))))
			return 1;
	}
	return 0;
}

/*
 * Remove the dot segments of an absolute path (len bytes at path, starting
 * with '/') into *out (caller frees).  Returns -1 with cause when the path
 * would climb above "/" or holds an encoded separator: a path under a
 * prefix must stay under it, whatever the upstream decodes.
 */
int
http_target_remove_dots(const char *path, size_t len, char **out,
    char **cause)
{
	const char	*p = path + 1, *end = path + len, *slash;
	char		*o = xmalloc(len + 2);
	size_t		 olen = 0, seglen;
	int		 dots;

	while (p <= end) {
		slash = memchr(p, '/', end - p);
		seglen = (slash != NULL ? slash : end) - p;
		if (http_target_has_separator(p, seglen)) {
			xasprintf(cause, "the path has an encoded '/' or '\\' "
			    "(or a '\\'), which the server may take for a path "
			    "separator");
			free(o);
			return -1;
		}
		dots = http_target_dots(p, seglen);
		if (dots == 2) {
			if (olen == 0) {
				xasprintf(cause, "the path climbs above the "
				    "root with '..'");
				free(o);
				return -1;
			}
			/* Drop the last output segment and its '/'. */
			while (olen > 0 && o[olen - 1] != '/')
				olen--;
			olen--;
		} else if (dots == 0) {
			o[olen++] = '/';
			memcpy(o + olen, p, seglen);
			olen += seglen;
		}
		/* A dot segment last leaves the path ending in '/'. */
		if (dots != 0 && slash == NULL)
			o[olen++] = '/';
		if (slash == NULL)
			break;
		p = slash + 1;
	}
	if (olen == 0)
		o[olen++] = '/';
	o[olen] = '\0';
	*out = o;
	return 0;
}

/* Whether the len bytes at s are scheme (any case). */
static int
http_target_scheme_is(const char *s, size_t len, const char *scheme)
{
	return len == strlen(scheme) && strncasecmp(s, scheme, len) == 0;
}

/*
 * Reduce a request's target to an origin-form path (dot segments removed)
 * and query, for putting under a prefix.  Taken: origin-form ("/a?b"),
 * absolute-form with an http or https scheme in any case (its authority
 * goes to t->authority: RFC 9112 3.2.2 has a proxy make Host of it), and
 * "*" for OPTIONS (t->asterisk).  Refused, with the status to answer in
 * *status and why in cause: CONNECT (501: no tunnels here), a path that
 * would climb above the root or holds an encoded separator, a fragment,
 * an absolute-form with no host or with user information, and every
 * other form (400).
 */
int
http_target_parse(const char *method, const char *target,
    struct http_target *t, int *status, char **cause)
{
	const char	*path, *q, *colon;
	char		*why = NULL;

	/*
	 * The reasons do not quote the target: the caller's log line names
	 * it, and it may hold a credential (userinfo, a query).
	 */
	memset(t, 0, sizeof *t);
	*status = 400;
	if (strcmp(method, "CONNECT") == 0) {
		*status = 501;
		xasprintf(cause, "CONNECT is not relayed: mcpreel is a reverse "
		    "proxy for one MCP server, not a tunnel");
		return -1;
	}
	if (strcmp(target, "*") == 0) {
		if (strcmp(method, "OPTIONS") != 0) {
			xasprintf(cause, "the request target \"*\" is only "
			    "for OPTIONS (RFC 9112 3.2.4)");
			return -1;
		}
		t->asterisk = 1;
		t->path = xstrdup("");
		return 0;
	}
	if (strchr(target, '#') != NULL) {
		xasprintf(cause, "the request target has a fragment ('#'), "
		    "which a client never sends");
		return -1;
	}
	path = target;
	if (*target != '/') {
		colon = strstr(target, "://");
		if (colon == NULL || (!http_target_scheme_is(target,
		    colon - target, "http") && !http_target_scheme_is(target,
		    colon - target, "https"))) {
			xasprintf(cause, "the request target is neither a path "
			    "starting with '/' nor an http(s) URL (RFC 9112 "
			    "3.2)");
			return -1;
		}
		/* The authority ends at the path, the query or the end. */
		path = colon + 3 + strcspn(colon + 3, "/?");
		if (path == colon + 3 || memchr(colon + 3, '@',
		    path - (colon + 3)) != NULL) {
			xasprintf(cause, "the request target's URL has %s (RFC "
			    "9110 4.2)", path == colon + 3 ? "no host" :
			    "user information before its host");
			return -1;
		}
		t->authority = xstrndup(colon + 3, path - (colon + 3));
	}
	/* RFC 9112 3.2.4: this OPTIONS is about the server, as "*" is. */
	if (path != target && *path == '\0' && strcmp(method, "OPTIONS") == 0) {
		t->asterisk = 1;
		t->path = xstrdup("");
		return 0;
	}
	q = path + strcspn(path, "?");
	if (q == path)
		t->path = xstrdup("/");
	else if (http_target_remove_dots(path, q - path, &t->path,
	    &why) != 0) {
		xasprintf(cause, "request target refused: %s", why);
		free(why);
		http_target_clear(t);
		return -1;
	}
	if (*q == '?')
		t->query = xstrdup(q + 1);
	return 0;
}

void
http_target_clear(struct http_target *t)
{
	free(t->path);
	free(t->query);
	free(t->authority);
	memset(t, 0, sizeof *t);
}

/*
 * The target the upstream gets for t (caller frees): t's path under the
 * prefix, and the upstream's own query (upq, or NULL) in front of t's.
 * "*" becomes the prefix, or stays "*" when there is none.
 */
char *
http_target_join(const char *prefix, const char *upq,
    const struct http_target *t)
{
	const char	*cq = t->query;
	char		*s;

	if (t->asterisk && *prefix == '\0')
		return xstrdup("*");
	if (upq != NULL && cq != NULL && *cq != '\0')
		xasprintf(&s, "%s%s?%s&%s", prefix, t->path, upq, cq);
	else if (upq != NULL)
		xasprintf(&s, "%s%s?%s", prefix, t->path, upq);
	else if (cq != NULL)
		xasprintf(&s, "%s%s?%s", prefix, t->path, cq);
	else
		xasprintf(&s, "%s%s", prefix, t->path);
	return s;
}
