package proc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// stat is the part of /proc/<pid>/stat that podvisor uses.
type stat struct {
	pid     int
	state   byte // R S D T Z ...
	ppid    int
	pgrp    int
	session int
	flags   uint64
	start   uint64 // start time in clock ticks since boot; with pid, identifies a process
}

// pfKthread is PF_KTHREAD in /proc/<pid>/stat flags.
const pfKthread = 0x00200000

func (s stat) zombie() bool { return s.state == 'Z' || s.state == 'X' }

func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(pid, b)
}

// parseStat parses a /proc/<pid>/stat line. The command name (field 2) may
// contain spaces and parentheses, so fields are counted from the last ')'.
func parseStat(pid int, b []byte) (stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("parse /proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	s := stat{pid: pid, state: f[0][0]}
	var errs [5]error
	s.ppid, errs[0] = strconv.Atoi(string(f[4-3]))
	s.pgrp, errs[1] = strconv.Atoi(string(f[5-3]))
	s.session, errs[2] = strconv.Atoi(string(f[6-3]))
	s.flags, errs[3] = strconv.ParseUint(string(f[9-3]), 10, 64)
	s.start, errs[4] = strconv.ParseUint(string(f[22-3]), 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return stat{}, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return s, nil
}

// allStats reads /proc/*/stat for every process visible in this pid namespace.
// Processes that vanish while reading are skipped.
func allStats() ([]stat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	out := make([]stat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		s, err := readStat(pid)
		if err != nil {
			continue // exited meanwhile
		}
		out = append(out, s)
	}
	return out, nil
}

// elfInterpreter returns the PT_INTERP path of an ELF file, or "". It reads
// the program headers itself: debug/elf would bring its initialisation (and
// zstd's, zlib's, dwarf's) onto every podvisor start for this one lookup.
func elfInterpreter(r io.ReaderAt) string {
	var ident [16]byte
	if _, err := r.ReadAt(ident[:], 0); err != nil || string(ident[:4]) != "\x7fELF" {
		return ""
	}
	var bo binary.ByteOrder
	switch ident[5] { // EI_DATA
	case 1:
		bo = binary.LittleEndian
	case 2:
		bo = binary.BigEndian
	default:
		return ""
	}
	// Program header table: offset, entry size, count; then per entry
	// p_type, p_offset and p_filesz.
	var phoff uint64
	var phentsize, phnum uint16
	var hdr [64]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return ""
	}
	is64 := ident[4] == 2 // EI_CLASS
	switch {
	case is64:
		phoff, phentsize, phnum = bo.Uint64(hdr[32:]), bo.Uint16(hdr[54:]), bo.Uint16(hdr[56:])
	case ident[4] == 1:
		phoff, phentsize, phnum = uint64(bo.Uint32(hdr[28:])), bo.Uint16(hdr[42:]), bo.Uint16(hdr[44:])
	default:
		return ""
	}
	if phentsize < 32 || phnum > 4096 {
		return ""
	}
	const ptInterp = 3
	ph := make([]byte, phentsize)
	for i := range uint64(phnum) {
		if _, err := r.ReadAt(ph, int64(phoff+i*uint64(phentsize))); err != nil {
			return ""
		}
		if bo.Uint32(ph) != ptInterp {
			continue
		}
		var off, size uint64
		if is64 {
			off, size = bo.Uint64(ph[8:]), bo.Uint64(ph[32:])
		} else {
			off, size = uint64(bo.Uint32(ph[4:])), uint64(bo.Uint32(ph[16:]))
		}
		b := make([]byte, min(size, 4096))
		n, _ := r.ReadAt(b, int64(off))
		return string(bytes.TrimRight(b[:n], "\x00"))
	}
	return ""
}
