/*
 * What cfg.c, jsonc.c and toml.c share inside hosts/: the places of one
 * server entry in a configuration file's bytes, found by a format's
 * scanner, and the text helpers that build the edits.  Not a public
 * interface: hosts.h is.
 */
#ifndef MCPREEL_HOSTS_CFG_INT_H
#define MCPREEL_HOSTS_CFG_INT_H

#include <stddef.h>
#include <stdint.h>

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
	size_t	 rm2_s, rm2_e;	/* and this too when rm2_e > rm2_s: the
				   comma before a last member whose
				   previous one has a comment after it
				   (kept) is rm, the member itself rm2 */
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
	/* where a bridged entry's headers go: env.MCPREEL_HEADERS (JSON) */
	struct hmem	 env;		/* the entry's env member */
	struct hmem	 envh;		/* env's MCPREEL_HEADERS member */
	size_t		 env_n;		/* env's members */
	size_t		 env_last_e;	/* the end of env's last value */
	char		*env_msep;	/* white space before env's last key */
	char		*env_colon;	/* between env's last key and value */
	char		*colon_env;	/* between "env" and its value */
	char		*colon_hdr;	/* between "headers" and its value */
	size_t		 last_e;	/* the end of the entry's last value */
	int		 headers_last;	/* headers is the entry's last member */
	char		*msep_last;	/* white space before the last key */
};

struct hdoc {
	struct hent	*v;
	size_t		 n;
};

/* One replacement of [off, off + len) by text. */
struct hedit {
	size_t	 off, len;
	char	*text;
	size_t	 tlen;
	size_t	 seq;		/* order among edits at one offset */
	size_t	 ent;		/* the entry it belongs to */
};

struct hedits {
	struct hedit	*v;
	size_t		 n;
};

/* What the args of a wrapped entry say. */
struct hwrapped {
	long	 dash;		/* index of "--", or -1 */
	long	 connect;	/* index of "--connect", or -1 */
	long	 transport;	/* index of the --transport value, or -1 */
	long	*hdr;		/* indexes of --header values */
	size_t	 nhdr;
};

/* jsonc.c, jsonc_ent.c: the scanned tree of a JSON or JSONC file. */

/* How many containers a layout may name (a bit each in a mask). */
#define JSONC_MAX_CONTAINERS	32
/* How far below a container nodes are kept: entry, member, element. */
#define JSONC_BELOW		3

enum jtype { J_OBJECT, J_ARRAY, J_STRING, J_NUMBER, J_LITERAL };

struct jnode {
	size_t		 s, e;		/* the value's text */
	size_t		 ks, ke;	/* its key with the quotes, members */
	char		*key;		/* decoded key, or NULL */
	int		 haskey;
	enum jtype	 type;
	long		 parent, first, last, next, prev;
	size_t		 comma;		/* the comma after it, or SIZE_MAX */
	int		 comments_after; /* a comment between it and the next */
	uint32_t	 mask;		/* containers whose path it is on */
	int		 done;		/* its entries were read */
	int		 below;		/* levels below a whole container */
};

struct jcont {
	char	**comp;
	size_t	  n;
};

struct jscan {
	const char		*buf;
	size_t			 len, pos;
	int			 comments;	/* JSONC */
	struct jcont		 conts[JSONC_MAX_CONTAINERS];
	size_t			 nconts;
	struct jnode		*n;
	size_t			 nn, cap;
	char			*err;
	int			 saw_comment;
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
int		 hcfg_parse(const char *, size_t, const struct hcfg_layout *,
		     struct hdoc *, char **);
char		*hcfg_clean_name(const char *);
void		 hcfg_quote(struct hbuf *, const char *);
int		 hcfg_wrapped(const struct hent *, struct hwrapped *);
enum hcfg_kind	 hcfg_classify(const struct hcfg_layout *,
		     const struct hent *, const char **, int *);
int		 hcfg_chosen(const char *const *, const char *);
const char	*hcfg_url_transport(const struct hcfg_layout *, int);
const char	*hcfg_url_key_for(const struct hcfg_layout *, const char *);

/* cfg_edit.c */
void		 hcfg_edit(struct hedits *, size_t, size_t, size_t, char *,
		     size_t);
void		 hcfg_edit_raw(struct hedits *, size_t, size_t, size_t,
		     const char *, size_t, size_t);
void		 hcfg_edit_buf(struct hedits *, size_t, size_t, size_t,
		     struct hbuf *);
void		 hcfg_edits_clear(struct hedits *);
void		 hcfg_edit_rm(struct hedits *, size_t, const struct hmem *);
void		 hcfg_finish(const char *, size_t, const struct hdoc *,
		     struct hedits *, char **, size_t *,
		     struct hcfg_changes *);

/* jsonc.c */
int		 jsonc_parse(const char *, size_t, int,
		     const struct hcfg_layout *, struct hdoc *, char **);
char		*jsonc_decode(const char *, size_t);

/* jsonc_ent.c */
long		*jsonc_members(struct jscan *, long, size_t *);
void		 jsonc_entries(struct jscan *, const struct hcfg_layout *,
		     struct hdoc *);

/* toml.c, toml_val.c: a TOML file as it is scanned. */

/* Most components in one key or table name. */
#define TOML_MAX_KEYS	64

struct tkey {
	char	*v[TOML_MAX_KEYS];
	size_t	 n;
	size_t	 last;		/* where the last component starts */
};

/* An entry while scanning: its lines, and its section. */
struct tent {
	long		 section;	/* the section its keys are in, -1 */
	int		 header;	/* has a [container.NAME] header */
	int		 hasline;
};

struct tscan {
	const char		*buf;
	size_t			 len, pos;
	char			*err;
	struct tkey		 table;		/* the current table */
	long			 section;	/* counts headers */
	char			**cont;		/* container components */
	size_t			 ncont;
	struct tent		*te;
	size_t			 nte;
	struct idmap		*names;		/* entry name -> te index */
	struct hdoc		*doc;
	const struct hcfg_layout *layout;
	/* elements of the array value being scanned, when wanted */
	struct hel		*el;
	size_t			 nel;
	int			 want_el;
	long			 inl;		/* the entry whose inline table
						   is being read, or -1 */
};

/* toml.c */
int		 toml_parse(const char *, size_t, const struct hcfg_layout *,
		     struct hdoc *, char **);

int		 toml_inline_member(struct tscan *, long, const char *, size_t,
		     size_t, size_t, size_t, int);

/* toml_val.c */
void		 toml_error(struct tscan *, size_t, const char *, ...)
		     PRINTFLIKE(3, 4);
void		 toml_key_clear(struct tkey *);
void		 toml_sp(struct tscan *);
int		 toml_ws_nl(struct tscan *);
int		 toml_string(struct tscan *, char **);
int		 toml_key(struct tscan *, struct tkey *);
int		 toml_value(struct tscan *, int, int *);

#endif
