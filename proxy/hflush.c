/*
 * The early write: what a callback queued toward a peer goes to its socket
 * from that callback (hflush_write), and the event loop whose epoll change
 * list makes that cost no system call beyond the write (hflush_base_new).
 */

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>

#include "http_int.h"

/*
 * Write what bev's output holds to its socket now, from the callback that
 * queued it, rather than at the next loop pass: a request or answer then
 * costs one writev and no epoll change (the write event the output armed
 * is taken back, which the base's change list turns into no system call
 * at all).  What the socket does not take stays queued and goes as before,
 * with the write event; an error is left to that path to report.  Only
 * for a plain socket whose write callback has nothing to do (no peer
 * paused on it, no close waiting on it): the callers check.  Returns the
 * bytes written.
 */
size_t
hflush_write(struct bufferevent *bev)
{
	struct evbuffer	*out = bufferevent_get_output(bev);
	int		 n;

	if (evbuffer_get_length(out) == 0 || evbuffer_get_length(out) >
	    (size_t)bufferevent_get_max_single_write(bev))
		return 0;
	/*
	 * A socket bufferevent keeps its output's front frozen but to it.
	 * Only an output that its own write callback would write in one go
	 * (a small message), so a big one still goes in the same steps.
	 */
	evbuffer_unfreeze(out, 1);
	n = evbuffer_write_atmost(out, bufferevent_getfd(bev),
	    (ev_ssize_t)bufferevent_get_max_single_write(bev));
	evbuffer_freeze(out, 1);
	if (n <= 0)
		return 0;
	/*
	 * Drained: disarm the write event as libevent's own write callback
	 * would on finding the output empty (the struct is libevent 2.1's
	 * public bufferevent_struct.h; no call does only this).
	 */
	if (evbuffer_get_length(out) == 0)
		event_del(&bev->ev_write);
	return (size_t)n;
}

/*
 * The event loop, with epoll's change list: the write event that
 * hflush_write() arms and takes back in one callback then costs no
 * epoll_ctl, and a read toggled off and on in one pass costs none either.
 */
struct event_base *
hflush_base_new(void)
{
	struct event_config	*cfg;
	struct event_base	*base;

	if ((cfg = event_config_new()) == NULL)
		return NULL;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}
