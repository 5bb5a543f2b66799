package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/kube"
)

// podListing is one pod in kube ps: with -o json, the API's KubePod
// (schema/openapi.json).
type podListing struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace"`
	Pid       int       `json:"pid"`
	Phase     string    `json:"phase"` // Pending, Running, Succeeded, Failed; Unknown without a socket
	Ready     int       `json:"ready"`
	Total     int       `json:"total"`
	Socket    string    `json:"socket"`
	Address   string    `json:"address"`
	Since     time.Time `json:"since"`
	Manifest  string    `json:"manifest"`
}

// podList is kube ps -o json: the API's KubePods.
type podList struct {
	Pods []podListing `json:"pods"`
}

func kubePsFlags(fs *flag.FlagSet) *output { return outputFlag(fs) }

// cmdKubePs lists the pods played on this machine, each with its phase and
// ready containers as its control socket tells.
func cmdKubePs(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kube ps", stderr)
	out := kubePsFlags(fs)
	if _, code, ok := parseKubeArgs(fs, args, 0, "unexpected argument", stderr); !ok {
		return code
	}
	recs, err := kube.Pods(podsDir())
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube ps: %v\n", err)
		return exitFail
	}
	list := podList{Pods: []podListing{}}
	for _, rec := range recs {
		list.Pods = append(list.Pods, listPod(rec))
	}
	if *out == outputJSON {
		if err := writeJSON(stdout, list); err != nil {
			fmt.Fprintf(stderr, "podvisor kube ps: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tNAMESPACE\tPID\tPHASE\tREADY\tSOCKET\tADDRESS\tAGE")
	now := time.Now()
	for _, p := range list.Pods {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d/%d\t%s\t%s\t%s\n", p.Name, p.Namespace, p.Pid, p.Phase, p.Ready, p.Total,
			orDash(p.Socket), orDash(p.Address), now.Sub(p.Since).Round(time.Second))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "podvisor kube ps: %v\n", err)
		return exitFail
	}
	return exitOK
}

// listPod asks the pod's socket for its phase and readiness.
func listPod(rec kube.PodRecord) podListing {
	p := podListing{Name: rec.Name, Namespace: rec.Namespace, Pid: rec.Pid, Phase: "Unknown", Socket: rec.Socket,
		Address: rec.Address, Since: rec.Since, Manifest: rec.Manifest}
	if rec.Socket == "" {
		return p
	}
	ctx, cancel := context.WithTimeout(context.Background(), control.DefaultTimeout)
	defer cancel()
	if st, err := podStatus(ctx, rec.Socket); err == nil && st.Pod != nil {
		p.Phase, p.Ready, p.Total = st.Pod.Phase, st.Pod.Ready, st.Pod.Total
	}
	return p
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
