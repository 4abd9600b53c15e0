/*
 * What cfg.c, jsonc.c and toml.c share inside hosts/: the places of one
 * server entry in a configuration file's bytes, found by a format's
 * scanner, and the text helpers that build the edits.  Not a public
 * interface: hosts.h is.
 */
#ifndef MCPREEL_HOSTS_CFG_INT_H
#define MCPREEL_HOSTS_CFG_INT_H

#include <stddef.h>

#include "hosts.h"

/* A growing byte buffer (always NUL-terminated once something is in it). */
struct hbuf {
	char	*p;
	size_t	 n, cap;
};

/* One element of an array value: its text, decoded when a string. */
struct hel {
	size_t	 s, e;
	char	*str;		/* decoded, or NULL: not a string (or one
				   holding a NUL) */
};

/* One header of a remote entry (JSON): the raw texts inside the quotes. */
struct hhdr {
	size_t	 ks, ke;	/* the key's text between its quotes */
	size_t	 vs, ve;	/* the value's text between its quotes */
	char	*key, *val;	/* decoded; val NULL when not a string */
};

/* A member (JSON) or key/value (TOML) of an entry that cfg.c edits. */
struct hmem {
	int	 present;
	size_t	 ks;		/* the key's first byte */
	size_t	 ke;		/* just past the key */
	size_t	 vs, ve;	/* the value's text */
	int	 is_str;
	int	 is_arr;
	int	 is_obj;
	char	*str;		/* decoded string value, or NULL */
	size_t	 rm_s, rm_e;	/* what deleting the member removes (JSON) */
};

/*
 * One entry: everything cfg.c needs to read it and to build the edits of
 * wrap and unwrap, as offsets into the scanned buffer.
 */
struct hent {
	char		*container;
	char		*name;
	size_t		 s, e;		/* the entry's text (hcfg_change) */
	int		 is_table;	/* an object (JSON) or a table (TOML) */
	int		 can_bridge;	/* the format can turn a url into a
					   command (JSON only) */
	struct hmem	 cmd, args, url, type, headers;
	int		 url_i;		/* index in layout->url_keys, or -1 */
	const char	*block;		/* why a remote entry cannot be
					   bridged (a key we cannot carry),
					   or NULL */
	/* args elements, when args is an array */
	struct hel	*el;
	size_t		 nel;
	size_t		 arr_in;	/* just past the args array's '[' */
	char		*sep;		/* what goes between two elements */
	/* args absent: insert ins_pre "[...]" ins_post at ins_at */
	size_t		 ins_at;
	char		*ins_pre, *ins_post;
	/* TOML: or ins2_pre "[...]" at ins2_at, when that ends the file */
	size_t		 ins2_at;
	char		*ins2_pre;
	char		*colon_url;	/* between the url key and its value */
	char		*colon_cmd;	/* between the command key and value */
	char		*msep_url;	/* "," and the space before the url key */
	char		*msep_cmd;	/* "," and the space before command */
	struct hhdr	*hd;
	size_t		 nhd;
	int		 hd_bad;	/* a header we cannot pass */
};

struct hdoc {
	struct hent	*v;
	size_t		 n;
};

/* cfg.c */
void		 hbuf_add(struct hbuf *, const void *, size_t);
void		 hbuf_adds(struct hbuf *, const char *);
void		 hbuf_addc(struct hbuf *, char);
char		*hbuf_take(struct hbuf *, size_t *);
void		*hcfg_grow(void *, size_t, size_t);
void		 hdoc_clear(struct hdoc *);
struct hent	*hdoc_add(struct hdoc *);
char		*hcfg_errat(const char *, size_t, const char *, ...)
		     PRINTFLIKE(3, 4);
char		*hcfg_ws_before(const char *, size_t, size_t);
const char	*hcfg_blocker(const char *);

/* jsonc.c */
int		 jsonc_parse(const char *, size_t, int,
		     const struct hcfg_layout *, struct hdoc *, char **);
char		*jsonc_decode(const char *, size_t);

/* toml.c */
int		 toml_parse(const char *, size_t, const struct hcfg_layout *,
		     struct hdoc *, char **);

#endif
