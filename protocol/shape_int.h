/*
 * The shape tables inside protocol/: what defs.c builds from mcp.def and
 * shape.c walks.  Not for other modules: they call protocol.h.
 */
#ifndef MCPREEL_SHAPE_INT_H
#define MCPREEL_SHAPE_INT_H

#include "protocol.h"

/* What a type is. */
enum st_kind {
	ST_ANY,		/* anything */
	ST_STRING,
	ST_NUMBER,
	ST_INTEGER,	/* a number with no fractional part */
	ST_BOOLEAN,
	ST_NULL,
	ST_OBJECT,	/* any object */
	ST_ARRAY,	/* any array */
	ST_CONST,	/* one string */
	ST_ARRAYOF,	/* T[] */
	ST_MAP,		/* {T} */
	ST_REF,		/* a def or type by name */
	ST_UNION,	/* A | B */
	ST_KIND_MAX
};

/* Formats a string may be said to have. */
enum st_format {
	FMT_NONE,
	FMT_URI,	/* an absolute URI: a scheme, then ':' */
	FMT_BYTE,	/* base64 */
	FMT_FILE_URI,	/* a file: URI (roots: "must start with file://") */
};

/*
 * A union can have at most this many alternatives once nested unions are
 * flattened (the widest, the elicitation schemas, has 8).
 */
#define SHAPE_UNION_MAX		16

struct stype {
	enum st_kind	 kind;
	enum st_format	 format;
	int		 line;		/* in mcp.def; 0 for the method table */
	char		*text;		/* ST_CONST: the string; ST_REF: the name */
	struct stype	*sub;		/* ST_ARRAYOF, ST_MAP: items, values */
	struct stype   **alts;		/* ST_UNION: as written */
	size_t		 nalts;
	int		 ref[PROTO_V_MAX];	/* ST_REF: the def in each
						   revision, -1 for none */
	/* ST_UNION: the alternatives in each revision, nested unions and
	   named types followed down to objects and plain types. */
	struct stype	*leaves[PROTO_V_MAX][SHAPE_UNION_MAX];
	size_t		 nleaves[PROTO_V_MAX];
};

struct smember {
	char		*name;
	unsigned	 versions;
	int		 optional;
	struct stype	*type;
};

/* A def (an object shape) or a named type, in a set of revisions. */
struct sdef {
	char		*name;
	unsigned	 versions;
	int		 line;		/* in mcp.def */
	char		*spec_name;	/* the schema.ts name it stands for */
	struct stype	*alias;		/* a named type; NULL for an object */
	char	       **bases;
	size_t		 nbases;
	struct smember	*members;	/* own and inherited, after init */
	size_t		 nmembers;
	int		 flat;		/* 0 not yet, 1 doing, 2 done */
	char		*spec[PROTO_V_MAX];	/* "2025-06-18 schema.ts: X" */
	int		 next;		/* the next def of the same name, -1 */
};

/* An error code whose data has a set shape. */
struct serror {
	long long	 code;
	unsigned	 versions;
	struct stype	*data;
	int		 line;
};

struct shapes {
	struct sdef	*defs;
	size_t		 ndefs;
	int		*hash;		/* first def of a name + 1, 0 empty */
	size_t		 hash_size;
	struct stype   **params;	/* per method row: its params type */
	struct stype   **result;	/* per method row: its result, or NULL */
	struct serror	*errors;
	size_t		 nerrors;
};

/* defs.c */
const struct shapes *defs_get(void);
const struct sdef *defs_find(const struct shapes *, const char *,
		    enum proto_version);
struct stype	*defs_type_new(enum st_kind);
const struct serror *defs_error(const struct shapes *, long long,
		    enum proto_version);
void		 defs_load_text(const char *);

/* typexpr.c */
int		 typexpr_parse(const char *, struct stype **, char **);

/* shape.c */
void		 shape_check(enum proto_version, const struct stype *,
		    const json_t *, const char *, const char *,
		    proto_finding_cb *, void *, size_t *);
int		 shape_fits(enum proto_version, const struct stype *,
		    const json_t *);

/* shape.c and shape_union.c: a walk of a value against a type. */
/*
 * A path longer than this is cut (with "..." at the end): JSONPaths of
 * real messages are well under 100 bytes, and a hostile message's key
 * names must not make each finding cost their length.
 */
#define SHAPE_PATH_MAX		512
/*
 * Nesting of shapes followed at most.  Each member, array item, union and
 * named type is a level; the deepest MCP shape (a tool result's content
 * inside a sampling message inside an input request inside a request's
 * inputResponses, 2026-07-28) is about 23 levels.  48 leaves room for a
 * revision to wrap that once or twice more before anything deeper goes
 * unchecked, and costs only stack (a few hundred bytes a level).  The
 * walk follows the shapes, not the JSON, so JSON nested deeper than its
 * shape is never walked at all.
 */
#define SHAPE_DEPTH_MAX		48
/* A finding's sentence is cut at this length. */
#define SHAPE_TEXT_MAX		400
/* A value quoted in a finding is cut at this many bytes. */
#define SHAPE_QUOTE_MAX		60

struct walk {
	enum proto_version	 v;
	proto_finding_cb	*cb;
	void			*arg;
	size_t			*budget;	/* findings still to report */
	int			 dry;		/* only find out if it fits */
	size_t			 found;		/* faults found by this walk */
	const char		*spec;		/* the def being walked */
	size_t			 plen;
	int			 cut;		/* the path ends in "..." */
	char			 path[SHAPE_PATH_MAX];
};

void		 shape_type(struct walk *, const struct stype *, const json_t *,
		    int);
void		 shape_report(struct walk *, const char *, const char *, ...)
		    PRINTFLIKE(3, 4);
size_t		 shape_push_key(struct walk *, const char *);
void		 shape_pop(struct walk *, size_t);
int		 shape_quote_len(const char *);
const char	*shape_type_name(const struct walk *, const struct stype *,
		    char *, size_t);
const char	*shape_json_type(const json_t *);
int		 shape_kind_fits(const struct walk *, const struct stype *,
		    const json_t *);
int		 shape_str_eq(const json_t *, const char *);

/* shape_union.c */
void		 shape_union(struct walk *, const struct stype *,
		    const json_t *, int);

#endif
