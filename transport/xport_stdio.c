/*
 * A server over stdio, as a client runs it: spawned, fed one line per
 * message, read line by line; its stderr is handed on as events.
 */

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "transport.h"

struct xport_stdio {
	struct xport		 x;	/* first: a struct xport * is one */
	struct child		*child;
	struct bufferevent	*in;	/* its stdin */
	struct bufferevent	*out;	/* its stdout */
	struct bufferevent	*err;	/* its stderr */
	struct framer		 fout;
	struct framer		 ferr;
	int			 out_eof;
	int			 exited;
	int			 closed;
};

static void
xs_check_closed(struct xport_stdio *xs)
{
	char	*why;

	if (xs->closed || !xs->exited || !xs->out_eof)
		return;
	xs->closed = 1;
	why = child_exit_text(xs->child);
	if (xs->x.cbs.closed != NULL)
		xs->x.cbs.closed(why, xs->x.arg);
	free(why);
}

static void
xs_read_cb(struct bufferevent *bev, void *arg)
{
	struct xport_stdio	*xs = arg;
	struct evbuffer		*src = bufferevent_get_input(bev);
	unsigned char		*line;
	size_t			 len;

	while (frame_next(&xs->fout, src, &len)) {
		line = evbuffer_pullup(src, (ev_ssize_t)len + 1);
		xs->x.cbs.message((const char *)line, len, xs->x.arg);
		evbuffer_drain(src, len + 1);
	}
}

static void
xs_out_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct xport_stdio	*xs = arg;
	struct evbuffer		*src = bufferevent_get_input(bev);
	size_t			 len = evbuffer_get_length(src);

	if (len > 0) {
		xs->x.cbs.message((const char *)evbuffer_pullup(src, -1), len,
		    xs->x.arg);
		evbuffer_drain(src, len);
	}
	xs->out_eof = 1;
	bufferevent_disable(bev, EV_READ);
	xs_check_closed(xs);
}

static void
xs_err_read_cb(struct bufferevent *bev, void *arg)
{
	struct xport_stdio	*xs = arg;
	struct evbuffer		*src = bufferevent_get_input(bev);
	size_t			 len;

	while (frame_next(&xs->ferr, src, &len)) {
		if (xs->x.cbs.event != NULL)
			xs->x.cbs.event("stderr", len == 0 ? "" :
			    (const char *)evbuffer_pullup(src,
			    (ev_ssize_t)len), len, xs->x.arg);
		evbuffer_drain(src, len + 1);
	}
}

static void
xs_err_event_cb(struct bufferevent *bev, short what, void *arg)
{
	bufferevent_disable(bev, EV_READ);
}

/* Writing its stdin failed: it stopped reading (or exited). */
static void
xs_in_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct xport_stdio	*xs = arg;
	const char		*why = "the server stopped reading its stdin";

	if (xs->x.cbs.event != NULL)
		xs->x.cbs.event("note", why, strlen(why), xs->x.arg);
	evbuffer_drain(bufferevent_get_output(bev),
	    evbuffer_get_length(bufferevent_get_output(bev)));
	bufferevent_disable(bev, EV_WRITE);
}

static void
xs_exit_cb(struct child *c, void *arg)
{
	struct xport_stdio	*xs = arg;

	xs->exited = 1;
	xs->x.exit_code = child_exit_code(c);
	xs_check_closed(xs);
}

static void
xs_send(struct xport *x, const char *bytes, size_t len,
    const char *const *headers)
{
	struct xport_stdio	*xs = (struct xport_stdio *)x;
	struct evbuffer		*out;

	if (xs->in == NULL)
		return;
	out = bufferevent_get_output(xs->in);
	evbuffer_add(out, bytes, len);
	evbuffer_add(out, "\n", 1);
}

/* Close its stdin once everything is written; the child stops as usual. */
static void
xs_flushed_cb(struct bufferevent *bev, void *arg)
{
	struct xport_stdio	*xs = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) != 0)
		return;
	bufferevent_free(xs->in);
	xs->in = NULL;
	child_stop(xs->child);
}

static void
xs_finish(struct xport *x)
{
	struct xport_stdio	*xs = (struct xport_stdio *)x;

	if (xs->in == NULL) {
		child_stop(xs->child);
		return;
	}
	bufferevent_setcb(xs->in, NULL, xs_flushed_cb, xs_in_event_cb, xs);
	xs_flushed_cb(xs->in, xs);
}

static void
xs_free(struct xport *x)
{
	struct xport_stdio	*xs = (struct xport_stdio *)x;

	if (xs->in != NULL)
		bufferevent_free(xs->in);
	if (xs->out != NULL)
		bufferevent_free(xs->out);
	if (xs->err != NULL)
		bufferevent_free(xs->err);
	if (xs->child != NULL && child_get_state(xs->child) != CHILD_EXITED)
		child_signal(xs->child, SIGKILL);
	child_free(xs->child);
	free(xs);
}

static const struct xport_ops xs_ops = { xs_send, xs_finish, xs_free };

/*
 * Run argv as a server over stdio.  On failure NULL, with cause and the
 * shell's exit status for it in *code (127: not found).
 */
struct xport *
xport_stdio(struct event_base *base, char *const argv[],
    const struct xport_cbs *cbs, void *arg, int *code, char **cause)
{
	struct xport_stdio	*xs = xcalloc(1, sizeof *xs);
	char			*tmp;
	int			 i;

	xport_init(&xs->x, &xs_ops, base, cbs, arg);
	xs->child = child_spawn(base, argv, xs_exit_cb, xs, code, cause);
	if (xs->child == NULL) {
		free(xs);
		return NULL;
	}
	for (i = 0; argv[i] != NULL; i++) {
		xasprintf(&tmp, "%s%s%s", xs->x.target != NULL ?
		    xs->x.target : "", i > 0 ? " " : "", argv[i]);
		free(xs->x.target);
		xs->x.target = tmp;
	}
	frame_init(&xs->fout);
	frame_init(&xs->ferr);
	xs->in = bufferevent_socket_new(base, child_stdin_fd(xs->child),
	    BEV_OPT_CLOSE_ON_FREE);
	xs->out = bufferevent_socket_new(base, child_stdout_fd(xs->child),
	    BEV_OPT_CLOSE_ON_FREE);
	xs->err = bufferevent_socket_new(base, child_stderr_fd(xs->child),
	    BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(xs->in, NULL, NULL, xs_in_event_cb, xs);
	bufferevent_setcb(xs->out, xs_read_cb, NULL, xs_out_event_cb, xs);
	bufferevent_setcb(xs->err, xs_err_read_cb, NULL, xs_err_event_cb, xs);
	bufferevent_enable(xs->in, EV_WRITE);
	bufferevent_enable(xs->out, EV_READ);
	bufferevent_enable(xs->err, EV_READ);
	if (child_get_state(xs->child) == CHILD_EXITED)
		xs_exit_cb(xs->child, xs);
	return &xs->x;
}
