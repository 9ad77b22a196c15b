//go:build !linux

package main

import "time"

// nanosleepUntil falls back to a Go sleep where clock_nanosleep is not
// wired up.
func nanosleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
