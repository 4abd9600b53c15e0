/*
 * Internals of redaction shared by core/redact.c (the rules, the walk over
 * a message, splicing), core/secrets.c (what a credential looks like),
 * core/redact_text.c (secrets outside JSON members) and core/redact_name.c
 * (names by shape); nothing outside them includes it.
 */
#ifndef MCPREEL_REDACT_INT_H
#define MCPREEL_REDACT_INT_H

#include <sys/types.h>

#include <regex.h>

#include "core.h"

struct redact_key {
	char	*name;
	size_t	 len;
	size_t	 next;	/* 1 + the next key with its first byte, or 0 */
};

struct redact {
	struct redact_key *keys;
	size_t		 nkeys;
	size_t		 key_max;	/* longest name */
	size_t		 key_min;	/* shortest name */
	unsigned char	 key_first[256];	/* 1: a name starts with it */
	size_t		 key_head[256];	/* 1 + a key starting with it, or 0 */
	regex_t		*res;
	size_t		 nres;
	int		 patterns;	/* the built-in token shapes */
	int		 shapes;	/* names by shape (redact_name.c) */
};

/* A match found in a piece of text, [s, e) relative to the text. */
struct range {
	size_t	s;
	size_t	e;
};

/* Byte classes (secrets_cls): a token's bytes, and what ends a scalar. */
#define C_TOKEN		0x01	/* [A-Za-z0-9_-] */
#define C_ALNUM		0x02
#define C_UPPERNUM	0x04	/* [A-Z0-9] */
#define C_BEARER	0x08	/* a Bearer token: [A-Za-z0-9._~+/=-] */
#define C_STOP		0x10	/* ends a bare scalar: , } ] and space */
#define C_WS		0x20
#define C_PSTART	0x40	/* can start a credential shape (secrets.c) */
#define C_MAYBE		0x80	/* '"', '\\', ':' and '/', for secrets_maybe() */
extern unsigned char	 secrets_cls[256];

/* A longer name is not compared (no name of ours is near it). */
#define REDACT_NAME_MAX	128

/* secrets.c */
void		 secrets_init(void);
size_t		 secrets_key_norm(const unsigned char *, size_t,
		     unsigned char *, size_t);
int		 secrets_key_listed(const struct redact *,
		     const unsigned char *, size_t);
int		 secrets_maybe(const struct redact *, const unsigned char *,
		     size_t);
int		 secrets_next(const unsigned char *, size_t, size_t, size_t *,
		     size_t *);
int		 secrets_userinfo(const unsigned char *, size_t, size_t,
		     size_t *, size_t *);
struct range	*secrets_matches(const struct redact *, const unsigned char *,
		     size_t, size_t *);

/* redact.c */
size_t		 redact_buf_text(const struct redact *, const void *, size_t,
		     char **, size_t *);

/* redact_name.c */
void		 redact_name_init(void);
int		 redact_name_match(const struct redact *, const char *,
		     size_t, int);
int		 redact_name_count(const char *, size_t,
		     const unsigned char *, size_t);
int		 redact_name_to_eol(const char *, size_t);
int		 redact_name_scheme(const unsigned char *, size_t);

/* redact_text.c */
size_t		 redact_text_plain(const struct redact *, const void *,
		     size_t, char **, size_t *);
int		 redact_text_member(const struct redact *, const char *,
		     size_t, const unsigned char *, size_t);

#endif
