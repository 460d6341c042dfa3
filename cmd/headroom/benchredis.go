package main

import (
	"cmp"
	"os"

	"github.com/spf13/pflag"
)

// benchRedisDefault is the Redis a benchmark uses when neither --redis nor
// $REDIS_URL names one: a database apart from the default one a shared
// Redis keeps its data in, since benchmarks write keys of their own.
const benchRedisDefault = "redis://127.0.0.1:6379/15"

// benchRedisFlag adds a benchmark's --redis to fs: what says what the
// benchmark uses it for ("the Redis `URL` the processes share"), more
// anything it adds.
func benchRedisFlag(fs *pflag.FlagSet, p *string, what, more string) {
	fs.StringVar(p, "redis", "", what+" (default $REDIS_URL, else "+benchRedisDefault+", a database apart from the default one a shared Redis keeps its data in)"+more)
}

// benchRedis is the Redis a benchmark uses, given its --redis. It is not
// the flag's default: a password in $REDIS_URL would show in -h.
func benchRedis(flag string) string {
	return cmp.Or(flag, os.Getenv("REDIS_URL"), benchRedisDefault)
}
