/*
 * transport: moving bytes.  Newline framing over evbuffers and the server
 * child process.  Nothing here knows what MCP or SQLite is.
 */
#ifndef MCPREEL_TRANSPORT_H
#define MCPREEL_TRANSPORT_H

#include <sys/types.h>

#include <stddef.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "core.h"

/* frame.c */

/*
 * Incremental newline framing: remembers how far it has looked, so a line
 * arriving in many reads is searched once in all (linear time whatever its
 * size).  No line is ever refused for its length.
 */
struct framer {
	size_t	scanned;	/* bytes at the buffer's front with no '\n' */
};

void		 frame_init(struct framer *);
int		 frame_next(struct framer *, struct evbuffer *, size_t *);

/* child.c */

/* How long a server gets after its stdin closes, then after SIGTERM. */
#define CHILD_STDIN_GRACE_MS	2000
#define CHILD_TERM_GRACE_MS	2000

enum child_state {
	CHILD_RUNNING,		/* spawned, nothing asked of it */
	CHILD_STOPPING,		/* stdin closed, waiting for it to exit */
	CHILD_TERMINATING,	/* SIGTERM sent */
	CHILD_KILLING,		/* SIGKILL sent */
	CHILD_EXITED,		/* reaped */
	CHILD_MAX
};

struct child;
typedef void (*child_exit_cb)(struct child *, void *);

struct child	*child_spawn(struct event_base *, char *const [],
		     child_exit_cb, void *, int *, char **);
void		 child_free(struct child *);
pid_t		 child_pid(const struct child *);
int		 child_stdin_fd(const struct child *);
int		 child_stdout_fd(const struct child *);
int		 child_stderr_fd(const struct child *);
void		 child_stop(struct child *);
void		 child_signal(struct child *, int);
enum child_state child_get_state(const struct child *);
int		 child_exit_code(const struct child *);
int		 child_exit_signal(const struct child *);
char		*child_exit_text(const struct child *);

#endif
