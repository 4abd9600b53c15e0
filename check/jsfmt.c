/*
 * The "format" values a validator may assert: date-time, date, time
 * (RFC 3339), email (the common shape of RFC 5321), uri (RFC 3986: a
 * scheme and no characters a URI cannot hold), uuid (RFC 4122), ipv4 and
 * ipv6.  By default "format" is only an annotation (the 2020-12 spec and
 * draft-07 both allow that); JSCHEMA_FORMAT_ASSERT makes these checks
 * count.  Unknown formats are always ignored.
 */

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "check.h"

/* Longer than any date, address or UUID: such a string is none (a URI may be). */
#define JSFMT_MAX_LEN	2048

static const char *const jsfmt_names[] = {
	"date-time", "date", "time", "email", "uri", "uuid", "ipv4", "ipv6"
};

/* Whether name is a format jsfmt_check() knows. */
int
jsfmt_known(const char *name)
{
	size_t	i;

	for (i = 0; i < sizeof jsfmt_names / sizeof jsfmt_names[0]; i++) {
		if (strcmp(name, jsfmt_names[i]) == 0)
			return 1;
	}
	return 0;
}

/* n decimal digits at s, their value in *v; 0 if any is not a digit. */
static int
jsfmt_digits(const char *s, size_t n, int *v)
{
	size_t	i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		*v = *v * 10 + (s[i] - '0');
	}
	return 1;
}

/* full-date: YYYY-MM-DD, a day the month has. */
static int
jsfmt_date(const char *s, size_t n)
{
	static const int days[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	int	y, m, d, leap;

	if (n != 10 || s[4] != '-' || s[7] != '-' ||
	    !jsfmt_digits(s, 4, &y) || !jsfmt_digits(s + 5, 2, &m) ||
	    !jsfmt_digits(s + 8, 2, &d))
		return 0;
	if (m < 1 || m > 12 || d < 1 || d > days[m - 1])
		return 0;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return !(m == 2 && d == 29 && !leap);
}

/*
 * full-time: HH:MM:SS[.frac](Z|+HH:MM|-HH:MM).  A leap second (:60) only
 * where there can be one: at 23:59 UTC once the offset is taken off.
 */
static int
jsfmt_time(const char *s, size_t n)
{
	int	h, m, sec, oh = 0, om = 0, utc;
	size_t	i;

	if (n < 9 || s[2] != ':' || s[5] != ':' || !jsfmt_digits(s, 2, &h) ||
	    !jsfmt_digits(s + 3, 2, &m) || !jsfmt_digits(s + 6, 2, &sec))
		return 0;
	if (h > 23 || m > 59 || sec > 60)
		return 0;
	i = 8;
	if (s[i] == '.') {
		if (++i >= n || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
		if (i + 1 != n)
			return 0;
	} else if (i + 6 != n || (s[i] != '+' && s[i] != '-') ||
	    s[i + 3] != ':' || !jsfmt_digits(s + i + 1, 2, &oh) ||
	    !jsfmt_digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
		return 0;
	if (sec < 60)
		return 1;
	utc = h * 60 + m - (s[i] == '-' ? -1 : 1) * (oh * 60 + om);
	utc = ((utc % 1440) + 1440) % 1440;
	return utc == 23 * 60 + 59;
}

/* full-date "T" full-time; RFC 3339 lets a space stand for the T. */
static int
jsfmt_date_time(const char *s, size_t n)
{
	if (n < 20 || (s[10] != 'T' && s[10] != 't' && s[10] != ' '))
		return 0;
	return jsfmt_date(s, 10) && jsfmt_time(s + 11, n - 11);
}

/* An ASCII letter or digit. */
static int
jsfmt_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* local@domain: atext dot-atoms, a domain of letter-digit-hyphen labels. */
static int
jsfmt_email(const char *s, size_t n)
{
	const char	*at = memchr(s, '@', n);
	size_t		 i, llen, label = 0;

	if (at == NULL || at == s || at == s + n - 1)
		return 0;
	llen = (size_t)(at - s);
	if (llen > 64 || s[0] == '.' || s[llen - 1] == '.')
		return 0;
	for (i = 0; i < llen; i++) {
		if (jsfmt_alnum((unsigned char)s[i]) ||
		    strchr("!#$%&'*+/=?^_`{|}~-", s[i]) != NULL)
			continue;
		if (s[i] == '.' && s[i + 1] != '.')
			continue;
		return 0;
	}
	for (i = llen + 1; i < n; i++) {
		if (s[i] == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
			continue;
		}
		if (!jsfmt_alnum((unsigned char)s[i]) && s[i] != '-')
			return 0;
		if (s[i] == '-' && label == 0)
			return 0;
		if (++label > 63)
			return 0;
	}
	return label > 0 && s[n - 1] != '-';
}

/* scheme ":" then only characters a URI may hold (or %XX). */
static int
jsfmt_uri(const char *s, size_t n)
{
	size_t	i;

	if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') ||
	    (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (i = 1; i < n && s[i] != ':'; i++) {
		if (!jsfmt_alnum((unsigned char)s[i]) && s[i] != '+' &&
		    s[i] != '-' && s[i] != '.')
			return 0;
	}
	if (i == n)
		return 0;
	for (i++; i < n; i++) {
		if (s[i] == '%') {
			if (i + 2 >= n || !strchr("0123456789abcdefABCDEF",
			    s[i + 1]) || !strchr("0123456789abcdefABCDEF",
			    s[i + 2]) || s[i + 1] == '\0' || s[i + 2] == '\0')
				return 0;
			i += 2;
			continue;
		}
		if (jsfmt_alnum((unsigned char)s[i]) ||
		    strchr("-._~:/?#[]@!$&'()*+,;=", s[i]) != NULL)
			continue;
		return 0;
	}
	return 1;
}

/* 8-4-4-4-12 hex digits, with or without RFC 4122's "urn:uuid:". */
static int
jsfmt_uuid(const char *s, size_t n)
{
	size_t	i;

	if (n == 45 && strncasecmp(s, "urn:uuid:", 9) == 0) {
		s += 9;
		n -= 9;
	}

	if (n != 36)
		return 0;
	for (i = 0; i < n; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (strchr("0123456789abcdefABCDEF", s[i]) == NULL ||
		    s[i] == '\0')
			return 0;
	}
	return 1;
}

/* An IPv4 or IPv6 address as inet_pton() reads it (dotted quad, no leading zeros). */
static int
jsfmt_ip(const char *s, size_t n, int af)
{
	char		buf[64];
	unsigned char	out[16];

	if (n >= sizeof buf || memchr(s, '\0', n) != NULL)
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return inet_pton(af, buf, out) == 1;
}

/*
 * Whether s (n bytes) is a valid value of the format name; 1 for a format
 * this does not know (it asserts nothing about those).
 */
int
jsfmt_check(const char *name, const char *s, size_t n)
{
	if (!jsfmt_known(name))
		return 1;
	if (memchr(s, '\0', n) != NULL)
		return 0;
	if (n > JSFMT_MAX_LEN && strcmp(name, "uri") != 0)
		return 0;
	if (strcmp(name, "date-time") == 0)
		return jsfmt_date_time(s, n);
	if (strcmp(name, "date") == 0)
		return jsfmt_date(s, n);
	if (strcmp(name, "time") == 0)
		return jsfmt_time(s, n);
	if (strcmp(name, "email") == 0)
		return jsfmt_email(s, n);
	if (strcmp(name, "uri") == 0)
		return jsfmt_uri(s, n);
	if (strcmp(name, "uuid") == 0)
		return jsfmt_uuid(s, n);
	if (strcmp(name, "ipv4") == 0)
		return jsfmt_ip(s, n, AF_INET);
	if (strcmp(name, "ipv6") == 0)
		return jsfmt_ip(s, n, AF_INET6);
	return 1;
}
