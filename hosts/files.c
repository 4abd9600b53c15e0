/*
 * The file work of wrap and unwrap: where a host's file is on this
 * machine, reading it (bounded), writing it back safely (re-read first,
 * a temporary file with the original's mode renamed over it, a symlink
 * followed), the state that makes unwrap byte-exact (a backup and a
 * ledger per file under $XDG_STATE_HOME/mcpreel/hosts, never beside the
 * config, which may be in git).  The diff of --dry-run is files_diff.c.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "hosts.h"

/* The value of an environment variable if it is an absolute path. */
static const char *
files_env_dir(const char *name)
{
	const char	*v = getenv(name);

	return v != NULL && v[0] == '/' ? v : NULL;
}

/* $HOME, or NULL with a cause. */
static const char *
files_home(char **cause)
{
	const char	*home = getenv("HOME");

	if (home == NULL || home[0] != '/') {
		xasprintf(cause, "HOME is not set to an absolute path: mcpreel "
		    "finds hosts' files under it");
		return NULL;
	}
	return home;
}

/*
 * A table path made absolute: "~/x" under $HOME, "$XDG_CONFIG_HOME/x"
 * ($HOME/.config by default), "$CODEX_HOME/x" ($HOME/.codex by default),
 * and a relative path under project.  NULL with a cause for what cannot
 * be expanded here (a Windows path, no HOME).
 */
char *
files_expand(const char *tmpl, const char *project, char **cause)
{
	const char	*home, *v;
	char		*path, *cwd;

	if (tmpl[0] == '%') {
		xasprintf(cause, "%s is a Windows path", tmpl);
		return NULL;
	}
	if (tmpl[0] == '/')
		return xstrdup(tmpl);
	if (strncmp(tmpl, "~/", 2) == 0) {
		if ((home = files_home(cause)) == NULL)
			return NULL;
		xasprintf(&path, "%s/%s", home, tmpl + 2);
		return path;
	}
	if (strncmp(tmpl, "$XDG_CONFIG_HOME/", 17) == 0) {
		if ((v = files_env_dir("XDG_CONFIG_HOME")) != NULL) {
			xasprintf(&path, "%s/%s", v, tmpl + 17);
			return path;
		}
		if ((home = files_home(cause)) == NULL)
			return NULL;
		xasprintf(&path, "%s/.config/%s", home, tmpl + 17);
		return path;
	}
	if (strncmp(tmpl, "$CODEX_HOME/", 12) == 0) {
		v = getenv("CODEX_HOME");
		if (v != NULL && v[0] == '/') {
			xasprintf(&path, "%s/%s", v, tmpl + 12);
			return path;
		}
		if (v != NULL && v[0] != '\0') {
			/* Codex reads a relative one from where it runs. */
			if ((cwd = getcwd(NULL, 0)) == NULL) {
				xasprintf(cause, "cannot tell the current "
				    "directory: %s", strerror(errno));
				return NULL;
			}
			xasprintf(&path, "%s/%s/%s", cwd, v, tmpl + 12);
			free(cwd);
			return path;
		}
		if ((home = files_home(cause)) == NULL)
			return NULL;
		xasprintf(&path, "%s/.codex/%s", home, tmpl + 12);
		return path;
	}
	if (tmpl[0] == '$' || tmpl[0] == '~') {
		xasprintf(cause, "cannot expand %s", tmpl);
		return NULL;
	}
	xasprintf(&path, "%s/%s", project, tmpl);
	return path;
}

/* A path as said to people: $HOME/x as ~/x (a new string). */
char *
files_display(const char *path)
{
	const char	*home = getenv("HOME");
	size_t		 n;
	char		*out;

	if (home != NULL && (n = strlen(home)) > 1 &&
	    strncmp(path, home, n) == 0 && path[n] == '/') {
		xasprintf(&out, "~%s", path + n);
		return out;
	}
	return xstrdup(path);
}

/*
 * Read a whole file (a symlink followed) into a new buffer (with a NUL
 * after its bytes).  0: read; 1: there is no such file; -1: a cause.
 */
static int
files_read_max(const char *path, size_t max, char **buf, size_t *len,
    char **cause)
{
	struct stat	 sb;
	char		*p;
	size_t		 got = 0;
	ssize_t		 n;
	int		 fd;

	*buf = NULL;
	*len = 0;
	/* Non-blocking until it is known to be a file: a FIFO would hang. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		if (errno == ENOENT)
			return 1;
		xasprintf(cause, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1) {
		xasprintf(cause, "%s is not a regular file", path);
		close(fd);
		return -1;
	}
	if ((uintmax_t)sb.st_size > max) {
		xasprintf(cause, "%s is larger than %zu MiB: not a host's "
		    "configuration", path, max / (1024 * 1024));
		close(fd);
		return -1;
	}
	/* One byte more than its size, to see it grow while we read. */
	p = xmalloc((size_t)sb.st_size + 2);
	for (;;) {
		n = read(fd, p + got, (size_t)sb.st_size + 1 - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			xasprintf(cause, "cannot read %s: %s", path,
			    strerror(errno));
			free(p);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > (size_t)sb.st_size) {
			xasprintf(cause, "%s changed while mcpreel was "
			    "reading it; try again", path);
			free(p);
			close(fd);
			return -1;
		}
	}
	close(fd);
	p[got] = '\0';
	*buf = p;
	*len = got;
	return 0;
}

/* Read a host's file (files_read_max, at most FILES_MAX_BYTES). */
int
files_read(const char *path, char **buf, size_t *len, char **cause)
{
	return files_read_max(path, FILES_MAX_BYTES, buf, len, cause);
}

/* Write all of buf to fd. */
static int
files_write_all(int fd, const char *buf, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Put bytes at real (no symlink to follow: the caller resolved it) by a
 * temporary file in the same directory, given mode (and owner, where we
 * may), fsync'd and renamed over.
 */
static int
files_put(const char *real, const char *buf, size_t len, mode_t mode,
    uid_t uid, gid_t gid, int chown_it, char **cause)
{
	char	*tmp, *dir, *slash;
	int	 fd, dfd, saved;

	dir = xstrdup(real);
	if ((slash = strrchr(dir, '/')) == NULL) {
		free(dir);
		dir = xstrdup(".");
	} else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	xasprintf(&tmp, "%s/.%s.mcpreel-XXXXXX", dir,
	    strrchr(real, '/') != NULL ? strrchr(real, '/') + 1 : real);
	if ((fd = mkstemp(tmp)) == -1) {
		xasprintf(cause, "cannot create a temporary file in %s: %s",
		    dir, strerror(errno));
		free(tmp);
		free(dir);
		return -1;
	}
	if (chown_it)
		(void)fchown(fd, uid, gid);	/* only root may give it away */
	if (fchmod(fd, mode & 07777) == -1 ||
	    files_write_all(fd, buf, len) == -1 || fsync(fd) == -1) {
		saved = errno;
		close(fd);
		unlink(tmp);
		xasprintf(cause, "cannot write %s: %s", tmp, strerror(saved));
		free(tmp);
		free(dir);
		return -1;
	}
	if (close(fd) == -1 || rename(tmp, real) == -1) {
		saved = errno;
		unlink(tmp);
		xasprintf(cause, "cannot replace %s: %s", real,
		    strerror(saved));
		free(tmp);
		free(dir);
		return -1;
	}
	/* The rename itself on disk. */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(tmp);
	free(dir);
	return 0;
}

/*
 * Replace the file at path, which held old when it was read, with new:
 * re-read just before and refuse if it changed meanwhile (a host
 * rewriting it); the target of a symlink is written and the link kept;
 * the file keeps its mode (and owner where we can).
 */
int
files_write(const char *path, const char *old, size_t oldlen,
    const char *new, size_t newlen, char **cause)
{
	struct stat	 sb;
	char		*real, *now, *shown;
	size_t		 nowlen;
	int		 rc;

	if ((real = realpath(path, NULL)) == NULL) {
		xasprintf(cause, "cannot resolve %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (stat(real, &sb) == -1) {
		xasprintf(cause, "cannot stat %s: %s", real, strerror(errno));
		free(real);
		return -1;
	}
	if ((rc = files_read(real, &now, &nowlen, cause)) != 0) {
		if (rc == 1)
			xasprintf(cause, "%s was removed while mcpreel was "
			    "editing it", path);
		free(real);
		return -1;
	}
	if (nowlen != oldlen || memcmp(now, old, oldlen) != 0) {
		shown = files_display(path);
		xasprintf(cause, "%s changed while mcpreel was editing it; "
		    "run the command again", shown);
		free(shown);
		free(now);
		free(real);
		return -1;
	}
	free(now);
	rc = files_put(real, new, newlen, sb.st_mode, sb.st_uid, sb.st_gid,
	    1, cause);
	free(real);
	return rc;
}

/* The SHA-256 of bytes, in lower-case hex (a new string). */
char *
files_sha256(const void *buf, size_t len)
{
	struct digest	*d = digest_new();

	digest_update(d, buf, len);
	return digest_hex_free(d);
}

/* mkdir one directory 0700 if it is not there. */
static int
files_mkdir(const char *path, char **cause)
{
	struct stat	sb;

	if (mkdir(path, 0700) == 0)
		return 0;
	if (errno == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return 0;
	xasprintf(cause, "cannot create the directory %s: %s", path,
	    strerror(errno == EEXIST ? ENOTDIR : errno));
	return -1;
}

/*
 * The directory of wrap's state, $XDG_STATE_HOME/mcpreel/hosts (default
 * ~/.local/state/mcpreel/hosts), made (0700) if create.
 */
char *
files_state_dir(int create, char **cause)
{
	const char	*state, *home;
	char		*base, *dir, *p;

	if ((state = files_env_dir("XDG_STATE_HOME")) != NULL)
		base = xstrdup(state);
	else {
		if ((home = files_home(cause)) == NULL)
			return NULL;
		xasprintf(&base, "%s/.local/state", home);
	}
	xasprintf(&dir, "%s/mcpreel/hosts", base);
	if (create) {
		/* Each missing component, 0700 (the XDG spec's mode). */
		for (p = dir + 1; *p != '\0'; p++) {
			if (*p != '/')
				continue;
			*p = '\0';
			if (files_mkdir(dir, cause) != 0) {
				free(base);
				free(dir);
				return NULL;
			}
			*p = '/';
		}
		if (files_mkdir(dir, cause) != 0 || chmod(dir, 0700) != 0) {
			if (*cause == NULL)
				xasprintf(cause, "cannot make %s private: %s",
				    dir, strerror(errno));
			free(base);
			free(dir);
			return NULL;
		}
	}
	free(base);
	return dir;
}

/* A change's text as JSON: a string, or base64 when not UTF-8. */
static void
files_json_text(json_t *o, const char *key, const char *text)
{
	json_t	*s;
	char	*b64, *k;

	if ((s = json_string(text)) != NULL) {
		json_object_set_new(o, key, s);
		return;
	}
	b64 = b64_encode(text, strlen(text), NULL);
	xasprintf(&k, "%s_b64", key);
	json_object_set_new(o, k, json_string(b64));
	free(k);
	free(b64);
}

/* A change's text from JSON (string, or key_b64); NULL if neither. */
static char *
files_json_untext(json_t *o, const char *key)
{
	json_t		*v;
	char		*k, *out;
	const char	*s;
	size_t		 n;
	void		*raw;

	if ((s = json_string_value(json_object_get(o, key))) != NULL)
		return xstrdup(s);
	xasprintf(&k, "%s_b64", key);
	v = json_object_get(o, k);
	free(k);
	if ((s = json_string_value(v)) == NULL ||
	    (raw = b64_decode(s, strlen(s), &n)) == NULL)
		return NULL;
	out = xstrndup(raw, n);
	free(raw);
	return out;
}

/*
 * The state of the config file whose absolute path is config (creating
 * nothing): named by the first 16 hex digits of the path's SHA-256.  A
 * ledger that is not there gives an empty state (exists 0).
 */
int
files_state_load(const char *config, struct files_state *st, char **cause)
{
	json_error_t	 err;
	json_t		*root, *changes, *c;
	char		*dir, *sha, *buf;
	const char	*s;
	size_t		 len, i;
	struct hcfg_change *ch;
	int		 rc;

	memset(st, 0, sizeof *st);
	if ((dir = files_state_dir(0, cause)) == NULL)
		return -1;
	sha = files_sha256(config, strlen(config));
	sha[16] = '\0';
	xasprintf(&st->json, "%s/%s.json", dir, sha);
	xasprintf(&st->backup, "%s/%s.backup", dir, sha);
	st->config = xstrdup(config);
	free(sha);
	free(dir);

	if ((rc = files_read_max(st->json, FILES_STATE_MAX_BYTES, &buf, &len,
	    cause)) == 1)
		return 0;
	if (rc != 0)
		return -1;
	root = json_loadb(buf, len, 0, &err);
	free(buf);
	if (!json_is_object(root) ||
	    !json_is_array(changes = json_object_get(root, "changes"))) {
		xasprintf(cause, "%s is not mcpreel's state (line %d: %s); "
		    "move it away to start afresh", st->json, err.line,
		    root == NULL ? err.text : "no changes");
		json_decref(root);
		return -1;
	}
	st->exists = 1;
	if ((s = json_string_value(json_object_get(root, "sha256"))) != NULL)
		st->sha256 = xstrdup(s);
	st->changes.v = xcalloc(json_array_size(changes) + 1,
	    sizeof *st->changes.v);
	json_array_foreach(changes, i, c) {
		ch = &st->changes.v[st->changes.n];
		ch->container = files_json_untext(c, "container");
		ch->name = files_json_untext(c, "name");
		ch->before = files_json_untext(c, "before");
		ch->after = files_json_untext(c, "after");
		if (ch->container == NULL || ch->name == NULL ||
		    ch->before == NULL || ch->after == NULL) {
			/* A broken row: unwrap computes that entry's. */
			free(ch->container);
			free(ch->name);
			free(ch->before);
			free(ch->after);
			memset(ch, 0, sizeof *ch);
			continue;
		}
		st->changes.n++;
	}
	json_decref(root);
	return 0;
}

/* Keep the file's bytes before the first wrap (never overwritten). */
int
files_state_backup(const struct files_state *st, const char *buf, size_t len,
    char **cause)
{
	struct stat	 sb;
	char		*dir;

	if (stat(st->backup, &sb) == 0)
		return 0;
	if ((dir = files_state_dir(1, cause)) == NULL)
		return -1;
	free(dir);
	return files_put(st->backup, buf, len, 0600, 0, 0, 0, cause);
}

/* Write the ledger (0600). */
int
files_state_save(const struct files_state *st, char **cause)
{
	json_t		*root, *changes, *c;
	char		*text, *dir;
	size_t		 i;
	int		 rc;

	if ((dir = files_state_dir(1, cause)) == NULL)
		return -1;
	free(dir);
	root = json_object();
	json_object_set_new(root, "config", json_string(st->config));
	json_object_set_new(root, "backup", json_string(st->backup));
	json_object_set_new(root, "sha256", st->sha256 != NULL ?
	    json_string(st->sha256) : json_null());
	changes = json_array();
	for (i = 0; i < st->changes.n; i++) {
		c = json_object();
		files_json_text(c, "container", st->changes.v[i].container);
		files_json_text(c, "name", st->changes.v[i].name);
		files_json_text(c, "before", st->changes.v[i].before);
		files_json_text(c, "after", st->changes.v[i].after);
		json_array_append_new(changes, c);
	}
	json_object_set_new(root, "changes", changes);
	text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(root);
	if (text == NULL || strlen(text) > FILES_STATE_MAX_BYTES) {
		xasprintf(cause, "cannot write mcpreel's state for %s%s",
		    st->config, text != NULL ? ": larger than its bound" : "");
		free(text);
		return -1;
	}
	rc = files_put(st->json, text, strlen(text), 0600, 0, 0, 0, cause);
	free(text);
	return rc;
}

/* Remove a file's state (ledger and backup). */
int
files_state_remove(const struct files_state *st, char **cause)
{
	if ((unlink(st->json) == -1 && errno != ENOENT) ||
	    (unlink(st->backup) == -1 && errno != ENOENT)) {
		xasprintf(cause, "cannot remove mcpreel's state for %s: %s",
		    st->config, strerror(errno));
		return -1;
	}
	return 0;
}

/* A change's entry as an index key: container, '\x1e', name. */
static char *
files_entry_key(const struct hcfg_change *c, size_t *len)
{
	char	*k;

	*len = (size_t)xasprintf(&k, "%s\x1e%s", c->container, c->name);
	return k;
}

/* Free one change's strings. */
static void
files_change_free(struct hcfg_change *c)
{
	free(c->container);
	free(c->name);
	free(c->before);
	free(c->after);
}

/*
 * Add wrap's changes to the ledger.  An entry already in it is replaced:
 * wrap changes only an entry that is not wrapped, so one the ledger has
 * was put back or rewritten by someone else since, and its text now is
 * what unwrap must give back.
 */
void
files_state_merge(struct files_state *st, const struct hcfg_changes *add)
{
	struct hcfg_change	*c;
	struct idmap		*index = idmap_new();
	char			*k;
	size_t			 i, n;
	int64_t			 at;

	for (i = 0; i < st->changes.n; i++) {
		k = files_entry_key(&st->changes.v[i], &n);
		idmap_put(index, k, n, (int64_t)i, NULL);
		free(k);
	}
	if (add->n > 0)
		st->changes.v = xreallocarray(st->changes.v,
		    st->changes.n + add->n, sizeof *st->changes.v);
	for (i = 0; i < add->n; i++) {
		k = files_entry_key(&add->v[i], &n);
		if (idmap_get(index, k, n, &at) == 0) {
			free(k);
			c = &st->changes.v[at];
			free(c->before);
			free(c->after);
			c->before = xstrdup(add->v[i].before);
			c->after = xstrdup(add->v[i].after);
			continue;
		}
		idmap_put(index, k, n, (int64_t)st->changes.n, NULL);
		free(k);
		c = &st->changes.v[st->changes.n++];
		c->container = xstrdup(add->v[i].container);
		c->name = xstrdup(add->v[i].name);
		c->before = xstrdup(add->v[i].before);
		c->after = xstrdup(add->v[i].after);
	}
	idmap_free(index);
}

/* Take the entries unwrap put back out of the ledger. */
void
files_state_drop(struct files_state *st, const struct hcfg_changes *gone)
{
	struct idmap	*index = idmap_new();
	char		*k;
	size_t		 i, j, n;
	int64_t		 at;

	for (i = 0; i < gone->n; i++) {
		k = files_entry_key(&gone->v[i], &n);
		idmap_put(index, k, n, 0, NULL);
		free(k);
	}
	for (i = j = 0; i < st->changes.n; i++) {
		k = files_entry_key(&st->changes.v[i], &n);
		if (idmap_get(index, k, n, &at) == 0)
			files_change_free(&st->changes.v[i]);
		else
			st->changes.v[j++] = st->changes.v[i];
		free(k);
	}
	st->changes.n = j;
	idmap_free(index);
}

/* Free what a state holds. */
void
files_state_clear(struct files_state *st)
{
	size_t	i;

	for (i = 0; i < st->changes.n; i++)
		files_change_free(&st->changes.v[i]);
	free(st->changes.v);
	free(st->json);
	free(st->backup);
	free(st->config);
	free(st->sha256);
	memset(st, 0, sizeof *st);
}
