/*
 * sess_http: the little HTTP/1.1 both session tools need (bench/sess_echo
 * and bench/sess_load): finding the end of a head, a header's value, the
 * file descriptor limit raised for thousands of connections, and what
 * /proc says of the process measured.  Heads are parsed in place.
 */

#include <sys/resource.h>

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench.h"
#include "sess.h"

/* The length of the head at the start of buf through its blank line, or 0. */
size_t
sess_head_len(const char *buf, size_t len)
{
	const char	*end = memmem(buf, len, "\r\n\r\n", 4);

	return end == NULL ? 0 : (size_t)(end - buf) + 4;
}

/*
 * A header's value in the head [head, head + len): its start in *v and its
 * length in *vlen; -1 if absent.
 */
int
sess_header(const char *head, size_t len, const char *name, const char **v,
    size_t *vlen)
{
	const char	*p = head, *end = head + len, *eol, *colon;
	size_t		 nlen = strlen(name);

	while (p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) != NULL) {
		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon != NULL && (size_t)(colon - p) == nlen &&
		    strncasecmp(p, name, nlen) == 0) {
			p = colon + 1;
			while (p < eol && (*p == ' ' || *p == '\t'))
				p++;
			*v = p;
			*vlen = (size_t)(eol - p);
			while (*vlen > 0 && (p[*vlen - 1] == ' ' ||
			    p[*vlen - 1] == '\t'))
				(*vlen)--;
			return 0;
		}
		p = eol + 2;
	}
	return -1;
}

/* A header's value as a number, or dflt when absent. */
uint64_t
sess_header_num(const char *head, size_t len, const char *name, uint64_t dflt)
{
	const char	*v;
	size_t		 vlen;
	char		 tmp[32];

	if (sess_header(head, len, name, &v, &vlen) != 0 || vlen >= sizeof tmp)
		return dflt;
	memcpy(tmp, v, vlen);
	tmp[vlen] = '\0';
	return strtoull(tmp, NULL, 10);
}

/*
 * Raise RLIMIT_NOFILE to want descriptors (the hard limit too, when we
 * may); returns what we have.
 */
unsigned long
sess_raise_nofile(unsigned long want)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur >= want)
		return rl.rlim_cur;
	if (rl.rlim_max < want) {
		struct rlimit	hard = { want, want };

		if (setrlimit(RLIMIT_NOFILE, &hard) == 0)
			return want;
		rl.rlim_cur = rl.rlim_max;
	} else
		rl.rlim_cur = want;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	return rl.rlim_cur;
}

/*
 * Read all a non-blocking socket has into the buffer *in of *inlen bytes;
 * 1 when it has no more for now, 0 at its end, -1 on an error (errno).
 */
int
sess_read(int fd, char **in, size_t *inlen)
{
	char	buf[SESS_READ];
	ssize_t	n;

	for (;;) {
		n = read(fd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 1;
		if (n <= 0)
			return (int)n;
		if (*inlen + (size_t)n > SESS_HEAD_MAX + SESS_BODY_MAX +
		    SESS_READ && *inlen > SESS_READ) {
			errno = EMSGSIZE;
			return -1;
		}
		*in = util_xrealloc(*in, *inlen + (size_t)n);
		memcpy(*in + *inlen, buf, (size_t)n);
		*inlen += (size_t)n;
	}
}

/* Keep the len bytes at p, the unread tail of the buffer *in. */
void
sess_keep(char **in, size_t *inlen, const char *p, size_t len)
{
	if (len == 0) {
		free(*in);
		*in = NULL;
	} else if (p != *in)
		memmove(*in, p, len);
	*inlen = len;
}

/* A process's resident set, in KiB; -1 if it cannot be read. */
long
sess_rss_kb(pid_t pid)
{
	char	 path[64], line[256];
	FILE	*f;
	long	 kb = -1;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* A process's CPU time (user and system), in clock ticks; -1 if unknown. */
long
sess_cpu_ticks(pid_t pid)
{
	char			 path[64], buf[1024], *p;
	unsigned long		 ut, st;
	FILE			*f;
	size_t			 n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the command's name in parentheses: fields 3 on; 14, 15. */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 2, "%*c %*d %*d %*d "
	    "%*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}
