/*
 * The legacy HTTP+SSE transport's endpoint URL: the `endpoint` event's
 * URL resolved against the stream's, and refused unless it is the same
 * origin and fits in a request line.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transport.h"
#include "xport_sse_int.h"

/* The length of the URL scheme ref starts with (before ':'), or 0. */
static size_t
xse_endpoint_scheme_len(const char *ref)
{
	size_t	i;

	if (!((*ref >= 'a' && *ref <= 'z') || (*ref >= 'A' && *ref <= 'Z')))
		return 0;
	for (i = 1; ref[i] != '\0'; i++) {
		if (ref[i] == ':')
			return i;
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789+-.", ref[i]) == NULL)
			return 0;
	}
	return 0;
}

/*
 * Whether "scheme://authority" (scheme_len bytes of scheme, then the
 * authority up to end) is base's origin: scheme, host and port alike.
 */
static int
xse_endpoint_same_origin(const struct url *base, const char *scheme,
    size_t scheme_len, const char *auth, size_t auth_len, char **cause)
{
	struct url	 u;
	char		*s, *why = NULL;
	size_t		 i;
	int		 same;

	xasprintf(&s, "%.*s://%.*s", (int)scheme_len, scheme, (int)auth_len,
	    auth);
	for (i = 0; i < scheme_len; i++)
		s[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
	if (net_parse_url(s, &u, &why) != 0) {
		xasprintf(cause, "the endpoint URL's origin is not one: %s",
		    why);
		free(why);
		free(s);
		return 0;
	}
	same = u.tls == base->tls && strcasecmp(u.host, base->host) == 0 &&
	    strcmp(u.port, base->port) == 0;
	if (!same)
		xasprintf(cause, "the endpoint event names another origin "
		    "(%s, not %s): refused, messages go only where the stream "
		    "came from", u.origin, base->origin);
	net_url_clear(&u);
	free(s);
	return same;
}

/*
 * Remove the dot segments of an absolute path (RFC 3986 5.2.4): a ".."
 * at the root stays at the root, as every URL parser has it.
 */
static char *
xse_endpoint_remove_dots(const char *path)
{
	char		*out = xmalloc(strlen(path) + 2);
	const char	*p = path, *seg;
	size_t		 olen = 0, n;

	while (*p != '\0') {
		/* p is at a '/': the segment is what follows, to the next. */
		seg = p + 1;
		n = strcspn(seg, "/");
		if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' &&
		    seg[1] == '.')) {
			if (n == 2) {
				while (olen > 0 && out[olen - 1] != '/')
					olen--;
				if (olen > 0)
					olen--;
			}
			/* A dot segment at the end leaves a directory. */
			if (seg[n] == '\0')
				out[olen++] = '/';
		} else {
			out[olen++] = '/';
			memcpy(out + olen, seg, n);
			olen += n;
		}
		p = seg + n;
	}
	if (olen == 0)
		out[olen++] = '/';
	out[olen] = '\0';
	return out;
}

/*
 * Resolve an endpoint event's URL (ref) against the stream's URL (base),
 * as RFC 3986 5.2 does, into the request target to POST to ("/path?query",
 * dot segments removed, the fragment dropped).  Refused (-1, *cause): a
 * different origin (scheme, host or port), a scheme other than http(s),
 * bytes a request line cannot carry (controls, spaces, non-ASCII), more
 * than XSE_ENDPOINT_MAX bytes.  With ref
 * "" it gives the GET's own target.
 */
int
xport_sse_endpoint(const char *base, const char *ref, char **target,
    char **cause)
{
	struct url	 bu;
	const char	*bpath, *bq, *p, *auth, *q;
	char		*merged = NULL, *path = NULL, *query = NULL;
	size_t		 n, slen, blen;
	int		 rc = -1;

	*target = NULL;
	if (net_parse_url(base, &bu, cause) != 0)
		return -1;
	/* The base's own path and query, as written. */
	bpath = base + (bu.tls ? 8 : 7);
	bpath += strcspn(bpath, "/?");
	bq = strchr(bpath, '?');
	blen = bq != NULL ? (size_t)(bq - bpath) : strlen(bpath);

	n = strlen(ref);
	if (n > XSE_ENDPOINT_MAX) {
		xasprintf(cause, "the endpoint URL is too long (%zu bytes, at "
		    "most %d)", n, XSE_ENDPOINT_MAX);
		goto out;
	}
	for (p = ref; *p != '\0'; p++) {
		unsigned char	c = (unsigned char)*p;

		if (c <= 0x20 || c >= 0x7f) {
			xasprintf(cause, "the endpoint URL holds a byte a "
			    "request line cannot carry (0x%02x)", c);
			goto out;
		}
	}
	/* The fragment is the client's own: never sent. */
	n = strcspn(ref, "#");

	if ((slen = xse_endpoint_scheme_len(ref)) != 0 ||
	    strncmp(ref, "//", 2) == 0) {
		if (slen != 0 && !((slen == 4 && strncasecmp(ref, "http",
		    4) == 0) || (slen == 5 && strncasecmp(ref, "https",
		    5) == 0))) {
			xasprintf(cause, "the endpoint URL's scheme is not "
			    "http or https");
			goto out;
		}
		auth = ref + slen + (slen != 0 ? 1 : 0);
		if (strncmp(auth, "//", 2) != 0) {
			xasprintf(cause, "the endpoint URL has a scheme but "
			    "no //host");
			goto out;
		}
		auth += 2;
		p = auth + strcspn(auth, "/?#");
		if (!xse_endpoint_same_origin(&bu, slen != 0 ? ref : (bu.tls ?
		    "https" : "http"), slen != 0 ? slen : (bu.tls ? 5 : 4),
		    auth, (size_t)(p - auth), cause))
			goto out;
		n -= (size_t)(p - ref);
		ref = p;
		if (n == 0 || *ref == '?')
			merged = xstrdup("/");
	}
	q = memchr(ref, '?', n);
	if (q != NULL)
		query = xstrndup(q + 1, n - (size_t)(q - ref) - 1);
	n = q != NULL ? (size_t)(q - ref) : n;
	if (merged != NULL)
		;
	else if (n > 0 && *ref == '/')
		merged = xstrndup(ref, n);
	else if (n == 0) {
		/* Only a query, or nothing: the base's path (and query). */
		merged = blen > 0 ? xstrndup(bpath, blen) : xstrdup("/");
		if (q == NULL && bq != NULL)
			query = xstrdup(bq + 1);
	} else {
		/* A relative path replaces the base path's last segment. */
		for (p = bpath + blen; p > bpath && p[-1] != '/'; p--)
			;
		xasprintf(&merged, "%.*s%.*s", p > bpath ?
		    (int)(p - bpath) : 1, p > bpath ? bpath : "/", (int)n,
		    ref);
	}
	path = xse_endpoint_remove_dots(merged);
	if (query != NULL)
		xasprintf(target, "%s?%s", path, query);
	else
		*target = xstrdup(path);
	/* The base URL's own path and query go in too: the same rule. */
	for (p = *target; *p != '\0'; p++) {
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
			xasprintf(cause, "the URL's path or query holds a byte "
			    "a request line cannot carry (0x%02x)",
			    (unsigned char)*p);
			free(*target);
			*target = NULL;
			goto out;
		}
	}
	rc = 0;
out:
	free(merged);
	free(path);
	free(query);
	net_url_clear(&bu);
	return rc;
}
