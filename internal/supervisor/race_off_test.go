//go:build !race

package supervisor

const raceEnabled = false // see race_on_test.go
