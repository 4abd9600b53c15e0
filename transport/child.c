/*
 * The server as a child process: forked and exec'd (argv, never a shell)
 * on three pipes, killed with us if we die (PR_SET_PDEATHSIG), reaped on SIGCHLD, and stopped the way the MCP
 * SDKs stop a stdio server: close its stdin, wait, SIGTERM, wait, SIGKILL.
 */

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "transport.h"

/* The size asked for the server's stdin and stdout pipes. */
#define CHILD_PIPE_SIZE		(1024 * 1024)

extern char **environ;

struct child {
	struct event_base	*base;
	pid_t			 pid;
	int			 fd_in;		/* our end of its stdin */
	int			 fd_out;	/* our end of its stdout */
	int			 fd_err;	/* our end of its stderr */
	enum child_state	 state;
	int			 status;	/* from waitpid, once exited */
	struct event		*sigchld;
	struct event		*timer;
	child_exit_cb		 exit_cb;
	void			*exit_arg;
};

static const char *child_state_names[CHILD_MAX] = {
	"running", "stopping", "terminating", "killing", "exited"
};

static int	child_reap(struct child *);
static void	child_sigchld_cb(evutil_socket_t, short, void *);
static void	child_timer_cb(evutil_socket_t, short, void *);

static void
child_set_state(struct child *c, enum child_state state)
{
	if (state >= CHILD_MAX || state < c->state)
		fatalx("child %ld: bad state change %d -> %d", (long)c->pid,
		    c->state, state);
	log_debug("server pid %ld: %s -> %s", (long)c->pid,
	    child_state_names[c->state], child_state_names[state]);
	c->state = state;
}

static void
close_pair(int p[2])
{
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
}

/* The signals we catch or ignore, which the server must start without. */
static const int child_default_signals[] = {
	SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD
};

/*
 * In a forked child before exec: the signals we catch or ignore back to
 * their defaults, and nothing blocked, so that the command starts as it
 * would from a shell.  Async-signal-safe; for every child we run.
 */
void
child_reset_signals(void)
{
	struct sigaction	 sa;
	sigset_t		 none;
	size_t			 i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof child_default_signals /
	    sizeof child_default_signals[0]; i++)
		sigaction(child_default_signals[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * In the forked child: become the server.  Only async-signal-safe calls
 * (the parent may have other threads).  PR_SET_PDEATHSIG makes the kernel
 * SIGKILL the server when we die, even by SIGKILL, so a server that
 * ignores SIGTERM does not outlive a killed mcpreel; it survives the exec.
 * If we died before it was set, getppid() is no longer us: exit at once.
 * An exec failure goes back to the parent as errno on report.
 */
static void __attribute__((noreturn))
child_exec(char *const argv[], char *const paths[], pid_t parent, int in,
    int out, int err, int report)
{
	size_t			 i;
	int			 e = ENOENT, denied = 0;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(1);
	/* Every signal is blocked (child_fork_exec): no handler of ours runs. */
	child_reset_signals();
	if (dup2(in, STDIN_FILENO) == -1 || dup2(out, STDOUT_FILENO) == -1 ||
	    dup2(err, STDERR_FILENO) == -1)
		goto fail;
	/*
	 * As execvp searches, but a file that is no executable format
	 * (ENOEXEC: no #! line) is an error, not a shell script.
	 */
	for (i = 0; paths[i] != NULL; i++) {
		execve(paths[i], argv, environ);
		if (errno == EACCES)
			denied = 1;
		else if (errno != ENOENT && errno != ENOTDIR)
			break;
	}
	e = paths[i] == NULL && denied ? EACCES : paths[i] == NULL ? ENOENT :
	    errno;
	goto report;
fail:
	e = errno;
report:
	(void)!write(report, &e, sizeof e);
	_exit(127);
}

/*
 * Where to look for argv0, as execvp would: itself when it has a '/',
 * else each directory of PATH ("/bin:/usr/bin" when unset; an empty
 * entry is the current directory).  Built before the fork: the child may
 * only make async-signal-safe calls.  NULL-terminated, allocated.
 */
static char **
child_paths(const char *argv0)
{
	const char	*path = getenv("PATH"), *p, *colon;
	char		**out;
	size_t		 n = 1, i = 0;
	int		 len;

	if (strchr(argv0, '/') != NULL) {
		out = xcalloc(2, sizeof *out);
		out[0] = xstrdup(argv0);
		return out;
	}
	if (path == NULL)
		path = "/bin:/usr/bin";
	for (p = path; *p != '\0'; p++)
		n += *p == ':';
	out = xcalloc(n + 1, sizeof *out);
	for (p = path; i < n; p = colon + 1) {
		if ((colon = strchr(p, ':')) == NULL)
			colon = p + strlen(p);
		len = (int)(colon - p);
		if (len == 0)
			out[i++] = xstrdup(argv0);
		else
			xasprintf(&out[i++], "%.*s/%s", len, p, argv0);
		if (*colon == '\0')
			break;
	}
	return out;
}

/*
 * Fork and exec argv with in, out and err as its stdin, stdout and
 * stderr.  Return 0 with *pid set, or the errno of what failed (fork, or
 * the exec, reported through a close-on-exec pipe: its EOF means the exec
 * worked).
 */
static int
child_fork_exec(char *const argv[], int in, int out, int err, pid_t *pid)
{
	pid_t	 parent = getpid(), p;
	sigset_t all, old;
	char	**paths;
	size_t	 i;
	int	 report[2], e = 0, rc;
	ssize_t	 n;

	if (pipe2(report, O_CLOEXEC) != 0)
		return errno;
	paths = child_paths(argv[0]);
	/*
	 * As posix_spawn does: every signal blocked across the fork, so that
	 * our handlers (libevent's, writing to its socketpair shared with
	 * us) never run in the child before it resets them.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p = fork();
	if (p == 0) {
		close(report[0]);
		child_exec(argv, paths, parent, in, out, err, report[1]);
	}
	rc = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (i = 0; paths[i] != NULL; i++)
		free(paths[i]);
	free(paths);
	if (p == -1) {
		close_pair(report);
		return rc;
	}
	close(report[1]);
	do
		n = read(report[0], &e, sizeof e);
	while (n == -1 && errno == EINTR);
	close(report[0]);
	if (n == (ssize_t)sizeof e) {
		while (waitpid(p, NULL, 0) == -1 && errno == EINTR)
			;
		return e != 0 ? e : EINVAL;
	}
	*pid = p;
	return 0;
}

/*
 * Spawn argv with its stdin, stdout and stderr on pipes to us (our ends
 * non-blocking).  exit_cb runs from the loop once it has exited and been
 * reaped, unless it had already exited on return (check the state).  On
 * failure return NULL with *cause set and *code the shell's exit status
 * for it: 127 for a command not found, 126 for one that cannot run.
 */
struct child *
child_spawn(struct event_base *base, char *const argv[], child_exit_cb cb,
    void *arg, int *code, char **cause)
{
	struct child		*c;
	int			 in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int			 err[2] = { -1, -1 }, rc;
	pid_t			 pid = -1;

	*code = 1;
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    pipe2(err, O_CLOEXEC) != 0) {
		xasprintf(cause, "cannot create pipes for the server: %s",
		    strerror(errno));
		goto fail;
	}
	/*
	 * 64 KiB pipes move a big message in many small steps, each a
	 * wake-up on both sides; ask for more (a hint: fs/pipe-max-size).
	 */
	(void)fcntl(in[1], F_SETPIPE_SZ, CHILD_PIPE_SIZE);
	(void)fcntl(out[0], F_SETPIPE_SZ, CHILD_PIPE_SIZE);

	rc = child_fork_exec(argv, in[0], out[1], err[1], &pid);
	if (rc != 0) {
		if (rc == ENOENT) {
			*code = 127;
			xasprintf(cause, "cannot run '%s': command not found "
			    "(check the server command and PATH)", argv[0]);
		} else {
			*code = (rc == EACCES || rc == ENOEXEC) ? 126 : 1;
			xasprintf(cause, "cannot run '%s': %s", argv[0],
			    strerror(rc));
		}
		goto fail;
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);

	c = xcalloc(1, sizeof *c);
	c->base = base;
	c->pid = pid;
	c->fd_in = in[1];
	c->fd_out = out[0];
	c->fd_err = err[0];
	c->state = CHILD_RUNNING;
	c->exit_cb = cb;
	c->exit_arg = arg;
	evutil_make_socket_nonblocking(c->fd_in);
	evutil_make_socket_nonblocking(c->fd_out);
	evutil_make_socket_nonblocking(c->fd_err);
	c->sigchld = evsignal_new(base, SIGCHLD, child_sigchld_cb, c);
	c->timer = evtimer_new(base, child_timer_cb, c);
	evsignal_add(c->sigchld, NULL);
	log_debug("spawned server pid %ld: %s", (long)pid, argv[0]);

	/*
	 * It may have exited before the signal event was added: then the
	 * state says so and exit_cb is not called; the caller checks.
	 */
	child_reap(c);
	return c;
fail:
	close_pair(in);
	close_pair(out);
	close_pair(err);
	return NULL;
}

/* Free the child; the caller has closed or handed off the pipe ends. */
void
child_free(struct child *c)
{
	if (c == NULL)
		return;
	if (c->sigchld != NULL)
		event_free(c->sigchld);
	if (c->timer != NULL)
		event_free(c->timer);
	free(c);
}

pid_t
child_pid(const struct child *c)
{
	return c->pid;
}

int
child_stdin_fd(const struct child *c)
{
	return c->fd_in;
}

int
child_stdout_fd(const struct child *c)
{
	return c->fd_out;
}

int
child_stderr_fd(const struct child *c)
{
	return c->fd_err;
}

enum child_state
child_get_state(const struct child *c)
{
	return c->state;
}

/* Reap the child if it has exited; returns 1 the first time it has. */
static int
child_reap(struct child *c)
{
	pid_t	pid;
	int	status;

	if (c->state == CHILD_EXITED)
		return 0;
	do
		pid = waitpid(c->pid, &status, WNOHANG);
	while (pid == -1 && errno == EINTR);
	if (pid != c->pid)
		return 0;
	c->status = status;
	evtimer_del(c->timer);
	evsignal_del(c->sigchld);
	child_set_state(c, CHILD_EXITED);
	return 1;
}

static void
child_sigchld_cb(evutil_socket_t fd, short events, void *arg)
{
	struct child	*c = arg;

	if (child_reap(c) && c->exit_cb != NULL)
		c->exit_cb(c, c->exit_arg);
}

static void
child_arm(struct child *c, int ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(c->timer, &tv);
}

/*
 * The server's stdin has been closed: give it CHILD_STDIN_GRACE_MS to exit
 * by itself, then SIGTERM, then SIGKILL.
 */
void
child_stop(struct child *c)
{
	if (c->state != CHILD_RUNNING)
		return;
	child_set_state(c, CHILD_STOPPING);
	child_arm(c, CHILD_STDIN_GRACE_MS);
}

static void
child_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct child	*c = arg;

	switch (c->state) {
	case CHILD_STOPPING:
		log_info("server pid %ld still running %d ms after its stdin "
		    "closed: sending SIGTERM", (long)c->pid,
		    CHILD_STDIN_GRACE_MS);
		child_set_state(c, CHILD_TERMINATING);
		kill(c->pid, SIGTERM);
		child_arm(c, CHILD_TERM_GRACE_MS);
		break;
	case CHILD_TERMINATING:
		log_warnx("server pid %ld ignored SIGTERM for %d ms: sending "
		    "SIGKILL", (long)c->pid, CHILD_TERM_GRACE_MS);
		child_set_state(c, CHILD_KILLING);
		kill(c->pid, SIGKILL);
		break;
	default:
		break;
	}
}

/* Pass a signal on to the server (ours were forwarded, say). */
void
child_signal(struct child *c, int sig)
{
	if (c->state != CHILD_EXITED)
		kill(c->pid, sig);
}

/* The exit status a shell would report: 128+N when killed by signal N. */
int
child_exit_code(const struct child *c)
{
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	return 1;
}

/* The signal that killed it, or 0. */
int
child_exit_signal(const struct child *c)
{
	return WIFSIGNALED(c->status) ? WTERMSIG(c->status) : 0;
}

/* How it ended, in words (the caller frees). */
char *
child_exit_text(const struct child *c)
{
	char	*s;

	if (WIFSIGNALED(c->status))
		xasprintf(&s, "server killed by signal %d (%s)",
		    WTERMSIG(c->status), strsignal(WTERMSIG(c->status)));
	else
		xasprintf(&s, "server exited with status %d",
		    child_exit_code(c));
	return s;
}
