/*
 * core: the vocabulary every other module shares.  Nothing here does I/O
 * beyond logging, and nothing knows of SQLite or libevent.
 */
#ifndef MCPREEL_CORE_H
#define MCPREEL_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define MCPREEL_VERSION "0.1.0"

#ifndef __dead
#define __dead __attribute__((__noreturn__))
#endif
#define PRINTFLIKE(a, b) __attribute__((__format__(__printf__, a, b)))

/* Which way a message travelled. */
enum dir {
	DIR_C2S,	/* client (host) to server */
	DIR_S2C,	/* server to client (host) */
	DIR_MAX
};

/* What a message is, judged from its top-level JSON shape. */
enum msg_kind {
	KIND_INVALID,		/* not JSON, or JSON that is no JSON-RPC shape */
	KIND_REQUEST,		/* "method" (a string) and "id" */
	KIND_RESPONSE,		/* "result" and no "error", no "method" */
	KIND_ERROR,		/* "error" and no "result", no "method" */
	KIND_NOTIFICATION,	/* "method" (a string) and no "id" */
	KIND_BATCH,		/* a top-level array */
	KIND_MAX
};

/*
 * What the scanner found in one message.  Offsets point into the scanned
 * buffer; a length of zero with has_* unset means absent.
 */
struct scan {
	enum msg_kind	kind;
	int		has_method;
	int		method_escaped;	/* the method string has \-escapes */
	size_t		method_off;	/* first byte inside the quotes */
	size_t		method_len;	/* bytes between the quotes */
	int		has_id;
	size_t		id_off;		/* the id's JSON text, as written */
	size_t		id_len;
};

/*
 * One message as the proxy saw it.  raw is exactly the bytes forwarded,
 * without the framing newline; it lives in the same allocation as the msg
 * (msg_alloc), so it must never be freed or replaced on its own.
 */
struct msg {
	enum dir	dir;
	int64_t		ts_ns;		/* wall clock, ns since the epoch */
	int64_t		mono_ns;	/* monotonic clock, ns */
	char	       *raw;
	size_t		len;
	char	       *sse_id;		/* the SSE event id it came in, or NULL */
	int64_t		wire_size;	/* the bytes forwarded when raw is not all
					   of them (truncated, redacted), else -1 */
	char	       *sha256;		/* their SHA-256 in hex, or NULL */
	int		flags;		/* MSG_TRUNCATED, MSG_REDACTED */
	char	       *ident;		/* truncated: its kind, method and id as
					   a small JSON-RPC object (ident.c),
					   or NULL */
	size_t		ident_len;
	size_t		map_len;	/* a mapping of its own (a huge message),
					   or 0 when it came from malloc */
	int64_t		fault;		/* record/mock --fault: the session's
					   fault number (faults.n) it belongs
					   to, or 0 */
	int		fault_role;	/* FAULT_ROLE_*: what it is to that
					   fault */
};

/* What a message is to an injected fault (messages.fault_role). */
#define FAULT_ROLE_NONE		0	/* untouched traffic */
#define FAULT_ROLE_ORIGINAL	1	/* as its sender sent it; the receiver
					   did not get it as is */
#define FAULT_ROLE_INJECTED	2	/* made by mcpreel; never sent by its
					   sender */
#define FAULT_ROLE_DELAYED	3	/* forwarded unchanged, late */

#define MSG_TRUNCATED	0x1	/* raw is only the first bytes */
#define MSG_REDACTED	0x2	/* values in raw were replaced */

/* b64.c */
char		*b64_encode(const void *, size_t, size_t *);
void		*b64_decode(const char *, size_t, size_t *);
int		 b64_digit(unsigned char);

/* clock.c */
int64_t		 clock_wall_ns(void);
int64_t		 clock_mono_ns(void);
int		 clock_parse_span(const char *, int64_t *);
int		 clock_parse_iso(const char *, int64_t *);
int64_t		 clock_sub(int64_t, int64_t);
int64_t		 clock_add(int64_t, int64_t);
/* clock_parse_iso(): a real time, but not one int64_t ns can hold. */
#define CLOCK_ERANGE		(-2)
#define CLOCK_RANGE_TEXT	"time out of range (1678-2262)"

/* dir names: "c2s" and "s2c" as stored; kind names as stored. */
const char	*dir_name(enum dir);
const char	*fault_role_name(int);
const char	*kind_name(enum msg_kind);
int		 kind_from_name(const char *);

/* Where one member of an object is: offsets into the scanned buffer. */
struct scan_member {
	size_t		key_off;	/* first byte inside the key's quotes */
	size_t		key_len;
	int		key_escaped;	/* the key has \-escapes */
	size_t		val_off;	/* the value's JSON text, as written */
	size_t		val_len;
};
typedef int (*scan_member_cb)(const struct scan_member *, void *);
/* One element of an array: its JSON text (scan_elements). */
typedef int (*scan_element_cb)(const char *, size_t, void *);

/*
 * The identity of a message too long to keep (ident.c): what the stream
 * of its bytes said of its kind, method and id.  Bounded: a key or a kept
 * value longer than these is not one we use (rows key ids by up to 256
 * bytes; a method name is short; "method" spelt in \u escapes is 36).
 */
#define IDENT_KEY_MAX	64
#define IDENT_VALUE_MAX	256
struct ident {
	int		state;
	int		member;		/* of the value being read */
	int		esc;		/* the last byte in a string was \ */
	int		in_str;		/* in a string inside a nested value */
	size_t		depth;		/* of the nested value */
	char		key[IDENT_KEY_MAX];
	size_t		key_len;
	int		key_over;
	char		val[IDENT_VALUE_MAX];
	size_t		val_len;
	int		val_over;
	char		method[IDENT_VALUE_MAX];	/* as written, quoted */
	size_t		method_len;
	char		id[IDENT_VALUE_MAX];		/* as written */
	size_t		id_len;
	int		has_method, method_bad, has_id, id_bad;
	int		has_result, has_error;
};

/* ident.c */
void		 ident_init(struct ident *);
void		 ident_feed(struct ident *, const void *, size_t);
char		*ident_finish(struct ident *, size_t *);

/* scan.c */
void		 scan_message(const void *, size_t, struct scan *);
int		 scan_members(const void *, size_t, scan_member_cb, void *);
int		 scan_elements(const void *, size_t, scan_element_cb, void *);
int		 scan_is_json(const void *, size_t);
int		 scan_key_is(const void *, const struct scan_member *,
		     const char *);
char		*scan_method_dup(const void *, const struct scan *);
char		*scan_id_dup(const void *, const struct scan *);
int		 scan_string_decode(const char *, size_t, char *, size_t *);
int		 scan_hex_value(int);
size_t		 scan_put_utf8(char *, unsigned int);
size_t		 scan_utf8_len(const unsigned char *, const unsigned char *);
char		*scan_utf8_escape(const char *);
size_t		 scan_utf8_trim(const char *, size_t);

/* nearest.c */
#define NEAREST_FAR	((size_t)-1)	/* no distance: a word too long */
size_t		 nearest_distance(const char *, const char *);
size_t		 nearest_find(const char *, const char *const *, size_t,
		     size_t *, size_t);

/* jpath.c: a JSONPath subset for naming places in a message. */

/*
 * One step of a concrete path: an object key, an array index, or a step
 * into the JSON text held by a string (json set, key NULL).  A string is
 * stepped into when the diff compares two strings that both hold a JSON
 * object or array; its steps are written "{json}", so the "temperature"
 * key of the JSON in a tool result's text is
 * "$.result.content[0].text{json}.temperature".
 */
struct jseg {
	const char	*key;		/* NULL for an array index or {json} */
	size_t		 index;
	int		 json;		/* into the JSON held by the string */
};

/*
 * A compiled pattern: "$" then any of ".key", "['key']" (or double quotes;
 * \', \" and \\ escapes), "[n]", "[*]" (any index), ".*" (any key),
 * "{json}" (into the JSON held by a string), and "..key", "..['key']" or
 * "..*" (that key, or any key, at any depth below, through arrays and
 * {json} steps too).  "$" is the whole JSON-RPC message.  A pattern
 * matches a whole path, not a prefix of one.
 */
struct jpath;

struct jpath	*jpath_compile(const char *, char **);
void		 jpath_free(struct jpath *);
const char	*jpath_text(const struct jpath *);
int		 jpath_match(const struct jpath *, const struct jseg *, size_t);
char		*jpath_format(const struct jseg *, size_t);
const char	*jpath_last_key(const struct jpath *);
size_t		 jpath_descendants(const struct jpath *);
int		 jpath_has_json(const struct jpath *);
/*
 * Matching as a walk descends: a state is jpath_nstates() bytes, set at
 * the root by jpath_start() and moved one segment down by
 * jpath_advance() in O(steps); jpath_accepts() says whether the path so
 * far matches, as jpath_match() on the whole path would.
 */
size_t		 jpath_nstates(const struct jpath *);
void		 jpath_start(const struct jpath *, unsigned char *);
int		 jpath_advance(const struct jpath *, const unsigned char *,
		     const struct jseg *, unsigned char *);
int		 jpath_accepts(const struct jpath *, const unsigned char *);

/* msg.c */
struct msg	*msg_new(enum dir, const void *, size_t);
struct msg	*msg_alloc(enum dir, size_t);
struct msg	*msg_realloc(struct msg *, enum dir, size_t);
struct msg	*msg_finish(struct msg *, size_t);

/* digest.c */
struct digest;
struct digest	*digest_new(void);
void		 digest_update(struct digest *, const void *, size_t);
char		*digest_hex_free(struct digest *);
void		 digest_free(struct digest *);
void		 msg_free(struct msg *);

/* idmap.c: a map from byte-string keys to an int64 and an owned string. */
struct idmap;
struct idmap	*idmap_new(void);
void		 idmap_free(struct idmap *);
void		 idmap_put(struct idmap *, const void *, size_t, int64_t,
		     const char *);
int		 idmap_take(struct idmap *, const void *, size_t, int64_t *,
		     char **);
int		 idmap_get(struct idmap *, const void *, size_t, int64_t *);
size_t		 idmap_count(const struct idmap *);
size_t		 idmap_bytes(const struct idmap *);
size_t		 idmap_keep_newest(struct idmap *, size_t);
uint64_t	 idmap_probes(const struct idmap *);

/* log.c */
enum log_level {
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
	LOG_LEVEL_MAX
};
void		 log_init(enum log_level, const char *);
void		 log_close(void);
void		 log_warn(const char *, ...) PRINTFLIKE(1, 2);
void		 log_warnx(const char *, ...) PRINTFLIKE(1, 2);
void		 log_info(const char *, ...) PRINTFLIKE(1, 2);
void		 log_debug(const char *, ...) PRINTFLIKE(1, 2);
struct redact;
void		 log_set_redact(const struct redact *);
void		 log_vwrite(enum log_level, const char *, va_list)
		     PRINTFLIKE(2, 0);
__dead void	 fatal(const char *, ...) PRINTFLIKE(1, 2);
__dead void	 fatalx(const char *, ...) PRINTFLIKE(1, 2);

/*
 * redact.c: secrets in a recorded message replaced by "[REDACTED]" in the
 * stored copy (docs/redaction.md says which).  A struct redact is built
 * before recording starts and only read after, so threads may share it.
 */
#define REDACTED	"[REDACTED]"
struct redact;
extern const char *const redact_default_keys[];
struct redact	*redact_new(int);
void		 redact_add_defaults(struct redact *);
void		 redact_free(struct redact *);
int		 redact_add_key(struct redact *, const char *, char **);
int		 redact_add_regex(struct redact *, const char *, char **);
int		 redact_is_empty(const struct redact *);
int		 redact_key_matches(const struct redact *, const char *,
		     size_t);
size_t		 redact_buf(const struct redact *, const void *, size_t,
		     char **, size_t *);
struct msg	*redact_msg(const struct redact *, struct msg *);
struct msg	*redact_msg_replace(struct msg *, char *, size_t);

/* redact_name.c: whether a name is a secret's, by its shape. */
int		 redact_name_secret(const struct redact *, const char *,
		     size_t);

/*
 * redact_text.c: secrets outside JSON members, by the shape of their
 * names (docs/redaction.md): in text, URLs, form bodies, command lines.
 */
size_t		 redact_text(const struct redact *, const void *, size_t,
		     char **, size_t *);
char		*redact_url(const struct redact *, const char *);
size_t		 redact_form(const struct redact *, const void *, size_t,
		     char **, size_t *);
char		**redact_argv(const struct redact *, char *const *);
void		 redact_argv_free(char **);

/* xmalloc.c */
void		*xmalloc(size_t);
void		*xcalloc(size_t, size_t);
void		*xreallocarray(void *, size_t, size_t);
char		*xstrdup(const char *);
char		*xstrndup(const char *, size_t);
int		 xasprintf(char **, const char *, ...) PRINTFLIKE(2, 3);

#endif
