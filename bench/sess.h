/*
 * sess: what the many-sessions benchmark tools (bench/sess_echo, a
 * Streamable HTTP MCP server with sessions and GET streams, and
 * bench/sess_load, a client opening thousands of sessions) share.
 */
#ifndef MCPREEL_SESS_H
#define MCPREEL_SESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest request or response head either tool accepts. */
#define SESS_HEAD_MAX		(16 * 1024)
/* The longest body either tool accepts: their messages are ~200 B. */
#define SESS_BODY_MAX		(64 * 1024)
/*
 * Sessions one tool keeps: 10 000 is the scenario, this leaves room and
 * bounds what a runaway client can make the server hold.
 */
#define SESS_MAX		(256 * 1024)
/*
 * Request ids carry their session: id = session * SESS_ID_SPAN + n, so
 * the client can tell that a pushed event came down the right stream.
 */
#define SESS_ID_SPAN		((uint64_t)1 << 24)

/* One read's size. */
#define SESS_READ		(16 * 1024)

/* sess_http.c */
size_t		 sess_head_len(const char *, size_t);
int		 sess_header(const char *, size_t, const char *, const char **,
		     size_t *);
uint64_t	 sess_header_num(const char *, size_t, const char *, uint64_t);
unsigned long	 sess_raise_nofile(unsigned long);
int		 sess_read(int, char **, size_t *);
void		 sess_keep(char **, size_t *, const char *, size_t);
long		 sess_rss_kb(pid_t);
long		 sess_cpu_ticks(pid_t);

#endif
