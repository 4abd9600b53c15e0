/*
 * The listening socket of record --listen and mock --listen, and how many
 * connections it lets in.  Two things stop it accepting for a while:
 * --max-connections open at once (the next client waits in the kernel's
 * backlog until one closes), and the process running out of file
 * descriptors or kernel memory (EMFILE, ENFILE, ENOBUFS, ENOMEM), which a
 * listener left enabled would retry in a tight loop for as long as the
 * condition lasts.  Either is said once, with the count of connections.
 */

#include <sys/resource.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "transport.h"

/*
 * After running out of descriptors, try again this much later (or as soon
 * as one of our connections closes): short enough that a client hardly
 * notices, long enough that a lasting shortage costs no CPU.
 */
#define LISTENER_RESUME_MS	250
/*
 * The same warning again only after this long: a shortage that comes and
 * goes with every close is said once a minute, not once per client.
 */
#define LISTENER_WARN_SECS	60

struct listener {
	struct evconnlistener	*lev;
	struct event		*resume;	/* after a shortage */
	listener_accept_cb	 cb;
	void			*arg;
	unsigned		 nopen;		/* connections the cb kept */
	unsigned		 max;		/* --max-connections */
	int			 enabled;
	int			 starved;	/* out of fds: wait */
	int			 stopped;	/* shutting down */
	time_t			 warned_starved; /* when said, or 0 */
	time_t			 warned_full;
};

/*
 * The default of --max-connections: what RLIMIT_NOFILE leaves after
 * LISTENER_FD_RESERVE, at fds_per_conn descriptors a connection, at most
 * LISTENER_MAX_DEFAULT; at least 1.
 */
unsigned
listener_default_max(unsigned fds_per_conn)
{
	struct rlimit	rl;
	rlim_t		n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return LISTENER_MAX_DEFAULT;
	n = rl.rlim_cur > LISTENER_FD_RESERVE ?
	    (rl.rlim_cur - LISTENER_FD_RESERVE) / fds_per_conn : 0;
	if (n < 1)
		n = 1;
	if (n > LISTENER_MAX_DEFAULT)
		n = LISTENER_MAX_DEFAULT;
	return (unsigned)n;
}

/* Accept when nothing holds it off, stop when something does. */
static void
listener_update(struct listener *l)
{
	int	want = !l->stopped && !l->starved && l->nopen < l->max;

	if (want == l->enabled)
		return;
	if (want)
		evconnlistener_enable(l->lev);
	else
		evconnlistener_disable(l->lev);
	l->enabled = want;
}

/* Whether a warning said at *when may be said again now (and note it). */
static int
listener_may_warn(time_t *when)
{
	time_t	now = time(NULL);

	if (*when != 0 && now - *when < LISTENER_WARN_SECS)
		return 0;
	*when = now;
	return 1;
}

static void
listener_conn_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct listener	*l = arg;

	if (l->cb(fd, l->arg) != 0)
		return;
	l->nopen++;
	if (l->nopen >= l->max) {
		if (listener_may_warn(&l->warned_full))
			log_warnx("%u connections open (--max-connections): "
			    "new clients wait until one closes", l->nopen);
		listener_update(l);
	}
}

static void
listener_resume_cb(evutil_socket_t fd, short events, void *arg)
{
	struct listener	*l = arg;

	l->starved = 0;
	listener_update(l);
}

/*
 * accept() failed for a reason libevent does not retry itself: out of
 * descriptors or memory, or something stranger.  Stop, and try again a
 * little later (an error that lasts costs a try every LISTENER_RESUME_MS,
 * not a busy loop).
 */
static void
listener_error_cb(struct evconnlistener *lev, void *arg)
{
	struct listener	*l = arg;
	int		 err = EVUTIL_SOCKET_ERROR();
	struct timeval	 tv = { 0, LISTENER_RESUME_MS * 1000 };

	if (listener_may_warn(&l->warned_starved)) {
		if (err == EMFILE || err == ENFILE || err == ENOBUFS ||
		    err == ENOMEM)
			log_warnx("cannot accept a connection with %u open: "
			    "%s; not accepting until one closes (raise ulimit "
			    "-n, or lower --max-connections)", l->nopen,
			    strerror(err));
		else
			log_warnx("accepting a connection failed with %u open: "
			    "%s; trying again", l->nopen, strerror(err));
	}
	l->starved = 1;
	listener_update(l);
	evtimer_add(l->resume, &tv);
}

/*
 * Listen on ss; cb gets each accepted socket and returns 0 when it keeps
 * it (then listener_closed() must be called when it closes), -1 when it
 * closed it.  max: connections open at once (0: listener_default_max(1)).
 * *origin gets the address bound, as net_listen().
 */
struct listener *
listener_new(struct event_base *base, const struct sockaddr_storage *ss,
    socklen_t len, unsigned max, listener_accept_cb cb, void *arg,
    char **origin, char **cause)
{
	struct listener	*l = xcalloc(1, sizeof *l);

	l->cb = cb;
	l->arg = arg;
	l->max = max != 0 ? max : listener_default_max(1);
	l->lev = net_listen(base, ss, len, listener_conn_cb, l, origin,
	    cause);
	if (l->lev == NULL) {
		free(l);
		return NULL;
	}
	l->enabled = 1;
	evconnlistener_set_error_cb(l->lev, listener_error_cb);
	if ((l->resume = evtimer_new(base, listener_resume_cb, l)) == NULL)
		fatalx("cannot create the listener's timer");
	log_debug("accepting at most %u connections at once", l->max);
	return l;
}

/* A connection cb kept has closed: its place is free. */
void
listener_closed(struct listener *l)
{
	if (l == NULL || l->nopen == 0)
		return;
	l->nopen--;
	/* A descriptor came free: no need to wait out the timer. */
	if (l->starved) {
		l->starved = 0;
		evtimer_del(l->resume);
	}
	listener_update(l);
}

/* Stop accepting for good (a shutdown), keeping the count. */
void
listener_stop(struct listener *l)
{
	if (l == NULL)
		return;
	evtimer_del(l->resume);
	l->stopped = 1;
	listener_update(l);
}

void
listener_free(struct listener *l)
{
	if (l == NULL)
		return;
	event_free(l->resume);
	evconnlistener_free(l->lev);
	free(l);
}
