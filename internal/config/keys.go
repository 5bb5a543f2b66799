package config

import "slices"

// Section is one mapping of procs.yaml whose keys are fixed, with the keys
// the loader accepts in it. Path uses NAME for a process name (the keys of
// processes and of a map-form depends_on); "" is the top level.
type Section struct {
	Path string
	Keys []string
}

// Sections lists every fixed-key mapping of procs.yaml, in document order.
// It is built from the same key lists the loader checks with, so the
// reference and schema tests (which compare docs/reference.md and
// schema/procs.schema.json against it) follow the loader automatically.
// A new mapping the loader reads with fields() must be added here; a test
// in this package fails until it is.
func Sections() []Section {
	return []Section{
		{Path: "", Keys: slices.Clone(topKeys)},
		{Path: "ui", Keys: slices.Clone(uiKeys)},
		{Path: "log", Keys: slices.Clone(logKeys)},
		{Path: "processes.NAME", Keys: slices.Clone(processKeys)},
		{Path: "processes.NAME.depends_on.NAME", Keys: slices.Clone(dependencyKeys)},
		{Path: "processes.NAME.ready", Keys: slices.Concat(readyKinds, probeTimingKeys(), []string{"while_stopping"})},
		// live reads its keys with the probe list too, so that log and
		// notify get "live cannot use log" rather than "unknown key"; they
		// are still refused.
		{Path: "processes.NAME.live", Keys: slices.Concat(liveKinds, probeTimingKeys())},
		{Path: "processes.NAME.startup", Keys: slices.Concat(liveKinds, probeTimingKeys())},
		{Path: "processes.NAME.restart", Keys: slices.Clone(restartKeys)},
		{Path: "processes.NAME.restart.rules", Keys: slices.Clone(ruleKeys)},
		{Path: "processes.NAME.restart.rules.exit_codes", Keys: slices.Clone(exitCodeKeys)},
		{Path: "processes.NAME.stop", Keys: slices.Clone(stopKeys)},
		{Path: "processes.NAME.schedule", Keys: slices.Clone(scheduleKeys)},
		{Path: "processes.NAME.watch", Keys: slices.Clone(watchKeys)},
		{Path: "processes.NAME.log", Keys: slices.Clone(outputKeys)},
		{Path: "processes.NAME.sockets[]", Keys: slices.Clone(socketKeys)},
		{Path: "processes.NAME.daemon", Keys: slices.Clone(daemonKeys)},
		{Path: "processes.NAME.reload", Keys: slices.Clone(reloadKeys)},
		{Path: "processes.NAME.resources", Keys: slices.Clone(resourcesKeys)},
		{Path: "processes.NAME.resources.memory", Keys: slices.Clone(memoryKeys)},
		{Path: "processes.NAME.resources.cpu", Keys: slices.Clone(cpuKeys)},
		{Path: "processes.NAME.resources.pids", Keys: slices.Clone(pidsKeys)},
	}
}

// probeTimingKeys are the keys of a probe that are not a kind of check.
func probeTimingKeys() []string {
	return slices.DeleteFunc(slices.Clone(probeKeys), func(k string) bool { return contains(readyKinds, k) })
}

// Enum is a key whose value is one of a fixed list of words.
type Enum struct {
	Path  string
	Words []string
}

// Enums lists the keys whose values are fixed words, with the words the
// loader accepts. restart and condition also have a long form (a mapping)
// with the same words under policy and condition.
func Enums() []Enum {
	return []Enum{
		{Path: "log.format", Words: slices.Clone(logFormats)},
		{Path: "log.stdout", Words: slices.Clone(destWords)},
		{Path: "log.stderr", Words: slices.Clone(destWords)},
		{Path: "processes.NAME.type", Words: slices.Clone(typeWords)},
		{Path: "processes.NAME.restart.policy", Words: slices.Clone(policyWords)},
		{Path: "processes.NAME.restart.rules.action", Words: slices.Clone(ruleActionWords)},
		{Path: "processes.NAME.schedule.concurrency", Words: slices.Clone(concurrencyWords[:2])}, // allow is read only to refuse it
		{Path: "processes.NAME.depends_on.NAME.condition", Words: slices.Clone(conditionWords)},
		{Path: "processes.NAME.stop.signal", Words: stopSignalNames()},
		{Path: "processes.NAME.log.stdout", Words: slices.Clone(destWords)},
		{Path: "processes.NAME.log.stderr", Words: slices.Clone(destWords)},
		{Path: "processes.NAME.log.format", Words: slices.Clone(logFormats)},
	}
}

// Suggest returns the word of candidates that word is most plausibly a typo
// of, or "": the same judgement as the loader's "did you mean" hints, for
// the command line's unknown commands and flags.
func Suggest(word string, candidates []string) string {
	return suggest(word, candidates)
}
