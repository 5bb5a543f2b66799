/* numlines N: writes N lines of 100 bytes to stdout, line i being i in 99
 * decimal digits (zero-padded) and a newline, so that a reader can check
 * that nothing is lost or reordered. The counter is incremented in place:
 * the generator costs about what `print s` in awk costs (section 12).
 * With NUMLINES_START=FILE it first writes the time it started (Unix
 * nanoseconds) to FILE, so that a run can be timed from the generator's
 * start as well as from its launcher's.
 * numlines N json writes each line as podvisor's JSON line for it (a
 * fixed time): the bytes podvisor writes for --log-format json, 193 a
 * line, written by the generator itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	const char *start = getenv("NUMLINES_START");
	if (start != NULL) {
		FILE *f = fopen(start, "w");
		if (f == NULL || fprintf(f, "%lld%09ld\n", (long long)t0.tv_sec, t0.tv_nsec) < 0 || fclose(f) != 0)
			return 2;
	}
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int json = argc > 2 && strcmp(argv[2], "json") == 0;
	static const char head[] = "{\"time\":\"2026-01-02T03:04:05.678Z\",\"process\":\"gen\",\"stream\":\"stdout\",\"incarnation\":1,\"line\":\"";
	static char buf[1 << 16];
	char line[sizeof head - 1 + 99 + 3];
	char *digits = json ? line + sizeof head - 1 : line;
	size_t size = json ? sizeof line : 100;
	memcpy(line, head, sizeof head - 1);
	memset(digits, '0', 99);
	memcpy(digits + 99, json ? "\"}\n" : "\n", json ? 3 : 1);
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
	for (long i = 0; i < n; i++) {
		fwrite(line, 1, size, stdout);
		for (int j = 98; j >= 0; j--) {
			if (digits[j] != '9') {
				digits[j]++;
				break;
			}
			digits[j] = '0';
		}
	}
	return fflush(stdout) != 0;
}
