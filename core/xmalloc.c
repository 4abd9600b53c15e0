/* Allocation that never returns NULL: out of memory ends the program. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		size = 1;
	if ((p = malloc(size)) == NULL)
		fatalx("out of memory allocating %zu bytes", size);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if (n == 0 || size == 0)
		n = size = 1;
	if ((p = calloc(n, size)) == NULL)
		fatalx("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	void	*p;

	if (n == 0 || size == 0)
		n = size = 1;
	if (size != 0 && n > SIZE_MAX / size)
		fatalx("allocation overflow: %zu x %zu bytes", n, size);
	if ((p = realloc(old, n * size)) == NULL)
		fatalx("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* A NUL-terminated copy of the first n bytes of s (which may hold NULs). */
char *
xstrndup(const char *s, size_t n)
{
	char	*p = xmalloc(n + 1);

	if (n > 0)		/* s may be NULL when n is 0 */
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("out of memory formatting a string");
	return n;
}
