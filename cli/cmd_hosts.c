/* mcpreel hosts: the MCP hosts' configuration files here, and their servers. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "hosts.h"

/* The longest project key shown (~/.claude.json's are paths). */
#define HOSTS_PROJECT_MAX	4096

/* The kinds' names, as printed. */
static const char *const hosts_kinds[HCFG_KIND_MAX] = {
	"stdio", "remote", "other"
};

/* The --help of hosts. */
void
cmd_hosts_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel hosts [--project DIR] [--json] [-v]\n"
	    "\n"
	    "List the MCP hosts mcpreel knows (Claude Desktop, Claude Code,\n"
	    "Cursor, VS Code, Windsurf, Gemini CLI, Codex), each of their\n"
	    "configuration files that is here, and in each file its servers:\n"
	    "name, kind (stdio, remote or other), and whether it runs through\n"
	    "mcpreel record (wrapped) or why 'mcpreel wrap' leaves it.\n"
	    "User files are found under $HOME (and $XDG_CONFIG_HOME,\n"
	    "$CODEX_HOME), project files under --project DIR.\n"
	    "\n"
	    "  --project DIR  the project whose files (.mcp.json, .vscode/\n"
	    "                 mcp.json, ...) to look at (default: the current\n"
	    "                 directory)\n"
	    "  --json         print it all as one JSON document\n"
	    "  -v             list the files that are not there too\n"
	    "\n"
	    "Exit status: 0, or 1 when a file is there but cannot be read\n"
	    "(it is listed with the reason).  See docs/hosts.md for where each\n"
	    "host keeps its files.\n"
	    "\n"
	    "examples:\n"
	    "  mcpreel hosts\n"
	    "  mcpreel hosts --project ~/src/app --json\n");
}

/* The --project directory made absolute (default: the current one). */
char *
hosts_project_dir(const char *cmd, const char *arg)
{
	char	*dir;

	if (arg == NULL) {
		if ((dir = getcwd(NULL, 0)) == NULL)
			fprintf(stderr, "mcpreel %s: cannot tell the current "
			    "directory: %s\n", cmd, strerror(errno));
		return dir;
	}
	if ((dir = realpath(arg, NULL)) == NULL)
		fprintf(stderr, "mcpreel %s: --project %s: %s\n", cmd, arg,
		    strerror(errno));
	return dir;
}

/* The kind's name. */
const char *
hosts_kind_name(enum hcfg_kind k)
{
	return k < HCFG_KIND_MAX ? hosts_kinds[k] : "?";
}

/* One entry as JSON. */
static json_t *
hosts_entry_json(const struct hcfg_entry *e)
{
	json_t		*o, *args, *path;
	const char	*p, *q;
	size_t		 i;

	o = json_object();
	json_object_set_new(o, "name", json_string(e->name));
	path = json_array();
	for (p = e->container; p != NULL; p = q != NULL ? q + 1 : NULL) {
		q = strchr(p, '\x1f');
		json_array_append_new(path, q != NULL ?
		    json_stringn(p, (size_t)(q - p)) : json_string(p));
	}
	json_object_set_new(o, "container", path);
	json_object_set_new(o, "kind", json_string(hosts_kind_name(e->kind)));
	json_object_set_new(o, "wrapped", json_boolean(e->wrapped));
	json_object_set_new(o, "bridged", json_boolean(e->bridged));
	if (e->command != NULL) {
		json_object_set_new(o, "command", json_string(e->command));
		args = json_array();
		for (i = 0; i < e->nargs; i++)
			json_array_append_new(args, json_string(e->args[i]));
		json_object_set_new(o, "args", args);
	}
	if (e->url != NULL)
		json_object_set_new(o, "url", json_string(e->url));
	if (e->url_key != NULL)
		json_object_set_new(o, "url_key", json_string(e->url_key));
	json_object_set_new(o, "note", e->note != NULL ?
	    json_string(e->note) : json_null());
	return o;
}

/* One file as JSON. */
static json_t *
hosts_file_json(const struct hostfile *f)
{
	struct files_state	 st;
	json_t			*o, *servers;
	char			*cause = NULL;
	size_t			 i;

	o = json_object();
	json_object_set_new(o, "scope", json_string(f->scope));
	json_object_set_new(o, "path", json_string(f->path));
	json_object_set_new(o, "exists", json_boolean(f->real != NULL));
	json_object_set_new(o, "format",
	    json_string(hostfiles_format_name(f->layout.format)));
	if (f->real == NULL)
		return o;
	json_object_set_new(o, "error", f->error != NULL ?
	    json_string(f->error) : json_null());
	servers = json_array();
	for (i = 0; f->ok && i < f->cfg.nentries; i++)
		json_array_append_new(servers,
		    hosts_entry_json(&f->cfg.entries[i]));
	json_object_set_new(o, "servers", servers);
	if (files_state_load(f->real, &st, &cause) == 0 && st.exists)
		json_object_set_new(o, "backup", json_string(st.backup));
	free(cause);
	files_state_clear(&st);
	return o;
}

/* What the text output says of an entry's state. */
static void
hosts_entry_text(FILE *out, const struct hcfg_entry *e)
{
	char		 buf[HOSTS_PROJECT_MAX];
	const char	*proj;

	fprintf(out, "    %-20s %-7s ", e->name, hosts_kind_name(e->kind));
	if (e->bridged)
		fputs("wrapped (bridged to its url)", out);
	else if (e->wrapped)
		fputs("wrapped", out);
	else if (e->note != NULL)
		fprintf(out, "left: %s", e->note);
	else
		fputs("not wrapped", out);
	if ((proj = hostfiles_project_of(e, buf, sizeof buf)) != NULL)
		fprintf(out, "  [project %s]", proj);
	fputc('\n', out);
}

/* mcpreel hosts: list the hosts, their files here and their servers. */
int
cmd_hosts(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "project", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct hostfiles		 hf;
	const struct host		*h;
	const char			*project_arg = NULL;
	char				*project, *cause = NULL;
	json_t				*root, *hosts, *jh, *files;
	size_t				 i, j, nfiles;
	int				 ch, json = 0, verbose = 0, rc = EXIT_OK;

	while ((ch = getopt_long(argc, argv, "hvq", longopts, NULL)) != -1) {
		if (ch == 'v')
			verbose = 1;
		if (cli_common_option(ch, optarg))
			continue;
		switch (ch) {
		case 'p':
			project_arg = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			cmd_hosts_usage(stdout);
			return EXIT_OK;
		default:
			opterr_report("hosts", argc, argv, "hvq", longopts);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "mcpreel hosts: unexpected argument '%s' (it "
		    "takes only options; see 'mcpreel hosts --help')\n",
		    argv[optind]);
		return EXIT_USAGE;
	}
	if ((project = hosts_project_dir("hosts", project_arg)) == NULL)
		return EXIT_USAGE;
	memset(&hf, 0, sizeof hf);
	if (hostfiles_find(&hf, NULL, project, verbose || json, &cause) != 0) {
		fprintf(stderr, "mcpreel hosts: %s\n", cause);
		free(cause);
		free(project);
		return EXIT_USAGE;
	}
	for (i = 0; i < hf.n; i++) {
		if (hf.v[i].real != NULL && hostfiles_load(&hf.v[i]) != 0)
			rc = EXIT_FAIL;	/* said in the listing */
	}

	if (json) {
		root = json_object();
		json_object_set_new(root, "project", json_string(project));
		hosts = json_array();
		for (h = hosts_table; h->id != NULL; h++) {
			jh = json_object();
			json_object_set_new(jh, "id", json_string(h->id));
			json_object_set_new(jh, "name", json_string(h->name));
			json_object_set_new(jh, "doc", json_string(h->doc));
			files = json_array();
			for (j = 0; j < hf.n; j++) {
				if (hf.v[j].host == h)
					json_array_append_new(files,
					    hosts_file_json(&hf.v[j]));
			}
			json_object_set_new(jh, "files", files);
			json_array_append_new(hosts, jh);
		}
		json_object_set_new(root, "hosts", hosts);
		json_dumpf(root, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(root);
	} else {
		for (h = hosts_table; h->id != NULL; h++) {
			for (j = 0, nfiles = 0; j < hf.n; j++)
				nfiles += hf.v[j].host == h;
			printf("%s (%s)%s\n", h->name, h->id, nfiles == 0 ?
			    ": no configuration file here" : "");
			for (j = 0; j < hf.n; j++) {
				if (hf.v[j].host != h)
					continue;
				if (hf.v[j].real == NULL) {
					printf("  %-7s %s (not there)\n",
					    hf.v[j].scope, hf.v[j].shown);
					continue;
				}
				printf("  %-7s %s\n", hf.v[j].scope,
				    hf.v[j].shown);
				if (hf.v[j].error != NULL) {
					printf("    cannot be read: %s\n",
					    hf.v[j].error);
					continue;
				}
				if (hf.v[j].cfg.nentries == 0)
					printf("    (no servers)\n");
				for (i = 0; i < hf.v[j].cfg.nentries; i++)
					hosts_entry_text(stdout,
					    &hf.v[j].cfg.entries[i]);
			}
		}
	}
	hostfiles_clear(&hf);
	free(project);
	return rc;
}
