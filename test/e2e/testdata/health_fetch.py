"""Print the HTTP status code a GET of URL answers (0 when nothing answers).

usage: health_fetch.py URL

Used by a child's SIGTERM handler to see what podvisor's /readyz says at the
moment the child is asked to stop. The body is not printed.
"""

import sys
import urllib.error
import urllib.request


def main():
    # No proxy: the target is on this host whatever *_proxy says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(sys.argv[1], timeout=5) as resp:
            code = resp.status
    except urllib.error.HTTPError as e:
        code = e.code
    except OSError:
        code = 0
    print(code, flush=True)


main()
