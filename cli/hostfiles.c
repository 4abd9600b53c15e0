/*
 * The hosts' configuration files that `hosts`, `wrap` and `unwrap` act
 * on: every existing file of the hosts table (or of one host), or the
 * one --config names, each read and parsed once.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hosts.h"

/* The format names of --format and of the output. */
static const char *const hostfiles_formats[HCFG_FORMAT_MAX] = {
	"json", "jsonc", "toml"
};

/* A format's name. */
const char *
hostfiles_format_name(enum hcfg_format f)
{
	return f < HCFG_FORMAT_MAX ? hostfiles_formats[f] : "?";
}

/* A format from its name; -1 if none. */
int
hostfiles_format_parse(const char *name)
{
	int	i;

	for (i = 0; i < HCFG_FORMAT_MAX; i++) {
		if (strcmp(name, hostfiles_formats[i]) == 0)
			return i;
	}
	return -1;
}

/* Add a file to the list; path is taken. */
static struct hostfile *
hostfiles_add(struct hostfiles *hf, const struct host *h, const char *scope,
    const struct hcfg_layout *layout, char *path)
{
	struct hostfile	*f;

	hf->v = xreallocarray(hf->v, hf->n + 1, sizeof *hf->v);
	f = &hf->v[hf->n++];
	memset(f, 0, sizeof *f);
	f->host = h;
	f->scope = scope;
	f->layout = *layout;
	f->path = path;
	f->shown = files_display(path);
	f->real = realpath(path, NULL);
	return f;
}

/* Whether the list has a file of that real path already. */
static int
hostfiles_seen(const struct hostfiles *hf, const char *real)
{
	size_t	i;

	for (i = 0; i < hf->n; i++) {
		if (hf->v[i].real != NULL && strcmp(hf->v[i].real, real) == 0)
			return 1;
	}
	return 0;
}

/*
 * The files of every host in the table (or only that host) that are
 * there, user files under $HOME and project ones under project; with
 * absent_too those that are not there as well (real NULL).  A file found
 * twice (the project directory is $HOME, a symlink) is listed once.
 */
int
hostfiles_find(struct hostfiles *hf, const struct host *only,
    const char *project, int absent_too, char **cause)
{
	const struct host	*h;
	const struct host_file	*fl;
	struct hostfile		*f;
	char			*path, *real;

	for (h = hosts_table; h->id != NULL; h++) {
		if (only != NULL && h != only)
			continue;
		for (fl = h->files; fl->path != NULL; fl++) {
			if (fl->os != NULL)
				continue;
			if ((path = files_expand(fl->path, project,
			    cause)) == NULL)
				return -1;
			real = realpath(path, NULL);
			if (real == NULL && !absent_too) {
				free(path);
				continue;
			}
			if (real != NULL && hostfiles_seen(hf, real)) {
				free(real);
				free(path);
				continue;
			}
			free(real);
			f = hostfiles_add(hf, h, fl->scope, fl->layout, path);
			(void)f;
		}
	}
	return 0;
}

/*
 * The part of a table path that names the file whatever the directories
 * it is under: "~/.claude.json" gives ".claude.json", "$XDG_CONFIG_HOME/
 * Code/User/mcp.json" "Code/User/mcp.json", ".vscode/mcp.json" itself.
 */
static const char *
hostfiles_tail(const char *tmpl)
{
	const char	*slash;

	if ((tmpl[0] == '~' || tmpl[0] == '$') &&
	    (slash = strchr(tmpl, '/')) != NULL)
		return slash + 1;
	return tmpl;
}

/* Whether path ends with "/" tail. */
static int
hostfiles_ends(const char *path, const char *tail)
{
	size_t	pl = strlen(path), tl = strlen(tail);

	return pl > tl && path[pl - tl - 1] == '/' &&
	    strcmp(path + pl - tl, tail) == 0;
}

/*
 * The one file --config names: its host is the one given, else the one
 * whose table path its path ends with (the longest such); format, if
 * not NULL, replaces the layout's.
 */
int
hostfiles_config(struct hostfiles *hf, const char *file,
    const struct host *host, const char *format, char **cause)
{
	const struct host	*h, *bh = NULL;
	const struct host_file	*fl, *bf = NULL;
	struct hostfile		*f;
	char			*path, *cwd, *real;
	size_t			 blen = 0;
	int			 fmt = -1;

	if (format != NULL && (fmt = hostfiles_format_parse(format)) < 0) {
		xasprintf(cause, "--format %s: give json, jsonc or toml",
		    format);
		return -1;
	}
	if (file[0] == '/')
		path = xstrdup(file);
	else {
		if ((cwd = getcwd(NULL, 0)) == NULL) {
			xasprintf(cause, "cannot tell the current directory: "
			    "%s", strerror(errno));
			return -1;
		}
		xasprintf(&path, "%s/%s", cwd, file);
		free(cwd);
	}
	if ((real = realpath(path, NULL)) == NULL) {
		xasprintf(cause, "--config %s: %s", file, strerror(errno));
		free(path);
		return -1;
	}
	for (h = hosts_table; h->id != NULL; h++) {
		if (host != NULL && h != host)
			continue;
		for (fl = h->files; fl->path != NULL; fl++) {
			if (fl->os != NULL)
				continue;
			if ((hostfiles_ends(real, hostfiles_tail(fl->path)) ||
			    hostfiles_ends(path, hostfiles_tail(fl->path))) &&
			    strlen(hostfiles_tail(fl->path)) > blen) {
				bh = h;
				bf = fl;
				blen = strlen(hostfiles_tail(fl->path));
			}
		}
	}
	free(real);
	if (bf == NULL && host != NULL) {
		bh = host;
		bf = &host->files[0];
	}
	if (bf == NULL) {
		xasprintf(cause, "--config %s: cannot tell which host's file "
		    "it is from its name; say so with --host ID (see "
		    "'mcpreel hosts')", file);
		free(path);
		return -1;
	}
	f = hostfiles_add(hf, bh, bf->scope, bf->layout, path);
	if (fmt >= 0)
		f->layout.format = (enum hcfg_format)fmt;
	return 0;
}

/*
 * Read and parse one file; on failure f->error says why (as a person
 * reads it: "~/.cursor/mcp.json line 3 column 5: ...").
 */
int
hostfiles_load(struct hostfile *f)
{
	char	*cause = NULL;
	int	 rc;

	if ((rc = files_read(f->path, &f->buf, &f->len, &cause)) != 0) {
		if (rc == 1)
			xasprintf(&f->error, "%s: no such file", f->shown);
		else {
			f->error = cause;
			cause = NULL;
		}
		return -1;
	}
	if (hcfg_read(f->buf, f->len, &f->layout, &f->cfg, &cause) != 0) {
		xasprintf(&f->error, "%s%s%s", f->shown,
		    strncmp(cause != NULL ? cause : "", "line ", 5) == 0 ?
		    " " : ": ", cause != NULL ? cause : "cannot be read");
		free(cause);
		return -1;
	}
	f->ok = 1;
	return 0;
}

/* Whether a read file has a server of that name. */
int
hostfiles_has(const struct hostfile *f, const char *name)
{
	size_t	i;

	for (i = 0; f->ok && i < f->cfg.nentries; i++) {
		if (strcmp(f->cfg.entries[i].name, name) == 0)
			return 1;
	}
	return 0;
}

/*
 * The names (NULL-terminated, from names[0..n)) that this file has, in a
 * new array; NULL when names is NULL (all servers).  *none is set when
 * names were given and the file has none of them.
 */
const char **
hostfiles_names(const struct hostfile *f, char **names, size_t n, int *none)
{
	const char	**out;
	size_t		  i, k = 0;

	*none = 0;
	if (names == NULL || n == 0)
		return NULL;
	out = xcalloc(n + 1, sizeof *out);
	for (i = 0; i < n; i++) {
		if (hostfiles_has(f, names[i]))
			out[k++] = names[i];
	}
	*none = k == 0;
	return out;
}

/* The project key of an entry under "projects\x1fKEY\x1f...", or NULL. */
const char *
hostfiles_project_of(const struct hcfg_entry *e, char *buf, size_t len)
{
	const char	*a, *b;

	if (e->container == NULL || (a = strchr(e->container, '\x1f')) ==
	    NULL || (b = strchr(a + 1, '\x1f')) == NULL)
		return NULL;
	snprintf(buf, len, "%.*s", (int)(b - a - 1), a + 1);
	return buf;
}

/* Free the files and what was read of them. */
void
hostfiles_clear(struct hostfiles *hf)
{
	size_t	i;

	for (i = 0; i < hf->n; i++) {
		free(hf->v[i].path);
		free(hf->v[i].shown);
		free(hf->v[i].real);
		free(hf->v[i].buf);
		free(hf->v[i].error);
		if (hf->v[i].ok)
			hcfg_clear(&hf->v[i].cfg);
	}
	free(hf->v);
	memset(hf, 0, sizeof *hf);
}
