/*
 * stampchild: the workload of podvisor's effect-level benchmarks. It records
 * its own CLOCK_REALTIME at the instants a user sees: when it has exec'd,
 * when it signals readiness, when it receives SIGTERM, and just before it
 * exits. A C program, so its start-up adds no runtime of its own to a hop.
 *
 * Usage: stampchild FILE NAME MODE [ADDR] [EXIT_DELAY_MS]
 *
 * Every instant is one line "NAME KIND NANOSECONDS" appended to FILE with a
 * single write(2) (O_APPEND: many children may share the file). KIND is
 * exec, ready, term or exit. MODE says how readiness is signalled:
 *   none     no readiness; just wait for SIGTERM
 *   log      "READY" on stdout
 *   systemd  "READY=1" to $NOTIFY_SOCKET
 *   fd       a newline on fd 3 (s6's notification fd)
 *   tcp      after 50 ms, listen on ADDR (host:port) and accept/close
 *   http     after 50 ms, listen on ADDR and answer every request 200
 *   exit     no readiness; stamp "exit" and exit 0 at once (a job)
 * For tcp and http the "ready" instant is the bind. With STAMPCHILD_DELAY_MS
 * in the environment, the child waits that long before it signals readiness
 * (log, systemd, fd). On SIGTERM the child stamps "term", waits
 * EXIT_DELAY_MS (default 0), stamps "exit" and exits 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int out = -1;
static const char *name = "?";
static volatile sig_atomic_t termed = 0;

/* stamp appends "NAME KIND NS\n"; async-signal-safe (no stdio). */
static void stamp(const char *kind) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char buf[256], num[32];
	unsigned long long ns = (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
	int n = 0;
	do {
		num[n++] = (char)('0' + ns % 10);
		ns /= 10;
	} while (ns > 0);
	size_t len = 0;
	for (const char *p = name; *p && len < 180; p++) buf[len++] = *p;
	buf[len++] = ' ';
	for (const char *p = kind; *p; p++) buf[len++] = *p;
	buf[len++] = ' ';
	while (n > 0) buf[len++] = num[--n];
	buf[len++] = '\n';
	if (write(out, buf, len) < 0) _exit(3);
}

static void on_term(int sig) {
	(void)sig;
	if (!termed) stamp("term");
	termed = 1;
}

static int listen_on(const char *addr) {
	char host[64];
	const char *colon = strrchr(addr, ':');
	if (!colon || (size_t)(colon - addr) >= sizeof host) return -1;
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(colon + 1))};
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) return -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 128) < 0) return -1;
	return fd;
}

static void notify_systemd(void) {
	const char *path = getenv("NOTIFY_SOCKET");
	if (!path) _exit(4);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len = strlen(path);
	if (len >= sizeof sa.sun_path) _exit(4);
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@') sa.sun_path[0] = 0;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) _exit(4);
	stamp("ready");
	if (sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0) _exit(4);
	close(fd);
}

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: stampchild FILE NAME MODE [ADDR] [EXIT_DELAY_MS]\n");
		return 2;
	}
	out = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (out < 0) return 3;
	name = argv[2];
	const char *mode = argv[3];
	const char *addr = argc > 4 ? argv[4] : "";
	long delay = argc > 5 ? atol(argv[5]) : 0;

	/* No SA_RESTART: SIGTERM interrupts accept() and pause(). */
	struct sigaction sa = {.sa_handler = on_term};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	stamp("exec");

	const char *pre = getenv("STAMPCHILD_DELAY_MS");
	if (pre && strcmp(mode, "tcp") != 0 && strcmp(mode, "http") != 0) {
		long ms = atol(pre);
		struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
		while (nanosleep(&d, &d) < 0 && errno == EINTR && !termed) {
		}
	}

	int lfd = -1;
	if (strcmp(mode, "exit") == 0) {
		stamp("exit");
		return 0;
	}
	if (strcmp(mode, "log") == 0) {
		stamp("ready");
		if (write(1, "READY\n", 6) < 0) return 4;
	} else if (strcmp(mode, "systemd") == 0) {
		notify_systemd();
	} else if (strcmp(mode, "fd") == 0) {
		stamp("ready");
		if (write(3, "\n", 1) < 0) return 4;
		close(3);
	} else if (strcmp(mode, "tcp") == 0 || strcmp(mode, "http") == 0) {
		struct timespec d = {0, 50 * 1000000L};
		while (nanosleep(&d, &d) < 0 && errno == EINTR && !termed) {
		}
		if (!termed) {
			lfd = listen_on(addr);
			if (lfd < 0) return 5;
			stamp("ready");
		}
	} else if (strcmp(mode, "none") != 0) {
		fprintf(stderr, "stampchild: unknown mode %s\n", mode);
		return 2;
	}

	int http = strcmp(mode, "http") == 0;
	while (!termed) {
		if (lfd < 0) {
			pause();
			continue;
		}
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) continue; /* EINTR on SIGTERM */
		if (http) {
			char req[2048];
			ssize_t n = read(c, req, sizeof req);
			(void)n;
			static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
			if (write(c, resp, sizeof resp - 1) < 0) {
			}
		}
		close(c);
	}
	if (delay > 0) {
		struct timespec d = {delay / 1000, (delay % 1000) * 1000000L};
		while (nanosleep(&d, &d) < 0 && errno == EINTR) {
		}
	}
	stamp("exit");
	return 0;
}
