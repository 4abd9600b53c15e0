/*
 * check/ on any session: the input is split into lines, each a message;
 * its first byte says the direction (odd: server to client) and whether
 * it came in an HTTP exchange (bit 1; the exchange's headers are the next
 * line's, as JSON or not), and the rest is the message.  Whatever the
 * input, checking must stay within its bounds and end cleanly.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "check_session.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_check_cb(const struct check_finding *cf, void *arg)
{
	size_t	*n = arg;

	/* Every finding must be whole. */
	if (cf->f->rule == NULL || cf->f->text == NULL || cf->f->path == NULL ||
	    cf->f->spec == NULL)
		abort();
	(*n)++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct check		*chk;
	struct check_msg	 m;
	struct check_http	 h;
	const uint8_t		*p = data, *end = data + size, *nl;
	char			*heads = NULL;
	size_t			 found = 0;
	int64_t			 seq = 0;

	chk = check_new(fuzz_check_cb, &found);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (nl > p) {
			memset(&m, 0, sizeof m);
			m.seq = ++seq;
			m.dir = (p[0] & 1) ? DIR_S2C : DIR_C2S;
			m.raw = p + 1;
			m.len = (size_t)(nl - p - 1);
			m.truncated = (p[0] & 4) != 0;
			if (m.truncated) {
				/* The recorder's identity of a cut message. */
				m.kind = (enum msg_kind)((p[0] >> 5) % KIND_MAX);
				m.method = (p[0] & 8) ? "tools/call" : NULL;
				m.rpc_id = (p[0] & 16) ? "1" : "\"a\"";
			}
			if (p[0] & 2) {
				memset(&h, 0, sizeof h);
				h.exchange = seq / 2 + 1;
				h.method = (p[0] & 8) ? "GET" : "POST";
				h.path = "/mcp";
				free(heads);
				heads = strndup((const char *)m.raw, m.len);
				h.request_headers = heads;
				h.response_headers = heads;
				h.status = (p[0] & 16) ? 202 : 200;
				m.http = &h;
			}
			check_message(chk, &m);
		}
		p = nl + 1;
	}
	check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	free(heads);
	return 0;
}
