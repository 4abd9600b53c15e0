/*
 * HTTP/1.1 message framing (RFC 9112): finding and parsing a request or
 * response head at the front of an evbuffer, choosing how its body is
 * delimited, and decoding a body, chunked or not, into its data.  All of
 * it works on whatever has arrived so far, picks up where it left off, and
 * never takes more than one message: a pipelined next one stays where it
 * is.  No I/O and no state outside the structures passed in.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "http_int.h"

const char *http_kind_names[HTTP_BODY_MAX] = {
	"none", "length", "chunked", "close"
};

/* Whether c may appear in a token (RFC 9110 5.6.2: tchar). */
static int
http_is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Whether the len bytes at s are a token: one or more tchars. */
int
http_is_token(const char *s, size_t len)
{
	size_t	i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++) {
		if (!http_is_tchar((unsigned char)s[i]))
			return 0;
	}
	return 1;
}

/* Whether c may appear in a field value or reason phrase. */
int
http_is_text(unsigned char c)
{
	return (c == '\t' || (c >= 0x20 && c != 0x7f));
}

/*
 * Quote up to HTTP_EXCERPT_MAX bytes of s into out (of size outlen) for an
 * error message, with anything unprintable written as \xHH.
 */
void
http_excerpt(char *out, size_t outlen, const char *s, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i, o = 0;
	unsigned char		 c;

	for (i = 0; i < len && i < HTTP_EXCERPT_MAX; i++) {
		if (o + 5 >= outlen)
			break;
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
			out[o++] = c;
		else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 0xf];
		}
	}
	if (i < len && o + 3 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/*
 * Copy up to n bytes from offset off of buf into out without removing
 * them; return how many there were.
 */
size_t
http_peek(struct evbuffer *buf, size_t off, unsigned char *out, size_t n)
{
	struct evbuffer_ptr	pos;
	ev_ssize_t		got;

	if (off >= evbuffer_get_length(buf))
		return 0;
	if (evbuffer_ptr_set(buf, &pos, off, EVBUFFER_PTR_SET) != 0)
		return 0;
	got = evbuffer_copyout_from(buf, &pos, out, n);
	return (got < 0 ? 0 : (size_t)got);
}

/*
 * Find where the head at the front of buf ends: the blank line after the
 * start line and fields.  Return 1 with the head's length in *end and the
 * bytes of an ignored empty line before it in *skip; 0 if it has not all
 * arrived, with *scanned how far the search got; -1 if there is no end
 * within HTTP_HEAD_MAX bytes.
 */
static int
http_head_find(struct evbuffer *buf, size_t *scanned, size_t *skip,
    size_t *end, char **cause)
{
	struct evbuffer_ptr	pos, stop;
	unsigned char		c[2];
	size_t			avail = evbuffer_get_length(buf), lim, n, p;

	/*
	 * RFC 9112 2.2: a recipient ought to ignore an empty line before a
	 * start line (once sent after a POST body).  Take one, no more.
	 */
	n = http_peek(buf, 0, c, 2);
	if (n == 1 && c[0] == '\r')
		return 0;
	if (n >= 1 && c[0] == '\n')
		*skip = 1;
	else if (n == 2 && c[0] == '\r' && c[1] == '\n')
		*skip = 2;
	else
		*skip = 0;
	if (*scanned < *skip)
		*scanned = *skip;

	/* The head ends at an empty line: "\n\n" or "\n\r\n". */
	lim = avail < HTTP_HEAD_MAX ? avail : HTTP_HEAD_MAX;
	while (*scanned < lim) {
		if (evbuffer_ptr_set(buf, &pos, *scanned,
		    EVBUFFER_PTR_SET) != 0 ||
		    evbuffer_ptr_set(buf, &stop, lim, EVBUFFER_PTR_SET) != 0)
			break;
		pos = evbuffer_search_range(buf, "\n", 1, &pos, &stop);
		if (pos.pos < 0) {
			*scanned = lim;
			break;
		}
		p = (size_t)pos.pos;
		n = http_peek(buf, p + 1, c, lim - (p + 1) < 2 ?
		    lim - (p + 1) : 2);
		if (n == 0 || (n == 1 && c[0] == '\r')) {
			/* Cannot tell yet: look at this '\n' again. */
			*scanned = p;
			break;
		}
		if (c[0] == '\n') {
			*end = p + 2;
			return 1;
		}
		if (c[0] == '\r' && c[1] == '\n') {
			*end = p + 3;
			return 1;
		}
		*scanned = p + 1;
	}
	if (avail >= HTTP_HEAD_MAX) {
		xasprintf(cause, "HTTP head larger than %d bytes",
		    HTTP_HEAD_MAX);
		return -1;
	}
	return 0;
}

/* Parse "HTTP/1.0" or "HTTP/1.1" into 10 or 11; -1 with cause if not. */
static int
http_parse_version(const char *s, size_t len, int *version, char **cause)
{
	char	q[HTTP_QUOTE_SIZE];

	if (len == 8 && memcmp(s, "HTTP/1.", 7) == 0 &&
	    (s[7] == '0' || s[7] == '1')) {
		*version = s[7] == '0' ? 10 : 11;
		return 0;
	}
	http_excerpt(q, sizeof q, s, len);
	if (len == 8 && memcmp(s, "HTTP/", 5) == 0 && s[5] >= '0' &&
	    s[5] <= '9' && s[6] == '.' && s[7] >= '0' && s[7] <= '9')
		xasprintf(cause, "unsupported HTTP version \"%s\" (only "
		    "HTTP/1.0 and HTTP/1.1 are spoken here)", q);
	else
		xasprintf(cause, "malformed HTTP version \"%s\"", q);
	return -1;
}

/* Parse a request line: METHOD SP request-target SP HTTP-version. */
static int
http_parse_request_line(struct http_head *head, const char *line,
    size_t len, char **cause)
{
	const char	*sp1, *sp2, *end = line + len;
	char		 q[HTTP_QUOTE_SIZE];
	const char	*p;

	if ((sp1 = memchr(line, ' ', len)) == NULL ||
	    !http_is_token(line, sp1 - line))
		goto bad;
	if ((sp2 = memchr(sp1 + 1, ' ', end - (sp1 + 1))) == NULL ||
	    sp2 == sp1 + 1)
		goto bad;
	for (p = sp1 + 1; p < sp2; p++) {
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			goto bad;
	}
	if (http_parse_version(sp2 + 1, end - (sp2 + 1), &head->version,
	    cause) != 0)
		return -1;
	head->method = xstrndup(line, sp1 - line);
	head->target = xstrndup(sp1 + 1, sp2 - (sp1 + 1));
	return 0;

bad:
	http_excerpt(q, sizeof q, line, len);
	xasprintf(cause, "malformed HTTP request line \"%s\"", q);
	return -1;
}

/* Parse a status line: HTTP-version SP 3DIGIT [SP reason-phrase]. */
static int
http_parse_status_line(struct http_head *head, const char *line,
    size_t len, char **cause)
{
	const char	*sp, *p, *end = line + len;
	char		 q[HTTP_QUOTE_SIZE];

	if ((sp = memchr(line, ' ', len)) == NULL) {
		if (http_parse_version(line, len, &head->version, cause) != 0)
			return -1;
		goto bad;
	}
	if (http_parse_version(line, sp - line, &head->version, cause) != 0)
		return -1;
	p = sp + 1;
	if (end - p < 3 || p[0] < '1' || p[0] > '9' || p[1] < '0' ||
	    p[1] > '9' || p[2] < '0' || p[2] > '9')
		goto bad;
	head->status = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
	p += 3;
	if (p < end && *p++ != ' ')
		goto bad;
	for (sp = p; sp < end; sp++) {
		if (!http_is_text((unsigned char)*sp))
			goto bad;
	}
	head->reason = xstrndup(p, end - p);
	return 0;

bad:
	http_excerpt(q, sizeof q, line, len);
	xasprintf(cause, "malformed HTTP status line \"%s\"", q);
	return -1;
}

/*
 * Check a field line (name ":" OWS value OWS) and, if h is not NULL, fill
 * it with copies of the name and trimmed value.  what names the section
 * for errors ("header" or "trailer").
 */
int
http_parse_field(const char *line, size_t len, struct http_header *h,
    const char *what, char **cause)
{
	const char	*colon, *v, *ve, *p, *why;
	char		 q[HTTP_QUOTE_SIZE];

	colon = memchr(line, ':', len);
	if (line[0] == ' ' || line[0] == '\t')
		why = "is a continuation (obsolete line folding is refused)";
	else if (colon == NULL)
		why = "has no colon";
	else if (colon == line)
		why = "has an empty field name";
	else if (colon[-1] == ' ' || colon[-1] == '\t')
		why = "has white space before the colon";
	else if (!http_is_token(line, colon - line))
		why = "has an invalid character in the field name";
	else
		why = NULL;
	if (why != NULL)
		goto bad;

	v = colon + 1;
	ve = line + len;
	while (v < ve && (*v == ' ' || *v == '\t'))
		v++;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	for (p = v; p < ve; p++) {
		if (!http_is_text((unsigned char)*p)) {
			why = "has a control character in the value";
			goto bad;
		}
	}
	if (h != NULL) {
		h->name = xstrndup(line, colon - line);
		h->value = xstrndup(v, ve - v);
	}
	return 0;

bad:
	http_excerpt(q, sizeof q, line, len);
	xasprintf(cause, "HTTP %s line \"%s\" %s", what, q, why);
	return -1;
}

/*
 * Parse a complete head (text, len bytes, ending in its blank line) into
 * head.  On failure head may hold some strings; the caller clears it.
 */
static int
http_head_split(struct http_head *head, const char *text, size_t len,
    char **cause)
{
	const char	*p = text, *end = text + len, *eol;
	size_t		 n, nlines = 0, linelen;
	int		 first = 1;

	for (eol = text; (eol = memchr(eol, '\n', end - eol)) != NULL; eol++)
		nlines++;
	/* Less the start line and the blank line. */
	n = nlines >= 2 ? nlines - 2 : 0;
	if (n > HTTP_HEADERS_MAX) {
		xasprintf(cause, "HTTP head has %zu header fields, more than "
		    "the %d accepted", n, HTTP_HEADERS_MAX);
		return -1;
	}
	head->headers = xcalloc(n, sizeof *head->headers);

	while (p < end) {
		eol = memchr(p, '\n', end - p);
		linelen = eol - p;
		if (linelen > 0 && p[linelen - 1] == '\r')
			linelen--;
		if (first) {
			if (head->is_request) {
				if (http_parse_request_line(head, p, linelen,
				    cause) != 0)
					return -1;
			} else {
				if (http_parse_status_line(head, p, linelen,
				    cause) != 0)
					return -1;
			}
			first = 0;
		} else if (linelen == 0)
			break;
		else {
			if (http_parse_field(p, linelen,
			    &head->headers[head->nheaders], "header",
			    cause) != 0)
				return -1;
			head->nheaders++;
		}
		p = eol + 1;
	}
	return 0;
}

/*
 * Parse the request or response head at the front of buf without removing
 * it.  Return 1 when a whole head is there, with head filled (head->len is
 * how many bytes the caller drains); 0 when more is needed, with *scanned
 * remembering how far the search got (start it at 0 for each message); -1
 * with cause when it is malformed or too big.  head is overwritten: clear
 * any earlier one first.
 */
int
http_head_parse(struct evbuffer *buf, int is_request, size_t *scanned,
    struct http_head *head, char **cause)
{
	size_t	 skip = 0, end = 0;
	char	*text;
	int	 rc;

	memset(head, 0, sizeof *head);
	head->is_request = is_request;
	switch (http_head_find(buf, scanned, &skip, &end, cause)) {
	case 0:
		return 0;
	case -1:
		*scanned = 0;
		return -1;
	}
	*scanned = 0;

	text = xmalloc(end);
	if (evbuffer_copyout(buf, text, end) != (ev_ssize_t)end) {
		free(text);
		xasprintf(cause, "cannot read the HTTP head from its buffer");
		return -1;
	}
	rc = http_head_split(head, text + skip, end - skip, cause);
	free(text);
	if (rc != 0) {
		http_head_clear(head);
		head->is_request = is_request;
		return -1;
	}
	head->len = end;
	return 1;
}

/*
 * Parse field lines, each ending in CRLF (trailers as http_body_decode
 * keeps them), into head's fields; head is overwritten (clear it after).
 */
int
http_fields_parse(struct evbuffer *lines, struct http_head *head,
    char **cause)
{
	size_t		 len = evbuffer_get_length(lines), n = 0, linelen;
	const char	*text, *p, *end, *eol;

	memset(head, 0, sizeof *head);
	if (len == 0)
		return 0;
	text = (const char *)evbuffer_pullup(lines, (ev_ssize_t)len);
	end = text + len;
	for (p = text; (p = memchr(p, '\n', end - p)) != NULL; p++)
		n++;
	head->headers = xcalloc(n, sizeof *head->headers);
	for (p = text; p < end && head->nheaders < n; p = eol + 1) {
		if ((eol = memchr(p, '\n', end - p)) == NULL)
			break;
		linelen = eol - p;
		if (linelen > 0 && p[linelen - 1] == '\r')
			linelen--;
		if (linelen == 0)
			continue;
		if (http_parse_field(p, linelen,
		    &head->headers[head->nheaders], "trailer", cause) != 0) {
			http_head_clear(head);
			return -1;
		}
		head->nheaders++;
	}
	return 0;
}

/* Free what a head owns and zero it. */
void
http_head_clear(struct http_head *head)
{
	size_t	i;

	for (i = 0; i < head->nheaders; i++) {
		free(head->headers[i].name);
		free(head->headers[i].value);
	}
	free(head->headers);
	free(head->method);
	free(head->target);
	free(head->reason);
	memset(head, 0, sizeof *head);
}

/* The value of the first field called name (any case), or NULL. */
const char *
http_head_get(const struct http_head *head, const char *name)
{
	size_t	i;

	for (i = 0; i < head->nheaders; i++) {
		if (strcasecmp(head->headers[i].name, name) == 0)
			return head->headers[i].value;
	}
	return NULL;
}

/*
 * Step through a comma-separated list (RFC 9110 5.6.1): return 1 with the
 * next non-empty element, without surrounding white space, in *elem and
 * *len, and *p moved past it; 0 at the end.
 */
static int
http_list_next(const char **p, const char **elem, size_t *len)
{
	const char	*s = *p, *e;

	while (*s == ' ' || *s == '\t' || *s == ',')
		s++;
	if (*s == '\0') {
		*p = s;
		return 0;
	}
	for (e = s; *e != '\0' && *e != ','; e++)
		/* nothing */;
	*p = e;
	*elem = s;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*len = e - s;
	return 1;
}

/*
 * Whether any field called name has token (any case) as one element of its
 * comma-separated value, as "close" in "Connection: keep-alive, Close".
 */
int
http_head_has_token(const struct http_head *head, const char *name,
    const char *token)
{
	const char	*p, *elem;
	size_t		 i, len, tlen = strlen(token);

	for (i = 0; i < head->nheaders; i++) {
		if (strcasecmp(head->headers[i].name, name) != 0)
			continue;
		p = head->headers[i].value;
		while (http_list_next(&p, &elem, &len)) {
			if (len == tlen && strncasecmp(elem, token, len) == 0)
				return 1;
		}
	}
	return 0;
}

/* How many elements all fields called name hold, in all. */
static size_t
http_head_count_values(const struct http_head *head, const char *name)
{
	const char	*p, *elem;
	size_t		 i, len, n = 0;

	for (i = 0; i < head->nheaders; i++) {
		if (strcasecmp(head->headers[i].name, name) != 0)
			continue;
		p = head->headers[i].value;
		while (http_list_next(&p, &elem, &len))
			n++;
	}
	return n;
}

/*
 * Whether a response head must be changed before it is passed on, its
 * framing made plain (RFC 9112 6.3): a Content-Length beside a
 * Transfer-Encoding, which a sender must remove, or a Content-Length of
 * several equal values (RFC 9110 8.6), which becomes one.
 */
int
http_head_needs_reframe(const struct http_head *head)
{
	size_t	ncl = http_head_count_values(head, "Content-Length");

	if (http_head_get(head, "Transfer-Encoding") != NULL)
		return http_head_get(head, "Content-Length") != NULL;
	return ncl > 1 || (ncl == 1 && strchr(http_head_get(head,
	    "Content-Length"), ',') != NULL);
}

/*
 * Write a response head to out as it was parsed, with its framing made
 * plain (see http_head_needs_reframe): without Content-Length when it has
 * a Transfer-Encoding, else with the first Content-Length value alone,
 * where the first field was (the values agree, or the body was refused).
 */
void
http_head_write_reframed(struct evbuffer *out, const struct http_head *head)
{
	int		 te, done = 0;
	const char	*p, *elem;
	size_t		 i, len;

	te = http_head_get(head, "Transfer-Encoding") != NULL;
	evbuffer_add_printf(out, "HTTP/1.%d %03d %s\r\n", head->version % 10,
	    head->status, head->reason != NULL ? head->reason : "");
	for (i = 0; i < head->nheaders; i++) {
		if (strcasecmp(head->headers[i].name, "Content-Length") != 0) {
			evbuffer_add_printf(out, "%s: %s\r\n",
			    head->headers[i].name, head->headers[i].value);
			continue;
		}
		p = head->headers[i].value;
		if (!te && !done && http_list_next(&p, &elem, &len)) {
			evbuffer_add_printf(out, "%s: %.*s\r\n",
			    head->headers[i].name, (int)len, elem);
			done = 1;
		}
	}
	evbuffer_add(out, "\r\n", 2);
}

/*
 * Read every Content-Length element into *length: all must be digits and
 * agree (RFC 9112 6.3 item 5).  Return -1 with cause if not.
 */
static int
http_content_length(const struct http_head *head, uint64_t *length,
    char **cause)
{
	const char	*p, *elem;
	size_t		 i, j, len, nelem;
	uint64_t	 n, d;
	int		 seen = 0;
	char		 q[HTTP_QUOTE_SIZE];

	for (i = 0; i < head->nheaders; i++) {
		if (strcasecmp(head->headers[i].name, "Content-Length") != 0)
			continue;
		p = head->headers[i].value;
		/*
		 * A request's is exactly one run of digits: "5," or ", 5"
		 * is one value to us but may be none to the upstream, which
		 * would then read the body as the next request.
		 */
		if (head->is_request && (*p == '\0' ||
		    p[strspn(p, "0123456789")] != '\0'))
			goto bad;
		nelem = 0;
		while (http_list_next(&p, &elem, &len)) {
			nelem++;
			n = 0;
			for (j = 0; j < len; j++) {
				if (elem[j] < '0' || elem[j] > '9')
					goto bad;
				d = elem[j] - '0';
				/* Checked before it is computed: no wrap. */
				if (n > (HTTP_LENGTH_MAX - d) / 10) {
					xasprintf(cause, "HTTP Content-Length "
					    "is larger than 2^62 bytes");
					return -1;
				}
				n = n * 10 + d;
			}
			if (seen && n != *length) {
				xasprintf(cause, "HTTP message has differing "
				    "Content-Length values (%llu and %llu)",
				    (unsigned long long)*length,
				    (unsigned long long)n);
				return -1;
			}
			*length = n;
			seen = 1;
		}
		if (nelem == 0)
			goto bad;
	}
	return 0;

bad:
	http_excerpt(q, sizeof q, head->headers[i].value,
	    strlen(head->headers[i].value));
	xasprintf(cause, "HTTP Content-Length \"%s\" is not a number%s", q,
	    head->is_request ? " (a request's must be digits alone)" : "");
	return -1;
}

/*
 * Decide a message's body framing (RFC 9112 6.3).  req_method is the
 * method of the request a response answers (NULL if unknown).  *length
 * is set for HTTP_BODY_LENGTH and is 0 otherwise; a Content-Length of 0
 * gives HTTP_BODY_NONE.  Requests are held to stricter rules than
 * responses, since an ambiguous request is how smuggling starts: one with
 * both Transfer-Encoding and Content-Length, or a Transfer-Encoding that
 * does not end in chunked, is an error; a response in the same case is
 * read until the connection closes.
 */
int
http_body_kind(const struct http_head *head, const char *req_method,
    enum http_body_kind *kind, uint64_t *length, char **cause)
{
	const char	*p, *elem, *last = NULL;
	size_t		 i, len, last_len = 0;
	int		 te = 0, cl = 0, nchunked = 0;

	*kind = HTTP_BODY_NONE;
	*length = 0;

	if (!head->is_request) {
		if (req_method != NULL && strcmp(req_method, "HEAD") == 0)
			return 0;
		if ((head->status >= 100 && head->status < 200) ||
		    head->status == 204 || head->status == 304)
			return 0;
		/* A tunnel after CONNECT is not ours to carry. */
		if (req_method != NULL && strcmp(req_method, "CONNECT") == 0 &&
		    head->status >= 200 && head->status < 300)
			return 0;
	}

	for (i = 0; i < head->nheaders; i++) {
		if (strcasecmp(head->headers[i].name, "Content-Length") == 0)
			cl = 1;
		if (strcasecmp(head->headers[i].name,
		    "Transfer-Encoding") != 0)
			continue;
		te = 1;
		p = head->headers[i].value;
		while (http_list_next(&p, &elem, &len)) {
			if (len == 7 && strncasecmp(elem, "chunked", 7) == 0)
				nchunked++;
			last = elem;
			last_len = len;
		}
	}

	if (head->is_request && http_head_count_values(head,
	    "Content-Length") > 1) {
		/*
		 * Equal values are allowed (RFC 9112 6.3 item 5), but a
		 * request is where smuggling starts: ask for one.
		 */
		xasprintf(cause, "HTTP request has more than one Content-Length "
		    "value (send one)");
		return -1;
	}
	if (te) {
		if (head->is_request && cl) {
			xasprintf(cause, "HTTP request has both "
			    "Transfer-Encoding and Content-Length");
			return -1;
		}
		if (head->version == 10) {
			/* RFC 9112 6.1: HTTP/1.0 has no transfer codings. */
			if (head->is_request) {
				xasprintf(cause, "HTTP/1.0 request has a "
				    "Transfer-Encoding");
				return -1;
			}
			*kind = HTTP_BODY_CLOSE;
			return 0;
		}
		if (nchunked > 1) {
			xasprintf(cause, "HTTP message is chunked more than "
			    "once");
			return -1;
		}
		if (last != NULL && last_len == 7 &&
		    strncasecmp(last, "chunked", 7) == 0) {
			*kind = HTTP_BODY_CHUNKED;
			return 0;
		}
		if (head->is_request) {
			xasprintf(cause, "HTTP request has a Transfer-Encoding "
			    "that does not end in chunked");
			return -1;
		}
		*kind = HTTP_BODY_CLOSE;
		return 0;
	}

	if (cl) {
		if (http_content_length(head, length, cause) != 0)
			return -1;
		*kind = *length == 0 ? HTTP_BODY_NONE : HTTP_BODY_LENGTH;
		return 0;
	}
	*kind = head->is_request ? HTTP_BODY_NONE : HTTP_BODY_CLOSE;
	return 0;
}

/*
 * The usual reason phrase of a status (RFC 9110 15), for the heads
 * mcpreel writes itself and for HAR; NULL for one it does not know.
 */
const char *
http_reason(int status)
{
	static const struct {
		int		 status;
		const char	*text;
	} texts[] = {
		{ 100, "Continue" },
		{ 200, "OK" }, { 201, "Created" }, { 202, "Accepted" },
		{ 204, "No Content" }, { 301, "Moved Permanently" },
		{ 302, "Found" }, { 304, "Not Modified" },
		{ 307, "Temporary Redirect" }, { 308, "Permanent Redirect" },
		{ 400, "Bad Request" }, { 401, "Unauthorized" },
		{ 403, "Forbidden" }, { 404, "Not Found" },
		{ 405, "Method Not Allowed" }, { 406, "Not Acceptable" },
		{ 409, "Conflict" }, { 413, "Content Too Large" },
		{ 415, "Unsupported Media Type" },
		{ 429, "Too Many Requests" }, { 431,
		  "Request Header Fields Too Large" },
		{ 500, "Internal Server Error" }, { 502, "Bad Gateway" },
		{ 503, "Service Unavailable" }, { 504, "Gateway Timeout" },
	};
	size_t	i;

	for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		if (texts[i].status == status)
			return texts[i].text;
	}
	return NULL;
}
