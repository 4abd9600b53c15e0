/*
 * What the validator's files share (check.h says which does what): a schema
 * compiled into nodes, one per schema object, each keyword read once and
 * checked, subschemas and $ref targets as pointers to other nodes (a $ref
 * cycle is a cycle of pointers; the schema owns every node in one list).
 */
#ifndef MCPREEL_JSONSCHEMA_INT_H
#define MCPREEL_JSONSCHEMA_INT_H

#include "check.h"

/* Bits of jsnode.types, one per JSON Schema type. */
#define JST_NULL	0x01
#define JST_BOOLEAN	0x02
#define JST_OBJECT	0x04
#define JST_ARRAY	0x08
#define JST_NUMBER	0x10
#define JST_STRING	0x20
#define JST_INTEGER	0x40

struct jsnode;

/* A name and the subschema for it (properties, dependentSchemas). */
struct jsnamed {
	const char	*name;		/* the schema's key (borrowed) */
	struct jsnode	*node;
};

/* patternProperties: a regex (NULL: unsupported, ignored) and its schema. */
struct jspattern {
	const char	*src;
	struct jsre	*re;
	struct jsnode	*node;
};

/* dependentRequired and array-form dependencies. */
struct jsdepreq {
	const char	*name;
	const char	**req;
	size_t		 nreq;
};

/* A node list (allOf, anyOf, oneOf, prefixItems). */
struct jslist {
	struct jsnode	**v;
	size_t		  n;
};

struct jsnode {
	char		*path;		/* "#/properties/a" (JSON Pointer) */
	int		 boolean;	/* -1: an object; 0 false; 1 true */

	unsigned int	 types;		/* JST_*; 0 when no "type" */
	const json_t	*enumv;		/* an array */
	const json_t	*constv;
	int		 has_const;

	struct jsnamed	*props;		/* sorted by name */
	size_t		 nprops;
	const char	**required;
	size_t		 nrequired;
	struct jsnode	*additional;	/* additionalProperties */
	struct jspattern *patterns;
	size_t		 npatterns;
	struct jsnode	*propnames;
	int64_t		 min_props, max_props;	/* -1: absent */
	struct jsdepreq	*depreq;
	size_t		 ndepreq;
	struct jsnamed	*depschema;
	size_t		 ndepschema;

	struct jslist	 prefix;	/* prefixItems, or items as an array */
	int		 has_prefix;
	struct jsnode	*items;		/* items after the prefix */
	struct jsnode	*contains;
	int64_t		 min_contains, max_contains;	/* -1: absent */
	int64_t		 min_items, max_items;
	int		 unique;

	int64_t		 min_len, max_len;
	struct jsre	*pattern;	/* NULL: none, or unsupported */
	const char	*pattern_src;
	const char	*format;	/* asserted formats only */

	/* Number bounds (NULL: absent), borrowed from the schema. */
	const json_t	*minimum, *maximum, *xminimum, *xmaximum;
	const json_t	*multiple;

	struct jslist	 all, any, one;
	struct jsnode	*not;
	struct jsnode	*if_, *then_, *else_;
	struct jsnode	*ref;
	const char	*ref_src;	/* the $ref as written */
	const json_t	*ref_target;	/* until the target is compiled */
	int		 no_additional;	/* additionalProperties skipped: a
					   patternProperties regex is
					   unsupported */
};

struct jschema {
	struct jsnode	**nodes;	/* every node, for jschema_free */
	size_t		  nnodes, nodecap;
	struct jsnode	 *root;
	json_t		 *doc;		/* our reference to the schema */
	enum jschema_draft draft;
	int		  flags;
	char		**notes;
	size_t		  nnotes, notes_dropped;
	size_t		  size;		/* bytes its nodes and matchers hold */
};

/* Notes kept per schema; more are counted in one last note. */
#define JSCHEMA_MAX_NOTES	64
/*
 * The matchers of all one schema's patterns together (jsre_size():
 * instructions and class ranges, some 20 bytes each): one pattern is
 * bounded by JSCHEMA_RE_MAX_INSNS, but a schema may hold thousands; past
 * this, patterns are left out with a note.  Real schemas use a few
 * hundred.
 */
#define JSCHEMA_MAX_RE_SIZE	(1024 * 1024)
/*
 * A node's place in the schema (a JSON Pointer) is kept at most this
 * long, each key in it at most JSCHEMA_PATH_KEY_MAX bytes: longer ones
 * are cut ("...") so that deep schemas with long keys cannot make every
 * node hold a huge path.  An error's place in the value is cut to the
 * same length.  Enough to find the place by eye.
 */
#define JSCHEMA_PATH_MAX	512
#define JSCHEMA_PATH_KEY_MAX	64

/* jsre.c and jsparse.c: the matcher's program and the parse tree. */

/* Groups within groups: the parser recurses once per level. */
#define JSRE_MAX_NEST		64
/* The largest count a {n,m} may name; larger is refused as unsupported. */
#define JSRE_MAX_COUNT		1000
/* Ranges one class may hold (\W and \S inside a class add several). */
#define JSRE_MAX_RANGES		1024
/*
 * Parse-tree nodes one pattern may make: every node but an empty group
 * becomes at least one instruction, so a pattern over this is too large
 * anyway; the bound keeps "(?:)(?:)..." from making a huge tree.
 */
#define JSRE_MAX_NODES		(4 * JSCHEMA_RE_MAX_INSNS)

enum jsre_op {
	JSRE_CHAR,	/* one code point */
	JSRE_ANY,	/* any but a line terminator */
	JSRE_CLASS,	/* a class: ranges[a..b), inverted if neg */
	JSRE_SPLIT,	/* go on at x and at y (x first) */
	JSRE_JMP,	/* go on at x */
	JSRE_BOL,	/* the subject's start */
	JSRE_EOL,	/* the subject's end */
	JSRE_WORDB,	/* \b */
	JSRE_NWORDB,	/* \B */
	JSRE_MATCH,
	JSRE_OP_MAX
};

struct jsre_insn {
	enum jsre_op	op;
	uint32_t	c;		/* JSRE_CHAR */
	uint32_t	x, y;		/* targets; JSRE_CLASS: ranges [x, y) */
	int		neg;		/* JSRE_CLASS */
};

struct jsre_range {
	uint32_t	lo, hi;
};

struct jsre {
	struct jsre_insn	*insn;
	size_t			 ninsn;
	struct jsre_range	*ranges;
	size_t			 nranges, rangecap;
};

/* The parse tree, nodes in one array. */
enum jsre_kind {
	JK_EMPTY, JK_CHAR, JK_ANY, JK_CLASS, JK_BOL, JK_EOL, JK_WORDB,
	JK_NWORDB, JK_CAT, JK_ALT, JK_REPEAT, JK_MAX
};

/*
 * JK_CAT and JK_ALT hold a list of children (a the first, b the last,
 * linked by next) rather than a chain of pairs, so that compiling
 * "aaaa..." or "a|a|a..." is a loop: the generator recurses only into
 * groups, which nest at most JSRE_MAX_NEST deep.
 */
struct jsre_node {
	enum jsre_kind	kind;
	uint32_t	c;
	size_t		rlo, rhi;	/* JK_CLASS: ranges */
	int		neg;
	int		a, b;		/* JK_REPEAT: a the body; lists: above */
	int		next;		/* the next in its list, or -1 */
	int		min, max;	/* JK_REPEAT; max -1: unbounded */
	size_t		size;		/* instructions it compiles to, at most
					   JSCHEMA_RE_MAX_INSNS + 1 */
};

struct jsre_parse {
	const char		*p, *end;
	struct jsre		*re;
	struct jsre_node	*nodes;
	size_t			 nnodes, cap;
	int			 depth;
	char			*why;	/* set on the first failure */
};

#define JSRE_CP_MAX	0x10ffff	/* the last Unicode code point */

/* jsonschema.c */
/* The compiler's state. */
struct jscomp {
	struct jschema	 *s;
	const json_t	**mkeys;	/* the memo: schema object -> node */
	struct jsnode	**mvals;
	size_t		  mcap, mn;
	struct jsnode	**pending;	/* nodes whose $ref is unresolved */
	size_t		  npending, pendcap;
	size_t		  re_size;	/* jsre_size() of its patterns so far */
	char		 *err;
};

const char	*jschema_json_kind(const json_t *);
void		 jschema_fail(struct jscomp *, const char *, ...)
		     PRINTFLIKE(2, 3);
void		 jschema_notef(struct jschema *, const char *, ...)
		     PRINTFLIKE(2, 3);
char		*jschema_path(const char *, const char *);
char		*jschema_path_index(const char *, const char *, size_t);
char		*jschema_path_fit(char *);
struct jsnode	*jschema_sub(struct jscomp *, const json_t *, const char *,
		     const char *, const char *, int);
struct jsnode	*jschema_node(struct jscomp *, const json_t *, const char *,
		     int);

/* jskeyword.c */
int64_t		 jskeyword_count(struct jscomp *, const json_t *, const char *,
		     const char *);
void		 jskeyword_list(struct jscomp *, const json_t *, const char *,
		     const char *, struct jslist *, int);
const char	**jskeyword_strings(struct jscomp *, const json_t *,
		     const char *, size_t *);
void		 jskeyword_type(struct jscomp *, struct jsnode *,
		     const json_t *);
struct jsnamed	*jskeyword_named(struct jscomp *, const json_t *, const char *,
		     const char *, size_t *, int);
void		 jskeyword_patterns(struct jscomp *, struct jsnode *,
		     const json_t *, int);
void		 jskeyword_deps(struct jscomp *, struct jsnode *, const json_t *,
		     int);
void		 jskeyword_arrays(struct jscomp *, struct jsnode *,
		     const json_t *, int);
void		 jskeyword_numbers(struct jscomp *, struct jsnode *,
		     const json_t *);
void		 jskeyword_strings_kw(struct jscomp *, struct jsnode *,
		     const json_t *);
void		 jskeyword_unsupported(struct jscomp *, struct jsnode *,
		     const json_t *);

/* jsre.c */
uint32_t	 jsre_decode(const char **, const char *);
size_t		 jsre_size(const struct jsre *);

/* jsparse.c */
int		 jsparse_fail(struct jsre_parse *, const char *);
int		 jsparse_alt(struct jsre_parse *);

/* jsvalue.c */
char		*jsvalue_quote(const json_t *);
char		*jsvalue_quote_str(const char *, size_t);
char		*jsvalue_describe(const json_t *);
int		 jsvalue_is_integer(const json_t *);
long double	 jsvalue_ld(const json_t *);
int		 jsvalue_cmp(const json_t *, const json_t *);
int		 jsvalue_equal(uint64_t *, const json_t *, const json_t *);
uint64_t	 jsvalue_hash(uint64_t *, const json_t *);
void		 jsvalue_types(unsigned int, char *, size_t);
int		 jsvalue_type_ok(unsigned int, const json_t *);

/* A validation's state (jsvalid.c walks, jsreport.c counts and says). */
struct jsctx {
	const struct jschema	*s;
	jschema_error_cb	 cb;
	void			*arg;
	int			 quiet;		/* > 0: count, do not report */
	uint64_t		 steps;
	int			 stopped;	/* 1 too costly, 2 too deep */
	int			 reported;	/* errors reported */
	int			 depth;
	char			*ipath;		/* the value's JSONPath */
	size_t			 ilen, icap;
};

/* jsreport.c */
int		 jsreport_step(struct jsctx *, uint64_t);
void		 jsreport_err(struct jsctx *, const struct jsnode *, const char *,
		     const char *, ...) PRINTFLIKE(4, 5);
char		*jsreport_quote(const struct jsctx *, const char *, size_t);
void		 jsreport_path_add(struct jsctx *, const char *, size_t);
size_t		 jsreport_push_key(struct jsctx *, const char *, size_t);
size_t		 jsreport_push_index(struct jsctx *, size_t);
void		 jsreport_pop(struct jsctx *, size_t);

/* jsvalid.c */
int		 jsvalid_run(const struct jschema *, const json_t *,
		     jschema_error_cb, void *, struct jschema_run *);

#endif
