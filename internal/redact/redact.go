// Package redact holds the one mark that stands where a secret was
// removed, so that HAR files, cassettes, logs and errors all read alike.
package redact

// Marker replaces a secret's value.
const Marker = "[redacted]"
