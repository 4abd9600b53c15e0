/*
 * sess_http: the little HTTP/1.1 both session tools need (bench/sess_echo
 * and bench/sess_load): finding the end of a head, a header's value, the
 * first line's words, and the file descriptor limit raised for thousands
 * of connections.  Heads are parsed in place, never copied.
 */

#include <sys/resource.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
