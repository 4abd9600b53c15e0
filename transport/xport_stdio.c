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
	size_t			 max_line;	/* held of one line; 0: none */
	int			 skip_out;	/* dropping an overlong line */
	int			 skip_err;
	struct event		*finish_ev;	/* its stdin would not drain */
};

/*
 * Before framing: while a line over max_line is being dropped, drop what
 * comes of it, up to and including its newline.  Returns 1 while it goes
 * on past everything src holds.
 */
static int
xs_skip(struct evbuffer *src, struct framer *f, int *skip)
{
	struct evbuffer_ptr	pos;

	if (!*skip)
		return 0;
	pos = evbuffer_search(src, "\n", 1, NULL);
	frame_init(f);
	if (pos.pos < 0) {
		evbuffer_drain(src, evbuffer_get_length(src));
		return 1;
	}
	evbuffer_drain(src, (size_t)pos.pos + 1);
	*skip = 0;
	return 0;
}

/*
 * After framing (src holds no newline): a line over max_line is not held
 * further but dropped, with a note, so a server that writes one endless
 * line cannot take our memory.
 */
static void
xs_cap(struct xport_stdio *xs, struct evbuffer *src, struct framer *f,
    int *skip, const char *what)
{
	char	*s;

	if (xs->max_line == 0 || evbuffer_get_length(src) <= xs->max_line)
		return;
	xasprintf(&s, "a line on the server's %s over %zu bytes "
	    "(--max-record-size): dropped", what, xs->max_line);
	log_warnx("%s", s);
	if (xs->x.cbs.event != NULL)
		xs->x.cbs.event("note", s, strlen(s), xs->x.arg);
	free(s);
	evbuffer_drain(src, evbuffer_get_length(src));
	frame_init(f);
	*skip = 1;
}

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

	if (xs_skip(src, &xs->fout, &xs->skip_out))
		return;
	while (frame_next(&xs->fout, src, &len)) {
		line = evbuffer_pullup(src, (ev_ssize_t)len + 1);
		xs->x.cbs.message((const char *)line, len, xs->x.arg);
		evbuffer_drain(src, len + 1);
	}
	xs_cap(xs, src, &xs->fout, &xs->skip_out, "stdout");
}

static void
xs_out_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct xport_stdio	*xs = arg;
	struct evbuffer		*src = bufferevent_get_input(bev);
	size_t			 len;

	if (xs->skip_out)
		evbuffer_drain(src, evbuffer_get_length(src));
	len = evbuffer_get_length(src);
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

	if (xs_skip(src, &xs->ferr, &xs->skip_err))
		return;
	while (frame_next(&xs->ferr, src, &len)) {
		if (xs->x.cbs.event != NULL)
			xs->x.cbs.event("stderr", len == 0 ? "" :
			    (const char *)evbuffer_pullup(src,
			    (ev_ssize_t)len), len, xs->x.arg);
		evbuffer_drain(src, len + 1);
	}
	xs_cap(xs, src, &xs->ferr, &xs->skip_err, "stderr");
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
	xs->x.exit_signal = child_exit_signal(c);
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

/*
 * The server has not read what was left for its stdin within
 * CHILD_STDIN_GRACE_MS of the finish: it is dropped, and the server
 * stopped all the same (a server that never reads must not keep us).
 */
static void
xs_finish_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_stdio	*xs = arg;
	char			*why;

	if (xs->in == NULL)
		return;
	xasprintf(&why, "the server did not read the last %zu bytes for its "
	    "stdin within %d ms of the end: dropped", evbuffer_get_length(
	    bufferevent_get_output(xs->in)), CHILD_STDIN_GRACE_MS);
	if (xs->x.cbs.event != NULL)
		xs->x.cbs.event("note", why, strlen(why), xs->x.arg);
	free(why);
	bufferevent_free(xs->in);
	xs->in = NULL;
	child_stop(xs->child);
}

static void
xs_finish(struct xport *x)
{
	struct xport_stdio	*xs = (struct xport_stdio *)x;
	struct timeval		 tv = { CHILD_STDIN_GRACE_MS / 1000,
				    (CHILD_STDIN_GRACE_MS % 1000) * 1000 };

	if (xs->in == NULL) {
		child_stop(xs->child);
		return;
	}
	bufferevent_setcb(xs->in, NULL, xs_flushed_cb, xs_in_event_cb, xs);
	xs_flushed_cb(xs->in, xs);
	if (xs->in != NULL && xs->finish_ev == NULL) {
		xs->finish_ev = evtimer_new(xs->x.base, xs_finish_cb, xs);
		evtimer_add(xs->finish_ev, &tv);
	}
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
	if (xs->finish_ev != NULL)
		event_free(xs->finish_ev);
	if (xs->child != NULL && child_get_state(xs->child) != CHILD_EXITED)
		child_signal(xs->child, SIGKILL);
	child_free(xs->child);
	free(xs);
}

static void
xs_pause(struct xport *x, int on)
{
	struct xport_stdio	*xs = (struct xport_stdio *)x;

	if (xs->out_eof)
		return;
	if (on)
		bufferevent_disable(xs->out, EV_READ);
	else
		bufferevent_enable(xs->out, EV_READ);
}

static const struct xport_ops xs_ops = { xs_send, xs_finish, xs_pause,
	xs_free, NULL };

/*
 * Bytes given to x (a server over stdio) that its stdin has not taken yet:
 * a server that does not read them holds them in our memory, so a caller
 * that may send much (the bridge) stops taking more past a bound.
 */
size_t
xport_stdio_unsent(struct xport *x)
{
	struct xport_stdio	*xs = (struct xport_stdio *)x;

	if (x->ops != &xs_ops || xs->in == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(xs->in));
}

/*
 * Run argv as a server over stdio, holding at most max_line bytes of one
 * line (0: no cap).  On failure NULL, with cause and the
 * shell's exit status for it in *code (127: not found).
 */
struct xport *
xport_stdio(struct event_base *base, char *const argv[], size_t max_line,
    const struct xport_cbs *cbs, void *arg, int *code, char **cause)
{
	struct xport_stdio	*xs = xcalloc(1, sizeof *xs);
	char			*tmp;
	int			 i;

	xs->max_line = max_line;
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
