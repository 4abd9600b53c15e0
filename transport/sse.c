/*
 * text/event-stream parsing by the WHATWG HTML rules (9.2.6, "Interpreting
 * an event stream"), on whatever part of the stream has arrived.  Lines end
 * in CRLF, LF or a lone CR; a line is searched once however many reads it
 * takes (a long partial line is kept in one piece of the buffer, so going
 * back to where its search stopped is one step), and data is moved, not copied byte by byte, so an event of many
 * megabytes costs linear time.  The bytes are not decoded as UTF-8: the
 * data is handed on exactly as it came.
 *
 * Two simplifications, neither of which matters to a recorder: a blank
 * line with no data before it dispatches nothing, so an "id" or "retry"
 * in such a block is dropped with it; and an event's id is the "id" field
 * of its own block (an empty string for "id" with no value), not the
 * stream's last event ID carried over from earlier events.
 *
 * An event with a line or data longer than SSE_LINE_MAX is dropped whole
 * as it streams past, so a runaway stream costs that much memory at most.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "transport.h"

/* How many iovecs to look at per evbuffer_peek while looking for an EOL. */
#define SSE_IOV			16
/*
 * A partial line longer than this is kept in one piece of src (see
 * sse_next), so finding where its scan stopped is not a walk over every
 * piece it came in.
 */
#define SSE_PULLUP_MIN		(64 * 1024)
/* Longest field name we act on ("retry"), with room to spare. */
#define SSE_NAME_MAX		8
/* Most digits in a retry value that surely fits a long; more is ignored. */
#define SSE_RETRY_DIGITS	18

/* What struct sse_parser's skip holds. */
enum sse_skip {
	SSE_SKIP_NONE,		/* parsing */
	SSE_SKIP_LINE,		/* dropping an event, at the start of a line */
	SSE_SKIP_PARTIAL,	/* dropping an event, inside a line */
	SSE_SKIP_MAX
};

static const unsigned char sse_bom[3] = { 0xef, 0xbb, 0xbf };

/* Set up an empty parser for a new stream. */
void
sse_init(struct sse_parser *p)
{
	memset(p, 0, sizeof *p);
	if ((p->data = evbuffer_new()) == NULL)
		fatalx("out of memory creating an event-stream parser");
	p->ev.retry = -1;
}

/* Free what a parser holds, including an event it had not finished. */
void
sse_clear(struct sse_parser *p)
{
	if (p->data != NULL)
		evbuffer_free(p->data);
	sse_event_clear(&p->ev);
	memset(p, 0, sizeof *p);
	p->ev.retry = -1;
}

/* Free what an event holds and empty it. */
void
sse_event_clear(struct sse_event *ev)
{
	free(ev->type);
	free(ev->data);
	free(ev->id);
	memset(ev, 0, sizeof *ev);
	ev->retry = -1;
}

/*
 * Look for the first CR or LF at or after offset from in src.  Return 1
 * with its offset in *at and the byte in *c, or 0 if there is none.
 */
static int
sse_find_eol(struct evbuffer *src, size_t from, size_t *at, char *c)
{
	struct evbuffer_ptr	 pos;
	struct evbuffer_iovec	 v[SSE_IOV];
	size_t			 avail = evbuffer_get_length(src), len, off;
	const char		*base, *lf, *cr;
	int			 i, n;

	if (from >= avail ||
	    evbuffer_ptr_set(src, &pos, from, EVBUFFER_PTR_SET) != 0)
		return 0;
	off = from;
	while (off < avail) {
		n = evbuffer_peek(src, avail - off, &pos, v, SSE_IOV);
		if (n <= 0)
			return 0;
		if (n > SSE_IOV)
			n = SSE_IOV;
		for (i = 0; i < n && off < avail; i++) {
			base = v[i].iov_base;
			len = v[i].iov_len;
			if (len > avail - off)
				len = avail - off;
			lf = memchr(base, '\n', len);
			cr = memchr(base, '\r', lf != NULL ?
			    (size_t)(lf - base) : len);
			if (cr != NULL || lf != NULL) {
				*at = off + ((cr != NULL ? cr : lf) - base);
				*c = cr != NULL ? '\r' : '\n';
				return 1;
			}
			off += len;
		}
		if (off < avail && evbuffer_ptr_set(src, &pos, off,
		    EVBUFFER_PTR_SET) != 0)
			return 0;
	}
	return 0;
}

/* Copy the first len bytes of src into a new NUL-terminated string. */
static char *
sse_copy(struct evbuffer *src, size_t len)
{
	char	*s = xmalloc(len + 1);

	if (evbuffer_copyout(src, s, len) != (ev_ssize_t)len)
		fatalx("cannot read an event-stream line");
	s[len] = '\0';
	return s;
}

/* Copy the byte at offset off of src into *c; return 0, or -1 if none. */
static int
sse_byte(struct evbuffer *src, size_t off, unsigned char *c)
{
	struct evbuffer_ptr	pos;

	if (evbuffer_ptr_set(src, &pos, off, EVBUFFER_PTR_SET) != 0 ||
	    evbuffer_copyout_from(src, &pos, c, 1) != 1)
		return -1;
	return 0;
}

/* Forget the event being gathered. */
static void
sse_drop(struct sse_parser *p)
{
	sse_event_clear(&p->ev);
	evbuffer_drain(p->data, evbuffer_get_length(p->data));
	p->pending = 0;
}

/* Hand the gathered event to ev and start a new one. */
static void
sse_dispatch(struct sse_parser *p, struct sse_event *ev)
{
	size_t	len = evbuffer_get_length(p->data) - 1;

	*ev = p->ev;
	if (ev->type != NULL && *ev->type == '\0') {
		free(ev->type);
		ev->type = NULL;
	}
	ev->data = xmalloc(len + 1);
	if (evbuffer_remove(p->data, ev->data, len) != (int)len)
		fatalx("cannot read event-stream data");
	evbuffer_drain(p->data, 1);
	ev->data[len] = '\0';
	ev->data_len = len;

	memset(&p->ev, 0, sizeof p->ev);
	p->ev.retry = -1;
}

/*
 * Act on the field called name whose value is the first len bytes of src
 * (the name and colon are gone), consuming the value.  Return 0, or -1 if
 * the event's data would pass SSE_LINE_MAX.
 */
static int
sse_field(struct sse_parser *p, struct evbuffer *src, const char *name,
    size_t len)
{
	char	*value = NULL;
	size_t	 i;
	long	 n = 0;

	if (strcmp(name, "data") == 0) {
		if (evbuffer_get_length(p->data) + len + 1 > SSE_LINE_MAX)
			return -1;
		if (len != 0 &&
		    evbuffer_remove_buffer(src, p->data, len) != (int)len)
			fatalx("cannot move event-stream data");
		if (evbuffer_add(p->data, "\n", 1) != 0)
			fatalx("out of memory gathering event-stream data");
		return 0;
	}
	if (strcmp(name, "event") == 0) {
		free(p->ev.type);
		p->ev.type = sse_copy(src, len);
	} else if (strcmp(name, "id") == 0) {
		/* An id with a NUL in it is ignored. */
		value = sse_copy(src, len);
		if (memchr(value, '\0', len) == NULL) {
			free(p->ev.id);
			p->ev.id = value;
			value = NULL;
		}
	} else if (strcmp(name, "retry") == 0 && len > 0 &&
	    len <= SSE_RETRY_DIGITS) {
		value = sse_copy(src, len);
		for (i = 0; i < len; i++) {
			if (value[i] < '0' || value[i] > '9')
				break;
			n = n * 10 + (value[i] - '0');
		}
		if (i == len)
			p->ev.retry = n;
	}
	free(value);
	evbuffer_drain(src, len);
	return 0;
}

/*
 * Take the line at the front of src (len bytes, then eol bytes of line
 * ending) and apply it.  Return 1 with ev filled if it dispatched an
 * event, 0 if not, -1 if the event grew too big.
 */
static int
sse_line(struct sse_parser *p, struct evbuffer *src, size_t len, size_t eol,
    struct sse_event *ev)
{
	struct evbuffer_ptr	pos, stop;
	char			name[SSE_NAME_MAX];
	size_t			nlen, vstart;
	unsigned char		c;

	if (len == 0) {
		evbuffer_drain(src, eol);
		p->pending = 0;
		if (evbuffer_get_length(p->data) == 0) {
			sse_event_clear(&p->ev);
			return 0;
		}
		sse_dispatch(p, ev);
		return 1;
	}

	/* The name runs to the first colon, or is the whole line. */
	if (evbuffer_ptr_set(src, &stop, len, EVBUFFER_PTR_SET) != 0)
		fatalx("cannot search an event-stream line");
	pos = evbuffer_search_range(src, ":", 1, NULL, &stop);
	if (pos.pos == 0) {
		/* A comment. */
		evbuffer_drain(src, len + eol);
		return 0;
	}
	p->pending = 1;
	if (pos.pos < 0) {
		nlen = len;
		vstart = len;
	} else {
		/* One space after the colon is not part of the value. */
		nlen = (size_t)pos.pos;
		vstart = nlen + 1;
		if (vstart < len && sse_byte(src, vstart, &c) == 0 && c == ' ')
			vstart++;
	}
	if (nlen >= sizeof name) {
		/* Longer than any field we know: ignored. */
		evbuffer_drain(src, len + eol);
		return 0;
	}
	if (evbuffer_copyout(src, name, nlen) != (ev_ssize_t)nlen)
		fatalx("cannot read an event-stream field name");
	name[nlen] = '\0';
	if (strlen(name) != nlen) {
		/*
		 * A NUL in the name: "data\0" is no "data" (the names are
		 * compared whole), so the field is ignored.
		 */
		evbuffer_drain(src, len + eol);
		return 0;
	}
	evbuffer_drain(src, vstart);
	if (sse_field(p, src, name, len - vstart) != 0) {
		evbuffer_drain(src, len - vstart + eol);
		return -1;
	}
	evbuffer_drain(src, eol);
	return 0;
}

/*
 * Consume complete lines from the front of src and return 1 when they
 * complete an event, with ev filled (the caller owns it and frees it with
 * sse_event_clear); 0 when no event is complete yet (ev is then empty and
 * a partial line stays in src).  Return -1, once, when a line or an
 * event's data passes SSE_LINE_MAX: that event is dropped, up to the blank
 * line that ends it, and the next call goes on after it.
 */
int
sse_next(struct sse_parser *p, struct evbuffer *src, struct sse_event *ev)
{
	unsigned char	b[3];
	size_t		avail, n, at, eol;
	ev_ssize_t	got;
	char		c;
	int		rc, blank;

	memset(ev, 0, sizeof *ev);
	ev->retry = -1;
	for (;;) {
		if (!p->started) {
			/* One byte-order mark may open the stream. */
			got = evbuffer_copyout(src, b, sizeof b);
			n = got < 0 ? 0 : (size_t)got;
			if (n < sizeof b && memcmp(b, sse_bom, n) == 0)
				return 0;
			if (n == sizeof b && memcmp(b, sse_bom, sizeof b) == 0)
				evbuffer_drain(src, sizeof b);
			p->started = 1;
		}
		avail = evbuffer_get_length(src);
		if (p->after_cr) {
			/* A CR ended the last line: is this its LF? */
			if (avail == 0)
				return 0;
			if (evbuffer_copyout(src, b, 1) == 1 && b[0] == '\n') {
				evbuffer_drain(src, 1);
				avail--;
			}
			p->after_cr = 0;
		}

		if (!sse_find_eol(src, p->scanned, &at, &c)) {
			if (p->skip == SSE_SKIP_NONE) {
				p->scanned = avail;
				/*
				 * Each later call starts at scanned, and
				 * evbuffer_ptr_set walks every piece before
				 * it: a long line that came in many reads
				 * would cost their square.  Made one piece
				 * (its room doubles, so only new bytes are
				 * copied, amortized), the walk is one step.
				 */
				if (avail > SSE_PULLUP_MIN && avail <=
				    SSE_LINE_MAX && evbuffer_pullup(src,
				    avail) == NULL)
					fatalx("out of memory holding an "
					    "event-stream line");
				if (avail <= SSE_LINE_MAX)
					return 0;
				sse_drop(p);
				rc = -1;
			} else
				rc = 0;
			/* Dropping this line: nothing of it need stay. */
			if (avail > 0) {
				evbuffer_drain(src, avail);
				p->skip = SSE_SKIP_PARTIAL;
			}
			p->scanned = 0;
			return rc;
		}
		p->scanned = 0;
		eol = 1;
		if (c == '\r') {
			if (at + 1 >= avail)
				p->after_cr = 1;
			else if (sse_byte(src, at + 1, b) == 0 && b[0] == '\n')
				eol = 2;
		}

		if (p->skip != SSE_SKIP_NONE) {
			/* Only a blank line ends the event being dropped. */
			blank = (at == 0 && p->skip == SSE_SKIP_LINE);
			evbuffer_drain(src, at + eol);
			p->skip = blank ? SSE_SKIP_NONE : SSE_SKIP_LINE;
			continue;
		}
		if (at > SSE_LINE_MAX) {
			evbuffer_drain(src, at + eol);
			rc = -1;
		} else
			rc = sse_line(p, src, at, eol, ev);
		if (rc == -1) {
			sse_drop(p);
			p->skip = SSE_SKIP_LINE;
			return -1;
		}
		if (rc == 1)
			return 1;
	}
}
