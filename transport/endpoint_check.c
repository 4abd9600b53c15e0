/*
 * The Origin and Host check of the Streamable HTTP server side, against
 * DNS rebinding: a loopback server answers pages of this machine only.
 */

#include <stdlib.h>

#include "transport.h"
#include "endpoint_http_int.h"

/* Whether a Host header's value names this machine (any port). */
static int
endpoint_check_host(const char *host)
{
	char	*origin;
	int	 ok;

	xasprintf(&origin, "http://%s", host);
	ok = net_origin_is_loopback(origin);
	free(origin);
	return ok;
}

/*
 * With endpoint_http_check_origin, a request that came in on a loopback
 * address is answered 403 when its Origin names another machine, or its
 * Host does not name this one (DNS rebinding: a web page's script must not
 * reach a local server; a same-origin GET carries no Origin, but always
 * the rebound name in Host).  No Origin (not from a browser) passes; so
 * does no Host.  Checked once the head is in, before any body is read.
 * Returns 1 when refused (the connection closes after the answer).
 */
int
endpoint_check_refused(struct econn *c)
{
	const char	*origin, *host, *what, *value;
	char		*text;

	if (!c->eh->check_origin || !c->loopback)
		return 0;
	origin = http_head_get(&c->head, "Origin");
	host = http_head_get(&c->head, "Host");
	if (origin != NULL && !net_origin_is_loopback(origin)) {
		what = "Origin";
		value = origin;
	} else if (host != NULL && !endpoint_check_host(host)) {
		what = "Host";
		value = host;
	} else
		return 0;
	log_info("%s: refused a request with %s %s with 403: only pages of "
	    "this machine may use a loopback server", c->eh->ep.who, what,
	    value);
	xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":-32000,\"message\":\"mcpreel %s: %s not "
	    "allowed: this server listens on a loopback address and takes "
	    "requests from pages of this machine only\"}}", c->eh->ep.who,
	    what);
	c->close_after = 1;
	c->linger = 1;
	bufferevent_disable(c->bev, EV_READ);
	ec_reply_text(c, 403, "Forbidden", "application/json", text);
	free(text);
	return 1;
}
