/*
 * Internals shared by cli/cmd_wrap.c and cli/cmd_unwrap.c; nothing else
 * includes it.
 */
#ifndef MCPREEL_CMD_WRAP_INT_H
#define MCPREEL_CMD_WRAP_INT_H

#include <stdio.h>

#include "cli.h"
#include "hosts.h"

/* What a wrap or unwrap run was asked. */
struct wrap_opts {
	const char		*cmd;		/* "wrap" or "unwrap" */
	const struct host	*host;		/* --host, or NULL */
	const char		*config;	/* --config FILE */
	const char		*format;	/* --format */
	const char		*layout;	/* --layout ID */
	const char		*project;	/* --project DIR */
	const char		*db;		/* --db FILE */
	const char		*mcpreel;	/* --mcpreel PATH */
	int			 no_bridge;
	int			 dry_run;
	char			**names;	/* SERVER... */
	size_t			 nnames;
};

#define WRAP_OPT_HOST		0x200
#define WRAP_OPT_CONFIG		0x201
#define WRAP_OPT_FORMAT		0x202
#define WRAP_OPT_LAYOUT		0x203
#define WRAP_OPT_PROJECT	0x204
#define WRAP_OPT_DB		0x205
#define WRAP_OPT_NO_BRIDGE	0x206
#define WRAP_OPT_MCPREEL	0x207
#define WRAP_OPT_DRY_RUN	0x208

/* The options wrap and unwrap share. */
#define WRAP_LONGOPTS \
	{ "host", required_argument, NULL, WRAP_OPT_HOST }, \
	{ "config", required_argument, NULL, WRAP_OPT_CONFIG }, \
	{ "format", required_argument, NULL, WRAP_OPT_FORMAT }, \
	{ "layout", required_argument, NULL, WRAP_OPT_LAYOUT }, \
	{ "project", required_argument, NULL, WRAP_OPT_PROJECT }, \
	{ "dry-run", no_argument, NULL, WRAP_OPT_DRY_RUN }, \
	CLI_COMMON_LONGOPTS

/* --host in --help, as lines of it. */
#define WRAP_HOST_HELP \
	"  --host ID        only this host's files: claude-desktop,\n" \
	"                   claude-code, cursor, vscode, windsurf, gemini,\n" \
	"                   codex\n"

/* cmd_wrap.c */
void		 wrap_say_name(FILE *, const char *, const char *);
struct idmap	*wrap_changed_set(const struct hcfg_changes *);
int		 wrap_changed(struct idmap *, const struct hcfg_entry *);
int		 wrap_chosen(const char *const *, const char *);
int		 wrap_unreadable(const struct wrap_opts *,
		     const struct hostfile *);
int		 wrap_failed(const struct wrap_opts *, const struct hostfile *,
		     char *);
void		 wrap_warn_live(const struct wrap_opts *,
		     const struct hostfile *);
int		 wrap_option(struct wrap_opts *, int, const char *);
int		 wrap_run(struct wrap_opts *, int);

/* cmd_unwrap.c */
int		 unwrap_file(const struct wrap_opts *, struct hostfile *);

#endif
