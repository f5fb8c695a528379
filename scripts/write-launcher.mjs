// Part of `npm run build`: dist/cli/main.cjs (the package's `engine` bin) starts as a sh script
// that runs itself with node, and is JavaScript from its second line on (sh reads `":"` as its
// no-op `:`; JavaScript reads a string and a comment). Node parses a NODE_EXTRA_CA_CERTS bundle
// at start, before any JavaScript runs (about 80 ms for the system bundle on Node 20 here,
// nodejs/node#40524); `engine status` and `engine tag` open no TLS connection and start no
// program that would, so the launcher leaves the variable out of their environment. Every other
// command, and `node dist/cli/main.cjs`, gets the environment as it is. docs/CLI.md says so.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';

const main = new URL('../dist/cli/main.cjs', import.meta.url);
const map = new URL('../dist/cli/main.cjs.map', import.meta.url);

const LAUNCHER = [
  '#!/bin/sh',
  '":" //; case "$1" in status | tag) unset NODE_EXTRA_CA_CERTS ;; esac; exec node "$0" "$@"',
].join('\n');

const text = readFileSync(main, 'utf8');
const [first, ...rest] = text.split('\n');
if (first !== '#!/usr/bin/env node')
  throw new Error(
    `dist/cli/main.cjs: expected the shebang line of src/cli/main.ts, found ${JSON.stringify(first)}`,
  );
writeFileSync(main, [LAUNCHER, ...rest].join('\n'));
// Runnable as it is (the bench runs it so); npm sets a bin's mode on install anyway.
chmodSync(main, 0o755);
// One line more above the code: the source map's lines move down by one.
const sourceMap = JSON.parse(readFileSync(map, 'utf8'));
sourceMap.mappings = `;${sourceMap.mappings}`;
writeFileSync(map, JSON.stringify(sourceMap));
