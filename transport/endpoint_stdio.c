/*
 * The server side of stdio, for mock and the bridge: client messages are lines on our
 * stdin, everything we say is a line on our stdout.  There is one channel,
 * so a request's reply channel is NULL.
 *
 * Either may be a pipe, a socket, a terminal, a regular file or /dev/null
 * (a person trying the mock by hand): the loop then is one epoll cannot
 * serve (endpoint_stdio_base_new), a file read to its end is the client's
 * end, and what we write is counted as written only once write(2) took it,
 * so a stdout that fails (the client closed it, a broken pipe, a full
 * disk) is said at once and no answer counts as given that was not.
 */

#include <sys/stat.h>

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "transport.h"

/*
 * A client that sends requests and does not read the answers: while this
 * much waits for it on stdout, its requests are not read (they wait in the
 * pipe, and it blocks writing them), so what mock holds stays near this
 * plus the answers already being played.  Reading goes on once half of
 * it is written.
 */
#define ES_OUT_HIGH		(16 * 1024 * 1024)
#define ES_OUT_LOW		(ES_OUT_HIGH / 2)
/*
 * At exit, how long what is left for stdout may take to be written: a
 * client that does not read (or reads slower than this allows) must not
 * keep mock alive; what is then left counts as not written, and is said.
 */
#define ES_EXIT_WAIT_MS		5000

struct endpoint_stdio {
	struct endpoint		 ep;	/* first: a struct endpoint * is one */
	struct bufferevent	*in;
	struct bufferevent	*out;
	struct framer		 fr;
	uint64_t		 queued;	/* bytes handed to out */
	uint64_t		 written;	/* of them, written to fd 1 */
	int			 failed;	/* stdout cannot be written */
	int			 paused;	/* not reading: ES_OUT_HIGH waits */
};

/* Whether epoll can watch fd: pipes, sockets and terminals, not files. */
static int
es_pollable(int fd)
{
	struct stat	sb;

	if (fstat(fd, &sb) != 0)
		return 0;
	return S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode) || isatty(fd);
}

/*
 * An event loop that can watch our stdin and stdout: epoll refuses
 * regular files and /dev/null (EPERM), and a bufferevent it cannot watch
 * never reads or writes, so then poll(2), for which a file is always
 * ready (reads to its end, writes go through).
 */
struct event_base *
endpoint_stdio_base_new(void)
{
	struct event_config	*cfg = event_config_new();
	struct event_base	*base;

	if (cfg == NULL)
		fatalx("cannot create an event loop");
	if (!es_pollable(STDIN_FILENO) || !es_pollable(STDOUT_FILENO))
		event_config_avoid_method(cfg, "epoll");
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base == NULL)
		fatalx("cannot create an event loop");
	return base;
}

/*
 * Whether our stdin is a regular file: its end is the end of what the
 * client had to say, not the client going away.
 */
int
endpoint_stdio_input_is_file(void)
{
	struct stat	sb;

	return fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode);
}

/*
 * ES_OUT_HIGH waits for the client: stop reading its requests.  Checked
 * as each request is read and as each message is queued, since answers
 * may be made later than their request is read (the recorded gaps).
 */
static void
es_check_pause(struct endpoint_stdio *es)
{
	if (es->paused || es->failed || evbuffer_get_length(
	    bufferevent_get_output(es->out)) < ES_OUT_HIGH)
		return;
	es->paused = 1;
	bufferevent_disable(es->in, EV_READ);
	log_debug("%s endpoint: %d bytes wait for the client to read "
	    "them: not reading its requests meanwhile", es->ep.who,
	    ES_OUT_HIGH);
}

static void
es_read_cb(struct bufferevent *bev, void *arg)
{
	struct endpoint_stdio	*es = arg;
	struct evbuffer		*src = bufferevent_get_input(bev);
	unsigned char		*line;
	size_t			 len;

	while (!es->paused && !es->ep.paused && frame_next(&es->fr, src,
	    &len)) {
		line = evbuffer_pullup(src, (ev_ssize_t)len + 1);
		es->ep.cbs.message(NULL, (const char *)line, len, es->ep.arg);
		evbuffer_drain(src, len + 1);
		es_check_pause(es);
	}
}

/* Stdout has drained to ES_OUT_LOW: read requests again. */
static void
es_write_cb(struct bufferevent *bev, void *arg)
{
	struct endpoint_stdio	*es = arg;

	if (!es->paused)
		return;
	es->paused = 0;
	/* What was read before the pause first: no read may come for it. */
	es_read_cb(es->in, es);
	if (!es->paused && !es->ep.paused)
		bufferevent_enable(es->in, EV_READ);
}

static void
es_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct endpoint_stdio	*es = arg;
	struct evbuffer		*src = bufferevent_get_input(bev);
	size_t			 len = evbuffer_get_length(src);

	if (len > 0) {
		es->ep.cbs.message(NULL, (const char *)evbuffer_pullup(src,
		    -1), len, es->ep.arg);
		evbuffer_drain(src, len);
	}
	bufferevent_disable(bev, EV_READ);
	if (es->ep.cbs.closed != NULL)
		es->ep.cbs.closed((what & BEV_EVENT_EOF) ? "the client closed "
		    "stdin" : "reading stdin failed", es->ep.arg);
}

/* Count what leaves the output buffer: it was written. */
static void
es_written_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct endpoint_stdio	*es = arg;

	es->written += info->n_deleted;
}

/* Writing stdout failed (why): nothing more is written; say it, once. */
static void
es_fail_why(struct endpoint_stdio *es, const char *why)
{
	char	*msg;

	if (es->failed)
		return;
	es->failed = 1;
	bufferevent_disable(es->out, EV_WRITE);
	xasprintf(&msg, "cannot write to stdout: %s", why);
	log_debug("%s endpoint: %s", es->ep.who, msg);
	if (es->ep.cbs.failed != NULL)
		es->ep.cbs.failed(msg, es->ep.arg);
	free(msg);
}

/* Writing stdout failed with err (0: it was closed). */
static void
es_fail(struct endpoint_stdio *es, int err)
{
	char	*why;

	xasprintf(&why, "%s%s", err != 0 ? strerror(err) : "it was closed",
	    err == EPIPE ? " (the client closed its end of the pipe)" : "");
	es_fail_why(es, why);
	free(why);
}

static void
es_out_event_cb(struct bufferevent *bev, short what, void *arg)
{
	int	err = errno;

	es_fail(arg, (what & BEV_EVENT_ERROR) ? err : 0);
}

static void
es_send(struct endpoint *ep, const char *bytes, size_t len)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;
	struct evbuffer		*out = bufferevent_get_output(es->out);

	if (es->failed)
		return;
	if (len > 0)
		evbuffer_add(out, bytes, len);
	evbuffer_add(out, "\n", 1);
	es->queued += len + 1;
	es_check_pause(es);
}

static void
es_req_send(struct endpoint *ep, struct ereq *er, const char *bytes,
    size_t len)
{
	es_send(ep, bytes, len);
}

static void
es_req_end(struct endpoint *ep, struct ereq *er, const char *bytes,
    size_t len)
{
	if (bytes != NULL)
		es_send(ep, bytes, len);
}

/*
 * We are about to exit: write what we hold for stdout, ES_EXIT_WAIT_MS at
 * most in all, and stop at once on a signal (poll(2) is never restarted,
 * so a SIGTERM caught by the event loop's handler ends the wait).  What is
 * left then is not written, and the failure says why.
 */
static void
es_flush(struct endpoint *ep)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;
	struct evbuffer		*out = bufferevent_get_output(es->out);
	struct pollfd		 pfd = { STDOUT_FILENO, POLLOUT, 0 };
	int64_t			 deadline, left;
	char			*why;

	if (es->failed)
		return;
	deadline = clock_mono_ns() + (int64_t)ES_EXIT_WAIT_MS * 1000000;
	/* The bufferevent keeps its output's start frozen: we write here. */
	bufferevent_disable(es->out, EV_WRITE);
	evbuffer_unfreeze(out, 1);
	while (evbuffer_get_length(out) > 0) {
		if (evbuffer_write(out, STDOUT_FILENO) > 0)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			es_fail(es, errno);
			return;
		}
		if ((left = deadline - clock_mono_ns()) <= 0) {
			xasprintf(&why, "the client did not read what was left "
			    "for it within %d ms of the end", ES_EXIT_WAIT_MS);
			es_fail_why(es, why);
			free(why);
			return;
		}
		if (poll(&pfd, 1, (int)((left + 999999) / 1000000)) == -1 &&
		    errno == EINTR) {
			es_fail_why(es, "a signal stopped the wait for the "
			    "client to read what was left for it");
			return;
		}
	}
}

static void
es_progress(struct endpoint *ep, uint64_t *queued, uint64_t *written)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;

	*queued = es->queued;
	*written = es->written;
}

static void
es_free(struct endpoint *ep)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;

	bufferevent_free(es->in);
	bufferevent_free(es->out);
	free(es);
}

/*
 * A fault closes the transport as a dying server would: what is queued is
 * written (EREQ_CUT_CLOSE, as a server's last writes reach the pipe) or
 * dropped (EREQ_CUT_KILL), then our stdout is closed and stdin no longer
 * read.  Fd 1 then points at /dev/null, so no later write reaches the
 * client or lands on another file opened as fd 1.
 */
static void
es_cut(struct endpoint *ep, struct ereq *er, enum ereq_cut how, int status,
    const char *retry_after, const char *www_authenticate)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;
	struct evbuffer		*out = bufferevent_get_output(es->out);
	int			 fd;

	if (how != EREQ_CUT_CLOSE && how != EREQ_CUT_KILL)
		return;
	bufferevent_disable(es->in, EV_READ);
	if (how == EREQ_CUT_CLOSE)
		es_flush(ep);
	es->failed = 1;
	bufferevent_disable(es->out, EV_WRITE);
	evbuffer_unfreeze(out, 1);
	evbuffer_drain(out, evbuffer_get_length(out));
	if ((fd = open("/dev/null", O_WRONLY)) != -1) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	} else
		close(STDOUT_FILENO);
}

/* endpoint_pause: stop or resume reading stdin (and what it holds). */
static void
es_pause(struct endpoint *ep, int on)
{
	struct endpoint_stdio	*es = (struct endpoint_stdio *)ep;

	if (on) {
		bufferevent_disable(es->in, EV_READ);
		return;
	}
	if (es->paused)
		return;
	es_read_cb(es->in, es);
	if (!es->paused && !es->ep.paused)
		bufferevent_enable(es->in, EV_READ);
}

static const struct endpoint_ops es_ops = {
	es_send, es_req_send, es_req_end, NULL, es_flush, es_progress,
	NULL, es_free, es_cut, es_pause
};

/* Serve over our own stdin and stdout (base from endpoint_stdio_base_new). */
struct endpoint *
endpoint_stdio(struct event_base *base, const struct endpoint_cbs *cbs,
    void *arg)
{
	struct endpoint_stdio	*es = xcalloc(1, sizeof *es);

	es->ep.ops = &es_ops;
	es->ep.base = base;
	es->ep.cbs = *cbs;
	es->ep.arg = arg;
	es->ep.who = "mock";
	frame_init(&es->fr);
	evutil_make_socket_nonblocking(STDIN_FILENO);
	evutil_make_socket_nonblocking(STDOUT_FILENO);
	es->in = bufferevent_socket_new(base, STDIN_FILENO, 0);
	es->out = bufferevent_socket_new(base, STDOUT_FILENO, 0);
	bufferevent_setcb(es->in, es_read_cb, NULL, es_event_cb, es);
	bufferevent_setcb(es->out, NULL, es_write_cb, es_out_event_cb, es);
	bufferevent_setwatermark(es->out, EV_WRITE, ES_OUT_LOW, 0);
	evbuffer_add_cb(bufferevent_get_output(es->out), es_written_cb, es);
	bufferevent_enable(es->in, EV_READ);
	bufferevent_enable(es->out, EV_WRITE);
	return &es->ep;
}
