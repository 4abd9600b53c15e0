/*
 * The record size cap over HTTP (--max-record-size, as line.c over stdio):
 * a body is copied for the record only up to the cap; past it, all of its
 * bytes go through a SHA-256 instead, and the message is recorded as its
 * start, its full size and its digest.  The body itself is forwarded as it
 * comes either way.
 */

#include <stdlib.h>

#include <event2/buffer.h>

#include "http_int.h"

/* Call fn with each piece of buf, leaving buf as it was. */
static void
hcap_each(struct evbuffer *buf, void (*fn)(void *, const void *, size_t),
    void *arg)
{
	struct evbuffer_iovec	 local[16], *v = local;
	int			 n, i;

	n = evbuffer_peek(buf, -1, NULL, NULL, 0);
	if (n > 16)
		v = xreallocarray(NULL, (size_t)n, sizeof *v);
	n = evbuffer_peek(buf, -1, NULL, v, n);
	for (i = 0; i < n; i++)
		fn(arg, v[i].iov_base, v[i].iov_len);
	if (v != local)
		free(v);
}

static void
hcap_add_cb(void *dst, const void *p, size_t len)
{
	evbuffer_add(dst, p, len);
}

/* Past the cap, every byte goes through the digest and the ident. */
static void
hcap_digest_cb(void *arg, const void *p, size_t len)
{
	struct hcap	*c = arg;

	digest_update(c->digest, p, len);
	ident_feed(c->ident, p, len);
}

/* Copy all of src to the end of dst, leaving src as it was. */
void
hcap_append(struct evbuffer *dst, struct evbuffer *src)
{
	hcap_each(src, hcap_add_cb, dst);
}

/* Copy src to the end of dst for the record, up to the cap. */
void
hcap_copy(struct hcap *c, struct evbuffer *dst, struct evbuffer *src)
{
	size_t	have = evbuffer_get_length(dst), n = evbuffer_get_length(src);
	size_t	max = line_cap(), room;
	char	*part;

	c->wire += n;
	if (max == 0 || (c->digest == NULL && have + n <= max)) {
		hcap_append(dst, src);
		return;
	}
	if (c->digest == NULL) {
		c->digest = digest_new();
		c->ident = xmalloc(sizeof *c->ident);
		ident_init(c->ident);
		hcap_each(dst, hcap_digest_cb, c);
	}
	hcap_each(src, hcap_digest_cb, c);
	room = (have < max) ? max - have : 0;
	if (room > 0) {
		part = xmalloc(room);
		evbuffer_copyout(src, part, room);
		evbuffer_add(dst, part, room);
		free(part);
	}
}

/*
 * The body is complete and recorded as m: when it was past the cap, m gets
 * its full size and digest and is marked truncated (returns 1).
 */
int
hcap_finish(struct hcap *c, struct msg *m)
{
	int	over = (c->digest != NULL);

	if (over) {
		m->wire_size = (int64_t)c->wire;
		m->sha256 = digest_hex_free(c->digest);
		m->flags |= MSG_TRUNCATED;
		c->digest = NULL;
		m->ident = ident_finish(c->ident, &m->ident_len);
		free(c->ident);
		c->ident = NULL;
	}
	c->wire = 0;
	return over;
}

void
hcap_clear(struct hcap *c)
{
	digest_free(c->digest);
	c->digest = NULL;
	free(c->ident);
	c->ident = NULL;
	c->wire = 0;
}
