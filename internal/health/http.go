package health

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

const (
	// maxRedirects is how many same-host redirects one attempt follows (so at
	// most maxRedirects+1 requests), as the kubelet does.
	maxRedirects = 10
	// maxBodyRead bounds how much of a response body is read before the
	// connection is closed; the body is only drained, never inspected.
	maxBodyRead = 10 << 10
	userAgent   = "podvisor/probe"
)

// httpChecker GETs a URL: 200-399 is success (or what accept says).
//
// Redirects are followed only to the same host name (the port may differ),
// at most maxRedirects times. A redirect to another host is not followed: the
// 3xx response itself is the result, a success with a Detail saying so. This
// matches the kubelet, which also counts it as success (plus a warning event),
// and keeps a probe from being steered to an arbitrary host.
//
// Every attempt uses a fresh connection (keep-alives off): probes are rare,
// and a pooled connection a hung server never answers would pile up fds.
// TLS certificates are not verified and no proxy is used, as for kubelet
// probes: a probe asks "does it answer", not "is it who it claims to be".
type httpChecker struct {
	url    string
	host   string // the URL's host name: redirects are followed only there
	accept func(code int) bool
	client *http.Client
	direct *directHTTP // plain http: the cheap path, see directHTTP
}

var _ Checker = (*httpChecker)(nil)

// NewHTTPChecker returns a checker that GETs rawURL. accept decides which
// status codes are success; nil means 200-399.
func NewHTTPChecker(rawURL string, accept func(code int) bool) (Checker, error) {
	return newHTTPChecker(rawURL, accept, false)
}

// NewH2CChecker returns a checker that GETs an http:// URL over HTTP/2
// without TLS, with prior knowledge (h2c), as the kubelet's httpGet probe
// with protocol HTTP2 does; 200-399 is success.
func NewH2CChecker(rawURL string) (Checker, error) {
	return newHTTPChecker(rawURL, nil, true)
}

func newHTTPChecker(rawURL string, accept func(code int) bool, h2c bool) (Checker, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("http probe: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("http probe %q: scheme must be http or https", rawURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("http probe %q: no host", rawURL)
	}
	if h2c && u.Scheme != "http" {
		return nil, fmt.Errorf("http probe %q: h2c needs an http:// URL", rawURL)
	}
	if accept == nil {
		accept = func(code int) bool { return code >= 200 && code < 400 }
	}
	tr := probeTransport()
	if h2c {
		tr = http2Transport(false)
	}
	c := &httpChecker{url: u.String(), host: u.Hostname(), accept: accept}
	if u.Scheme == "http" && !h2c {
		c.direct = newDirectHTTP(u)
	}
	c.client = &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Hostname() != c.host {
				return http.ErrUseLastResponse
			}
			done, _ := req.Context().Value(redirectsDone{}).(int)
			if len(via)+done > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil
		},
	}
	return c, nil
}

// probeTransport is the transport of a probe: a fresh connection each
// attempt, no proxy, TLS certificates not checked (see httpChecker).
func probeTransport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DisableKeepAlives:      true,
		TLSClientConfig:        &tls.Config{InsecureSkipVerify: true}, // kubelet semantics, see httpChecker
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     true,
	}
}

// redirectsDone is the context key for redirects the direct path already
// followed, counted against maxRedirects by the client.
type redirectsDone struct{}

func (c *httpChecker) Check(ctx context.Context) Result {
	start := time.Now()
	target := c.url
	if c.direct != nil {
		code, loc, err := c.direct.do(ctx)
		if err != nil {
			return attemptFailed(ctx, start, err)
		}
		next, perr := url.Parse(loc)
		if loc == "" || perr != nil {
			return c.result(code, loc)
		}
		next = c.direct.req.URL.ResolveReference(next)
		if next.Hostname() != c.host {
			return c.result(code, loc) // not followed, see httpChecker
		}
		// Same host: the client follows it, one redirect already spent.
		target = next.String()
		ctx = context.WithValue(ctx, redirectsDone{}, 1)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return failure("%v", err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "*/*")
	resp, err := c.client.Do(req)
	if err != nil {
		return attemptFailed(ctx, start, err)
	}
	_, _ = io.CopyN(io.Discard, resp.Body, maxBodyRead)
	resp.Body.Close()
	return c.result(resp.StatusCode, resp.Header.Get("Location"))
}

// attemptFailed is the Result of an attempt begun at start that failed
// with err: cut short by ctx, podvisor's own limit, or the peer's doing
// (without net/http's "Get URL:" wrapping, which the Detail does not need).
func attemptFailed(ctx context.Context, start time.Time, err error) Result {
	if r, ok := cutShort(ctx, start, err); ok {
		return r
	}
	if r, ok := ownLimit(err, false); ok {
		return r
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return failure("%v", err)
}

// result judges a final response: its code, and its Location header if any.
func (c *httpChecker) result(code int, loc string) Result {
	if !c.accept(code) {
		return failure("HTTP %d", code)
	}
	if code >= 300 && code < 400 && loc != "" {
		// A followed redirect never ends here: this one points to another host.
		return Result{OK: true, Detail: fmt.Sprintf("HTTP %d: redirect to another host not followed: %s", code, clip(loc, 200))}
	}
	return Result{OK: true, Detail: fmt.Sprintf("HTTP %d", code)}
}
