/*
 * hosts: MCP hosts' configuration files (Claude Desktop, Claude Code,
 * Cursor, VS Code, Windsurf, Gemini CLI, Codex).  Find them; wrap each
 * chosen server so that the host runs it through `mcpreel record`; put
 * every entry back.  Edits are textual: the bytes the user wrote (keys,
 * order, comments, indentation, ${VAR} placeholders) stay as they were
 * outside the few values mcpreel changes.  Nothing here knows MCP traffic.
 *
 * Two layers:
 *   - cfg*.c, jsonc.c, toml.c: pure.  A buffer and a layout in, new bytes
 *     and a list of changes out.  No I/O, no globals; unit-tested and
 *     fuzzed.
 *   - table.c, files.c: the hosts as data (where each keeps its files,
 *     which layout), and the file work (backup, atomic write, the state
 *     that makes unwrap byte-exact, the diff of --dry-run).
 */
#ifndef MCPREEL_HOSTS_H
#define MCPREEL_HOSTS_H

#include <stddef.h>
#include <stdio.h>

#include "core.h"

/* cfg.c: reading and editing one configuration file's bytes (pure). */

/* A configuration file of more than this is refused (no host's is). */
#define HCFG_MAX_BYTES		(16u * 1024 * 1024)
/* Nesting deeper than this is refused (bounded recursion). */
#define HCFG_MAX_DEPTH		256

enum hcfg_format {
	HCFG_JSON,		/* strict JSON (RFC 8259) */
	HCFG_JSONC,		/* JSON with // and block comments and
				   trailing commas (VS Code's) */
	HCFG_TOML,		/* TOML 1.0 (Codex) */
	HCFG_FORMAT_MAX
};

/*
 * Where a format keeps its servers.  A container is a path of member
 * (JSON) or table (TOML) names separated by '\x1f' (unit separator: real
 * keys hold dots and slashes, ~/.claude.json's project keys are paths);
 * a component "*" matches every member.  Examples: "mcpServers",
 * "servers", "projects\x1f*\x1fmcpServers", "mcp\x1fservers",
 * "mcp_servers".
 */
struct hcfg_layout {
	enum hcfg_format	 format;
	const char *const	*containers;	/* NULL-terminated */
	const char *const	*url_keys;	/* a member naming a remote
						   server: "url", "httpUrl",
						   "serverUrl"; NULL-terminated */
	int			 can_bridge;	/* a remote entry may become a
						   command (record --connect);
						   0: left, with a note */
	const char *const	*url_transports; /* per url key: the
						   transport it means, "http",
						   "sse", or NULL (the entry's
						   type says, or record finds
						   out); NULL: none says */
};

enum hcfg_kind {
	HCFG_STDIO,		/* has a command */
	HCFG_REMOTE,		/* has a url key (and no command) */
	HCFG_OTHER,		/* neither (a host-specific kind): left */
	HCFG_KIND_MAX
};

/* One server entry, as the host would run it. */
struct hcfg_entry {
	char		*container;	/* the container path it was found
					   under, components '\x1f'-joined,
					   "*" replaced by the real key */
	char		*name;		/* its key */
	enum hcfg_kind	 kind;
	int		 wrapped;	/* runs through mcpreel record */
	int		 bridged;	/* wrapped, and was a remote entry
					   (record --connect) */
	/* What the host would run or reach once unwrapped (decoded). */
	char		*command;	/* stdio; NULL otherwise */
	char		**args;		/* stdio; nargs of them */
	size_t		 nargs;
	char		*url;		/* remote; NULL otherwise */
	const char	*url_key;	/* which url key (static) */
	char		*note;		/* why it is left as it is, or NULL */
};

struct hcfg {
	struct hcfg_entry	*entries;
	size_t			 nentries;
};

/* What wrap writes into each entry. */
struct hcfg_wrap {
	const char		*mcpreel;	/* the command: an absolute
						   path (GUI hosts do not see
						   the shell's PATH) */
	const char		*db;		/* --db written after record,
						   or NULL: record's default */
	const char *const	*names;		/* the servers to wrap, NULL-
						   terminated; NULL: all */
	int			 bridge;	/* remote entries too, where
						   the layout can_bridge */
};

/* One entry changed by hcfg_wrap or hcfg_unwrap. */
struct hcfg_change {
	char	*container;
	char	*name;
	char	*before;	/* the entry's text before: its value, from
				   its first byte to its last (TOML: its
				   table's lines) */
	char	*after;		/* and after */
};

struct hcfg_changes {
	struct hcfg_change	*v;
	size_t			 n;
};

/*
 * hcfg_read(buf, len, layout, cfg, cause): the entries (the last of a
 * duplicated key), each with its kind, whether wrapped, what it runs
 * once unwrapped, and a note when wrap would leave it.  hcfg_clear frees.
 * hcfg_wrap(buf, len, layout, wrap, &out, &outlen, changes, cause) and
 * hcfg_unwrap(buf, len, layout, names or NULL, ledger or NULL, &out,
 * &outlen, changes, cause): out is new NUL-terminated bytes (the caller
 * frees), changes is reset then filled with one change per entry edited
 * (hcfg_changes_clear frees), the ledger is the changes an earlier wrap
 * returned.  All return 0, or -1 with *cause "line L column C: what"
 * (nothing allocated in out or changes then).  A bridged entry's args
 * carry "--transport http|sse" when the entry had that type or its url
 * key means one (url_transports); unwrap computing an entry gives back
 * the url key of that transport.  Its headers never go into args (argv
 * is public): they go into its env as MCPREEL_HEADERS, "Name: value"
 * lines (raw texts), which record --connect reads.
 */
int		 hcfg_read(const char *, size_t, const struct hcfg_layout *,
		     struct hcfg *, char **);
void		 hcfg_clear(struct hcfg *);
int		 hcfg_wrap(const char *, size_t, const struct hcfg_layout *,
		     const struct hcfg_wrap *, char **, size_t *,
		     struct hcfg_changes *, char **);
int		 hcfg_unwrap(const char *, size_t, const struct hcfg_layout *,
		     const char *const *, const struct hcfg_changes *, char **,
		     size_t *, struct hcfg_changes *, char **);
void		 hcfg_changes_clear(struct hcfg_changes *);
int		 hcfg_is_mcpreel(const char *);

/* table.c: the hosts, as data. */

/* One place a host keeps servers. */
struct host_file {
	const char		*scope;		/* "user", "project", ... */
	const char		*path;		/* with ~ for $HOME, $XDG_... and
						   %s-free: expanded by files.c;
						   relative: under the project
						   directory */
	const struct hcfg_layout *layout;
	const char		*os;		/* NULL: where mcpreel runs
						   (Linux); "macos", "windows":
						   kept as data for the docs,
						   not looked at */
};

struct host {
	const char		*id;		/* --host NAME: "claude-desktop",
						   "claude-code", "cursor",
						   "vscode", "windsurf",
						   "gemini", "codex" */
	const char		*name;		/* "Claude Desktop" */
	const struct host_file	*files;		/* ended by path NULL */
	const char		*doc;		/* the host's documentation URL */
};

extern const struct host	 hosts_table[];	/* ended by id NULL */
const struct host	*hosts_find(const char *);

/* files.c: the files on disk, the state wrap keeps, safe writing. */

/* A configuration file of more than this is not read (HCFG_MAX_BYTES). */
#define FILES_MAX_BYTES		HCFG_MAX_BYTES
/*
 * A ledger (each wrapped entry's text before and after, JSON-escaped)
 * of more than this is neither written nor read.
 */
#define FILES_STATE_MAX_BYTES	(8 * (size_t)FILES_MAX_BYTES)
/*
 * The --dry-run diff: past this many edit steps (lines deleted plus
 * inserted) between two files, the changed middle is printed whole, as
 * all -, then all +: the line diff needs memory in the square of them.
 */
#define FILES_DIFF_MAX_EDITS	2000

/* What wrap keeps of one configuration file (X.json beside X.backup). */
struct files_state {
	char			*json;		/* the ledger's path */
	char			*backup;	/* the backup's path */
	char			*config;	/* the file's absolute path */
	char			*sha256;	/* of what wrap last wrote; NULL:
						   no whole-file restore */
	int			 exists;	/* the ledger was on disk */
	struct hcfg_changes	 changes;	/* the entries wrap changed */
};

char		*files_expand(const char *, const char *, char **);
char		*files_display(const char *);
int		 files_read(const char *, char **, size_t *, char **);
int		 files_write(const char *, const char *, size_t, const char *,
		     size_t, char **);
char		*files_sha256(const void *, size_t);
char		*files_state_dir(int, char **);
int		 files_state_load(const char *, struct files_state *,
		     char **);
int		 files_state_backup(const struct files_state *, const char *,
		     size_t, char **);
int		 files_state_save(const struct files_state *, char **);
int		 files_state_remove(const struct files_state *, char **);
void		 files_state_merge(struct files_state *,
		     const struct hcfg_changes *);
void		 files_state_drop(struct files_state *,
		     const struct hcfg_changes *);
void		 files_state_clear(struct files_state *);
/* files_diff.c */
void		 files_diff(FILE *, const char *, const char *, const char *,
		     size_t, const char *, size_t);

#endif
