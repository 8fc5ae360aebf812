package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressBar draws a one-line progress bar with ETA on a terminal; when the
// output is not a terminal it draws nothing.
type progressBar struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	label   string
	start   time.Time
	last    time.Time
	drawn   bool
	lastPct int
}

func newProgressBar(e *env, label string) *progressBar {
	return &progressBar{w: e.stderr, on: e.tty, label: label, start: time.Now(), lastPct: -1}
}

// Set reports the fraction done (0..1) with an optional note (e.g. "R-hat
// 1.02"). It redraws at most ten times a second.
func (p *progressBar) Set(frac float64, note string) {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	pct := int(frac * 100)
	if p.drawn && now.Sub(p.last) < 100*time.Millisecond && pct == p.lastPct {
		return
	}
	p.last, p.lastPct, p.drawn = now, pct, true
	if frac < 0 {
		frac = 0
	}
	if frac > 1 {
		frac = 1
	}
	const width = 30
	n := int(frac * width)
	eta := ""
	if el := now.Sub(p.start); frac > 0.01 && frac < 1 {
		left := time.Duration(float64(el) * (1 - frac) / frac)
		eta = " ETA " + left.Round(time.Second).String()
	}
	if note != "" {
		note = " " + note
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %3d%%%s%s\033[K", p.label, strings.Repeat("=", n), strings.Repeat(" ", width-n), pct, eta, note)
}

// Done finishes the bar's line.
func (p *progressBar) Done() {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s done in %s\033[K\n", p.label, time.Since(p.start).Round(100*time.Millisecond))
	}
}

// readingProgress returns a LoadOptions.Progress that draws a "reading"
// bar with an ETA while label files of 4 MiB or more are read, and the
// function that ends the bar's line.
func readingProgress(e *env) (func(done, total int64), func()) {
	bar := newProgressBar(e, "reading")
	return func(done, total int64) {
		if total >= 4<<20 {
			bar.Set(float64(done)/float64(total), "")
		}
	}, bar.Done
}
