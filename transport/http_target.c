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
 * Where the path parameters of a segment start: its first ';' or "%3b"
 * (any case), which servers that decode first read alike; len if none.
 */
static size_t
http_target_param(const char *seg, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (seg[i] == ';')
			return i;
		if (seg[i] == '%' && i + 2 < len && seg[i + 1] == '3' &&
		    (seg[i + 2] == 'b' || seg[i + 2] == 'B'))
			return i;
	}
	return len;
}

/*
 * How many dots a path segment is (1 for ".", 2 for ".."), counting
 * percent-encoded ones; 0 for any other segment.  What follows a ';' (or
 * "%3b") is left out: some servers drop such path parameters, so "..;x"
 * is ".."; *param says whether there were any.
 */
static int
http_target_dots(const char *seg, size_t len, int *param)
{
	size_t	 n, off = 0, plen = http_target_param(seg, len);
	int	 dots = 0;

	*param = plen != len;
	len = plen;
	while (off < len && dots < 3) {
		if ((n = http_target_dot(seg + off, len - off)) == 0)
			return 0;
		off += n;
		dots++;
	}
	return (dots <= 2 && off == len) ? dots : 0;
}

/* The byte a "%HH" at s (len bytes left) stands for, or -1. */
static int
http_target_escape(const char *s, size_t len)
{
	int	hi, lo;

	if (len < 3 || s[0] != '%' ||
	    (hi = scan_hex_value((unsigned char)s[1])) < 0 ||
	    (lo = scan_hex_value((unsigned char)s[2])) < 0)
		return -1;
	return hi << 4 | lo;
}

/*
 * Why a segment may mean something else to an upstream that decodes it
 * before it removes dot segments, or NULL: a backslash or an encoded '/'
 * or '\' (a path separator), an encoded NUL (ends the path in C), a
 * "%uHHHH" escape (IIS decodes it), or an overlong UTF-8 sequence, the
 * old way to spell '.' or '/' past a filter ("%c0%ae" is '.').
 */
static const char *
http_target_hidden(const char *seg, size_t len)
{
	size_t	i;
	int	c, next;

	for (i = 0; i < len; i++) {
		if (seg[i] == '\\')
			return "has a '\\', which the server may take for a "
			    "path separator";
		if (seg[i] != '%')
			continue;
		if (i + 1 < len && (seg[i + 1] == 'u' || seg[i + 1] == 'U'))
			return "has a %u escape, which some servers decode";
		c = http_target_escape(seg + i, len - i);
		next = http_target_escape(seg + i + 3, i + 3 < len ?
		    len - i - 3 : 0);
		if (c == '/' || c == '\\')
			return "has an encoded '/' or '\\', which the server "
			    "may take for a path separator";
		if (c == 0)
			return "has an encoded NUL (%00)";
		/*
		 * RFC 3629 3: C0, C1 and F5 to FF never appear in UTF-8; E0
		 * before 80..9F and F0 before 80..8F are overlong.
		 */
		if (c == 0xc0 || c == 0xc1 || c >= 0xf5 || (c == 0xe0 &&
		    next >= 0x80 && next < 0xa0) || (c == 0xf0 &&
		    next >= 0x80 && next < 0x90))
			return "has an overlong or invalid UTF-8 escape, "
			    "which some servers decode to '.' or '/'";
	}
	return NULL;
}

/*
 * Remove the dot segments of an absolute path (len bytes at path, starting
 * with '/') into *out (caller frees).  Returns -1 with cause when the path
 * would climb above "/".  With strict (a client's target: a path under a
 * prefix must stay under it, whatever the upstream decodes), also when a
 * segment hides a separator, a NUL or a dot from us (see
 * http_target_hidden), or is a dot segment with path parameters ("..;x",
 * "..%3bx"), which servers read as ".." or not.  The operator's own URL
 * and the upstream's endpoint are not held to that: their encoded
 * separators are part of a name ("org%2Fname").
 */
int
http_target_remove_dots(const char *path, size_t len, int strict, char **out,
    char **cause)
{
	const char	*p = path + 1, *end = path + len, *slash, *why;
	char		*o = xmalloc(len + 2);
	size_t		 olen = 0, seglen;
	int		 dots, param;

	while (p <= end) {
		slash = memchr(p, '/', end - p);
		seglen = (slash != NULL ? slash : end) - p;
		if (strict && (why = http_target_hidden(p, seglen)) != NULL) {
			xasprintf(cause, "the path %s", why);
			free(o);
			return -1;
		}
		dots = http_target_dots(p, seglen, &param);
		if (strict && dots != 0 && param) {
			xasprintf(cause, "the path has a dot segment with "
			    "parameters (';'), which servers read differently");
			free(o);
			return -1;
		}
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

/*
 * Whether the len bytes at s are host[:port] as a Host field may carry
 * them: a name of letters, digits, '-', '.', '_' and '~' (a DNS name or
 * an IPv4 address), or an IPv6 address in brackets, then an optional port
 * of at most five digits.  The rest of RFC 3986's reg-name (',', ';',
 * '%', ...) is refused: a proxy makes Host of it, and no server is named
 * so.
 */
static int
http_target_authority_ok(const char *s, size_t len)
{
	size_t	i = 0, digits;

	if (len > 0 && s[0] == '[') {
		for (i = 1; i < len && s[i] != ']'; i++) {
			if (scan_hex_value((unsigned char)s[i]) < 0 &&
			    s[i] != ':' && s[i] != '.')
				return 0;
		}
		if (i == len || i == 1)
			return 0;
		i++;
	} else {
		for (; i < len && s[i] != ':'; i++) {
			if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
			    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
			    strchr("-._~", s[i]) != NULL))
				return 0;
		}
		if (i == 0)
			return 0;
	}
	if (i == len)
		return 1;
	if (s[i++] != ':')
		return 0;
	for (digits = 0; i < len; i++, digits++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
	}
	return digits <= 5;
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
 * would climb above the root or hides a separator, a NUL or a dot (see
 * http_target_remove_dots), a fragment, an absolute-form with no host,
 * with user information or with a host that is not host[:port], and
 * every other form (400).
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
		if (!http_target_authority_ok(colon + 3, path - (colon + 3))) {
			xasprintf(cause, "the request target's URL has a host "
			    "that is not host[:port] (a name, an IPv4 address "
			    "or an [IPv6] address, and a port)");
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
	else if (http_target_remove_dots(path, q - path, 1, &t->path,
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
