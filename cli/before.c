/*
 * replay --before: a shell command run before the replay starts, to put
 * a stateful server's files back as they were when the session was
 * recorded.
 *
 * The command runs in its own process group: when we get SIGINT, SIGTERM
 * or SIGHUP while it runs, the whole group (the shell and what it
 * started) gets the same signal, and then so do we.  It has no timeout:
 * a command that hangs holds the replay until it is interrupted.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The signals that stop us, and with us the command's process group. */
static const int before_stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define BEFORE_NSTOP (sizeof before_stop_signals / sizeof before_stop_signals[0])

/* The running command's process group, and the stop signal we got. */
static volatile pid_t		before_pgid;
static volatile sig_atomic_t	before_signal;

/* A stop signal while the command runs: pass it on to its group. */
static void
before_signal_cb(int sig)
{
	int	saved = errno;

	before_signal = sig;
	if (before_pgid > 0)
		kill(-before_pgid, sig);
	errno = saved;
}

/* The command as messages show it, secrets redacted as log lines are. */
static char *
before_label(const char *cmd)
{
	struct redact	*rules = redact_new(1);
	char		*red, *s;
	size_t		 rlen;

	if (redact_text(rules, cmd, strlen(cmd), &red, &rlen) != 0) {
		s = xstrndup(red, rlen);
		free(red);
	} else
		s = xstrdup(cmd);
	redact_free(rules);
	return s;
}

/* In the forked child: become sh -c cmd, its stdout on our stderr. */
static void __attribute__((noreturn))
before_exec(const char *cmd)
{
	int	fd;

	setpgid(0, 0);
	child_reset_signals();
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) != -1) {
		dup2(fd, STDIN_FILENO);
		if (fd != STDIN_FILENO)
			close(fd);
	}
	if (dup2(STDERR_FILENO, STDOUT_FILENO) == -1)
		_exit(127);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

/*
 * Run cmd with /bin/sh -c, its stdout sent to our stderr (our stdout may
 * be the report) and its stdin from /dev/null, and wait for it; -1 with
 * *cause naming the command (redacted) and how it ended unless it exited
 * with 0.
 */
int
before_run(const char *cmd, char **cause)
{
	struct sigaction	 sa, old_chld, old_stop[BEFORE_NSTOP];
	sigset_t		 stop, old_mask;
	pid_t			 pid;
	size_t			 i;
	char			*label = before_label(cmd);
	int			 status = 0, e, r = -1, sig;

	log_info("replay: running --before %s", label);
	fflush(stdout);
	fflush(stderr);

	/*
	 * SIGCHLD at its default, or an inherited SIG_IGN lets the kernel
	 * reap the command and waitpid fails with ECHILD.  The stop signals
	 * are blocked across the fork and caught until it is reaped (unless
	 * ignored, as under nohup: then they stay ignored).
	 */
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, &old_chld);
	sigemptyset(&stop);
	for (i = 0; i < BEFORE_NSTOP; i++)
		sigaddset(&stop, before_stop_signals[i]);
	sigprocmask(SIG_BLOCK, &stop, &old_mask);
	before_pgid = 0;
	before_signal = 0;
	sa.sa_handler = before_signal_cb;
	for (i = 0; i < BEFORE_NSTOP; i++) {
		sigaction(before_stop_signals[i], NULL, &old_stop[i]);
		if (old_stop[i].sa_handler != SIG_IGN)
			sigaction(before_stop_signals[i], &sa, NULL);
	}

	if ((pid = fork()) == -1) {
		e = errno;
		xasprintf(cause, "--before '%s': cannot start it: %s", label,
		    strerror(e));
		goto out;
	}
	if (pid == 0)
		before_exec(cmd);
	/* Set on both sides: whichever runs first, it is set before use. */
	setpgid(pid, pid);
	before_pgid = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);

	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR) {
			e = errno;
			xasprintf(cause, "--before '%s': cannot wait for it: "
			    "%s", label, strerror(e));
			goto out;
		}
	}
	if (before_signal != 0)
		xasprintf(cause, "--before '%s' was stopped: mcpreel got "
		    "signal %d (%s)", label, (int)before_signal,
		    strsignal(before_signal));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		r = 0;
	else if (WIFEXITED(status))
		xasprintf(cause, "--before '%s' exited with status %d, so the "
		    "replay was not started (its output, if any, is above); "
		    "fix the command and replay again", label,
		    WEXITSTATUS(status));
	else
		xasprintf(cause, "--before '%s' was killed by signal %d (%s), "
		    "so the replay was not started; fix the command and "
		    "replay again", label, WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
out:
	sigprocmask(SIG_BLOCK, &stop, NULL);
	before_pgid = 0;
	for (i = 0; i < BEFORE_NSTOP; i++)
		sigaction(before_stop_signals[i], &old_stop[i], NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	sig = before_signal;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	free(label);
	/* Stopped by a signal: it does to us what it would have done. */
	if (sig != 0)
		raise(sig);
	return r;
}
