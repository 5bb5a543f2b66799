package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
)

// output is -o's value: how a command prints what a program might read.
// "json" prints the shapes of the API's schemas (schema/openapi.json,
// docs/api.md); "text" is for people.
type output string

const (
	outputText output = "text"
	outputJSON output = "json"
)

func (o *output) String() string {
	if o == nil || *o == "" {
		return string(outputText)
	}
	return string(*o)
}

func (o *output) Set(v string) error {
	switch output(v) {
	case outputText, outputJSON:
		*o = output(v)
		return nil
	}
	return errors.New("want text or json, such as -o json")
}

// outputFlag registers -o, the one spelling of the output format on every
// command that has one.
func outputFlag(fs *flag.FlagSet) *output {
	o := outputText
	fs.Var(&o, "o", "output `FORMAT`: text, or json (the API's schemas; docs/api.md)")
	return &o
}

// outputWords are the values completion offers for -o.
var outputWords = map[string][]string{"o": {"text", "json"}}

// writeJSON prints v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
