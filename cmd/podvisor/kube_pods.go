package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/kube"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// Several pods at once (docs/kubernetes.md, "Several pods at once"): each
// played pod has its own control socket, PODS/NAME.sock, and a record,
// PODS/NAME.json, that kube ps lists and kube down and --pod resolve.

// podsDirEnv overrides where played pods keep their records and sockets.
const podsDirEnv = "PODVISOR_KUBE_PODS"

// podsDir is $PODVISOR_KUBE_PODS, else "pods" beside the default control
// socket: /run/podvisor/pods as root.
func podsDir() string {
	if d := os.Getenv(podsDirEnv); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(control.DefaultPath(os.Geteuid(), os.Getenv)), "pods")
}

// playPod is a pod about to run: its record and its containers' roles.
type playPod struct {
	Record   kube.PodRecord
	Roles    server.PodRoles
	Hostname string // the pod's, in its UTS namespace (as root)
	// FQDN is hostname.subdomain.NAMESPACE.svc.cluster.local when the pod
	// has a subdomain, as the kubelet makes it; written into the pod's
	// /etc/hosts (as root). "": none.
	FQDN string
	// Pace is the kubelet's pace, or zero (kube_pace.go).
	Pace supervisor.Pace
}

// newPlayPod describes the pod w's run: its control socket is the pod's
// own unless $PODVISOR_CONTROL says otherwise, its HTTP listener off
// unless --listen gives one.
func newPlayPod(f *playFlags, file string, w *kube.Workload, res *kube.Result) (*playPod, error) {
	now := time.Now()
	start, err := kube.ProcStart(os.Getpid())
	if err != nil {
		return nil, err
	}
	manifest, _ := filepath.Abs(file)
	rec := kube.PodRecord{Name: w.Meta.Name, Namespace: w.Meta.Namespace, Pid: os.Getpid(), Start: start, Since: now,
		Manifest: manifest, Claims: claimPaths(res.Volumes)}
	if rec.Namespace == "" {
		rec.Namespace = "default"
	}
	if _, err := kube.PodFile(podsDir(), rec.Name); err != nil {
		return nil, err
	}
	switch env := os.Getenv("PODVISOR_CONTROL"); env {
	case "":
		rec.Socket = filepath.Join(podsDir(), rec.Name+".sock")
	case control.Off:
	default:
		rec.Socket = env
	}
	if *f.listen != "" && *f.listen != "off" {
		rec.Address = *f.listen
	}
	roles := server.PodRoles{RestartPolicy: w.Spec.RestartPolicy, Since: now}
	if roles.RestartPolicy == "" {
		roles.RestartPolicy = "Always"
	}
	for _, c := range w.Spec.InitContainers {
		if c.RestartPolicy == "Always" {
			roles.Sidecars = append(roles.Sidecars, c.Name)
		} else {
			roles.Init = append(roles.Init, c.Name)
		}
	}
	for _, c := range w.Spec.Containers {
		roles.Containers = append(roles.Containers, c.Name)
	}
	return &playPod{Record: rec, Roles: roles}, nil
}

// runArgs are podvisor run's arguments for the pod: its socket, and its
// HTTP listener (off by default: pods at once would share one port).
func (p *playPod) runArgs(f *playFlags, procsPath string) []string {
	args := []string{"-c", procsPath, "--listen", "off"}
	if *f.listen != "" {
		args[3] = *f.listen
	}
	if p.Record.Socket != "" && os.Getenv("PODVISOR_CONTROL") == "" {
		args = append(args, "--control", p.Record.Socket)
	}
	if *f.logFormat != "" {
		args = append(args, "--log-format", *f.logFormat)
	}
	return args
}

// claim writes the pod's record; release removes it.
func (p *playPod) claim(stderr io.Writer) (release func(), code int) {
	release, err := kube.ClaimPod(podsDir(), p.Record)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v; nothing was started\n", err)
		return nil, exitFail
	}
	return release, exitOK
}

// releaseOwn removes the record p names if this process wrote it (after
// the re-exec into the mount namespace, the same pid).
func (p *playPod) releaseOwn() {
	if p == nil || p.Record.Pid != os.Getpid() {
		return
	}
	if path, err := kube.PodFile(podsDir(), p.Record.Name); err == nil {
		os.Remove(path)
	}
}

// podFlag is --pod NAME: it sets the control socket to that pod's.
type podFlag struct{ path *string }

func (p podFlag) String() string { return "" }

func (p podFlag) Set(name string) error {
	socket, err := podSocket(name)
	if err != nil {
		return err
	}
	*p.path = socket
	return nil
}

// podSocket is the control socket of the pod kube play runs as name.
func podSocket(name string) (string, error) {
	rec, err := kube.FindPod(podsDir(), name)
	if err != nil {
		return "", err
	}
	if rec.Socket == "" {
		return "", fmt.Errorf("pod %s runs without a control socket ($PODVISOR_CONTROL=off when it started)", name)
	}
	return rec.Socket, nil
}

// podStatus fetches /status from a pod's control socket.
func podStatus(ctx context.Context, socket string) (server.Status, error) {
	return controlClient(socket).Status(ctx)
}

// clusterDomain is the kubelet's --cluster-domain of every kube play pod,
// the default of kubeadm and most clusters.
const clusterDomain = "cluster.local"

// podHostname is the pod's hostname as the kubelet makes it: spec.hostname
// when set, else the pod's name cut to 63 characters without a trailing
// '-' or '.'. With spec.subdomain the pod's FQDN is hostname.subdomain.
// NAMESPACE.svc.cluster.local; with setHostnameAsFQDN the hostname is the
// FQDN, at most 64 characters, as the kubelet refuses a longer one.
func podHostname(w *kube.Workload) (hostname, fqdn string, err error) {
	hostname = w.Meta.Name
	if len(hostname) > 63 {
		hostname = strings.TrimRight(hostname[:63], "-.")
	}
	if h := w.Spec.Hostname.Value; h != "" {
		if !kube.DNSLabel(h) {
			return "", "", fmt.Errorf("spec.hostname %q is not a DNS label (a-z, 0-9, '-', at most 63 characters), as the API server requires", h)
		}
		hostname = h
	}
	sub := w.Spec.Subdomain
	if sub == "" {
		return hostname, "", nil
	}
	if !kube.DNSLabel(sub) {
		return "", "", fmt.Errorf("spec.subdomain %q is not a DNS label (a-z, 0-9, '-', at most 63 characters), as the API server requires", sub)
	}
	ns := w.Meta.Namespace
	if ns == "" {
		ns = "default"
	}
	fqdn = hostname + "." + sub + "." + ns + ".svc." + clusterDomain
	if w.Spec.SetHostnameAsFQDN {
		if len(fqdn) > 64 {
			return "", "", fmt.Errorf("spec.setHostnameAsFQDN: the FQDN %s is %d characters, more than the 64 a hostname may have (the kubelet refuses the pod too); shorten spec.hostname or spec.subdomain", fqdn, len(fqdn))
		}
		hostname = fqdn
	}
	return hostname, fqdn, nil
}

// podHosts is the pod's /etc/hosts (as root, in its mount namespace, and
// in its images' roots): this machine's, whose network the pod shares, and a line naming
// the pod, as the kubelet writes it (with the FQDN for a pod with a
// subdomain). The address is 127.0.1.1 (Debian's address for the
// machine's own name): the pod has no address of its own.
func podHosts(hostname, fqdn string) ([]byte, error) {
	b, err := os.ReadFile("/etc/hosts")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	short, _, _ := strings.Cut(hostname, ".")
	if fqdn == "" {
		return append(b, "# kube play: the pod's name\n127.0.1.1\t"+short+"\n"...), nil
	}
	return append(b, "# kube play: the pod's name (spec.subdomain)\n127.0.1.1\t"+fqdn+"\t"+short+"\n"...), nil
}

// rootFiles writes, in the run's directory tmp, the files a container
// runtime gives every container of a pod, for the containers that run in
// their images' roots (on this machine they see these already): the pod's
// /etc/hosts (podHosts: the kubelet's managed file, this machine's lines
// kept as for a hostNetwork pod), /etc/hostname (the pod's hostname, as
// containerd and CRI-O write it) and /etc/resolv.conf (a copy of this
// machine's: the pod shares its network, as with dnsPolicy Default). It
// returns them by path inside the roots.
func rootFiles(tmp, hostname, fqdn string) (map[string]string, error) {
	hosts, err := podHosts(hostname, fqdn)
	if err != nil {
		return nil, err
	}
	resolv, err := os.ReadFile("/etc/resolv.conf")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	files := map[string]string{}
	for _, f := range []struct {
		target, name string
		data         []byte
	}{{"/etc/hosts", "etc-hosts", hosts}, {"/etc/hostname", "etc-hostname", []byte(hostname + "\n")}, {"/etc/resolv.conf", "etc-resolv.conf", resolv}} {
		p := filepath.Join(tmp, f.name)
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return nil, err
		}
		files[f.target] = p
	}
	return files, nil
}
