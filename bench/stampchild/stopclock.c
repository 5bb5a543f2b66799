/*
 * stopclock: times a supervisor's stop from outside, for bench/stop.sh.
 *
 *   stopclock STAMPS N SETTLE_MS CMD [ARG...]
 *
 * N > 0 (stop): runs CMD, waits until STAMPS (bench/stampchild's file) has
 * N "exec" lines, waits SETTLE_MS, sends SIGTERM to CMD and waits for it.
 * Prints "stop_ms=A lastexit_ms=B end_ms=C firstterm_ms=D lastterm_ms=E":
 * A from the SIGTERM to CMD's exit, B from the SIGTERM to the last child's
 * "exit" stamp, C the larger of the two (a supervisor may exit before its
 * children: tini's main child is a shell that dies at once, its background
 * children after it), D and E from the SIGTERM to the first and the last
 * child's receipt of its own SIGTERM. It waits at most
 * 10 s for N "exit" lines and fails if they do not all come.
 *
 * N = 0 (job): runs CMD and waits for it. Prints "tail_ms=A": from the last
 * "exit" stamp in STAMPS to CMD's exit.
 *
 * CLOCK_REALTIME throughout: the children stamp with it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void nap(long us) {
	struct timespec d = {us / 1000000, (us % 1000000) * 1000L};
	nanosleep(&d, NULL);
}

/* scan counts the lines of KIND in path and their largest stamp (and the
 * smallest, if first is not NULL). */
static int scan2(const char *path, const char *kind, long long *last, long long *first) {
	FILE *f = fopen(path, "r");
	if (!f) return 0;
	char name[256], k[32];
	long long ns;
	int n = 0;
	*last = 0;
	if (first) *first = 0;
	while (fscanf(f, "%255s %31s %lld", name, k, &ns) == 3) {
		if (strcmp(k, kind) != 0) continue;
		n++;
		if (ns > *last) *last = ns;
		if (first && (*first == 0 || ns < *first)) *first = ns;
	}
	fclose(f);
	return n;
}

static int scan(const char *path, const char *kind, long long *last) { return scan2(path, kind, last, NULL); }

int main(int argc, char **argv) {
	if (argc < 5) {
		fprintf(stderr, "usage: stopclock STAMPS N SETTLE_MS CMD [ARG...]\n");
		return 2;
	}
	const char *stamps = argv[1];
	int n = atoi(argv[2]);
	long settle = atol(argv[3]);
	pid_t pid = fork();
	if (pid < 0) return 3;
	if (pid == 0) {
		setpgid(0, 0); /* tini -g signals its own group: not ours */
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	int st;
	long long last;
	if (n == 0) {
		if (waitpid(pid, &st, 0) < 0) return 4;
		long long t1 = now_ns();
		if (scan(stamps, "exit", &last) == 0) {
			fprintf(stderr, "stopclock: no exit stamp in %s\n", stamps);
			return 5;
		}
		printf("tail_ms=%.3f\n", (double)(t1 - last) / 1e6);
		return 0;
	}
	for (int i = 0;; i++) {
		if (scan(stamps, "exec", &last) >= n) break;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			fprintf(stderr, "stopclock: %s exited before %d children ran\n", argv[4], n);
			return 5;
		}
		if (i > 300 * 100) {
			fprintf(stderr, "stopclock: %d children not running after 300 s\n", n);
			kill(pid, SIGKILL);
			return 5;
		}
		nap(10000);
	}
	nap(settle * 1000);
	long long t0 = now_ns();
	kill(pid, SIGTERM);
	if (waitpid(pid, &st, 0) < 0) return 4;
	long long t1 = now_ns();
	int got = 0;
	for (int i = 0; i < 1000; i++) {
		if ((got = scan(stamps, "exit", &last)) >= n) break;
		nap(10000);
	}
	if (got < n) {
		fprintf(stderr, "stopclock: %d of %d children stamped their exit\n", got, n);
		return 6;
	}
	double a = (double)(t1 - t0) / 1e6, b = (double)(last - t0) / 1e6;
	long long tl, tf;
	scan2(stamps, "term", &tl, &tf);
	printf("stop_ms=%.3f lastexit_ms=%.3f end_ms=%.3f firstterm_ms=%.3f lastterm_ms=%.3f\n", a, b, a > b ? a : b,
	       (double)(tf - t0) / 1e6, (double)(tl - t0) / 1e6);
	return 0;
}
