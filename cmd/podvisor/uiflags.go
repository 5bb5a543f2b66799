package main

import (
	"flag"
	"os"

	"github.com/podvisor/podvisor/internal/control"
)

// uiFlags defines ui's flags (cmdUI and the command table share it).
func uiFlags(fs *flag.FlagSet) (path, httpURL, tokenFile *string) {
	path = fs.String("control", defaultControl(), "control socket `PATH` of the podvisor to watch ($PODVISOR_CONTROL, else this project's run -d, else "+control.DefaultPath(os.Geteuid(), os.Getenv)+")")
	httpURL = fs.String("http", "", "watch the podvisor at this HTTP `URL` instead (its web page's routes; actions need --token-file)")
	tokenFile = fs.String("token-file", "", "with --http: `FILE` holding the token of the podvisor's ui.token_file, for actions")
	return path, httpURL, tokenFile
}
