/*
 * fault/ internals shared by its files: the tables of keys and actions, a
 * parsed rule, the set, and the message facts a rule is matched against.
 * Nothing outside fault/ includes this; the API is fault.h.
 */
#ifndef MCPREEL_FAULT_INT_H
#define MCPREEL_FAULT_INT_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core.h"
#include "fault.h"

/*
 * What a remembered request keeps is bounded, so that FAULT_PENDING_MAX
 * of them stay small whatever peers send: a method or an id longer than
 * FAULT_KEEP_MAX bytes, or a name (tool, prompt, resource URI) longer
 * than FAULT_NAME_MAX, is not kept (a request with such an id is not
 * remembered; such a method or name matches no selector of it).
 */
#define FAULT_KEEP_MAX		256
#define FAULT_NAME_MAX		1024
/*
 * The most a remembered request holds: its key (direction byte, id, NUL)
 * and idmap's copy of it, its method and one name with their NULs, and
 * the structures and allocator headers around them.
 */
#define FAULT_PEND_WORST	(2 * (FAULT_KEEP_MAX + 2) + \
	(FAULT_KEEP_MAX + 1) + (FAULT_NAME_MAX + 1) + 256)

/* The most ".." steps a mutate pattern may have (see fault_act.c). */
#define FAULT_MUTATE_DESCENDANTS	2

/* Where a parsed value is kept in a rule (several keys may share one). */
enum fault_slot {
	FS_DIR,
	FS_KIND,
	FS_METHOD,
	FS_TOOL,
	FS_PROMPT,
	FS_RESOURCE,
	FS_FIRST,
	FS_NTH,
	FS_AFTER,
	FS_P,
	FS_MS,
	FS_JITTER,
	FS_CODE,
	FS_MESSAGE,
	FS_DATA,
	FS_TEXT,
	FS_MODE,
	FS_STATUS,
	FS_RETRY_AFTER,
	FS_WWW_AUTHENTICATE,
	FS_SET,
	FS_VALUE,
	FS_REMOVE,
	FS_MAX
};

/* Which part of a rule a key belongs to. */
enum fault_part {
	FP_SELECTOR,	/* before the action */
	FP_PARAM	/* after it, for the actions that take it */
};

/* What a key's value is. */
enum fault_vtype {
	FV_WORD,	/* one of the row's words (its index is kept) */
	FV_GLOB,	/* any text, matched with fnmatch(3) */
	FV_STRING,	/* any text */
	FV_INT,		/* a whole number within the row's bounds */
	FV_PROB,	/* 0..1, or a percentage 0%..100% */
	FV_JSON,	/* any JSON text */
	FV_JPATH,	/* a core/jpath pattern naming a place below $ */
	FV_MAX
};

/* One key of the rule language (both text and JSON forms). */
struct fault_key {
	const char		*name;
	enum fault_slot		 slot;
	enum fault_part		 part;
	unsigned		 actions;	/* FP_PARAM: bit per action */
	enum fault_vtype	 type;
	int64_t			 min, max;	/* FV_INT */
	const char *const	*words;		/* FV_WORD, NULL-terminated */
	const char		*usage;		/* the value, for messages */
	const char		*help;
};

/* Bits of enum dir and enum msg_kind, for the tables. */
#define FAULT_BIT(x)		(1u << (unsigned)(x))
#define FAULT_DIRS_ANY		(FAULT_BIT(DIR_C2S) | FAULT_BIT(DIR_S2C))
#define FAULT_KINDS_ANY		(FAULT_BIT(KIND_REQUEST) | \
	FAULT_BIT(KIND_RESPONSE) | FAULT_BIT(KIND_ERROR) | \
	FAULT_BIT(KIND_NOTIFICATION))
#define FAULT_TRANSPORT_STDIO	0x1
#define FAULT_TRANSPORT_HTTP	0x2

/* One action: what it applies to and what it needs. */
struct fault_adef {
	const char		*name;
	enum fault_action	 action;
	unsigned		 dirs;		/* it may select these */
	unsigned		 default_dirs;	/* without dir=: these */
	unsigned		 kinds;		/* it may select these */
	const char		*method;	/* it needs this method */
	unsigned		 transports;	/* FAULT_TRANSPORT_* */
	unsigned		 required;	/* bit per slot it needs */
	const char		*usage;		/* for --help */
	const char		*help;
};

/* A parsed value; which members are used depends on the key's type. */
struct fault_val {
	int		 set;
	int64_t		 i;		/* FV_INT; FV_WORD: the word's index */
	double		 d;		/* FV_PROB */
	char		*s;		/* the value as text (canonical) */
	json_t		*json;		/* FV_JSON */
	struct jpath	*jp;		/* FV_JPATH */
	const struct fault_key *key;	/* the row that set it */
};

/* One rule of a set. */
struct fault_rule {
	char			*text;		/* canonical text form */
	const struct fault_adef	*adef;
	struct fault_val	 v[FS_MAX];
	unsigned		 dirs;		/* what it can select, all */
	unsigned		 kinds;		/* selectors and action met */
	uint64_t		 seen;		/* counted (first, ...) */
};

/* A request remembered until its answer comes (fault_match.c). */
struct fault_pend {
	char			*key;		/* direction byte + id text */
	size_t			 keylen;
	char			*method;
	char			*names[3];	/* tool, prompt, resource */
	int			 timeout_rule;	/* 1-based, or 0 */
	TAILQ_ENTRY(fault_pend)	 entry;
};
TAILQ_HEAD(fault_pends, fault_pend);

/* A seeded pseudo-random generator (fault_prng.c). */
struct fault_prng {
	uint64_t	state;
};

struct fault_set {
	struct fault_rule	**rules;
	size_t			  nrules;
	struct fault_prng	  prng;
	struct idmap		 *pending;	/* key -> struct fault_pend * */
	struct fault_pends	  pends;	/* oldest first */
	size_t			  npending;
};

/* What a rule is matched against: one message's facts (fault_match.c). */
#define FAULT_NAME_TOOL		0
#define FAULT_NAME_PROMPT	1
#define FAULT_NAME_RESOURCE	2
#define FAULT_NAMES		3
struct fault_msg {
	enum dir	 dir;
	enum msg_kind	 kind;
	const char	*buf;
	size_t		 len;
	char		*method;	/* its own, or its request's; or NULL */
	const char	*id;		/* its id as written, or NULL */
	size_t		 idlen;
	char		*names[FAULT_NAMES];	/* or NULL */
	int		 timeout_rule;	/* its request is under timeout */
	int		 http;		/* over HTTP */
};

/* fault_table.c */
extern const struct fault_key	 fault_keys[];
extern const size_t		 fault_nkeys;
extern const struct fault_adef	 fault_adefs[];
extern const char *const	 fault_corrupt_modes[];
extern const char *const	 fault_close_modes[];
extern const unsigned		 fault_close_transports[];
/* Methods that carry each name selector, and the params member. */
struct fault_named {
	enum fault_slot		 slot;
	const char		*member;
	const char		*methods[4];	/* NULL-terminated */
};
extern const struct fault_named	 fault_names[FAULT_NAMES];
extern const enum msg_kind	 fault_kind_values[];
const struct fault_adef *fault_table_action(const char *);
const struct fault_key *fault_table_key(const char *, enum fault_part,
		     const struct fault_adef *, int);
char		*fault_table_quote(const char *);
char		*fault_table_list(enum fault_part, const struct fault_adef *);
char		*fault_table_actions(void);
char		*fault_table_takers(const char *);
char		*fault_table_suggest(const char *, const struct fault_adef *);
void		 fault_table_canon(struct fault_rule *);

/* fault_parse.c */
struct fault_rule *fault_parse_text(const char *, char **);
struct fault_rule *fault_parse_json(const json_t *, char **);
void		 fault_parse_free(struct fault_rule *);

/* fault_match.c */
int		 fault_match_glob(const char *, const char *, size_t);
int		 fault_match_facts(struct fault_set *, enum dir, const char *,
		     size_t, int, struct fault_msg *);
void		 fault_match_msg_clear(struct fault_msg *);
int		 fault_match_rule(struct fault_set *, struct fault_rule *,
		     const struct fault_msg *);
void		 fault_match_remember(struct fault_set *, struct fault_msg *,
		     int);
void		 fault_match_clear(struct fault_set *);
void		 fault_match_forget_timeouts(struct fault_set *);

/* fault_act.c */
extern uint64_t	 fault_act_work;	/* mutate's match steps, all */
int		 fault_act_apply(struct fault_set *, const struct fault_rule *,
		     int, const struct fault_msg *, struct fault_hit *);
void		 fault_act_late_answer(const struct fault_rule *, int,
		     const struct fault_msg *, struct fault_hit *);

/* fault_prng.c */
void		 fault_prng_seed(struct fault_prng *, uint64_t);
uint64_t	 fault_prng_next(struct fault_prng *);
double		 fault_prng_unit(struct fault_prng *);
int64_t		 fault_prng_range(struct fault_prng *, int64_t, int64_t);

#endif
