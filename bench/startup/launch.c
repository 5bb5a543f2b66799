/*
 * launch: the clock of bench/startup.sh. Two roles, one binary, so both ends
 * of a measurement are stamped the same way (CLOCK_REALTIME, one write(2) of
 * "NAME KIND NANOSECONDS" to FILE, opened O_APPEND):
 *
 *   launch FILE run CMD [ARG...]  stamps "launch start", forks, execs CMD in
 *                                 the child, waits for it and stamps
 *                                 "launch end"; exits with CMD's status.
 *   launch FILE child NAME        stamps "NAME exec" then "NAME exit" and
 *                                 exits 0: the supervised process, whose
 *                                 start-up adds no runtime of its own.
 *
 * So a supervisor's start is "c exec" - "launch start" (the fork and exec of
 * the supervisor, its initialisation, its fork and exec of the child), and
 * its exit is "launch end" - "c exit" (the child's exit, the supervisor's
 * reaping and its own exit, the launcher's wake-up).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int out = -1;

static void stamp(const char *name, const char *kind) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char buf[256];
	int n = snprintf(buf, sizeof buf, "%s %s %lld%09ld\n", name, kind, (long long)ts.tv_sec, ts.tv_nsec);
	if (n <= 0 || write(out, buf, (size_t)n) != n) _exit(3);
}

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: launch FILE run CMD [ARG...] | launch FILE child NAME\n");
		return 2;
	}
	out = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (out < 0) return 3;
	if (strcmp(argv[2], "child") == 0) {
		stamp(argv[3], "exec");
		stamp(argv[3], "exit");
		return 0;
	}
	if (strcmp(argv[2], "run") != 0) return 2;
	stamp("launch", "start");
	pid_t p = fork();
	if (p < 0) return 3;
	if (p == 0) {
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	int st = 0;
	while (waitpid(p, &st, 0) < 0) {
	}
	stamp("launch", "end");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
