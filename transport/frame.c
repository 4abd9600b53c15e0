/* Newline framing for newline-delimited JSON (the stdio transport). */

#include <event2/buffer.h>

#include "transport.h"

void
frame_init(struct framer *f)
{
	f->scanned = 0;
}

/*
 * Is a complete line at the front of buf?  If so return 1 and its length
 * without the '\n' in *len; the caller then removes len + 1 bytes.  If not
 * return 0, remembering that the bytes seen so far hold no newline.
 */
int
frame_next(struct framer *f, struct evbuffer *buf, size_t *len)
{
	struct evbuffer_ptr	pos;
	size_t			avail = evbuffer_get_length(buf);

	if (f->scanned >= avail) {
		f->scanned = avail;
		return 0;
	}
	if (evbuffer_ptr_set(buf, &pos, f->scanned, EVBUFFER_PTR_SET) != 0)
		return 0;
	pos = evbuffer_search(buf, "\n", 1, &pos);
	if (pos.pos < 0) {
		f->scanned = avail;
		return 0;
	}
	*len = (size_t)pos.pos;
	f->scanned = 0;
	return 1;
}
