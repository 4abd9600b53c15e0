/* cli: the mcpreel command and its subcommands. */
#ifndef MCPREEL_CLI_H
#define MCPREEL_CLI_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "core.h"
#include "formats.h"
#include "hosts.h"
#include "transport.h"

/* Exit statuses of our own (record exits with the server's). */
#define EXIT_OK		0
#define EXIT_FAIL	1	/* the command ran and found a problem */
#define EXIT_USAGE	2	/* bad arguments, or could not run */

struct cmd {
	const char	*name;
	const char	*summary;
	int		(*run)(int, char **);
	void		(*usage)(FILE *);
};

/* The long options every command takes (cli_common_option handles them). */
#define CLI_COMMON_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "log-file", required_argument, NULL, 'L' }

/* What 'last' means, for the help of every command taking a SESSION. */
#define CLI_SESSION_WORDS \
	"'last' is the newest session recorded (or imported); 'last-replay'\n" \
	"and 'last-mock' the newest that replay and mock recorded of their\n" \
	"own runs.\n"

/* main.c */
extern const struct cmd	cmd_table[];
int			cli_common_option(int, const char *);
void			cli_stdio_notice(const char *);
int			cli_fd_was_closed(int);

/* opterr.c */
struct option;
void		 opterr_report(const char *, int, char **, const char *,
		     const struct option *);
void		 opterr_command(const char *);

/* format.c */
struct session_row;
const char	*fmt_time(int64_t, char *, size_t);
const char	*fmt_duration(int64_t, char *, size_t);
void		 fmt_preview(FILE *, const void *, size_t, size_t);
json_t		*fmt_json_value(const void *, size_t);
void		 fmt_json_line(json_t *);
char		*fmt_target(const char *);
const char	*fmt_session_state(const struct session_row *);

/* target.c */
struct event_base;
struct xport_cbs;
struct cli_target {
	char		**argv;		/* a command over stdio, or */
	const char	 *url;		/* a Streamable HTTP endpoint */
	const char	 *cacert;
	int		  insecure;
	size_t		  max_body;	/* held of one answer; 0: none */
	int		  code;		/* the command's start failure status */
};
char		*cli_target_json(char **);
char		*cli_target_label(const struct cli_target *);
struct xport	*cli_target_open(struct event_base *,
		     const struct xport_cbs *, void *, void *, char **);
struct store;
struct plan;
struct mdisk;
struct timeline_row;
void		 cli_plan_add(struct plan *, const struct timeline_row *);
int		 cli_load_plan(struct store *, int64_t, int, const char *,
		     struct plan *, char **);
int		 cli_faults_note(struct store *, int64_t, const char *,
		     char **);
void		 cli_faults_say(const char *, int64_t);
/*
 * --include-faults (check, replay, mock): keep the messages of injected
 * faults that are left out by default (FAULTS_KEPT in store/store_int.h:
 * a c2s original, a s2c injected message).
 */
#define CLI_OPT_INCLUDE_FAULTS	0x140
#define CLI_INCLUDE_FAULTS_LONGOPT \
	{ "include-faults", no_argument, NULL, CLI_OPT_INCLUDE_FAULTS }
int		 cli_listen_check(const char *, const char *, int);

/* limits.c */
/* The listener options' getopt codes, for LIMITS_LONGOPTS. */
#define LIMITS_OPT_HEAD		0x100
#define LIMITS_OPT_IDLE		0x101
#define LIMITS_OPT_CONNS	0x102
#define LIMITS_LONGOPTS \
	{ "head-timeout", required_argument, NULL, LIMITS_OPT_HEAD }, \
	{ "idle-timeout", required_argument, NULL, LIMITS_OPT_IDLE }, \
	{ "max-connections", required_argument, NULL, LIMITS_OPT_CONNS }
int		 limits_parse_size(const char *, size_t *);
int		 limits_number(const char *, const char *, const char *, long,
		     long, const char *, long *);
int		 limits_seconds(const char *, const char *, const char *,
		     int *);
int		 limits_listen_option(const char *, int, const char *,
		     struct listen_limits *);
void		 limits_listen_defaults(struct listen_limits *);

/* before.c */
int		 before_run(const char *, char **);

/* rules_opts.c */
struct diff_rules;
int		 rules_opts_skip(struct diff_rules *, int, const char *,
		     char **);
int		 rules_opts_take(struct diff_rules *, int *, int, const char *,
		     char **);
int		 rules_opts_for(struct diff_rules *, int, const char *,
		     char **);

/* fault_opts.c: --fault, --faults, --seed (record and mock). */
struct fault_set;
struct fault_opts {
	char		**rules;	/* --fault RULE, in order */
	size_t		  nrules;
	char		 *file;		/* --faults FILE, or NULL */
	int		  has_seed;	/* --seed given (or the file's) */
	uint64_t	  seed;
};
/* The options' long names, for the commands' getopt tables. */
#define FAULT_OPTS_HELP \
	"  --fault RULE       inject a fault (repeatable): see docs/faults.md\n" \
	"                     and `mcpreel help faults`\n" \
	"  --faults FILE      fault rules from a JSON file, re-read on SIGHUP\n" \
	"  --seed N           seed the rules' probabilities (default: random,\n" \
	"                     printed and recorded so a run can be repeated)\n"
/* Take one option: name is "fault", "faults" or "seed". */
int		 fault_opts_set(struct fault_opts *, const char *,
		     const char *, char **);
int		 fault_opts_any(const struct fault_opts *);
/*
 * The rule set: --fault rules then the file's; http: 1 over HTTP.  The
 * seed used (given, the file's, or drawn) is left in opts->seed.
 */
struct fault_set *fault_opts_load(struct fault_opts *, int, char **);
/* SIGHUP: the rules again (--fault and the file re-read) into set. */
int		 fault_opts_reload(struct fault_opts *, struct fault_set *,
		     int, char **);
/* The note event a recording gets, "fault rules: N; seed S" (free it). */
char		*fault_opts_note(const struct fault_opts *,
		     const struct fault_set *);
void		 fault_opts_clear(struct fault_opts *);

/* otlp_opts.c: --otlp and its options (record, mock, export). */
struct otlp;
struct otlp_config;
#define OTLP_OPT_URL		0x150
#define OTLP_OPT_PAYLOADS	0x151
#define OTLP_OPT_SIDE		0x152
#define OTLP_OPT_PROTOCOL	0x153
#define OTLP_OPT_HEADER		0x154
#define OTLP_OPTS_LONGOPTS \
	{ "otlp", required_argument, NULL, OTLP_OPT_URL }, \
	{ "otlp-payloads", no_argument, NULL, OTLP_OPT_PAYLOADS }, \
	{ "otlp-side", required_argument, NULL, OTLP_OPT_SIDE }, \
	{ "otlp-protocol", required_argument, NULL, OTLP_OPT_PROTOCOL }, \
	{ "otlp-header", required_argument, NULL, OTLP_OPT_HEADER }
#define OTLP_OPTS_HELP \
	"  --otlp URL|env     send each request (and notification) as an\n" \
	"                     OpenTelemetry span to the collector at URL over\n" \
	"                     OTLP/HTTP (http://HOST:4318 gets /v1/traces; any\n" \
	"                     other path is used as is); env: the collector\n" \
	"                     of OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT.  The\n" \
	"                     OTEL_EXPORTER_OTLP_* variables (headers,\n" \
	"                     protocol, timeout), OTEL_SERVICE_NAME and\n" \
	"                     OTEL_RESOURCE_ATTRIBUTES apply.  Never slows\n" \
	"                     forwarding: spans the collector does not take\n" \
	"                     are dropped, counted in the session's row\n" \
	"                     (otlp_dropped), and said once on stderr\n" \
	"  --otlp-payloads    with the spans, tools' arguments and results and\n" \
	"                     prompts' arguments, as recorded (redacted)\n" \
	"  --otlp-side server|client\n" \
	"                     report for the server (default: the client's\n" \
	"                     requests are SERVER spans) or for the client\n" \
	"  --otlp-protocol http/protobuf|http/json\n" \
	"                     the encoding (default http/protobuf, or\n" \
	"                     OTEL_EXPORTER_OTLP_PROTOCOL)\n" \
	"  --otlp-header 'Name: value'\n" \
	"                     a header for the collector (repeatable), such\n" \
	"                     as a key; never logged or stored\n"
struct otlp_opts {
	const char	 *url;		/* --otlp URL, "env", or NULL */
	int		  payloads;
	int		  has_side;
	enum otlp_side	  side;
	int		  has_protocol;
	enum otlp_protocol protocol;
	const char	**headers;	/* --otlp-header, as given */
	size_t		  nheaders;
	const char	 *extra;	/* an --otlp-* option given, or NULL */
};
int		 otlp_opts_option(struct otlp_opts *, int, const char *,
		     char **);
int		 otlp_opts_config(const struct otlp_opts *,
		     struct otlp_config *, char **);
int		 otlp_opts_check(const struct otlp_opts *, int, char **);
int		 otlp_opts_file_config(const struct otlp_opts *,
		     struct otlp_config *, char **);
int		 otlp_opts_start(const struct otlp_opts *, int, struct otlp **,
		     char **);
void		 otlp_opts_clear(struct otlp_opts *);

/* dbpath.c */
char		*dbpath_default(char **);
char		*dbpath_resolve(const char *, char **);

/* hostfiles.c: the hosts' files hosts, wrap and unwrap act on. */
struct hostfile {
	const struct host	*host;
	const char		*scope;		/* "user", "project" */
	struct hcfg_layout	 layout;	/* the table's (--format's) */
	char			*path;		/* absolute */
	char			*shown;		/* as said: ~/... */
	char			*real;		/* symlinks followed; NULL:
						   not there */
	char			*buf;		/* its bytes, once loaded */
	size_t			 len;
	struct hcfg		 cfg;		/* its servers, once loaded */
	char			*error;		/* why it could not be */
	int			 ok;		/* loaded */
};
struct hostfiles {
	struct hostfile		*v;
	size_t			 n;
};
const char	*hostfiles_format_name(enum hcfg_format);
int		 hostfiles_format_parse(const char *);
int		 hostfiles_find(struct hostfiles *, const struct host *,
		     const char *, int, char **);
int		 hostfiles_config(struct hostfiles *, const char *,
		     const struct host *, const char *, char **);
int		 hostfiles_load(struct hostfile *);
int		 hostfiles_has(const struct hostfile *, const char *);
const char	**hostfiles_names(const struct hostfile *, char **, size_t,
		     int *);
const char	*hostfiles_project_of(const struct hcfg_entry *, char *,
		     size_t);
void		 hostfiles_clear(struct hostfiles *);

/* cmd_hosts.c, cmd_wrap.c, cmd_unwrap.c */
char		*hosts_project_dir(const char *, const char *);
const char	*hosts_kind_name(enum hcfg_kind);
int		 cmd_hosts(int, char **);
void		 cmd_hosts_usage(FILE *);
int		 cmd_wrap(int, char **);
void		 cmd_wrap_usage(FILE *);
int		 cmd_unwrap(int, char **);
void		 cmd_unwrap_usage(FILE *);

/* cmd_record.c */
int		 cmd_record(int, char **);
void		 cmd_record_usage(FILE *);

/* record_bridge.c: record --connect URL, record --listen ADDR -- CMD. */
/* Which of record's options were given, for record_modes_check(). */
struct record_given {
	int	 upstream;	/* --upstream URL */
	int	 connect;	/* --connect URL */
	int	 cmd;		/* -- CMD */
	int	 listen;	/* --listen ADDR */
	int	 tls;		/* --cacert, --insecure */
	int	 upstream_only;	/* --rewrite-host, --keep-host,
				   --upstream-timeout, --redact-header */
	int	 listen_only;	/* --allow-remote, --max-connections,
				   --head-timeout, --idle-timeout */
	int	 bridge_only;	/* --header, --transport */
	int	 faults;	/* --fault, --faults */
	int	 durable;	/* --durable */
};
struct bridge_options;
struct record_result;
struct writer;
struct wsession;
void		 record_bridge_usage(FILE *);
int		 record_modes_check(const struct record_given *);
int		 record_bridge_transport(const char *,
		     enum xport_remote_kind *);
int		 record_bridge_header(const char *);
int		 record_bridge_env_headers(struct bridge_options *, char **);
int		 record_bridge_check(const struct bridge_options *, int);
int		 record_bridge(struct writer *, const char *,
		     struct bridge_options *, char **, struct wsession **,
		     struct record_result *);

/* cmd_sessions.c */
int		 cmd_sessions(int, char **);
void		 cmd_sessions_usage(FILE *);

/* cmd_mock.c */
int		 cmd_mock(int, char **);
void		 cmd_mock_usage(FILE *);

/* recmode.c: mock --record-mode, a cassette recorded through the fallback. */
enum recmode_mode {
	RECMODE_NONE,		/* the cassette only */
	RECMODE_ONCE,		/* NONE if the file is there, else ALL */
	RECMODE_NEW_EPISODES,	/* misses forwarded and appended */
	RECMODE_ALL,		/* everything forwarded, the file rewritten */
	RECMODE_MAX
};
struct cassette;
struct writer;
struct wsession;
struct recmode {
	const char	*path;		/* the cassette */
	int		 appending;	/* new_episodes on a file there */
	char		*real;		/* where it is written (a symlink
					   followed) */
	struct cassette	*tmp;		/* the recording's temporary store */
	struct writer	*w;
	struct wsession	*ws;
};
int		 recmode_parse(const char *, enum recmode_mode *);
const char	*recmode_name(enum recmode_mode);
int		 recmode_begin(struct recmode *, const char *, const char *,
		     char **);
int		 recmode_check(struct recmode *, char **);
int		 recmode_end(struct recmode *, size_t *, char **);
void		 recmode_clear(struct recmode *);

/* cmd_replay.c */
int		 cmd_replay(int, char **);
void		 cmd_replay_usage(FILE *);

/* cmd_diff.c */
int		 cmd_diff(int, char **);
void		 cmd_diff_usage(FILE *);

/* cmd_export.c, cmd_import.c */
int		 cmd_export(int, char **);
void		 cmd_export_usage(FILE *);
int		 cmd_import(int, char **);
void		 cmd_import_usage(FILE *);

/*
 * cassette.c: a session as a file, the JSON lines export writes.  A
 * command reads one by loading it into a temporary store of its own (a
 * private directory under $TMPDIR, removed when freed or at exit) and
 * running as on a database: one code path for every reader.
 */
struct cassette;
int		 cassette_is(const char *);
struct cassette	*cassette_load(const char *, char **);
struct cassette	*cassette_temp(char **);
const char	*cassette_db(const struct cassette *);
int64_t		 cassette_session(const struct cassette *);
void		 cassette_free(struct cassette *);
void		 cassette_keep(struct cassette *);
int		 cassette_mdisk(const char *, int, const char *, struct mdisk *,
		     int64_t *, int *, char **);
int		 cassette_save(struct store *, int64_t, const char *, char **);
int		 cassette_plan(const char *, int, const char *, struct plan *,
		     int64_t *, char **, char **);
int		 cassette_recorder(const char *, struct store **, char **);

/*
 * record_cassette.c: record --cassette FILE.  Over HTTP a run's sessions
 * go to FILE, FILE-2, ... (record_cassette_path), oldest first.
 */
int		 record_cassette_beside(const char *);
int		 record_cassette_check(const char *, char **);
int		 record_cassette_check_db(const char *, const char *, char **);
char		*record_cassette_path(const char *, size_t);
void		 record_cassette_hold(void);
int		 record_cassette_write(const char *, int64_t *, size_t,
		     const char *, int64_t *, char **);

/* session_arg.c: the session a command was given, database or cassette. */
struct session_arg {
	struct store	*st;		/* open, or NULL once handed on */
	char		*db;		/* the database's path (a cassette's
					   temporary one) */
	int64_t		 id;
	struct cassette	*cassette;	/* when SESSION was a cassette */
};
int		 session_arg_open(const char *, const char *, int,
		     struct session_arg *, char **);
void		 session_arg_close(struct session_arg *);
int		 session_arg_plan(const char *, const char *, int,
		     const char *, struct plan *, int64_t *, char **,
		     struct store **, char **);
int		 session_arg_recorder(const char *, struct session_arg *,
		     struct store **, char **);
int		 session_arg_name_cb(const struct session_row *, void *);
/* For the help of every command taking a SESSION. */
#define CLI_SESSION_CASSETTE \
	"SESSION may also be a cassette: a file 'mcpreel export' wrote (a\n" \
	"path, or a name ending in .jsonl), read as it is; no database is\n" \
	"read or created for it.  See docs/cassettes.md.\n"

/* cmd_report.c */
int		 cmd_report(int, char **);
void		 cmd_report_usage(FILE *);

/* cmd_show.c */
int		 cmd_show(int, char **);
void		 cmd_show_usage(FILE *);

/* cmd_stats.c */
int		 cmd_stats(int, char **);
void		 cmd_stats_usage(FILE *);

/* cmd_prune.c */
int		 cmd_prune(int, char **);
void		 cmd_prune_usage(FILE *);
int		 cmd_rm(int, char **);
void		 cmd_rm_usage(FILE *);
int		 prune_recorder_alive(int64_t, int64_t);

/* cmd_check.c, check_out.c */
/* One finding as kept for the output (strings owned). */
struct check_item {
	int64_t		 session;
	int64_t		 seq;
	int		 dir;		/* enum dir */
	char		*method;	/* may be NULL */
	char		*id;		/* JSON text, may be NULL */
	const char	*version;	/* a revision name, or NULL */
	const char	*rule;		/* static */
	int		 severity;
	char		*path;
	char		*text;
	char		*spec;
	size_t		 order;		/* as reported: keeps sorting stable */
};

/* A session checked. */
struct check_sess {
	int64_t		 id;
	char		*name;		/* may be NULL */
	const char	*version;	/* negotiated, or NULL */
	int64_t		 messages;
	size_t		 first, n;	/* its items in check_out.items */
	size_t		 dropped;	/* its findings counted, not kept */
};

/*
 * Findings kept for output per session, at most: past this they are only
 * counted (a flood of a million broken messages would otherwise need
 * memory in proportion, ~250 bytes a finding; the counts stay exact).
 * Twenty thousand is more than anyone reads and a few MiB.  Per session,
 * so that with --all a flooded session does not hide the next ones'.
 */
#define CHECK_OUT_MAX	20000
/* And per run (--all over many flooded sessions): ~50 MiB at most. */
#define CHECK_OUT_RUN_MAX	200000

struct check_out {
	struct check_item	*items;
	size_t			 n, alloc;
	size_t			 dropped;
	size_t			 counts[3];	/* by severity, kept or not */
	struct check_sess	*sess;
	size_t			 nsess, sessalloc;
};

void		 check_out_text(FILE *, struct check_out *);
void		 check_out_json(FILE *, struct check_out *);
void		 check_out_sarif(FILE *, struct check_out *);
void		 check_out_junit(FILE *, struct check_out *);
void		 check_out_sort(struct check_out *);
void		 check_out_free(struct check_out *);
struct store;
int		 cmd_check(int, char **);
void		 cmd_check_usage(FILE *);
int		 cmd_check_run(struct store *, int64_t, int, struct check_out *,
		    char **);
size_t		 check_out_find(const struct check_out *, int64_t, int64_t,
		    size_t *);
int		 check_out_mark(const struct check_out *, size_t, size_t);
void		 check_out_item_text(FILE *, const struct check_item *);
json_t		*check_out_item_json(const struct check_item *);

#endif
